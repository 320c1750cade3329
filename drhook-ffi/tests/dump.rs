//! A look into a running job: `drhook dump PID` on a program blocked in
//! `read` (a pipe), on OpenMP threads in a barrier, on two MPI ranks in a
//! collective (through the launcher's PID), and `DR_HOOK_HANG_TIMEOUT` on
//! a program that sleeps in a region. Each time: every thread's tree, the
//! profile so far (`drhook.prof.N.partial`), and the program goes on
//! unchanged (its output, its exit status, a `read` not interrupted).

mod common;
use common::*;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Starts `program` in `dir` with a clean Dr.Hook environment plus `env`,
/// stdin and stdout piped, stderr into `dir/stderr.txt`.
fn spawn(dir: &Path, program: &str, args: &[&str], env: &[(&str, &str)]) -> Child {
    let mut cmd = Command::new(program);
    cmd.args(args).current_dir(dir);
    for (k, _) in std::env::vars() {
        if k.starts_with("DR_HOOK") || k.starts_with("DRHOOK_") {
            cmd.env_remove(k);
        }
    }
    cmd.envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(dir.join("stderr.txt")).unwrap());
    cmd.spawn().unwrap()
}

/// Reads stdout lines until one equals `line` (the program is then about
/// to block), returning the reader.
fn wait_for_line(child: &mut Child, line: &str) -> BufReader<std::process::ChildStdout> {
    wait_for_lines(child, &[line])
}

/// Reads stdout lines until each of `lines` was seen, in any order.
fn wait_for_lines(child: &mut Child, lines: &[&str]) -> BufReader<std::process::ChildStdout> {
    let mut r = BufReader::new(child.stdout.take().unwrap());
    let mut l = String::new();
    let mut missing: Vec<&str> = lines.to_vec();
    while !missing.is_empty() {
        l.clear();
        assert!(r.read_line(&mut l).unwrap() > 0, "no {missing:?} lines");
        missing.retain(|m| *m != l.trim());
    }
    r
}

fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(
            t.elapsed() < Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn drhook_dump(pid: u32) {
    let out = Command::new(drhook_exe())
        .args(["dump", &pid.to_string()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "drhook dump: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn parse(dir: &Path, name: &str) -> drhook_tests::Profile {
    drhook_tests::Profile::parse(&std::fs::read_to_string(dir.join(name)).unwrap())
}

/// The dump's `[DrHookCallTree] :` lines, names only, with their depth.
fn tree_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| l.split("[DrHookCallTree] :").nth(1))
        .map(|t| t.split(" ,").next().unwrap().trim_end().to_string())
        .collect()
}

#[test]
fn dump_of_a_program_blocked_in_read() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = c_exe(
        d.path(),
        "dump_read",
        &[&prog("dump_read.c")],
        &[],
        Link::Shared,
    );
    let env = [("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof")];
    let mut c = spawn(d.path(), &exe.display().to_string(), &[], &env);
    let mut out = wait_for_line(&mut c, "waiting");
    // In read(2) (the line is printed just before): wait for it to sleep.
    let stat = format!("/proc/{}/stat", c.id());
    wait_for("the read", || {
        std::fs::read_to_string(&stat)
            .is_ok_and(|s| s.rsplit(')').next().unwrap().trim_start().starts_with('S'))
    });
    drhook_dump(c.id());
    let partial = d.path().join("drhook.prof.1.partial");
    wait_for("the partial profile", || partial.exists());
    let p = parse(d.path(), "drhook.prof.1.partial");
    assert_eq!(p.row("OUTER", 1).calls, 1);
    assert_eq!(p.row("WAIT_INPUT", 1).calls, 1);
    let err = std::fs::read_to_string(d.path().join("stderr.txt")).unwrap();
    assert!(err.contains("[DrHookDump] Thread#1"), "{err}");
    assert_eq!(tree_lines(&err), ["  OUTER", "   WAIT_INPUT"], "{err}");
    // The program goes on: the read was restarted, not failed with EINTR.
    c.stdin.as_mut().unwrap().write_all(b"x").unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    assert_eq!(rest, "read 1 errno 0 byte x\n");
    assert!(c.wait().unwrap().success());
    let p = parse(d.path(), "drhook.prof.1");
    assert_eq!(p.row("WAIT_INPUT", 1).calls, 1);
    // A process without a dump handler is not sent anything.
    let mut sleeper = Command::new("sleep").arg("10").spawn().unwrap();
    let out = Command::new(drhook_exe())
        .args(["dump", &sleeper.id().to_string()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        sleeper.try_wait().unwrap().is_none(),
        "sleep must still run"
    );
    sleeper.kill().unwrap();
    sleeper.wait().unwrap();
}

#[test]
fn dump_of_openmp_threads_in_a_barrier() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = c_exe(
        d.path(),
        "dump_omp",
        &[&prog("dump_omp.c")],
        &["-fopenmp"],
        Link::Shared,
    );
    let env = [
        ("DR_HOOK", "1"),
        ("DR_HOOK_OPT", "prof"),
        ("OMP_WAIT_POLICY", "passive"),
    ];
    let mut c = spawn(d.path(), &exe.display().to_string(), &[], &env);
    let mut out = wait_for_line(&mut c, "waiting");
    // All four threads in their region (three in the barrier): wait until
    // every task sleeps.
    let tasks = format!("/proc/{}/task", c.id());
    wait_for("four sleeping threads", || {
        let states: Vec<String> = std::fs::read_dir(&tasks)
            .unwrap()
            .flatten()
            .filter_map(|t| std::fs::read_to_string(t.path().join("stat")).ok())
            .map(|s| s.rsplit(')').next().unwrap().trim_start()[..1].to_string())
            .collect();
        states.len() >= 4 && states.iter().all(|s| s == "S")
    });
    drhook_dump(c.id());
    let partial = d.path().join("drhook.prof.1.partial");
    wait_for("the partial profile", || partial.exists());
    let err = std::fs::read_to_string(d.path().join("stderr.txt")).unwrap();
    let threads = err
        .lines()
        .filter(|l| l.contains("[DrHookDump] Thread#"))
        .count();
    assert_eq!(threads, 4, "{err}");
    let lines = tree_lines(&err);
    assert_eq!(
        lines.iter().filter(|l| l.trim() == "OMP_WORKER").count(),
        4,
        "{err}"
    );
    assert_eq!(
        lines.iter().filter(|l| l.trim() == "READER").count(),
        1,
        "{err}"
    );
    assert_eq!(
        lines.iter().filter(|l| l.trim() == "MAIN_REGION").count(),
        1,
        "{err}"
    );
    let p = parse(d.path(), "drhook.prof.1.partial");
    assert_eq!(p.rows_of("OMP_WORKER").len(), 4, "{:#?}", p.rows);
    c.stdin.as_mut().unwrap().write_all(b"x").unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    assert_eq!(rest, "done\n");
    assert!(c.wait().unwrap().success());
}

#[test]
fn dump_of_mpi_ranks_in_a_collective_through_the_launcher() {
    if !have_tool("mpirun") || !have_tool("mpicc") {
        return;
    }
    let d = tempdir();
    let src = prog("dump_mpi.c").display().to_string();
    tool(
        d.path(),
        "mpicc",
        &[
            "-O1",
            "-g",
            "-finstrument-functions",
            "-o",
            "dump_mpi",
            &src,
        ],
    );
    let exe = drhook_exe().display().to_string();
    let args = [
        "run",
        "--no-out-dir",
        "--",
        "mpirun",
        "--allow-run-as-root",
        "--oversubscribe",
        "-n",
        "2",
        "./dump_mpi",
    ];
    let env = [("DR_HOOK_DUMP_FILE", "dump.%d.txt")];
    let mut c = spawn(d.path(), &exe, &args, &env);
    // Rank 0 waits for the file, rank 1 is in collective() (its barrier).
    let mut out = wait_for_lines(&mut c, &["waiting", "rank 1 in collective"]);
    // `drhook run` execs the launcher: this PID is mpirun's.
    drhook_dump(c.id());
    let p1 = d.path().join("drhook.prof.1.partial");
    let p2 = d.path().join("drhook.prof.2.partial");
    wait_for("both ranks' partial profiles", || {
        p1.exists() && p2.exists()
    });
    let dumps = || -> Vec<String> {
        std::fs::read_dir(d.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with("dump."))
            .map(|e| std::fs::read_to_string(e.path()).unwrap())
            .collect()
    };
    wait_for("the ranks' dumps", || {
        let v = dumps();
        v.iter()
            .any(|t| tree_lines(t).iter().any(|l| l.trim() == "collective"))
            && v.iter()
                .any(|t| tree_lines(t).iter().any(|l| l.trim() == "wait_for_file"))
    });
    assert_eq!(
        parse(d.path(), "drhook.prof.1.partial")
            .row("wait_for_file", 1)
            .calls,
        1
    );
    assert_eq!(
        parse(d.path(), "drhook.prof.2.partial")
            .row("collective", 1)
            .calls,
        1
    );
    std::fs::write(d.path().join("go"), "").unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    let mut done: Vec<&str> = rest.lines().filter(|l| l.ends_with("done")).collect();
    done.sort();
    assert_eq!(done, ["rank 0 done", "rank 1 done"], "{rest}");
    assert!(c.wait().unwrap().success());
    assert_eq!(
        parse(d.path(), "drhook.prof.2").row("collective", 1).calls,
        1
    );
}

#[test]
fn hang_timeout_dumps_once_and_the_program_goes_on() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = c_exe(
        d.path(),
        "dump_sleep",
        &[&prog("dump_sleep.c")],
        &[],
        Link::Shared,
    );
    let r = run(
        d.path(),
        &exe,
        &[
            ("DR_HOOK", "1"),
            ("DR_HOOK_OPT", "prof"),
            ("DR_HOOK_HANG_TIMEOUT", "1"),
        ],
    );
    ok(&r);
    assert_eq!(r.stdout(), "done\n");
    let err = r.stderr();
    let heads: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("[DrHookDump] pid"))
        .collect();
    assert_eq!(heads.len(), 1, "{err}");
    assert!(
        heads[0].contains("no region entered or left for 1 s"),
        "{err}"
    );
    assert_eq!(tree_lines(&err), ["  SLEEPY"], "{err}");
    // The copy writes the partial profile while the program sleeps on.
    wait_for("the partial profile", || {
        d.path().join("drhook.prof.1.partial").exists()
    });
    let p = parse(d.path(), "drhook.prof.1.partial");
    assert_eq!(p.row("SLEEPY", 1).calls, 1);
    // Without the variable: no watchdog, no dump.
    let r = run(d.path(), &exe, &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof")]);
    ok(&r);
    assert!(!r.stderr().contains("[DrHookDump]"), "{}", r.stderr());
}

#[test]
fn a_program_using_the_dump_signal_keeps_it_under_drhook_run() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let src = prog("dump_own_handler.c").display().to_string();
    tool(d.path(), "gcc", &["-O1", "-o", "own", &src]);
    let plain = run_in(d.path(), "./own", &[], &[]);
    ok(&plain);
    assert_eq!(plain.stdout(), "default=1\nhandled=1\n");
    let r = run_in(
        d.path(),
        &drhook_exe().display().to_string(),
        &["run", "--no-out-dir", "--", "./own"],
        &[],
    );
    ok(&r);
    assert_eq!(
        r.stdout(),
        plain.stdout(),
        "the program sees its own signal"
    );
    assert!(!r.stderr().contains("[DrHookDump]"), "{}", r.stderr());
}

#[test]
fn a_fork_child_has_its_own_hang_watchdog() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = c_exe(
        d.path(),
        "fork_sleep",
        &[&prog("dump_fork_sleep.c")],
        &[],
        Link::Shared,
    );
    let r = run(
        d.path(),
        &exe,
        &[
            ("DR_HOOK", "1"),
            ("DR_HOOK_OPT", "prof"),
            ("DR_HOOK_HANG_TIMEOUT", "1"),
        ],
    );
    ok(&r);
    assert_eq!(r.stdout(), "done\n");
    let err = r.stderr();
    let mut pids: Vec<&str> = err
        .lines()
        .filter_map(|l| l.split("[DrHookDump] pid ").nth(1))
        .map(|t| t.split(':').next().unwrap())
        .collect();
    pids.sort();
    pids.dedup();
    assert_eq!(pids.len(), 2, "the parent's and the child's dumps:\n{err}");
    // Each partial profile is named as its process's profile: the child's
    // after the child's pid, not the copy's.
    let child: Vec<String> = pids
        .iter()
        .map(|p| format!("drhook.prof.1.fork_sleep.{p}.partial"))
        .collect();
    wait_for("both partial profiles", || {
        d.path().join("drhook.prof.1.partial").exists()
            && child.iter().filter(|c| d.path().join(c).exists()).count() == 1
    });
}
