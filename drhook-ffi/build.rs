//! libdrhook itself exports no wrapper: the cfg `drhook_attach` is set only
//! by the preload and wrap libraries built from the same sources (see
//! `attach/build-export.rs`).

fn main() {
    println!("cargo::rustc-check-cfg=cfg(drhook_attach, values(\"preload\", \"wrap\"))");
    // `libdrhook.so` is never unloaded (a `dlclose` leaves it): threads'
    // ends run the engine's thread-specific keys' destructors, which live
    // in it (`drhook::sys::exit_key`).
    println!("cargo::rustc-cdylib-link-arg=-Wl,-z,nodelete");
}
