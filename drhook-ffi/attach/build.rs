//! Compiles the C part of the layer: the `exec*` and `printf`/`scanf`
//! functions with variable arguments (Rust cannot define them), reached from the exported
//! trampolines, and libmonitor's callbacks as weak references (a static
//! program's tool, `monitor_weak.c`).

fn main() {
    let c = std::path::Path::new("c").join("variadic.c");
    let io = std::path::Path::new("c").join("stdio.c");
    let monitor = std::path::Path::new("c").join("monitor_weak.c");
    println!("cargo::rerun-if-changed={}", c.display());
    println!("cargo::rerun-if-changed={}", io.display());
    println!("cargo::rerun-if-changed={}", monitor.display());
    cc::Build::new()
        .file(&c)
        .file(&io)
        .file(&monitor)
        .warnings(true)
        .compile("drhook_attach_variadic");
}
