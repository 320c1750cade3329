//! Environment control: malformed values, pending options, silence.

use drhook_tests::run_in;

const PROG: &str = env!("CARGO_BIN_EXE_drhook-test-prog");

#[test]
fn malformed_values_warn_and_the_program_keeps_working() {
    let dir = tempfile::tempdir().unwrap();
    let env = [
        ("DR_HOOK", "1"),
        ("DR_HOOK_OPT", "prof,bogus"),
        ("DR_HOOK_PROFILE_LIMIT", "lots"),
        ("DR_HOOK_PROFILE_PROC", "x"),
    ];
    let r = run_in(dir.path(), PROG, &["basic"], &env);
    assert_eq!(r.code(), 0);
    let err = r.stderr();
    // The reference's two lines, byte for byte after the prefix; our hint
    // on a line of its own.
    assert!(
        err.lines()
            .any(|l| l.ends_with("] DR_HOOK_OPT=\"WALLPROF\"")),
        "{err}"
    );
    assert!(
        err.lines()
            .any(|l| l.ends_with("] Warning - no match for DR_HOOK_OPT=\"BOGUS\"")),
        "{err}"
    );
    assert!(err.contains("valid DR_HOOK_OPT tokens are:"), "{err}");
    assert!(
        err.contains("DR_HOOK_PROFILE_LIMIT=\"lots\" is not a number"),
        "{err}"
    );
    assert!(
        err.contains("DR_HOOK_PROFILE_PROC=\"x\" is not an integer"),
        "{err}"
    );
    r.profile("drhook.prof.1");
}

#[test]
fn dr_hook_opt_echo_only_when_options_remain() {
    let dir = tempfile::tempdir().unwrap();
    let echo = |r: &drhook_tests::Run| {
        r.stderr()
            .lines()
            .filter(|l| l.contains("] DR_HOOK_OPT=") || l.contains("no match for DR_HOOK_OPT"))
            .map(|l| l.split("] ").last().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    for blank in ["", " ", " ,\t/"] {
        let r = run_in(
            dir.path(),
            PROG,
            &["basic"],
            &[("DR_HOOK", "1"), ("DR_HOOK_OPT", blank)],
        );
        assert_eq!(r.code(), 0);
        assert!(echo(&r).is_empty(), "{blank:?}: {}", r.stderr());
    }
    let r = run_in(
        dir.path(),
        PROG,
        &["basic"],
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "foo, bar/foo")],
    );
    assert_eq!(
        echo(&r),
        ["Warning - no match for DR_HOOK_OPT=\"FOO,BAR,FOO\""]
    );
    let r = run_in(
        dir.path(),
        PROG,
        &["basic"],
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "Count,x,wall")],
    );
    assert_eq!(
        echo(&r),
        [
            "DR_HOOK_OPT=\"CALLS,WALLTIME\"",
            "Warning - no match for DR_HOOK_OPT=\"X\""
        ]
    );
}

#[test]
fn memory_options_are_accepted_without_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_in(
        dir.path(),
        PROG,
        &["basic"],
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof,heap,memprof")],
    );
    assert_eq!(r.code(), 0);
    let err = r.stderr();
    assert!(!err.contains("Warning"), "{err}");
    r.profile("drhook.prof.1");
    let mem = std::fs::read_to_string(dir.path().join("drhook.prof.1-mem")).unwrap();
    assert!(
        mem.starts_with("Memory-profiling information for program="),
        "{mem}"
    );
}

#[test]
fn silent_means_silent_except_errors() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_in(
        dir.path(),
        PROG,
        &["basic"],
        &[
            ("DR_HOOK", "1"),
            ("DR_HOOK_OPT", "prof,bogus"),
            ("DR_HOOK_SILENT", "1"),
        ],
    );
    assert_eq!(r.code(), 0);
    assert_eq!(r.stderr(), "", "nothing on stderr");
    r.profile("drhook.prof.1").row("BASIC:LEAF", 1);
    // Errors are still printed.
    let r = run_in(
        dir.path(),
        PROG,
        &["basic"],
        &[
            ("DR_HOOK", "1"),
            ("DR_HOOK_OPT", "prof"),
            ("DR_HOOK_SILENT", "1"),
            ("DR_HOOK_PROFILE", "/nonexistent/dir/prof"),
        ],
    );
    let err = r.stderr();
    assert_eq!(err.lines().count(), 2, "{err}");
    assert!(err.lines().all(|l| l.contains("Error")), "{err}");
}

#[test]
fn diagnostic_lines_use_the_reference_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_in(
        dir.path(),
        PROG,
        &["basic"],
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof")],
    );
    let err = r.stderr();
    let first = err.lines().next().unwrap();
    assert_eq!(
        first,
        "[EC_DRHOOK:hostname:myproc:omltid:pid:unixtid] [YYYYMMDD:HHMMSS:walltime] [function@file:lineno]"
    );
    let line = err.lines().find(|l| l.contains("DR_HOOK_OPT=")).unwrap();
    // [EC_DRHOOK:host:1:1:pid:tid] [YYYYMMDD:HHMMSS:s.mmm] [func@file:line] text
    let parts: Vec<&str> = line.splitn(4, "] [").collect();
    let prefix: Vec<&str> = parts[0].trim_start_matches('[').split(':').collect();
    assert_eq!(prefix[0], "EC_DRHOOK");
    assert_eq!(&prefix[2..4], ["1", "1"]);
    assert_eq!(prefix[4], prefix[5], "main thread: pid == unix tid");
    let t: Vec<&str> = parts[1].split(':').collect();
    assert_eq!((t[0].len(), t[1].len()), (8, 6));
    assert!(t[2].contains('.'));
}

/// Runs the test program with raw (possibly non-UTF-8) variables.
fn run_raw(dir: &std::path::Path, env: &[(&str, &[u8])]) -> std::process::Output {
    use std::os::unix::ffi::OsStrExt;
    let mut cmd = std::process::Command::new(PROG);
    cmd.arg("basic").current_dir(dir);
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().into_owned();
        if k.starts_with("DR_HOOK") || k.starts_with("DRHOOK_") {
            cmd.env_remove(k);
        }
    }
    for (k, v) in env {
        cmd.env(k, std::ffi::OsStr::from_bytes(v));
    }
    cmd.output().unwrap()
}

#[test]
fn non_utf8_values_keep_their_valid_parts_and_warn_naming_the_variable() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_raw(
        dir.path(),
        &[
            ("DR_HOOK", b"\xff"),
            ("DR_HOOK_OPT", b"prof,\xff"),
            ("DR_HOOK_PROFILE_LIMIT", b"\xfe5"),
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    // DR_HOOK=\xff is on (non-empty, not in the off list) and prof is kept.
    assert!(
        dir.path().join("drhook.prof.1").exists(),
        "no profile:\n{err}"
    );
    for var in ["DR_HOOK", "DR_HOOK_OPT", "DR_HOOK_PROFILE_LIMIT"] {
        let w = format!("Warning - {var} is not valid UTF-8");
        assert_eq!(err.matches(&w).count(), 1, "{var}:\n{err}");
    }
    assert!(
        err.contains("DR_HOOK_PROFILE_LIMIT=\"\u{fffd}5\" is not a number"),
        "{err}"
    );
}

#[test]
fn negative_and_out_of_range_numbers_warn() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_in(
        dir.path(),
        PROG,
        &["basic"],
        &[
            ("DR_HOOK", "1"),
            ("DR_HOOK_OPT", "prof"),
            ("DR_HOOK_HARAKIRI_TIMEOUT", "-100"),
            ("DR_HOOK_CALLPATH_INDENT", "0"),
            ("DR_HOOK_CALLPATH_DEPTH", "-3"),
            ("DR_HOOK_TRAPFPE", "7"),
            ("DR_HOOK_ALLOW_COREDUMP", "-5"),
            ("DR_HOOK_SILENT", "-1"),
        ],
    );
    assert_eq!(r.code(), 0);
    let err = r.stderr();
    for (var, v) in [
        ("DR_HOOK_HARAKIRI_TIMEOUT", "-100"),
        ("DR_HOOK_CALLPATH_INDENT", "0"),
        ("DR_HOOK_CALLPATH_DEPTH", "-3"),
        ("DR_HOOK_TRAPFPE", "7"),
        ("DR_HOOK_ALLOW_COREDUMP", "-5"),
        ("DR_HOOK_SILENT", "-1"),
    ] {
        assert!(
            err.contains(&format!("Warning - {var}=\"{v}\" is out of range")),
            "{var}:\n{err}"
        );
    }
    // The defaults are used: the harakiri timeout stays 500 s.
    assert!(err.contains("harakiri after 500s"), "{err}");
    r.profile("drhook.prof.1");
}
