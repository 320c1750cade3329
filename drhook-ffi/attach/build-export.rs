//! Build script of the two libraries that carry the lifecycle layer
//! (`drhook-preload`, `drhook-wrap`): both compile the sources of
//! `libdrhook` (`drhook-ffi/src`) with `cfg(drhook_attach = "preload")` or
//! `"wrap"`, which adds the layer's exported wrappers.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(drhook_attach, values(\"preload\", \"wrap\"))");
    let mode = match std::env::var("CARGO_PKG_NAME").unwrap().as_str() {
        "drhook-preload" => "preload",
        "drhook-wrap" => "wrap",
        other => panic!("build-export.rs used by {other}"),
    };
    println!("cargo::rustc-cfg=drhook_attach=\"{mode}\"");
}
