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
    // Never unloaded: threads' ends run the engine's thread-specific keys'
    // destructors, which live in this library (`drhook::sys::exit_key`).
    // (The wrap library is an archive linked into the program.)
    if mode == "preload" {
        println!("cargo::rustc-cdylib-link-arg=-Wl,-z,nodelete");
    }
    if mode == "preload" && glibc_at_least(2, 36) {
        // Relative relocations packed (DT_RELR, glibc 2.36+): the preload
        // library is loaded by every process of a run, and its ~2000
        // relative relocations are then a few hundred words to apply. Only
        // where the C library of the build knows them (the library would
        // not load with an older one).
        println!("cargo::rustc-cdylib-link-arg=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether the C library of this machine is glibc at least `major.minor`
/// (`getconf GNU_LIBC_VERSION`: "glibc 2.36").
fn glibc_at_least(major: u32, minor: u32) -> bool {
    let Ok(out) = std::process::Command::new("getconf")
        .arg("GNU_LIBC_VERSION")
        .output()
    else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let Some(v) = text.split_whitespace().nth(1) else {
        return false;
    };
    let mut it = v.split('.').map(|x| x.parse::<u32>().unwrap_or(0));
    let (a, b) = (it.next().unwrap_or(0), it.next().unwrap_or(0));
    (a, b) >= (major, minor)
}
