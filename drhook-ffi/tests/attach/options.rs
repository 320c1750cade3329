//! Options of drhook run.

use super::*;

#[test]
fn follow_and_prefix_options() {
    let d = tempdir();
    let r = drhook_run(
        d.path(),
        &["--follow", "none"],
        "sh",
        &["-c", "echo a | cat"],
        &[],
    );
    ok(&r);
    assert_eq!(profiles(d.path()), vec!["drhook.prof.1".to_string()]);
    let d = tempdir();
    let r = drhook_run(
        d.path(),
        &["--follow", "^cat$", "--prefix", "run1/"],
        "sh",
        &["-c", "echo a | cat | tr a b"],
        &[],
    );
    ok(&r);
    assert_eq!(r.stdout(), "b\n");
    // The directory is created when the first profile is written; the
    // start-up check does not call it missing (issue 28: a false "Error:
    // ... No such file or directory" once per process).
    assert!(!r.stderr().contains("Error"), "{}", r.stderr());
    let mut in_dir: Vec<String> = std::fs::read_dir(d.path().join("run1"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    in_dir.sort();
    assert_eq!(in_dir.len(), 2, "sh and cat, not tr: {in_dir:?}");
    assert!(
        in_dir
            .iter()
            .any(|f| f.starts_with("sh.") && f.ends_with(".drhook.prof.1"))
    );
    assert!(
        in_dir
            .iter()
            .any(|f| f.starts_with("cat.") && f.ends_with(".drhook.prof.1"))
    );
}

#[test]
fn drhook_run_exit_status_and_errors() {
    let d = tempdir();
    let r = drhook_run(d.path(), &[], "/no/such/program", &[], &[]);
    assert_eq!(r.output.status.code(), Some(127));
    assert!(
        r.stderr().contains("cannot run /no/such/program"),
        "{}",
        r.stderr()
    );
    let r = run_in(
        d.path(),
        &drhook_exe().display().to_string(),
        &["run", "--preload", "/no/lib.so", "--", "true"],
        &[],
    );
    assert_eq!(r.output.status.code(), Some(2));
    assert!(r.stderr().contains("/no/lib.so"), "{}", r.stderr());
    // LD_PRELOAD already set: appended to.
    let r = run_in(
        d.path(),
        &drhook_exe().display().to_string(),
        &["run", "--dry-run", "--", "true"],
        &[("LD_PRELOAD", "libfoo.so")],
    );
    ok(&r);
    assert!(
        r.stdout().starts_with("LD_PRELOAD=libfoo.so:/")
            && r.stdout().contains("libdrhook_preload.so"),
        "{}",
        r.stdout()
    );
}
