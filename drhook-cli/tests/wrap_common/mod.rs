//! Helpers of the `drhook wrap` tests: the `drhook` binary and libdrhook,
//! tools (skipped with a message, or failing under
//! `DRHOOK_REQUIRE_FORTRAN=1`, which CI sets), commands, `ltrace -c`.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub use drhook_tests::{Profile, Run, run_in};

/// The `drhook` binary under test.
pub fn drhook() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_drhook"))
}

/// `target/<profile>`: where the binary, libdrhook.so and libdrhook.a are.
pub fn target_dir() -> PathBuf {
    drhook().parent().unwrap().to_path_buf()
}

/// Builds libdrhook (same target directory and profile as this test; a
/// no-op when up to date), once per test binary: `drhook wrap` finds it
/// beside the binary.
pub fn ensure_libdrhook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let mut cmd = Command::new(env!("CARGO"));
        cmd.args(["build", "-p", "drhook-ffi", "--lib", "--manifest-path"])
            .arg(root.join("Cargo.toml"))
            .arg("--target-dir")
            .arg(target_dir().parent().unwrap());
        if target_dir().file_name().is_some_and(|n| n == "release") {
            cmd.arg("--release");
        }
        let out = cmd.output().expect("cargo");
        assert!(
            out.status.success(),
            "building libdrhook failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    });
}

/// drhook.h's directory.
pub fn include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../drhook-ffi/include")
}

/// A file under `tests/progs`.
pub fn prog(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/progs")
        .join(name)
}

fn required() -> bool {
    std::env::var("DRHOOK_REQUIRE_FORTRAN").as_deref() == Ok("1")
}

/// Whether `what` is usable; prints SKIPPED (or fails under
/// `DRHOOK_REQUIRE_FORTRAN=1`) when it is not.
pub fn have(what: &str, ok: bool) -> bool {
    if !ok {
        assert!(
            !required(),
            "{what} is not available and DRHOOK_REQUIRE_FORTRAN=1"
        );
        eprintln!(
            "SKIPPED: {what} is not available (set DRHOOK_REQUIRE_FORTRAN=1 to fail instead)"
        );
    }
    ok
}

/// Whether a tool runs (`tool --version`).
pub fn have_tool(tool: &str) -> bool {
    let ok = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    have(tool, ok)
}

/// Whether the C compiler finds `header` (a development package is installed).
pub fn have_header(header: &str, cflags: &str) -> bool {
    let dir = tempdir();
    std::fs::write(dir.path().join("t.c"), format!("#include <{header}>\n")).unwrap();
    let mut args: Vec<String> = cflags.split_whitespace().map(String::from).collect();
    args.extend(["-E".into(), "t.c".into(), "-o".into(), "/dev/null".into()]);
    let ok = Command::new("cc")
        .args(&args)
        .current_dir(dir.path())
        .output()
        .is_ok_and(|o| o.status.success());
    have(&format!("the header {header}"), ok)
}

/// Whether libclang can be loaded (what `drhook wrap` needs).
pub fn have_libclang() -> bool {
    have("libclang", drhook_cli::wrap::parse::load_libclang().is_ok())
}

/// A fresh temporary directory.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("drhook-wrap-")
        .disable_cleanup(std::env::var_os("DRHOOK_KEEP_TMP").is_some())
        .tempdir()
        .unwrap()
}

/// Runs a command in `dir` (environment as given, Dr.Hook variables
/// removed); panics with its output unless it succeeds.
pub fn sh(dir: &Path, argv: &[&str], env: &[(&str, &str)]) -> Output {
    let r = run_in(dir, argv[0], &argv[1..], env);
    assert!(
        r.output.status.success(),
        "{} failed ({:?}):\n{}\n{}",
        argv.join(" "),
        r.output.status,
        r.stdout(),
        r.stderr()
    );
    r.output
}

/// Output text of a command that must succeed.
pub fn sh_out(dir: &Path, argv: &[&str], env: &[(&str, &str)]) -> String {
    String::from_utf8_lossy(&sh(dir, argv, env).stdout).into_owned()
}

/// `drhook wrap init` in `dir` with the test's flags; the wrappers are
/// compiled with -Wall -Wextra -Werror, so generated code must be clean.
pub fn wrap_init(dir: &Path, args: &[&str]) -> String {
    let d = drhook();
    let mut argv = vec![d.to_str().unwrap(), "wrap", "init"];
    argv.extend_from_slice(args);
    argv.extend(["--wrapper-cflags", "-O2 -g -Wall -Wextra -Werror"]);
    sh_out(dir, &argv, &[])
}

/// `make`, `make check`, `make install PREFIX=<dir>/inst` in a wrapper
/// directory; returns `make check`'s output.
pub fn make_all(wrapdir: &Path, prefix: &Path) -> String {
    sh(wrapdir, &["make"], &[]);
    let check = sh_out(wrapdir, &["make", "check"], &[]);
    let p = format!("PREFIX={}", prefix.display());
    sh(wrapdir, &["make", "install", &p], &[]);
    check
}

/// `pkg-config --libs <pkg>` with `<prefix>/lib/pkgconfig` on the path.
pub fn pkg_libs(prefix: &Path, pkg: &str) -> Vec<String> {
    let pc = prefix.join("lib/pkgconfig");
    let out = sh_out(
        prefix,
        &["pkg-config", "--libs", pkg],
        &[("PKG_CONFIG_PATH", pc.to_str().unwrap())],
    );
    out.split_whitespace().map(String::from).collect()
}

/// Calls per function from `ltrace -c <args> <program...>` run in `dir`.
pub fn ltrace_counts(dir: &Path, ltrace_args: &[&str], program: &[&str]) -> BTreeMap<String, u64> {
    let out = dir.join("ltrace.out");
    let mut argv = vec!["ltrace", "-c", "-o", out.to_str().unwrap()];
    argv.extend_from_slice(ltrace_args);
    argv.extend_from_slice(program);
    sh(dir, &argv, &[]);
    let text = std::fs::read_to_string(&out).unwrap();
    let mut m = BTreeMap::new();
    let mut in_table = false;
    for l in text.lines() {
        if l.starts_with("------") {
            if in_table {
                break;
            }
            in_table = true;
            continue;
        }
        if in_table {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() >= 5 {
                m.insert(f[f.len() - 1].to_string(), f[3].parse().unwrap());
            }
        }
    }
    assert!(!m.is_empty(), "no ltrace table in:\n{text}");
    m
}

/// Calls per routine in a profile (all rows of a routine added: threads,
/// call paths).
pub fn profile_counts(p: &Profile) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for r in &p.rows {
        *m.entry(r.name.clone()).or_insert(0) += r.calls;
    }
    m
}

/// Calls of `name` on the call path whose nearest callers are `callers`
/// (nearest first), with `DR_HOOK_OPT=callpath`.
pub fn calls_under(p: &Profile, name: &str, callers: &[&str]) -> u64 {
    p.rows
        .iter()
        .filter(|r| {
            r.name == name
                && r.path.len() >= callers.len()
                && r.path.iter().zip(callers).all(|(a, b)| a == b)
        })
        .map(|r| r.calls)
        .sum()
}

/// The Dr.Hook environment of a profiled run (quiet start-up).
pub const PROF: &[(&str, &str)] = &[
    ("DR_HOOK", "1"),
    ("DR_HOOK_OPT", "prof"),
    ("DR_HOOK_SILENT", "1"),
];

/// As [`PROF`] with one row per call path.
pub const CALLPATH: &[(&str, &str)] = &[
    ("DR_HOOK", "1"),
    ("DR_HOOK_OPT", "prof,callpath"),
    ("DR_HOOK_SILENT", "1"),
];
