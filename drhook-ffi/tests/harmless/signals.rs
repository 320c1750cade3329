//! Signals (issue 22, items 1-5): dispositions the program inherited or
//! installed, handlers that return, runtimes that install theirs only over
//! the default, the floating-point environment, and signals that Dr.Hook's
//! own writes could raise.

use super::harness::{c_prog, same_everywhere};

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
