//! Every way a process ends.

use super::*;

#[test]
fn every_ending_writes_the_profile_once_with_the_programs_status() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = life(d.path());
    let exe = exe.display().to_string();
    for (scenario, code, sig) in [
        ("exit3", Some(3), None),
        ("_exit5", Some(5), None),
        ("abort", None, Some(libc::SIGABRT)),
        ("assert", None, Some(libc::SIGABRT)),
        ("sigterm", None, Some(libc::SIGTERM)),
    ] {
        let w = tempdir();
        let r = drhook_run(w.path(), &[], &exe, &[scenario], &[]);
        assert_eq!(r.output.status.code(), code, "{scenario}: {}", r.stderr());
        assert_eq!(signal(&r), sig, "{scenario}");
        assert_eq!(
            profiles(w.path()),
            vec!["drhook.prof.1".to_string()],
            "{scenario}: {}",
            r.stderr()
        );
        assert_eq!(writes(&r), 1, "{scenario}: written once:\n{}", r.stderr());
        let p = parse(w.path(), "drhook.prof.1");
        assert_eq!(p.row("main", 1).calls, 1, "{scenario}");
        if sig.is_some() {
            assert!(
                r.stderr().contains("DrHookCallTree") || r.stderr().contains("signal"),
                "{scenario}: a traceback:\n{}",
                r.stderr()
            );
        }
    }
    // DRHOOK_PROFILE_ON_FAILURE=0: no profile for a failing ending, as the
    // reference libmonitor's default.
    for scenario in ["exit3", "abort"] {
        let w = tempdir();
        let r = drhook_run(w.path(), &["--no-failure-profile"], &exe, &[scenario], &[]);
        assert_ne!(r.output.status.code(), Some(0));
        assert!(
            profiles(w.path()).is_empty(),
            "{scenario}: {:?}",
            profiles(w.path())
        );
    }
}

#[test]
fn threads_returning_exiting_and_running_at_exit() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = life(d.path());
    let r = drhook_run(d.path(), &[], &exe.display().to_string(), &["threads"], &[]);
    ok(&r);
    let p = parse(d.path(), "drhook.prof.1");
    let main = p.row("main", 1);
    let named = |n: &str| p.rows_of(n);
    assert_eq!(named("thread:worker").len(), 2, "{:#?}", p.rows);
    assert_eq!(named("thread:exits_early").len(), 1, "pthread_exit");
    // Numbered in the order they were created, whatever order they start in.
    let mut w: Vec<u32> = named("thread:worker").iter().map(|r| r.tid).collect();
    w.sort();
    assert_eq!(w, vec![2, 3]);
    assert_eq!(named("thread:exits_early")[0].tid, 4);
    assert_eq!(named("thread:forever")[0].tid, 5);
    let forever = named("thread:forever");
    assert_eq!(forever.len(), 1, "a detached thread still running at exit");
    assert!(forever[0].total_s > 0.0 && forever[0].total_s < main.total_s);
    for r in p.rows.iter().filter(|r| r.name.starts_with("thread:")) {
        assert_eq!(r.calls, 1, "{r:?}");
        assert!(r.tid >= 2);
    }
    assert_eq!(p.threads, 5);
}

#[test]
fn a_cancelled_thread_ends_at_its_cancellation() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = life(d.path());
    let r = drhook_run(d.path(), &[], &exe.display().to_string(), &["cancel"], &[]);
    ok(&r);
    assert!(r.stdout().contains("cancelled 1"), "{}", r.stdout());
    let p = parse(d.path(), "drhook.prof.1");
    let main = p.row("main", 1);
    let c = p.rows_of("thread:cancelled");
    assert_eq!(c.len(), 1, "{:#?}", p.rows);
    assert_eq!((c[0].calls, c[0].tid), (1, 2), "{:?}", c[0]);
    // Ended when it was cancelled (a key's destructor, `sys::exit_key`),
    // before the main thread's last and longest part: a thread left open
    // would be counted up to the profile's write, as long as `main`.
    assert!(
        c[0].total_s > 0.0 && c[0].total_s < main.total_s / 2.0,
        "{:?} against main {:?}",
        c[0],
        main
    );
    assert_eq!(p.threads, 2);
}

#[test]
fn a_fork_child_writes_its_own_profile() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = life(d.path());
    let r = drhook_run(d.path(), &[], &exe.display().to_string(), &["fork"], &[]);
    ok(&r);
    let child: u32 = r
        .stdout()
        .lines()
        .find_map(|l| l.strip_prefix("child "))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        profiles(d.path()),
        vec![
            "drhook.prof.1".to_string(),
            format!("drhook.prof.1.life.{child}")
        ]
    );
    let all = all_with_main(d.path());
    // The child's main counts from the fork only.
    let c = all[&format!("drhook.prof.1.life.{child}")]
        .row("main", 1)
        .total_s;
    let p = all["drhook.prof.1"].row("main", 1).total_s;
    assert!(c < p, "child {c} s, parent {p} s");
}

#[test]
fn a_fork_child_that_ran_nothing_instrumented_writes_no_time_profile() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = life(d.path());
    let r = drhook_run(
        d.path(),
        &[],
        &exe.display().to_string(),
        &["fork_exit"],
        &[],
    );
    ok(&r);
    assert!(r.stdout().contains("status 3"), "{}", r.stdout());
    // Its profile would only repeat the parent's open `main`.
    assert_eq!(profiles(d.path()), vec!["drhook.prof.1".to_string()]);
    // With the memory profile on, the child's allocations are its own: it
    // writes its files.
    let d = tempdir();
    let r = drhook_run(
        d.path(),
        &["--opt", "prof,memprof"],
        &exe.display().to_string(),
        &["fork_exit"],
        &[],
    );
    ok(&r);
    let child: Vec<String> = profiles(d.path())
        .into_iter()
        .filter(|f| child_name(f.trim_end_matches("-mem")).is_some())
        .collect();
    assert_eq!(child.len(), 2, "{child:?}");
    assert!(child.iter().any(|f| f.ends_with("-mem")), "{child:?}");
}

#[test]
fn children_of_system_posix_spawn_and_vfork_are_followed() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = life(d.path());
    let r = drhook_run(d.path(), &[], &exe.display().to_string(), &["spawn"], &[]);
    ok(&r);
    assert_eq!(r.stdout(), "spawned: system 0 posix_spawnp 0\n");
    let files = profiles(d.path());
    let cmds = child_commands(&files);
    // system() runs `sh -c true` (true is a builtin of sh), posix_spawnp
    // and vfork+exec run true: each process its own file, and none for the
    // vfork child that only execs.
    assert_eq!(cmds.get("sh"), Some(&1), "{files:?}");
    assert_eq!(cmds.get("true"), Some(&2), "{files:?}");
    assert_eq!(files.len(), 4, "{files:?}");
    all_with_main(d.path());
}

#[test]
fn a_failed_exec_changes_nothing_and_a_successful_one_passes_the_role_on() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = life(d.path()).display().to_string();
    std::fs::write(d.path().join("noexec.txt"), "not a program").unwrap();
    // Executable, but no format the kernel knows: exec fails with ENOEXEC
    // after the layer has ended the process for it.
    std::fs::write(d.path().join("bad.bin"), "garbage without a #! line").unwrap();
    Command::new("chmod")
        .args(["+x", "bad.bin"])
        .current_dir(d.path())
        .status()
        .unwrap();
    let r = drhook_run(
        d.path(),
        &[],
        &exe,
        &["execfail", "./noexec.txt", "./bad.bin"],
        &[],
    );
    ok(&r);
    assert!(
        r.stdout().contains(&format!(
            "errno {} {} {}",
            libc::ENOENT,
            libc::EACCES,
            libc::ENOEXEC
        )),
        "errno as the C library left it: {}",
        r.stdout()
    );
    assert_eq!(profiles(d.path()), vec!["drhook.prof.1".to_string()]);
    assert_eq!(writes(&r), 1, "{}", r.stderr());
    // The whole run, across the failed execs.
    assert_eq!(program_of(&parse(d.path(), "drhook.prof.1")), exe);

    let w = tempdir();
    for f in ["noexec.txt", "bad.bin"] {
        std::fs::copy(d.path().join(f), w.path().join(f)).unwrap();
    }
    let r = drhook_run(
        w.path(),
        &[],
        &exe,
        &["execfail", "./noexec.txt", "./bad.bin", "true"],
        &[],
    );
    ok(&r);
    let files = profiles(w.path());
    assert_eq!(files.len(), 2, "{files:?}");
    // The program it became writes the plain name; its own profile up to
    // the exec is a child's.
    assert_eq!(program_of(&parse(w.path(), "drhook.prof.1")), "true");
    let (_, cmd, _) = child_name(&files[1]).unwrap();
    assert_eq!(cmd, "life");
}
