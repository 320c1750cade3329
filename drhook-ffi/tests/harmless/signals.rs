//! Signals (issue 22, items 1-5): dispositions the program inherited or
//! installed, handlers that return, runtimes that install theirs only over
//! the default, the floating-point environment, and signals that Dr.Hook's
//! own writes could raise.

use super::harness::{c_prog, same_everywhere, same_everywhere_but};

/// Item 1: an inherited `SIG_IGN` stays: `raise` of an ignored signal is
/// survived under `drhook run` as it is plainly (for each signal Dr.Hook
/// catches by default that a shell can ignore).
#[test]
fn an_inherited_sig_ign_is_kept() {
    for sig in ["2", "3", "15", "24", "25"] {
        let script = format!("trap '' {sig}; exec ./raise {sig}");
        let (outs, _d) = same_everywhere(
            |d| {
                c_prog(d, "raise", &[]);
            },
            &["sh", "-c", &script],
            &[],
        );
        if outs[0].stdout.is_empty() {
            return; // no gcc (c_prog said so)
        }
        assert_eq!(
            outs[0].stdout,
            format!("disposition ignored\nsurvived signal {sig}\n")
        );
        for o in &outs[1..] {
            assert!(o.has_profile(), "{}: {:?}", o.config, o.drhook_files);
        }
    }
}

/// Item 4: the floating-point environment is the program's. A program
/// that traps division by zero and divides by zero on a second thread
/// dies of SIGFPE under `drhook run` as it does plainly (the launcher's
/// `DR_HOOK_TRAPFPE=0` turned the traps off on the threads Dr.Hook set up:
/// the program printed `inf` and exited 0).
#[test]
fn floating_point_traps_set_by_the_program_stay() {
    let (outs, _d) = same_everywhere(
        |d| {
            c_prog(d, "fpe_thread", &["-pthread", "-lm"]);
        },
        &["./fpe_thread"],
        &[],
    );
    if !super::common::have_gcc() {
        return;
    }
    assert_eq!(outs[0].how(), format!("signal {}", libc::SIGFPE));
    for o in &outs[1..] {
        assert!(o.has_profile(), "{}: {:?}", o.config, o.drhook_files);
    }
}

/// Item 5: Dr.Hook's own writes never signal the program. Under
/// `ulimit -f 0` the profile cannot be written (Dr.Hook says so), but
/// `echo`, which writes only to a pipe, exits 0 as it does plainly (it
/// died of SIGXFSZ, status 153).
#[test]
fn a_file_size_limit_on_dr_hooks_writes_raises_no_sigxfsz() {
    let (outs, _d) = same_everywhere(|_| {}, &["sh", "-c", "ulimit -f 0; exec /bin/echo hi"], &[]);
    assert_eq!(outs[0].how(), "exit 0");
    assert_eq!(outs[0].stdout, "hi\n");
    for o in &outs[1..] {
        assert!(
            o.stderr_all.contains("File too large"),
            "{}: the failed write is reported: {}",
            o.config,
            o.stderr_all
        );
    }
}

/// Item 5, the same for a closed pipe: Dr.Hook's messages to a stderr
/// whose reader has gone raise no SIGPIPE (the measured `echo` died of it
/// before it printed). `drhook run` is started by the shell here, so that
/// the first measured process (the one that prints Dr.Hook's messages)
/// has the closed pipe as its stderr.
#[test]
fn dr_hook_messages_to_a_closed_pipe_raise_no_sigpipe() {
    super::common::ensure_attach_built();
    let drhook = super::common::drhook_exe();
    for opts in [None, Some("prof"), Some("prof,memprof,io")] {
        let run = match opts {
            None => String::new(),
            Some(o) => format!("'{}' run --opt {o} -- ", drhook.display()),
        };
        let script = format!(
            "exec 3>&1; (sleep 0.3; {run}/bin/echo done >&3; echo \"status $?\" >&3) 2>&1 | true"
        );
        let d = super::common::tempdir();
        let o = super::harness::run(d.path(), None, &["sh", "-c", &script], &[]);
        assert_eq!(o.stdout, "done\nstatus 0\n", "{opts:?}: {}", o.stderr_all);
    }
}

/// Item 2: handlers the program installed before Dr.Hook's (in a
/// constructor) and after it keep working: a SIGTERM handler that returns
/// lets the program go on, a SIGSEGV handler that repairs the fault (a
/// protected page opened) lets the faulting instruction run again. Both
/// ended the program under `drhook run` (143, 139) when installed first.
#[test]
fn program_handlers_that_return_let_the_program_go_on() {
    for when in ["early", "late"] {
        let (outs, _d) = same_everywhere(
            |d| {
                c_prog(d, "handled", &[]);
            },
            &["./handled", when],
            &[],
        );
        if !super::common::have_gcc() {
            return;
        }
        assert_eq!(
            outs[0].stdout,
            "SIGTERM handled 2 times\npage[10] = 42 after the fault\n"
        );
        for o in &outs[1..] {
            assert!(
                !o.stderr_all.contains("Received signal"),
                "{when} {}: no traceback for a handled signal: {}",
                o.config,
                o.stderr_all
            );
            assert!(o.has_profile(), "{}: {:?}", o.config, o.drhook_files);
        }
    }
}

/// Item 3: a runtime that installs its handler only over the default
/// disposition finds the default (Dr.Hook's handler is not the program's
/// business) and its handler runs: the program's handlers win.
#[test]
fn a_handler_installed_only_over_the_default_is_installed() {
    let (outs, _d) = same_everywhere(
        |d| {
            c_prog(d, "default_only", &[]);
        },
        &["./default_only"],
        &[],
    );
    if !super::common::have_gcc() {
        return;
    }
    assert_eq!(
        outs[0].stdout,
        "installed the runtime's handler\nthe runtime's handler caught SIGSEGV\n"
    );
    assert_eq!(outs[0].how(), "exit 3");
}

/// Item 3, Rust: the standard library's stack-overflow handler (installed
/// only over the default) prints its message and aborts, under `drhook
/// run` as plainly (it became a plain SIGSEGV); Dr.Hook still writes the
/// profile.
#[test]
fn a_rust_stack_overflow_is_reported_by_rust() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let src = super::common::prog("harmless").join("overflow.rs");
    // "thread 'main' (<tid>) has overflowed its stack": the thread id
    // differs from run to run.
    let no_tid = |s: &str| {
        s.split(" (")
            .map(|part| part.trim_start_matches(|c: char| c.is_ascii_digit()))
            .collect::<Vec<_>>()
            .join(" (")
    };
    let (outs, _d) = same_everywhere_but(
        |d| {
            super::common::tool(
                d,
                &rustc,
                &["-O", "-o", "overflow", &src.display().to_string()],
            );
        },
        &["./overflow"],
        &[],
        no_tid,
    );
    assert_eq!(outs[0].how(), format!("signal {}", libc::SIGABRT));
    assert!(
        outs[0].stderr.contains("has overflowed its stack"),
        "{}",
        outs[0].stderr
    );
    for o in &outs[1..] {
        assert!(o.has_profile(), "{}: {:?}", o.config, o.drhook_files);
    }
}
