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
    assert!(err.contains("no match for DR_HOOK_OPT=\"bogus\""), "{err}");
    assert!(err.contains("valid tokens are:"), "{err}");
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
fn options_not_implemented_yet_say_so_once_each() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_in(
        dir.path(),
        PROG,
        &["basic"],
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof,heap,memprof")],
    );
    assert_eq!(r.code(), 0);
    let err = r.stderr();
    assert_eq!(
        err.matches("accepted, not implemented yet").count(),
        2,
        "{err}"
    );
    r.profile("drhook.prof.1");
}

#[test]
fn silent_keeps_only_the_profile_messages() {
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
    let err = r.stderr();
    assert!(!err.contains("DR_HOOK_OPT="), "{err}");
    assert!(!err.contains("bogus"), "{err}");
    assert!(err.contains("Writing profiling information"), "{err}");
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
