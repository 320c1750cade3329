//! Compiles the C part of the layer: the `exec*` and `printf`/`scanf`
//! functions with variable arguments (Rust cannot define them), reached from the exported
//! trampolines, libmonitor's callbacks as weak references (a static
//! program's tool, `monitor_weak.c`), and the tools' start for a `dlopen`
//! before `main` (`pre_main.c`), and `__real_main`/`__wrap_main` for a
//! static tool written for libmonitor's static mode (`wrap_main.c`).

fn main() {
    let c = std::path::Path::new("c").join("variadic.c");
    let io = std::path::Path::new("c").join("stdio.c");
    let monitor = std::path::Path::new("c").join("monitor_weak.c");
    let pre_main = std::path::Path::new("c").join("pre_main.c");
    let wrap_main = std::path::Path::new("c").join("wrap_main.c");
    println!("cargo::rerun-if-changed={}", c.display());
    println!("cargo::rerun-if-changed={}", io.display());
    println!("cargo::rerun-if-changed={}", monitor.display());
    println!("cargo::rerun-if-changed={}", pre_main.display());
    println!("cargo::rerun-if-changed={}", wrap_main.display());
    cc::Build::new()
        .file(&c)
        .file(&io)
        .file(&monitor)
        .file(&pre_main)
        .file(&wrap_main)
        .warnings(true)
        .compile("drhook_attach_variadic");
}
