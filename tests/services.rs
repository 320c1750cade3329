//! Services under Dr.Hook (issue 31): a process whose main thread never
//! entered a region, stopped by a signal, writes its profile and ends by
//! that signal, whatever alternate stack its threads have; a program that
//! handles SIGTERM itself shuts down gracefully with its profile; Rust's
//! floating-point semantics stay; Dr.Hook starts when the tracing layer is
//! registered.

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, ExitStatus, Stdio};

use drhook_tests::{Profile, run_in};

const PROG: &str = env!("CARGO_BIN_EXE_drhook-test-service");

struct Stopped {
    status: ExitStatus,
    stdout: String,
    stderr: String,
    dir: tempfile::TempDir,
}

impl Stopped {
    fn profile(&self) -> Profile {
        let path = self.dir.path().join("drhook.prof.1");
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}\nstderr:\n{}", path.display(), self.stderr));
        Profile::parse(&text)
    }
}

/// Starts `scenario` with `DR_HOOK=1 DR_HOOK_OPT=prof`, waits for "ready",
/// sends `sig` to the process.
fn stop_with(scenario: &str, sig: i32, env: &[(&str, &str)]) -> Stopped {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(PROG);
    cmd.arg(scenario)
        .current_dir(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, _) in std::env::vars() {
        if k.starts_with("DR_HOOK") || k.starts_with("DRHOOK_") {
            cmd.env_remove(k);
        }
    }
    cmd.env("DR_HOOK", "1")
        .env("DR_HOOK_OPT", "prof")
        .env("DRHOOK_BACKTRACE", "0");
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut stdout = String::new();
    loop {
        let mut line = String::new();
        if out.read_line(&mut line).unwrap() == 0 {
            break;
        }
        stdout.push_str(&line);
        if line.trim() == "ready" {
            break;
        }
    }
    assert!(stdout.ends_with("ready\n"), "{stdout}");
    // SAFETY: sending a signal to our own child.
    unsafe { libc::kill(child.id() as i32, sig) };
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut out, &mut rest).unwrap();
    stdout.push_str(&rest);
    let o = child.wait_with_output().unwrap();
    Stopped {
        status: o.status,
        stdout,
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        dir,
    }
}

fn assert_worker_profile(s: &Stopped) {
    let p = s.profile();
    let req = p.rows_of("SERVICE:REQUEST");
    assert_eq!(req.len(), 1, "{:#?}", p.rows);
    assert!(req[0].calls >= 1, "{:#?}", p.rows);
    let step = p.rows_of("SERVICE:STEP");
    assert_eq!(step.len(), 1);
    // Each REQUEST makes two STEPs (the one active at the signal may have
    // entered only the first).
    assert!(
        step[0].calls.abs_diff(2 * req[0].calls) <= 2,
        "{:#?}",
        p.rows
    );
}

#[test]
fn sigterm_and_sigint_to_a_main_thread_outside_any_region_write_the_profile() {
    for sig in [libc::SIGTERM, libc::SIGINT] {
        let s = stop_with("worker", sig, &[]);
        assert_eq!(s.status.signal(), Some(sig), "{}", s.stderr);
        assert!(!s.stderr.contains("Second fatal signal"), "{}", s.stderr);
        // Rust's alternate stack of the main thread, which never entered a
        // region, is left alone (the instrumented worker's small one is
        // replaced by Dr.Hook's, see the stack overflow below).
        assert!(
            s.stdout.contains("altstack main=kept(")
                && (s.stdout.contains("worker=replaced(") || s.stdout.contains("worker=kept(")),
            "{}",
            s.stdout
        );
        assert_worker_profile(&s);
    }
}

#[test]
fn sigterm_without_an_alternate_stack_on_the_main_thread_writes_the_profile() {
    let s = stop_with("worker_noalt", libc::SIGTERM, &[]);
    assert_eq!(s.status.signal(), Some(libc::SIGTERM), "{}", s.stderr);
    assert!(s.stdout.contains("altstack main=none"), "{}", s.stdout);
    assert!(!s.stderr.contains("Second fatal signal"), "{}", s.stderr);
    assert_worker_profile(&s);
}

#[test]
fn a_program_handling_sigterm_shuts_down_gracefully_with_its_profile() {
    for scenario in ["graceful_before", "graceful_after"] {
        for sig in [libc::SIGTERM, libc::SIGINT] {
            let s = stop_with(scenario, sig, &[]);
            assert_eq!(s.status.code(), Some(0), "{scenario}: {}", s.stderr);
            assert!(
                s.stdout
                    .contains(&format!("graceful shutdown after signal {sig}")),
                "{scenario}: {}",
                s.stdout
            );
            // No traceback: the program handled the signal.
            assert!(
                !s.stderr.contains("Received signal#"),
                "{scenario}: {}",
                s.stderr
            );
            assert_worker_profile(&s);
        }
    }
}

#[test]
fn rust_keeps_ieee_results_unless_traps_are_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_in(dir.path(), PROG, &["nan"], &[("DR_HOOK", "1")]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(r.stdout().contains("worker NaN main inf"), "{}", r.stdout());
    assert!(
        r.stderr()
            .contains("leaves floating-point trapping as the program sets it"),
        "{}",
        r.stderr()
    );
    let r = run_in(
        dir.path(),
        PROG,
        &["nan"],
        &[
            ("DR_HOOK", "1"),
            ("DR_HOOK_TRAPFPE", "1"),
            ("DRHOOK_BACKTRACE", "0"),
        ],
    );
    assert_eq!(
        r.output.status.signal(),
        Some(libc::SIGFPE),
        "{}",
        r.stderr()
    );
    assert!(
        r.stderr().contains("floating-point invalid operation"),
        "{}",
        r.stderr()
    );
}

#[test]
fn dr_hook_starts_when_the_layer_is_registered() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_in(
        dir.path(),
        PROG,
        &["layer"],
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof")],
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let err = r.stderr();
    let registered = err.find("LAYER REGISTERED").expect("marker");
    for line in [
        "DR_HOOK_OPT=\"WALLPROF\"",
        "profile of proc#1 goes to",
        "DR_HOOK catches",
    ] {
        let at = err.find(line).unwrap_or_else(|| panic!("{line}: {err}"));
        assert!(at < registered, "{line} after the registration:\n{err}");
    }
    let p = r.profile("drhook.prof.1");
    assert_eq!(p.rows_of("first_span").len(), 1, "{:#?}", p.rows);
}

#[test]
fn a_stack_overflow_on_a_worker_with_rusts_alternate_stack_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_in(
        dir.path(),
        PROG,
        &["overflow"],
        &[
            ("DR_HOOK", "1"),
            ("DR_HOOK_OPT", "prof"),
            ("DRHOOK_BACKTRACE", "0"),
        ],
    );
    let err = r.stderr();
    assert!(
        r.stdout()
            .contains("worker altstack replaced(8192->262144)"),
        "{}",
        r.stdout()
    );
    assert_eq!(r.output.status.signal(), Some(libc::SIGABRT), "{err}");
    assert!(err.contains("has overflowed its stack"), "{err}");
    assert!(!err.contains("Second fatal signal"), "{err}");
    assert!(err.contains("Received signal#6 (SIGABRT)"), "{err}");
    let p = r.profile("drhook.prof.1");
    assert_eq!(p.rows_of("SERVICE:REQUEST").len(), 1, "{:#?}", p.rows);
}
