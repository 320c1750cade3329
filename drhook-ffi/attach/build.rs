//! Compiles the C part of the layer: the `exec*` and `printf`/`scanf`
//! functions with variable arguments (Rust cannot define them), reached from the exported
//! trampolines.

fn main() {
    let c = std::path::Path::new("c").join("variadic.c");
    let io = std::path::Path::new("c").join("stdio.c");
    println!("cargo::rerun-if-changed={}", c.display());
    println!("cargo::rerun-if-changed={}", io.display());
    cc::Build::new()
        .file(&c)
        .file(&io)
        .warnings(true)
        .compile("drhook_attach_variadic");
}
