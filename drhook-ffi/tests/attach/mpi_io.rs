//! The MPI-IO level of the I/O report (`DR_HOOK_OPT=io,mpi`): an MPI-IO
//! program (`progs/attach/mpi_io.c`) on 4 ranks under `drhook run`, each
//! rank writing and reading its part of one shared file with
//! `MPI_File_write_at`/`MPI_File_read_at`: the I/O report of every rank
//! lists the file with the exact MPI-IO opens, reads, writes and bytes,
//! and the POSIX calls the MPI library made for them at the POSIX level.
//! The same program in Fortran (`progs/attach/mpi_io.F90`), `use mpi` and
//! `use mpi_f08` (`-DF08`): the same counts.

use super::mpi_calls::have_mpi;
use super::*;

#[test]
fn mpi_io_calls_are_the_mpi_io_level_of_the_io_report() {
    if !have_mpi("mpicc") {
        return;
    }
    let d = tempdir();
    let src = attach_prog("mpi_io.c").display().to_string();
    tool(d.path(), "mpicc", &["-O1", "-o", "mpi_io", &src]);
    run_and_check(d.path());
}

#[test]
fn fortran_mpi_io_calls_are_the_mpi_io_level_of_the_io_report() {
    if !have_mpi("mpif90") {
        return;
    }
    let src = attach_prog("mpi_io.F90").display().to_string();
    for binding in ["-DUSE_MPI", "-DF08"] {
        let d = tempdir();
        tool(d.path(), "mpif90", &["-O1", binding, "-o", "mpi_io", &src]);
        run_and_check(d.path());
    }
}

/// Runs `./mpi_io` in `d` on 4 ranks with `io,mpi` and checks every
/// rank's MPI-IO level of `mpiio.dat`.
fn run_and_check(d: &std::path::Path) {
    let r = drhook_run(
        d,
        &["--opt", "io,mpi"],
        "mpirun",
        &[
            "--allow-run-as-root",
            "--oversubscribe",
            "-n",
            "4",
            "./mpi_io",
        ],
        &[],
    );
    ok(&r);
    let mut ranks = 0;
    for f in drhook_tests::files_starting_with(d, "drhook.io.") {
        let text = std::fs::read_to_string(d.join(&f)).unwrap();
        let rep: serde_json::Value = serde_json::from_str(&text).unwrap();
        let Some(file) = rep["files"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["path"].as_str().unwrap().ends_with("/mpiio.dat"))
        else {
            continue;
        };
        ranks += 1;
        let n = |k: &str| {
            file[k]
                .as_u64()
                .unwrap_or_else(|| panic!("{f}: {k} in {file:#}"))
        };
        assert_eq!(
            [
                n("mpiio_opens"),
                n("mpiio_writes"),
                n("mpiio_write_bytes"),
                n("mpiio_reads"),
                n("mpiio_read_bytes"),
                n("mpiio_other"),
            ],
            // The sync and the close are the other calls.
            [1, 3, 1200, 2, 800, 2],
            "{f}: {file:#}"
        );
        // Underneath, the MPI library's own POSIX calls on the file.
        assert!(n("opens") >= 1, "{f}: {file:#}");
        assert!(n("write_bytes") >= 1200, "{f}: {file:#}");
        assert!(n("read_bytes") >= 800, "{f}: {file:#}");
    }
    assert_eq!(ranks, 4, "{:?}", profiles(d));
    // `drhook io` shows the level under the file of one rank's report.
    let one = drhook_tests::files_starting_with(d, "drhook.io.")
        .into_iter()
        .find(|f| std::fs::read_to_string(d.join(f)).is_ok_and(|t| t.contains("/mpiio.dat")))
        .unwrap();
    let shown = run_in(d, &drhook_exe().display().to_string(), &["io", &one], &[]);
    ok(&shown);
    assert!(
        shown.stdout().contains(
            "MPI-IO      1 opens, 800 B read in 2 calls, 1.2 KiB written in 3 calls, 2 other calls"
        ),
        "{}",
        shown.stdout()
    );
}
