//! Crash tracebacks: each test crashes the test program in a known place and
//! checks the printed calling trees, the diagnostics and the exit status.

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};

use drhook_tests::{Run, run_in};

const PROG: &str = env!("CARGO_BIN_EXE_drhook-test-prog");

fn run(scenario: &str, env: &[(&str, &str)]) -> (Run, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut e = vec![("DR_HOOK", "1"), ("DRHOOK_BACKTRACE", "0")];
    e.extend_from_slice(env);
    let r = run_in(dir.path(), PROG, &[scenario], &e);
    (r, dir)
}

/// A `[DrHookCallTree] :` entry: (Dr.Hook thread number, level, name).
fn tree_entries(stderr: &str) -> Vec<(u32, usize, String)> {
    stderr
        .lines()
        .filter_map(|l| {
            let (prefix, rest) = l.split_once("] [DrHookCallTree] : ")?;
            let tid: u32 = prefix
                .trim_start_matches('[')
                .split(':')
                .nth(3)?
                .parse()
                .ok()?;
            let level = rest.len() - rest.trim_start().len();
            let name = rest.trim_start().split(' ').next()?.to_string();
            Some((tid, level, name))
        })
        .collect()
}

fn names(entries: &[(u32, usize, String)]) -> Vec<(usize, &str)> {
    entries.iter().map(|(_, l, n)| (*l, n.as_str())).collect()
}

const CRASH_TREE: [(usize, &str); 4] = [
    (1, "CRASH:MAIN"),
    (2, "CRASH:LEVEL1"),
    (3, "CRASH:LEVEL2"),
    (4, "CRASH:LEVEL3"),
];

#[test]
fn sigsegv_in_a_nested_routine() {
    let (r, _d) = run("segv", &[("DRHOOK_BACKTRACE", "1")]);
    assert_eq!(
        r.output.status.signal(),
        Some(libc::SIGSEGV),
        "{}",
        r.stderr()
    );
    let err = r.stderr();
    assert!(err.contains("Received signal#11 (SIGSEGV)"), "{err}");
    assert!(
        err.contains("was caused by address not mapped to object [memaddr=0x10]"),
        "{err}"
    );
    assert!(
        err.contains(" : pc=0x") && err.contains("drhook-test-prog(+0x"),
        "{err}"
    );
    assert_eq!(names(&tree_entries(&err)), CRASH_TREE);
    // Native backtrace, symbolised, starting at the faulting routine.
    let native: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("[LinuxTraceBack] ["))
        .collect();
    assert!(native.len() >= 5, "{err}");
    assert!(
        native[..3].iter().any(|l| l.contains("level3")),
        "{native:#?}"
    );
    assert!(native.iter().any(|l| l.contains("level1")), "{native:#?}");
    assert!(err.contains("DrHook backtrace done for signal#11"));
    // Rust's own SIGSEGV handler was installed first: it ran first, gave
    // the fault back (not a stack overflow: it restored the default
    // action), and Dr.Hook reported; it is not called a second time.
    assert!(!err.contains("Calling previous signal handler"), "{err}");
}

#[test]
fn abort_is_signal_6() {
    let (r, _d) = run("abort", &[]);
    assert_eq!(r.output.status.signal(), Some(libc::SIGABRT));
    let err = r.stderr();
    assert!(err.contains("Received signal#6 (SIGABRT)"));
    assert!(err.contains("tkill()/raise()"));
    assert_eq!(names(&tree_entries(&err)), CRASH_TREE);
}

#[test]
fn sigfpe_from_integer_division() {
    let (r, _d) = run("fpe_int", &[]);
    assert_eq!(r.output.status.signal(), Some(libc::SIGFPE));
    let err = r.stderr();
    assert!(
        err.contains("was caused by integer divide by zero"),
        "{err}"
    );
    assert_eq!(names(&tree_entries(&err)), CRASH_TREE);
}

#[test]
fn sigfpe_from_a_trapped_float_division_names_the_routine() {
    // From Rust the traps are asked for (the default is IEEE results).
    let (r, _d) = run("fpe_float", &[("DR_HOOK_TRAPFPE", "1")]);
    assert_eq!(
        r.output.status.signal(),
        Some(libc::SIGFPE),
        "{}",
        r.stderr()
    );
    let err = r.stderr();
    assert!(
        err.contains("enables SIGFPE-related floating point trapping"),
        "{err}"
    );
    assert!(
        err.contains("was caused by floating-point divide by zero"),
        "{err}"
    );
    assert_eq!(tree_entries(&err).last().unwrap().2, "CRASH:LEVEL3");
    // DR_HOOK_TRAPFPE=0, or unset from Rust: the division gives infinity
    // and the program goes on.
    for env in [&[("DR_HOOK_TRAPFPE", "0")][..], &[]] {
        let (r, _d) = run("fpe_float", env);
        assert_eq!(r.code(), 0, "{}", r.stderr());
        assert!(r.stdout().contains("no crash: inf"));
    }
}

/// Starts `scenario`, waits for "ready" on its stdout, sends SIGTERM.
fn run_until_ready_then_term(
    scenario: &str,
    env: &[(&str, &str)],
    dir: &std::path::Path,
) -> (std::process::ExitStatus, String) {
    let mut cmd = Command::new(PROG);
    cmd.arg(scenario)
        .current_dir(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, _) in std::env::vars() {
        if k.starts_with("DR_HOOK") || k.starts_with("DRHOOK_") {
            cmd.env_remove(k);
        }
    }
    cmd.env("DR_HOOK", "1").env("DRHOOK_BACKTRACE", "0");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "ready");
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let o = child.wait_with_output().unwrap();
    (o.status, String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn sigterm_prints_every_threads_tree_once_and_writes_the_profile() {
    let dir = tempfile::tempdir().unwrap();
    let (status, err) =
        run_until_ready_then_term("term4", &[("DR_HOOK_OPT", "prof,calls")], dir.path());
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{err}");
    assert!(
        err.contains("was caused by kill() from another process (SI_USER) from pid"),
        "{err}"
    );
    let entries = tree_entries(&err);
    // The main thread and the four workers, each exactly once, each with its
    // own routines in order, and nothing of another thread's.
    let mut tids: Vec<u32> = entries.iter().map(|e| e.0).collect();
    tids.dedup();
    assert_eq!(tids.len(), 5, "{err}");
    let mut sorted = tids.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(
        sorted.len(),
        5,
        "each thread's tree is printed once: {tids:?}"
    );
    for k in 1..=4 {
        let outer = format!("TERM:T{k}_OUTER");
        let mine: Vec<_> = entries
            .iter()
            .filter(|e| entries.iter().any(|o| o.0 == e.0 && o.2 == outer))
            .collect();
        let got: Vec<(usize, &str)> = mine.iter().map(|(_, l, n)| (*l, n.as_str())).collect();
        let inner = format!("TERM:T{k}_INNER");
        assert_eq!(
            got,
            vec![(1, outer.as_str()), (2, inner.as_str()), (3, "WAIT:SLEEP")],
            "{err}"
        );
    }
    let main: Vec<_> = entries
        .iter()
        .filter(|e| e.0 == 1)
        .map(|(_, l, n)| (*l, n.as_str()))
        .collect();
    assert_eq!(main, vec![(1, "TERM:MAIN"), (2, "WAIT:SLEEP")]);
    assert!(
        err.lines()
            .any(|l| l.contains("[DrHookCallTree] :  TERM:MAIN ,#1,st=1")),
        "calls are shown with DR_HOOK_OPT=calls"
    );
    // The profile is written after SIGTERM, with the routines still active.
    let r = Run {
        output: std::process::Output {
            status,
            stdout: vec![],
            stderr: err.clone().into_bytes(),
        },
        dir: dir.path().into(),
    };
    let p = r.profile("drhook.prof.1");
    assert_eq!(p.rows_of("WAIT:SLEEP").len(), 5);
    assert_eq!(p.threads, 5);
}

#[test]
fn a_panic_prints_the_threads_tree_then_the_usual_message() {
    let (r, _d) = run("panic_crash", &[]);
    assert_eq!(r.code(), 101);
    let err = r.stderr();
    let tree_at = err
        .find("Rust panic in an instrumented thread")
        .expect(&err);
    let msg_at = err.find("deliberate panic in CRASH:LEVEL3").expect(&err);
    assert!(
        tree_at < msg_at,
        "tree first, then the previous hook's message"
    );
    assert_eq!(names(&tree_entries(&err)), CRASH_TREE);
}

#[test]
fn a_forgotten_exit_gives_the_reference_diagnostics_and_aborts() {
    let (r, _d) = run("forget", &[]);
    assert_eq!(r.output.status.signal(), Some(libc::SIGABRT));
    let err = r.stderr();
    assert!(err.contains("Dr.Hook has detected an invalid key-pointer/handle while leaving the routine 'FORGET:OUTER'"));
    assert!(
        err.contains("A probable routine missing the closing DR_HOOK-call is 'FORGET:FORGOTTEN'")
    );
    assert!(err.contains("Aborting..."));
    let e = tree_entries(&err);
    assert_eq!(
        &names(&e)[..2],
        [(1, "FORGET:OUTER"), (2, "FORGET:FORGOTTEN")]
    );
    assert!(err.contains("Received signal#6 (SIGABRT)"));
    assert!(!err.contains("forget done"));
}

#[test]
fn an_exit_on_the_wrong_thread_is_caught_without_dereferencing() {
    let (r, _d) = run("wrong_thread", &[]);
    assert_eq!(
        r.output.status.signal(),
        Some(libc::SIGABRT),
        "{}",
        r.stderr()
    );
    let err = r.stderr();
    assert!(
        err.contains("while leaving the routine 'WRONG:ROUTINE'"),
        "{err}"
    );
    assert!(err.contains("is not on thread 1's call stack"), "{err}");
    assert!(!r.stdout().contains("not reached"));
}

#[test]
fn ignored_signals_are_left_alone() {
    // SIGTERM ignored by Dr.Hook: the program's own handler runs and it goes on.
    let (r, _d) = run("prev_handler", &[("DR_HOOK_IGNORE_SIGNALS", "15")]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(r.stdout().contains("survived SIGTERM"));
    assert!(!r.stderr().contains("Received signal"));
    // Dr.Hook's handler not installed at all.
    let (r, _d) = run("segv", &[("DR_HOOK_INIT_SIGNALS", "0")]);
    assert_eq!(r.output.status.signal(), Some(libc::SIGSEGV));
    assert!(!r.stderr().contains("Received signal"));
}

/// A handler the program installed before Dr.Hook runs first, as it would
/// without Dr.Hook: it returns, and the program goes on (no traceback, the
/// signal was not fatal). With `DR_HOOK_OPT=noprop` it is not called
/// (the reference's option): Dr.Hook's traceback, then the end.
#[test]
fn a_previous_handler_runs_first_and_the_program_goes_on_unless_noprop() {
    let (r, _d) = run("prev_handler", &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(r.stdout().contains("survived SIGTERM"));
    let err = r.stderr();
    assert!(err.contains("previous SIGTERM handler ran"), "{err}");
    assert!(!err.contains("Received signal"), "{err}");
    let (r, _d) = run("prev_handler", &[("DR_HOOK_OPT", "noprop")]);
    assert_eq!(r.output.status.signal(), Some(libc::SIGTERM));
    assert!(!r.stderr().contains("previous SIGTERM handler ran"));
    assert!(r.stderr().contains("DrHook backtrace done for signal#15"));
    // DR_HOOK_RESTORE_DEFAULT_SIGNALS resets the program's handler first.
    let (r, _d) = run("prev_handler", &[("DR_HOOK_RESTORE_DEFAULT_SIGNALS", "15")]);
    assert_eq!(r.output.status.signal(), Some(libc::SIGTERM));
    assert!(
        !r.stderr().contains("previous SIGTERM handler ran"),
        "{}",
        r.stderr()
    );
    assert!(r.stderr().contains("DrHook backtrace done for signal#15"));
}

#[test]
fn catch_signals_adds_to_the_default_set() {
    let (r, _d) = run("usr1", &[]);
    assert_eq!(r.output.status.signal(), Some(libc::SIGUSR1));
    assert!(
        !r.stderr().contains("Received signal"),
        "SIGUSR1 is not caught by default"
    );
    let (r, _d) = run("usr1", &[("DR_HOOK_CATCH_SIGNALS", "10")]);
    assert_eq!(r.output.status.signal(), Some(libc::SIGUSR1));
    let err = r.stderr();
    assert!(err.contains("Received signal#10 (SIGUSR1)"), "{err}");
    assert_eq!(names(&tree_entries(&err)), [(1, "USR1:MAIN")]);
}

/// The program's own handler, called first, is the program's business: a
/// slow one is not ended by Dr.Hook's harakiri alarm (which bounds Dr.Hook's
/// own report, and the handlers of runtimes that end the process, called
/// after it); the program ends as its handler decides.
#[test]
fn a_slow_handler_of_the_program_is_not_ended_by_harakiri() {
    let (r, _d) = run("slow_handler", &[("DR_HOOK_HARAKIRI_TIMEOUT", "1")]);
    assert_eq!(r.output.status.code(), Some(7), "{}", r.stderr());
    assert!(r.stderr().contains("slow SIGTERM handler done"));
    assert!(!r.stderr().contains("Harakiri"), "{}", r.stderr());
    assert!(!r.stderr().contains("Received signal"), "{}", r.stderr());
}

#[test]
fn simultaneous_crashes_of_several_tasks_do_not_interleave() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("stderr.log");
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .unwrap();
    let at = (std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
        + 700)
        .to_string();
    let children: Vec<_> = (0..3)
        .map(|rank| {
            let mut c = Command::new(PROG);
            c.args(["crash_at", &at])
                .current_dir(dir.path())
                .stderr(file.try_clone().unwrap())
                .stdout(Stdio::null());
            c.env("DR_HOOK", "1")
                .env("DRHOOK_BACKTRACE", "0")
                .env("PMI_RANK", rank.to_string())
                .env("PMI_SIZE", "3");
            c.spawn().unwrap()
        })
        .collect();
    for mut c in children {
        assert_eq!(c.wait().unwrap().signal(), Some(libc::SIGSEGV));
    }
    let text = std::fs::read_to_string(&log).unwrap();
    // Between "Received signal" and "backtrace done", only one task speaks.
    let mut current: Option<&str> = None;
    let mut finished = 0;
    for l in text.lines().filter(|l| {
        l.starts_with("[EC_DRHOOK:vm") || l.starts_with("[EC_DRHOOK:") && !l.contains("hostname")
    }) {
        let myproc = l.split(':').nth(2).unwrap();
        if l.contains("Waiting for another process's traceback") {
            continue; // a one-line notice, printed before the lock is taken
        }
        if l.contains("Received signal#11") {
            assert!(
                current.is_none(),
                "task {myproc} started while {current:?} was printing:\n{text}"
            );
            current = Some(myproc);
        } else if let Some(c) = current {
            if l.contains("[signal_drhook") || l.contains("[DrHookCallTree]") {
                assert_eq!(c, myproc, "interleaved:\n{text}");
            }
            if l.contains("DrHook backtrace done") {
                current = None;
                finished += 1;
            }
        }
    }
    assert_eq!(finished, 3, "{text}");
}

#[test]
fn signals_during_full_speed_enters_and_exits_always_give_parsable_output() {
    for i in 0..100 {
        let dir = tempfile::tempdir().unwrap();
        let (status, err) = run_until_ready_then_term(
            "stress",
            &[("DR_HOOK_OPT", if i % 2 == 0 { "" } else { "prof,calls" })],
            dir.path(),
        );
        assert_eq!(status.signal(), Some(libc::SIGTERM), "run {i}: {err}");
        let entries = tree_entries(&err);
        let mut headers = std::collections::HashMap::new();
        for l in err
            .lines()
            .filter(|l| l.contains("[DrHookCallTree] DR_HOOK call tree"))
        {
            let tid: u32 = l
                .trim_start_matches('[')
                .split(':')
                .nth(3)
                .unwrap()
                .parse()
                .unwrap();
            *headers.entry(tid).or_insert(0) += 1;
        }
        assert!(
            headers.values().all(|&n| n == 1),
            "run {i}: a thread printed twice: {headers:?}\n{err}"
        );
        assert!(!headers.is_empty(), "run {i}: {err}");
        for (tid, level, name) in &entries {
            assert!(
                name.starts_with("STRESS:"),
                "run {i}: bad entry {tid} {level} {name}\n{err}"
            );
            assert!(*level >= 1 && *level <= 4, "run {i}: {err}");
        }
        // Every thread's tree starts at its outermost routine and is nested by one level at a time.
        let mut last: std::collections::HashMap<u32, usize> = Default::default();
        for (tid, level, _) in &entries {
            let prev = last.insert(*tid, *level).unwrap_or(0);
            assert_eq!(
                *level,
                prev + 1,
                "run {i}: thread {tid} jumps from level {prev} to {level}\n{err}"
            );
        }
        assert!(
            err.contains("DrHook backtrace done for signal#15"),
            "run {i}"
        );
    }
}

#[test]
fn sigxcpu_writes_no_profile() {
    let (r, d) = run("xcpu", &[("DR_HOOK_OPT", "prof")]);
    assert_eq!(r.output.status.signal(), Some(libc::SIGXCPU));
    assert!(
        r.stderr().contains("DrHook backtrace done for signal#24"),
        "{}",
        r.stderr()
    );
    assert!(
        !d.path().join("drhook.prof.1").exists(),
        "no CPU time is left after SIGXCPU: no profile"
    );
    let (r, d) = run("abort", &[("DR_HOOK_OPT", "prof")]);
    assert_eq!(r.output.status.signal(), Some(libc::SIGABRT));
    assert!(
        d.path().join("drhook.prof.1").exists(),
        "other signals write the profile"
    );
}

#[test]
fn strict_regions_compare_names_at_exit() {
    let (r, _d) = run("strict", &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(r.stdout().contains("strict exit accepted"));
    let (r, _d) = run("strict", &[("DR_HOOK_STRICT_REGIONS", "1")]);
    assert_eq!(r.output.status.signal(), Some(libc::SIGABRT));
    let err = r.stderr();
    assert!(
        err.contains("DR_HOOK_STRICT_REGIONS: the exit names 'STRICT:NAMED_AT_EXIT' but the routine being left is 'STRICT:ENTERED'"),
        "{err}"
    );
}
