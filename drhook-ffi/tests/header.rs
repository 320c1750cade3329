//! The committed headers are what cbindgen generates from the sources
//! (plus the macros and prose in the cbindgen configuration files).
//! Regenerate them with `DRHOOK_BLESS=1 cargo test -p drhook-ffi --test header`.

use std::path::Path;

fn generate(config: &str, sources: &[&str]) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(root.join(config)).expect("cbindgen config");
    let mut b = cbindgen::Builder::new().with_config(config);
    for s in sources {
        b = b.with_src(root.join(s));
    }
    let mut out = Vec::new();
    b.generate().expect("cbindgen").write(&mut out);
    String::from_utf8(out).unwrap()
}

fn check(header: &str, config: &str, sources: &[&str]) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let path = root.join("include").join(header);
    let fresh = generate(config, sources);
    if std::env::var_os("DRHOOK_BLESS").is_some() {
        std::fs::write(&path, &fresh).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    if committed != fresh {
        let diff: Vec<String> = committed
            .lines()
            .zip(fresh.lines())
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .take(5)
            .map(|(i, (a, b))| format!("line {}:\n  committed: {a}\n  generated: {b}", i + 1))
            .collect();
        panic!(
            "include/{header} differs from what cbindgen generates ({} vs {} lines); \
             regenerate with DRHOOK_BLESS=1 cargo test -p drhook-ffi --test header\n{}",
            committed.lines().count(),
            fresh.lines().count(),
            diff.join("\n")
        );
    }
}

#[test]
fn drhook_h_is_current() {
    check(
        "drhook.h",
        "cbindgen-drhook.toml",
        &[
            "src/c_api.rs",
            "src/compat.rs",
            "src/fortran.rs",
            "src/switch.rs",
        ],
    );
}

#[test]
fn libhpm_h_is_current() {
    check("libhpm.h", "cbindgen-libhpm.toml", &["src/hpm_api.rs"]);
}
