//! Build script of the two libraries that carry the lifecycle layer
//! (`drhook-preload`, `drhook-wrap`): both compile the sources of
//! `libdrhook` (`drhook-ffi/src`) with `cfg(drhook_attach = "preload")` or
//! `"wrap"`, which adds the layer's exported wrappers, and the C part of
//! the wrappers (the `exec*` functions with variable arguments) with the
//! matching symbol prefix.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(drhook_attach, values(\"preload\", \"wrap\"))");
    let pkg = std::env::var("CARGO_PKG_NAME").unwrap();
    let (mode, prefix) = match pkg.as_str() {
        "drhook-preload" => ("preload", ""),
        "drhook-wrap" => ("wrap", "__wrap_"),
        other => panic!("build-export.rs used by {other}"),
    };
    println!("cargo::rustc-cfg=drhook_attach=\"{mode}\"");
    let c = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("attach")
        .join("c")
        .join("variadic.c");
    println!("cargo::rerun-if-changed={}", c.display());
    let lib = format!("drhook_attach_variadic_{mode}");
    cc::Build::new()
        .file(&c)
        .define("DRHOOK_ATTACH_PREFIX", Some(prefix))
        .warnings(true)
        .cargo_metadata(false)
        .compile(&lib);
    // Whole archive: nothing in Rust refers to these functions, they are
    // only exported.
    println!(
        "cargo::rustc-link-search=native={}",
        std::env::var("OUT_DIR").unwrap()
    );
    println!("cargo::rustc-link-lib=static:+whole-archive={lib}");
}
