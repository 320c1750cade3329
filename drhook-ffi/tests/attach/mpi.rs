//! MPI: mpirun of C and Fortran programs.

use super::*;

fn mpirun_args(n: &str) -> Vec<&str> {
    vec!["--allow-run-as-root", "--oversubscribe", "-n", n]
}

/// Runs `drhook run -- mpirun -n 4 <exe>` and checks one profile per rank,
/// named after the rank, and the launcher's under a child name.
fn check_mpirun(dir: &Path, exe: &str) -> BTreeMap<String, Profile> {
    let mut a = mpirun_args("4");
    a.push(exe);
    let r = drhook_run(dir, &[], "mpirun", &a, &[]);
    ok(&r);
    let mut ranks: Vec<String> = r
        .stdout()
        .lines()
        .filter(|l| l.starts_with("rank "))
        .map(String::from)
        .collect();
    ranks.sort();
    assert_eq!(ranks.len(), 4, "{}", r.stdout());
    let files = profiles(dir);
    for n in 1..=4 {
        assert!(files.contains(&format!("drhook.prof.{n}")), "{files:?}");
    }
    for f in &files {
        if let Some((task, cmd, _)) = child_name(f) {
            assert_eq!(task, 1, "{f}");
            assert!(
                ["mpirun", "orted", "prted"].contains(&cmd.as_str()),
                "{files:?}"
            );
        }
    }
    assert_eq!(child_commands(&files).get("mpirun"), Some(&1), "{files:?}");
    let all = all_with_main(dir);
    for n in 1..=4u32 {
        let p = &all[&format!("drhook.prof.{n}")];
        assert!(
            p.header[0].ends_with(&format!(", proc#{n}:")),
            "{}",
            p.header[0]
        );
        assert!(
            p.header
                .iter()
                .any(|h| h.contains(&format!("on proc#{n} (4 procs"))),
            "{:?}",
            p.header
        );
    }
    all
}

pub(crate) fn have_mpi(compiler: &str) -> bool {
    have_tool("mpirun") && have_tool(compiler)
}

#[test]
fn mpirun_of_an_unmodified_c_program() {
    if !have_mpi("mpicc") {
        return;
    }
    let d = tempdir();
    let src = attach_prog("mpi_plain.c");
    tool(
        d.path(),
        "mpicc",
        &["-O1", "-o", "mpi_plain", &src.display().to_string()],
    );
    check_mpirun(d.path(), "./mpi_plain");
}

#[test]
fn mpirun_of_an_unmodified_fortran_program() {
    if !have_mpi("mpif90") {
        return;
    }
    let d = tempdir();
    let src = attach_prog("mpi_plain.f90");
    tool(
        d.path(),
        "mpif90",
        &["-O1", "-o", "mpi_plain_f", &src.display().to_string()],
    );
    check_mpirun(d.path(), "./mpi_plain_f");
}

#[test]
fn mpirun_of_a_program_linked_with_libdrhook_has_one_engine() {
    if !have_mpi("mpicc") {
        return;
    }
    let d = tempdir();
    let src = attach_prog("mpi_hook.c");
    let mut args = vec![
        "-O1".to_string(),
        format!("-I{}", include_dir().display()),
        "-o".into(),
        "mpi_hook".into(),
        src.display().to_string(),
        format!("-L{}", shared_lib().parent().unwrap().display()),
        format!("-Wl,-rpath,{}", target_dir().display()),
        "-ldrhook".into(),
    ];
    args.push("-lpthread".into());
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    tool(d.path(), "mpicc", &a);
    let mut m = mpirun_args("4");
    m.push("./mpi_hook");
    let r = drhook_run(d.path(), &[], "mpirun", &m, &[]);
    ok(&r);
    let files = profiles(d.path());
    for n in 1..=4u32 {
        let f = format!("drhook.prof.{n}");
        assert!(files.contains(&f), "{files:?}");
        let p = parse(d.path(), &f);
        // The program's own region and the layer's root in one profile.
        assert_eq!(p.row("MPI_HOOK:WORK", 1).calls, n as u64, "{f}");
        assert_eq!(p.row("main", 1).calls, 1, "{f}");
        assert_eq!(program_of(&p), "./mpi_hook", "the rank's main process");
    }
}

#[test]
fn the_rank_comes_from_mpi_when_the_launcher_sets_none() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    gcc(
        d.path(),
        "libfakempi.so",
        &[
            "-shared",
            "-fPIC",
            &attach_prog("fake_mpi.c").display().to_string(),
        ],
    );
    gcc(
        d.path(),
        "user",
        &[
            &attach_prog("fake_mpi_user.c").display().to_string(),
            "-L.",
            "-lfakempi",
            "-Wl,-rpath,$ORIGIN",
        ],
    );
    let r = drhook_run(
        d.path(),
        &[],
        "./user",
        &[],
        &[("FAKE_MPI_RANK", "2"), ("FAKE_MPI_SIZE", "5")],
    );
    ok(&r);
    assert_eq!(r.stdout(), "finalized\n");
    assert_eq!(profiles(d.path()), vec!["drhook.prof.3".to_string()]);
    let p = parse(d.path(), "drhook.prof.3");
    assert!(p.header[0].ends_with(", proc#3:"), "{}", p.header[0]);
    assert!(
        p.header.iter().any(|h| h.contains("(5 procs")),
        "{:?}",
        p.header
    );
    assert_eq!(writes(&r), 1, "at MPI_Finalize only:\n{}", r.stderr());
}
