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
        &[
            "run",
            "--no-out-dir",
            "--preload",
            "/no/lib.so",
            "--",
            "true",
        ],
        &[],
    );
    assert_eq!(r.output.status.code(), Some(2));
    assert!(r.stderr().contains("/no/lib.so"), "{}", r.stderr());
    // LD_PRELOAD already set: appended to.
    let r = run_in(
        d.path(),
        &drhook_exe().display().to_string(),
        &["run", "--no-out-dir", "--dry-run", "--", "true"],
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

/// `drhook run --out-dir` (issue 28: `make -C dir` put its children's
/// profiles in each child's directory): one directory per run, named after
/// the command and the time in the launch directory, every process's files
/// in it whatever its working directory, and `drhook procs` gives the
/// process tree (make, its shell children) and the time per command.
#[test]
fn out_dir_holds_every_process_and_procs_shows_the_tree() {
    if !have_tool("make") {
        return;
    }
    let d = tempdir();
    let sub = d.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    std::fs::write(
        sub.join("Makefile"),
        "all:\n\t@echo built\n\t@sh -c 'cat Makefile >/dev/null'\n",
    )
    .unwrap();
    let r = drhook_run(d.path(), &["--out-dir"], "make", &["-s", "-C", "sub"], &[]);
    ok(&r);
    assert_eq!(r.stdout(), "built\n");
    let dirs: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.starts_with("drhook."))
        .collect();
    assert_eq!(dirs.len(), 1, "one directory for the run: {dirs:?}");
    assert!(dirs[0].starts_with("drhook.make.2"), "{dirs:?}");
    assert!(
        std::fs::read_dir(&sub).unwrap().count() == 1,
        "only the Makefile in sub/"
    );
    let run_dir = d.path().join(&dirs[0]);
    let procs = run_in(
        d.path(),
        &drhook_exe().display().to_string(),
        &["procs", "--json", run_dir.to_str().unwrap()],
        &[],
    );
    ok(&procs);
    let v: serde_json::Value = serde_json::from_str(&procs.stdout()).unwrap();
    let roots = v["processes"].as_array().unwrap();
    assert_eq!(roots.len(), 1, "{v:#}");
    assert_eq!(roots[0]["command"], "make", "{v:#}");
    let kids: Vec<&str> = roots[0]["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["command"].as_str().unwrap())
        .collect();
    assert!(kids.contains(&"sh"), "{v:#}");
    for f in roots[0]["files"].as_array().unwrap() {
        assert!(run_dir.join(f.as_str().unwrap()).is_file(), "{f}");
    }
    let by: Vec<&str> = v["by_command"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["command"].as_str().unwrap())
        .collect();
    assert!(by.contains(&"make") && by.contains(&"sh"), "{by:?}");
}

/// The files of the run's directory `dir` (names).
fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Issue 28 (file sprawl): with no option, `drhook run` puts the run's
/// files in one directory named after the command and the time, says so
/// on stderr, and nothing else lands in the working directory;
/// `--no-out-dir`, `--prefix` and a `DR_HOOK_PROFILE` of the user's keep
/// the plain names where they said.
#[test]
fn one_directory_per_run_by_default_unless_a_name_is_given() {
    let exe = drhook_exe().display().to_string();
    let d = tempdir();
    let r = run_in(d.path(), &exe, &["run", "--", "true"], &[]);
    ok(&r);
    let made = names_in(d.path());
    assert_eq!(made.len(), 1, "{made:?}");
    let stamp = made[0].strip_prefix("drhook.true.").unwrap_or("");
    assert!(
        stamp.len() == 15 && stamp.as_bytes()[8] == b'-',
        "drhook.true.YYYYMMDD-HHMMSS: {made:?}"
    );
    let run_dir = d.path().join(&made[0]);
    assert!(
        r.stderr()
            .contains(&format!("drhook run: files in {}", run_dir.display())),
        "{}",
        r.stderr()
    );
    let files = names_in(&run_dir);
    assert_eq!(files.len(), 2, "{files:?}");
    assert!(
        files[0].starts_with("true.") && files[0].ends_with(".drhook.prof.1"),
        "{files:?}"
    );
    assert_eq!(files[1], format!("{}.json", files[0]));
    // A second run in the same second gets a directory of its own.
    ok(&run_in(d.path(), &exe, &["run", "--", "true"], &[]));
    assert_eq!(names_in(d.path()).len(), 2, "{:?}", names_in(d.path()));

    // The plain names, where the user said.
    let d = tempdir();
    let r = run_in(d.path(), &exe, &["run", "--no-out-dir", "--", "true"], &[]);
    ok(&r);
    assert!(!r.stderr().contains("files in"), "{}", r.stderr());
    assert_eq!(names_in(d.path()), ["drhook.prof.1"]);
    let r = run_in(
        d.path(),
        &exe,
        &["run", "--", "true"],
        &[("DR_HOOK_PROFILE", "mine.prof")],
    );
    ok(&r);
    assert_eq!(names_in(d.path()), ["drhook.prof.1", "mine.prof.1"]);
    let r = run_in(
        d.path(),
        &exe,
        &["run", "--prefix", "p/", "--", "true"],
        &[],
    );
    ok(&r);
    assert_eq!(
        names_in(d.path()),
        ["drhook.prof.1", "mine.prof.1", "p"],
        "no run directory beside the prefix's"
    );
    assert_eq!(names_in(&d.path().join("p")).len(), 1);
    // --out-dir and --no-out-dir together: a usage error.
    let r = run_in(
        d.path(),
        &exe,
        &["run", "--out-dir", "--no-out-dir", "--", "true"],
        &[],
    );
    assert_eq!(r.output.status.code(), Some(2), "{}", r.stderr());
}
