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
    if mode == "preload" {
        static_unwinder();
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

/// The preload library with the C compiler's unwinder linked in
/// (`libgcc_eh.a`) instead of `libgcc_s.so.1`, which Rust's standard
/// library names (`-lgcc_s`) for its panics: a program that does not load
/// `libgcc_s` itself (most C programs) would load it for us at every
/// start, +19k instructions and 13 symbol look-ups (BENCHMARKS.md,
/// start-up). A linker script named `libgcc_s.so`, found first, stands for
/// the archive, as `gcc -static-libgcc` would link it. The unwinder's
/// functions stay local to the library (its exports are listed), and it
/// finds every object's unwind tables through `dl_iterate_phdr`, so
/// panics, backtraces and C++ exceptions of the program are unwound as
/// before. Where the compiler has no `libgcc_eh.a`, `libgcc_s` stays.
fn static_unwinder() {
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let Ok(out) = std::process::Command::new(&cc)
        .arg("-print-file-name=libgcc_eh.a")
        .output()
    else {
        return;
    };
    let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if !path.starts_with('/') || !std::path::Path::new(&path).is_file() {
        println!("cargo::warning=libgcc_eh.a not found: the preload library needs libgcc_s.so.1");
        return;
    }
    let dir = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("unwind");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("libgcc_s.so"), format!("INPUT({path})\n")).unwrap();
    println!("cargo::rustc-link-search=native={}", dir.display());
    println!("cargo::rerun-if-env-changed=CC");
}
