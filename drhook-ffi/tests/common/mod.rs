//! Shared helpers of the C and Fortran tests: where the built libraries
//! are, compiling programs with gcc/gfortran, running them under a clean
//! Dr.Hook environment, and skipping (or failing, with
//! `DRHOOK_REQUIRE_FORTRAN=1`) when a compiler is missing.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub use drhook_tests::{Run, run_in};

/// `target/<profile>` of this test build (the test executable lives in
/// `target/<profile>/deps`).
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

/// This crate's directory.
pub fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Builds `libdrhook.a` and `libdrhook.so` (once per test executable).
/// `cargo test` builds the library target only when tests can link it as
/// an rlib, which a C library is not, so the tests ask cargo for it
/// (`cargo build -p drhook-ffi`, same target directory and profile; a no-op
/// when it is up to date).
fn ensure_built() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let mut cmd = Command::new(env!("CARGO"));
        cmd.args(["build", "-p", "drhook-ffi", "--lib", "--manifest-path"])
            .arg(crate_dir().join("Cargo.toml"))
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

/// `libdrhook.a`.
pub fn static_lib() -> PathBuf {
    ensure_built();
    let p = target_dir().join("libdrhook.a");
    assert!(p.exists(), "{} not built", p.display());
    p
}

/// `libdrhook.so`.
pub fn shared_lib() -> PathBuf {
    ensure_built();
    let p = target_dir().join("libdrhook.so");
    assert!(p.exists(), "{} not built", p.display());
    p
}

/// The static library of the `rust_in_fortran` example (libdrhook plus a
/// Rust `#[drhook]` routine).
pub fn rust_in_fortran_lib() -> PathBuf {
    let p = target_dir().join("examples").join("librust_in_fortran.a");
    assert!(p.exists(), "{} not built", p.display());
    p
}

/// The `include/` directory (drhook.h, libhpm.h, f_hpm.h).
pub fn include_dir() -> PathBuf {
    crate_dir().join("include")
}

/// A test program source under `tests/progs`.
pub fn prog(name: &str) -> PathBuf {
    crate_dir().join("tests").join("progs").join(name)
}

fn works(cmd: &str) -> bool {
    Command::new(cmd)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn require(tool: &str) -> bool {
    have(tool, works(tool))
}

/// `available`, for `what` a test needs (a tool, a library, a compiler
/// feature); when it is not, prints that the test is skipped, or fails
/// under `DRHOOK_REQUIRE_FORTRAN=1` (CI installs everything the tests use).
pub fn have(what: &str, available: bool) -> bool {
    if available {
        return true;
    }
    let required = std::env::var("DRHOOK_REQUIRE_FORTRAN").as_deref() == Ok("1");
    assert!(
        !required,
        "{what} is not available and DRHOOK_REQUIRE_FORTRAN=1"
    );
    eprintln!("SKIPPED: {what} is not available (set DRHOOK_REQUIRE_FORTRAN=1 to fail instead)");
    false
}

/// Whether a build tool (`make`, `pkg-config`, `cmake`, `nm`) can be used;
/// prints that the test is skipped if not, or fails under
/// `DRHOOK_REQUIRE_FORTRAN=1` (CI installs every tool the tests use).
pub fn have_tool(tool: &str) -> bool {
    require(tool)
}

/// The Fortran compiler of the tests: `$DRHOOK_FC` (e.g. `flang-new-19`,
/// to check `yomhook.F90` and the library's Fortran entry points with
/// another compiler's conventions), else gfortran.
pub fn fc() -> String {
    std::env::var("DRHOOK_FC")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "gfortran".into())
}

/// Whether the Fortran compiler ([`fc`]) can be used (prints that the
/// test is skipped if not).
pub fn have_gfortran() -> bool {
    require(&fc())
}

/// Warning flags for the Fortran compiler (gfortran's `-Wall`; flang
/// warns that it does not use it).
fn fc_warnings() -> &'static [&'static str] {
    if fc().contains("gfortran") {
        &["-Wall"]
    } else {
        &[]
    }
}

/// Whether gcc can be used.
pub fn have_gcc() -> bool {
    require("gcc")
}

/// A fresh temporary directory for one test.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("drhook-ffi-")
        .tempdir()
        .unwrap()
}

/// Runs a compiler (or any tool) in `dir`; panics with its output on failure.
pub fn tool(dir: &Path, program: &str, args: &[&str]) {
    let err = tool_warning(dir, program, args);
    assert!(
        !err.contains("arning"),
        "{program} {} printed warnings:\n{err}",
        args.join(" ")
    );
}

/// As [`tool`], for a command whose warnings are expected (glibc's on
/// `dlopen` in a static program): its stderr.
pub fn tool_warning(dir: &Path, program: &str, args: &[&str]) -> String {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {}\nfailed:\n{}{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// How a test program links libdrhook.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Link {
    /// `libdrhook.a`.
    Static,
    /// `libdrhook.so` (with an rpath).
    Shared,
    /// The `rust_in_fortran` example library.
    RustInFortran,
}

fn link_args(link: Link) -> Vec<String> {
    let mut v = match link {
        Link::Static => vec![static_lib().display().to_string()],
        Link::Shared => vec![
            format!("-L{}", shared_lib().parent().unwrap().display()),
            format!("-Wl,-rpath,{}", target_dir().display()),
            "-ldrhook".into(),
        ],
        Link::RustInFortran => vec![rust_in_fortran_lib().display().to_string()],
    };
    // What a Rust static library needs from the system.
    v.extend(["-lpthread", "-ldl", "-lm"].map(String::from));
    v
}

/// Compiles `yomhook.F90` in `dir` (with OpenMP if asked), giving
/// `yomhook.o` and `yomhook.mod`.
pub fn yomhook(dir: &Path, openmp: bool) {
    let src = crate_dir().join("fortran").join("yomhook.F90");
    let s = src.display().to_string();
    let mut args = vec!["-O2"];
    args.extend(fc_warnings());
    args.extend(["-c", &s]);
    if openmp {
        args.push("-fopenmp");
    }
    tool(dir, &fc(), &args);
}

/// Compiles and links Fortran `sources` (plus `yomhook.o` and `extra`
/// objects) into `dir/exe`.
pub fn fortran_exe(
    dir: &Path,
    exe: &str,
    sources: &[&Path],
    flags: &[&str],
    link: Link,
) -> PathBuf {
    let mut args: Vec<String> = vec!["-O1".into(), "-g".into(), "-o".into(), exe.into()];
    args.extend(flags.iter().map(|s| s.to_string()));
    args.extend(sources.iter().map(|p| p.display().to_string()));
    args.push("yomhook.o".into());
    args.extend(link_args(link));
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    tool(dir, &fc(), &a);
    dir.join(exe)
}

/// Compiles and links C sources with the include directory.
pub fn c_exe(dir: &Path, exe: &str, sources: &[&Path], flags: &[&str], link: Link) -> PathBuf {
    let mut args: Vec<String> = vec![
        "-std=c99".into(),
        "-Wall".into(),
        "-Wextra".into(),
        "-Wpedantic".into(),
        "-O1".into(),
        "-g".into(),
        format!("-I{}", include_dir().display()),
        "-o".into(),
        exe.into(),
    ];
    args.extend(flags.iter().map(|s| s.to_string()));
    args.extend(sources.iter().map(|p| p.display().to_string()));
    args.extend(link_args(link));
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    tool(dir, "gcc", &a);
    dir.join(exe)
}

/// Runs `exe` in `dir` with a clean Dr.Hook environment plus `env`.
pub fn run(dir: &Path, exe: &Path, env: &[(&str, &str)]) -> Run {
    run_in(dir, &exe.display().to_string(), &[], env)
}

/// Asserts a successful exit, showing the output otherwise.
pub fn ok(r: &Run) {
    assert_eq!(
        r.output.status.code(),
        Some(0),
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        r.output.status,
        r.stdout(),
        r.stderr()
    );
}

/// The signal that ended the run, if any.
pub fn signal(r: &Run) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    r.output.status.signal()
}

/// Builds what these tests run (once): the preload and wrap libraries,
/// the `drhook` command, the event-log tool, the Rust test program.
pub fn ensure_attach_built() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // One cargo run per kind of target: target filters (--lib, --bin)
        // apply to every package of a run.
        for args in [
            &[
                "-p",
                "drhook-preload",
                "-p",
                "drhook-wrap",
                "-p",
                "drhook-mpi",
                "--lib",
            ][..],
            &["-p", "drhook-cli", "--bin", "drhook"],
            &["-p", "drhook-attach", "--example", "event_log"],
            &["-p", "drhook-tests", "--bin", "drhook-test-prog"],
        ] {
            let mut cmd = Command::new(env!("CARGO"));
            cmd.arg("build")
                .args(args)
                .arg("--manifest-path")
                .arg(crate_dir().join("..").join("Cargo.toml"))
                .arg("--target-dir")
                .arg(target_dir().parent().unwrap());
            if target_dir().file_name().is_some_and(|n| n == "release") {
                cmd.arg("--release");
            }
            let out = cmd.output().expect("cargo");
            assert!(
                out.status.success(),
                "building {args:?} failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    });
}

pub fn built(name: &str) -> PathBuf {
    ensure_attach_built();
    let p = target_dir().join(name);
    assert!(p.exists(), "{} not built", p.display());
    p
}

pub fn drhook_exe() -> PathBuf {
    built("drhook")
}

/// `pkg-config --cflags --libs PACKAGE` of a prefix `make_install` made:
/// its flags (the command must succeed).
#[allow(dead_code)]
pub fn installed_pkg_config(prefix: &Path, package: &str) -> String {
    let pc = std::process::Command::new("pkg-config")
        .args(["--cflags", "--libs", package])
        .env("PKG_CONFIG_PATH", prefix.join("lib").join("pkgconfig"))
        .output()
        .unwrap();
    assert!(
        pc.status.success(),
        "pkg-config {package}: {}",
        String::from_utf8_lossy(&pc.stderr)
    );
    String::from_utf8(pc.stdout).unwrap()
}

/// `make -C drhook-ffi install PREFIX=<dir>/prefix` with this test build's
/// libraries from the target directory (no nested cargo build); the
/// prefix.
#[allow(dead_code)]
pub fn make_install(dir: &Path) -> PathBuf {
    let prefix = dir.join("prefix");
    tool(
        dir,
        "make",
        &[
            "-s",
            "-C",
            &crate_dir().display().to_string(),
            "install",
            &format!("PREFIX={}", prefix.display()),
            &format!("DRHOOK_LIBDIR={}", target_dir().display()),
            &format!("BUILD={}", dir.join("build").display()),
        ],
    );
    prefix
}
