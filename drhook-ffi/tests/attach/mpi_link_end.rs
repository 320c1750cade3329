//! The ends of an MPI run of a program linked with the link-time MPI
//! library (`-ldrhook_mpi -ldrhook`, no preload): `MPI_Abort` (C and
//! Fortran) writes the aborting rank's reports first, with the preload's
//! message; a program that never finalizes leaves its profiles and a
//! message; `DR_HOOK_OPT=reduce` reduces the ranks' profiles inside the
//! `MPI_Finalize` wrapper into the job profile `drhook merge` prints for
//! the rank files; and under `drhook run` (both libraries in the process)
//! one job profile is written, not two.

use super::mpi_calls::{Want, build_c_with, check_rank_in, have_mpi, want, want_c};
use super::mpi_link::{build_f_linked, link_flags, mpirun_linked_n as mpirun_linked};
use super::mpi_reduce::{
    check_mpi_job_files, check_unreduced_exit, check_work_calls, job, merge_of,
};
use super::*;

/// Open MPI ends the other ranks of an aborted job with SIGTERM, then
/// SIGKILL after this many seconds.
const SIGKILL_LATER: [&str; 3] = ["--mca", "odls_base_sigkill_timeout", "30"];

/// `mpi_hook.c` (rank r calls `MPI_HOOK:WORK` r+1 times) linked with
/// `libdrhook_mpi` and `libdrhook`, into `dir/mpi_hook_l`.
fn build_hook_linked(dir: &Path) {
    let mut args = vec![
        "-O1".to_string(),
        format!("-I{}", include_dir().display()),
        "-o".into(),
        "mpi_hook_l".into(),
        attach_prog("mpi_hook.c").display().to_string(),
    ];
    args.extend(link_flags());
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    tool(dir, "mpicc", &a);
}

fn the_message(r: &Run, line: &str) {
    assert_eq!(
        r.stderr().matches(line).count(),
        1,
        "once: {line:?}\n{}",
        r.stderr()
    );
}

/// `exe abort` on 4 ranks (rank 1 calls `MPI_Abort` with `code`): the job
/// ends with `code`, rank 1 says so once and its profile and `-mpi` file
/// have `want`.
fn check_abort(dir: &Path, exe: &str, code: i32, want: &[Want]) {
    let r = mpirun_linked(dir, 4, exe, &["abort"], "prof,mpi,callpath", &SIGKILL_LATER);
    assert_eq!(r.code(), code, "{}", r.stderr());
    the_message(
        &r,
        &format!(
            "[drhook-attach] MPI rank 1 called MPI_Abort (error code {code}); its reports are written now\n"
        ),
    );
    // The aborting rank's profile and MPI profile, complete up to the
    // abort.
    check_rank_in(dir, 1, want, None);
}

#[test]
fn mpi_abort_in_a_c_program_linked_with_libdrhook_mpi_writes_its_reports_first() {
    if !have_mpi("mpicc") {
        return;
    }
    let d = tempdir();
    build_c_with(d.path(), "mpi_calls_l", &link_flags());
    check_abort(d.path(), "./mpi_calls_l", 3, &want_c(1));
}

#[test]
fn mpi_abort_in_a_fortran_program_linked_with_libdrhook_mpi_writes_its_reports_first() {
    if !have_mpi("mpif90") {
        return;
    }
    let d = tempdir();
    build_f_linked(d.path());
    let mut w: Vec<Want> = want(1, "F_P2P", "F_P2P", "F_COLL");
    w.push(("MPI_Waitall", "F_P2P", 2, 0, 0, 0.0, None));
    check_abort(d.path(), "./mpi_calls_fl", 5, &w);
}

#[test]
fn a_program_linked_with_libdrhook_mpi_that_never_finalizes_leaves_its_profiles_and_a_message() {
    if !have_mpi("mpicc") {
        return;
    }
    let d = tempdir();
    build_c_with(d.path(), "mpi_calls_l", &link_flags());
    let r = mpirun_linked(
        d.path(),
        4,
        "./mpi_calls_l",
        &["nofinalize"],
        "prof,mpi,callpath",
        // The SIGKILL after the SIGTERM late enough for the profiles of
        // the ranks that said they end (as the preload's test).
        &["--mca", "odls_base_sigkill_timeout", "3"],
    );
    assert_ne!(r.code(), 0, "mpirun reports the missing MPI_Finalize");
    // Open MPI ends the job when a first rank exits without finalizing: a
    // rank it kills (SIGTERM) before its own exit writes its profile from
    // the signal handler, without the message.
    let mut said = 0;
    for rank in 0..4 {
        let line = format!(
            "[drhook-attach] MPI rank {rank} ends without MPI_Finalize; its reports are written at its end\n"
        );
        let n = r.stderr().matches(&line).count();
        assert!(n <= 1, "{line:?} {n} times\n{}", r.stderr());
        if n == 1 {
            said += 1;
            check_rank_in(d.path(), rank, &want_c(rank), None);
        }
    }
    assert!(said >= 1, "{}", r.stderr());
}

/// The per-rank files `drhook.prof.1` to `.4`, merged offline in an order
/// that is not the ranks'.
fn merged_rank_files(dir: &Path) -> String {
    merge_of(
        dir,
        &[
            "drhook.prof.3",
            "drhook.prof.1",
            "drhook.prof.4",
            "drhook.prof.2",
        ],
    )
}

#[test]
fn reduce_in_a_program_linked_with_libdrhook_mpi_writes_the_job_profile_of_the_merge() {
    if !have_mpi("mpicc") {
        return;
    }
    let d = tempdir();
    build_hook_linked(d.path());
    let r = mpirun_linked(d.path(), 4, "./mpi_hook_l", &[], "prof,reduce,ranks", &[]);
    ok(&r);
    let (id, table) = job(d.path());
    assert!(
        id[0].contains("4 tasks reduced inside MPI_Finalize"),
        "{id:?}"
    );
    assert!(id.iter().any(|l| l == "Ranks: 4"), "{id:?}");
    assert!(
        id.iter()
            .any(|l| l.starts_with("Reduction: 2 receives on rank 0")),
        "{id:?}"
    );
    check_work_calls(&table, 4);
    assert_eq!(
        table,
        merged_rank_files(d.path()),
        "the job profile differs from drhook merge of the rank files"
    );
    the_message(&r, "Writing the job profile");
    // Without `ranks`: the job profile only.
    for f in profiles(d.path()) {
        std::fs::remove_file(d.path().join(f)).unwrap();
    }
    let r = mpirun_linked(d.path(), 4, "./mpi_hook_l", &[], "prof,reduce", &[]);
    ok(&r);
    assert_eq!(profiles(d.path()), ["drhook.prof.job"]);
    check_work_calls(&job(d.path()).1, 4);
}

/// `mpi,reduce`: the MPI profiles of the C and the Fortran programs reduce
/// into `drhook.prof-mpi.job`, the merge of their `-mpi` files.
#[test]
fn reduce_of_the_mpi_profiles_of_programs_linked_with_libdrhook_mpi_equals_the_merge() {
    if !have_mpi("mpicc") {
        return;
    }
    let d = tempdir();
    build_c_with(d.path(), "mpi_calls_l", &link_flags());
    let r = mpirun_linked(
        d.path(),
        4,
        "./mpi_calls_l",
        &[],
        "prof,mpi,reduce,ranks",
        &[],
    );
    ok(&r);
    check_mpi_job_files(d.path());
    if have_tool("mpif90") {
        let d = tempdir();
        build_f_linked(d.path());
        let r = mpirun_linked(
            d.path(),
            4,
            "./mpi_calls_fl",
            &[],
            "prof,mpi,reduce,ranks",
            &[],
        );
        ok(&r);
        check_mpi_job_files(d.path());
    }
}

/// `reduce` without `MPI_Finalize`: each rank that reaches its exit writes
/// its own profile and says why there is no job profile.
#[test]
fn reduce_in_a_program_linked_with_libdrhook_mpi_that_never_finalizes_leaves_rank_profiles() {
    if !have_mpi("mpicc") {
        return;
    }
    let d = tempdir();
    build_hook_linked(d.path());
    let r = mpirun_linked(d.path(), 4, "./mpi_hook_l", &["exit"], "prof,reduce", &[]);
    check_unreduced_exit(d.path(), &r);
}

/// Under `drhook run` the preload library's layer takes the engine and
/// reduces; `libdrhook_mpi`'s wrappers pass the calls on: one job profile,
/// written once, equal to the merge.
#[test]
fn reduce_under_drhook_run_with_libdrhook_mpi_linked_writes_one_job_profile() {
    if !have_mpi("mpicc") {
        return;
    }
    let d = tempdir();
    build_hook_linked(d.path());
    let r = drhook_run(
        d.path(),
        &[],
        "mpirun",
        &[
            "--allow-run-as-root",
            "--oversubscribe",
            "-n",
            "4",
            "./mpi_hook_l",
        ],
        &[("DR_HOOK_OPT", "prof,reduce,ranks")],
    );
    ok(&r);
    the_message(&r, "Writing the job profile");
    let (_, table) = job(d.path());
    check_work_calls(&table, 4);
    assert_eq!(table, merged_rank_files(d.path()));
}
