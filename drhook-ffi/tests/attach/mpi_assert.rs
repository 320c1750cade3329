//! `DR_HOOK_ASSERT_MPI_INITIALIZED`: the reference's assertion at the
//! program's first Fortran `DR_HOOK` call under `mpirun -n 2`, with and
//! without `drhook run` (whose own `main` region, opened before
//! `MPI_Init`, is exempt); C programs and compiler hooks do not make it
//! (`dump.rs`'s MPI program, instrumented with `-finstrument-functions`,
//! enters `main` before `MPI_Init`).

use super::mpi::have_mpi;
use super::*;

fn build_mpi_assert(dir: &Path) {
    yomhook(dir, false);
    let src = attach_prog("mpi_assert.F90");
    let args = [
        "-O1".to_string(),
        "-o".into(),
        "mpi_assert".into(),
        src.display().to_string(),
        "yomhook.o".into(),
        format!("-L{}", shared_lib().parent().unwrap().display()),
        format!("-Wl,-rpath,{}", target_dir().display()),
        "-ldrhook".into(),
    ];
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    tool(dir, "mpif90", &a);
}

fn mpirun2(when: &str) -> Vec<&str> {
    vec![
        "--allow-run-as-root",
        "--oversubscribe",
        "-n",
        "2",
        "./mpi_assert",
        when,
    ]
}

/// The reference's ABOR1FL lines for its assertion.
fn assert_aborted(r: &Run) {
    assert_ne!(r.output.status.code(), Some(0), "{}", r.stderr());
    let err = r.stderr();
    assert!(
        err.contains(
            "from [dr_hook_init.F90 +115] : DR_HOOK no longer calls MPL_INIT. \
             Please initialize MPI (or MPL) before first DR_HOOK call."
        ),
        "{err}"
    );
    assert!(
        err.contains(
            "This assertion can be disabled with environment: DR_HOOK_ASSERT_MPI_INITIALIZED=0"
        ),
        "{err}"
    );
    assert!(!r.stdout().contains("done"), "{}", r.stdout());
}

fn done_ranks(r: &Run) -> usize {
    r.stdout().lines().filter(|l| l.ends_with(" done")).count()
}

#[test]
fn first_call_before_mpi_init_aborts_under_drhook_run() {
    if !have_mpi("mpif90") {
        return;
    }
    let d = tempdir();
    build_mpi_assert(d.path());
    let r = drhook_run(d.path(), &[], "mpirun", &mpirun2("before"), &[]);
    assert_aborted(&r);
    // After MPI_Init: runs, though the preload's `main` region was opened
    // before MPI_Init.
    let d = tempdir();
    build_mpi_assert(d.path());
    let r = drhook_run(d.path(), &[], "mpirun", &mpirun2("after"), &[]);
    ok(&r);
    assert_eq!(done_ranks(&r), 2, "{}", r.stdout());
    for n in 1..=2 {
        let p = parse(d.path(), &format!("drhook.prof.{n}"));
        assert_eq!(p.row("MPI_ASSERT:WORK", 1).calls, 1);
        assert_eq!(p.row("main", 1).calls, 1);
    }
    // Switched off: runs.
    let d = tempdir();
    build_mpi_assert(d.path());
    let r = drhook_run(
        d.path(),
        &[],
        "mpirun",
        &mpirun2("before"),
        &[("DR_HOOK_ASSERT_MPI_INITIALIZED", "0")],
    );
    ok(&r);
    assert_eq!(done_ranks(&r), 2, "{}", r.stdout());
}

#[test]
fn first_call_before_mpi_init_aborts_with_libdrhook() {
    if !have_mpi("mpif90") {
        return;
    }
    let d = tempdir();
    build_mpi_assert(d.path());
    let r = run_in(d.path(), "mpirun", &mpirun2("before"), &[("DR_HOOK", "1")]);
    assert_aborted(&r);
    // Dr.Hook off: the reference asserts all the same (DR_HOOK_INIT checks
    // before it looks at DR_HOOK).
    let r = run_in(d.path(), "mpirun", &mpirun2("before"), &[]);
    assert_aborted(&r);
    let r = run_in(d.path(), "mpirun", &mpirun2("after"), &[("DR_HOOK", "1")]);
    ok(&r);
    assert_eq!(done_ranks(&r), 2, "{}", r.stdout());
    let r = run_in(
        d.path(),
        "mpirun",
        &mpirun2("before"),
        &[("DR_HOOK", "1"), ("DR_HOOK_NOT_MPI", "1")],
    );
    ok(&r);
}
