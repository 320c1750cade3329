//! Compiles the C part of the layer: the `exec*` functions with variable
//! arguments (Rust cannot define them), reached from the exported
//! trampolines.

fn main() {
    let c = std::path::Path::new("c").join("variadic.c");
    println!("cargo::rerun-if-changed={}", c.display());
    cc::Build::new()
        .file(&c)
        .warnings(true)
        .compile("drhook_attach_variadic");
}
