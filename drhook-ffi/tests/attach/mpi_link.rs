//! The link-time MPI library (`-ldrhook_mpi -ldrhook`, no preload): the
//! C and Fortran programs of `mpi_calls.rs` linked with `libdrhook_mpi`
//! before the MPI libraries, run under `mpirun -n 4` with `DR_HOOK=1
//! DR_HOOK_OPT=prof,mpi,callpath`: every rank's MPI calls are rows under
//! the routines that made them, with the exact calls and bytes the
//! preload test asserts (no root region `main`: nothing is preloaded);
//! also linked with the flags of the installed `drhook-mpi.pc`.

use super::mpi_calls::{Want, build_c_with, check_rank_in, have_mpi, want, want_c};
use super::*;

/// `-L`/`-rpath` to the built libraries, then `-ldrhook_mpi -ldrhook`
/// (as `drhook-mpi.pc` gives them: `--no-as-needed` first, else the
/// linker drops `libmpi_usempif08`, all of whose functions the program
/// calls `libdrhook_mpi` defines, and its `pmpi_*_f08_` are not found).
pub(super) fn link_flags() -> Vec<String> {
    built("libdrhook_mpi.so");
    let dir = shared_lib().parent().unwrap().display().to_string();
    vec![
        "-Wl,--no-as-needed".into(),
        format!("-L{dir}"),
        format!("-Wl,-rpath,{dir}"),
        "-ldrhook_mpi".into(),
        "-ldrhook".into(),
    ]
}

/// `mpi_calls.F90` linked with `libdrhook_mpi` and `libdrhook`, into
/// `dir/mpi_calls_fl`.
pub(super) fn build_f_linked(dir: &Path) {
    yomhook(dir, false);
    let mut args = vec![
        "-O1".to_string(),
        "-o".into(),
        "mpi_calls_fl".into(),
        attach_prog("mpi_calls.F90").display().to_string(),
        "yomhook.o".into(),
    ];
    args.extend(link_flags());
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    tool(dir, "mpif90", &a);
}

/// `mpirun -n 4 exe` with Dr.Hook's variables given to the ranks (`-x`),
/// no preload.
fn mpirun_linked(dir: &Path, exe: &str, opt: &str) -> Run {
    mpirun_linked_n(dir, 4, exe, &[], opt, &[])
}

/// `mpirun [extra] -n <n> exe [args]` with `DR_HOOK=1` and
/// `DR_HOOK_OPT=opt` given to the ranks, no preload.
pub(super) fn mpirun_linked_n(
    dir: &Path,
    n: u32,
    exe: &str,
    args: &[&str],
    opt: &str,
    extra: &[&str],
) -> Run {
    let opt = format!("DR_HOOK_OPT={opt}");
    let n = n.to_string();
    let mut a = vec![
        "--allow-run-as-root",
        "--oversubscribe",
        "-x",
        "DR_HOOK=1",
        "-x",
        &opt,
    ];
    a.extend(extra);
    a.extend(["-n", &n, exe]);
    a.extend(args);
    run_in(dir, "mpirun", &a, &[])
}

fn check_all(dir: &Path, want: impl Fn(u32) -> Vec<Want>) {
    for rank in 0..4 {
        check_rank_in(dir, rank, &want(rank), None);
    }
}

#[test]
fn mpi_calls_of_a_c_program_linked_with_libdrhook_mpi_are_rows_with_their_bytes() {
    if !have_mpi("mpicc") {
        return;
    }
    let d = tempdir();
    build_c_with(d.path(), "mpi_calls_l", &link_flags());
    let r = mpirun_linked(d.path(), "./mpi_calls_l", "prof,mpi,callpath");
    ok(&r);
    check_all(d.path(), want_c);
    // Without `mpi`: the same program, no MPI rows and no `-mpi` files.
    let d2 = tempdir();
    build_c_with(d2.path(), "mpi_calls_l", &link_flags());
    let r = mpirun_linked(d2.path(), "./mpi_calls_l", "prof");
    ok(&r);
    for n in 1..=4 {
        let p = parse(d2.path(), &format!("drhook.prof.{n}"));
        assert!(
            p.rows
                .iter()
                .all(|r| !r.name.starts_with("MPI_") || r.name.starts_with("MPI_CALLS:")),
            "{:?}",
            p.rows.iter().map(|r| &r.name).collect::<Vec<_>>()
        );
    }
    assert!(!profiles(d2.path()).iter().any(|f| f.ends_with("-mpi")));
}

#[test]
fn mpi_calls_of_a_fortran_program_linked_with_libdrhook_mpi_are_rows_with_their_bytes() {
    if !have_mpi("mpif90") {
        return;
    }
    let d = tempdir();
    build_f_linked(d.path());
    let r = mpirun_linked(d.path(), "./mpi_calls_fl", "prof,mpi,callpath");
    ok(&r);
    check_all(d.path(), |rank| {
        let mut w = want(rank, "F_P2P", "F_P2P", "F_COLL");
        w.push(("MPI_Waitall", "F_P2P", 2, 0, 0, 0.0, None));
        // `use mpi_f08`: 4 x 2 INTEGERs.
        w.push(("MPI_Allreduce", "F_F08", 4, 32, 32, 4.0, Some(1)));
        w
    });
}

#[test]
fn installed_libdrhook_mpi_through_pkg_config_and_cmake() {
    if !have_mpi("mpicc")
        || !have_tool("make")
        || !have_tool("pkg-config")
        || !have_tool("cmake")
        || !have_gfortran()
    {
        return;
    }
    built("libdrhook_mpi.so");
    shared_lib();
    let d = tempdir();
    let prefix = make_install(d.path());
    for f in [
        "lib/libdrhook_mpi.so",
        "lib/pkgconfig/drhook-mpi.pc",
        "lib/cmake/DrHook/DrHookConfig.cmake",
    ] {
        assert!(prefix.join(f).exists(), "{f} not installed");
    }
    let flags: Vec<String> = installed_pkg_config(&prefix, "drhook-mpi")
        .split_whitespace()
        .map(String::from)
        .collect();
    let at = |l: &str| flags.iter().position(|f| f == l);
    assert!(
        at("-ldrhook_mpi").is_some() && at("-ldrhook_mpi") < at("-ldrhook"),
        "{flags:?}"
    );
    build_c_with(d.path(), "mpi_calls_pc", &flags);
    let r = mpirun_linked(d.path(), "./mpi_calls_pc", "prof,mpi,callpath");
    ok(&r);
    check_all(d.path(), want_c);

    // CMake: find_package(DrHook), DrHook::mpi before MPI::MPI_C.
    let proj = d.path().join("cmake-project");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::copy(attach_prog("mpi_calls.c"), proj.join("mpi_calls.c")).unwrap();
    std::fs::write(
        proj.join("CMakeLists.txt"),
        "cmake_minimum_required(VERSION 3.13)\nproject(mpi_calls C)\n\
         find_package(MPI REQUIRED)\nfind_package(DrHook REQUIRED)\n\
         add_executable(mpi_calls mpi_calls.c)\n\
         target_link_libraries(mpi_calls PRIVATE DrHook::mpi MPI::MPI_C)\n",
    )
    .unwrap();
    let build = proj.join("build");
    tool(
        d.path(),
        "cmake",
        &[
            "-S",
            &proj.display().to_string(),
            "-B",
            &build.display().to_string(),
            &format!("-DCMAKE_PREFIX_PATH={}", prefix.display()),
        ],
    );
    tool(
        d.path(),
        "cmake",
        &["--build", &build.display().to_string()],
    );
    let w = tempdir();
    let exe = build.join("mpi_calls").display().to_string();
    let r = mpirun_linked(w.path(), &exe, "prof,mpi,callpath");
    ok(&r);
    check_all(w.path(), want_c);
}
