//! libdrhook itself exports no wrapper: the cfg `drhook_attach` is set only
//! by the preload and wrap libraries built from the same sources (see
//! `attach/build-export.rs`).

fn main() {
    println!("cargo::rustc-check-cfg=cfg(drhook_attach, values(\"preload\", \"wrap\"))");
}
