//! Tracebacks from Fortran: a SIGSEGV and a trapped floating-point
//! division by zero in the third nested routine print Dr.Hook's calling
//! tree and a symbolised backtrace, then the process dies of the signal.
//! (Missing exits and garbage handles are in `fortran.rs`.)

mod common;
use common::*;

fn crash(what: &str, sig: i32, cause: &str) {
    if !have_gfortran() {
        return;
    }
    let d = tempdir();
    yomhook(d.path(), false);
    let exe = fortran_exe(
        d.path(),
        "crash_test",
        &[&prog("f_crash.F90")],
        &[],
        Link::Static,
    );
    let r = run_in(
        d.path(),
        &exe.display().to_string(),
        &[what],
        &[("DR_HOOK", "1")],
    );
    let err = r.stderr();
    assert_eq!(signal(&r), Some(sig), "status {:?}\n{err}", r.output.status);
    assert!(!r.stdout().contains("NOT REACHED"));
    for l in [
        format!("Received signal#{sig} ("),
        cause.to_string(),
        "[DrHookCallTree] :  CRASH_TEST ".into(),
        "[DrHookCallTree] :   CRASH_MOD:LEVEL1 ".into(),
        "[DrHookCallTree] :    CRASH_MOD:LEVEL2 ".into(),
        "[DrHookCallTree] :     CRASH_MOD:LEVEL3 ".into(),
    ] {
        assert!(err.contains(&l), "missing {l:?} in:\n{err}");
    }
    // The native backtrace names the Fortran routine that faulted.
    assert!(
        err.lines()
            .any(|l| l.contains("[LinuxTraceBack] [00]") && l.contains("__crash_mod_MOD_level3")),
        "{err}"
    );
}

#[test]
fn sigsegv_in_fortran() {
    crash(
        "segv",
        libc::SIGSEGV,
        "Signal#11 was caused by address not mapped to object",
    );
}

#[test]
fn trapped_division_by_zero_in_fortran() {
    crash(
        "fpe",
        libc::SIGFPE,
        "Signal#8 was caused by floating-point divide by zero",
    );
}
