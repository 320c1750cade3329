//! Dr.Hook attached to unmodified programs: `drhook run` (the preload
//! library `libdrhook_preload.so`) and static programs linked with the
//! `--wrap` list (`libdrhook_wrap.a`), on real programs — a shell pipeline,
//! `make -j2`, a Python script, an OpenMP Fortran program, every way a
//! process ends, `mpirun -n 4` of C and Fortran MPI programs — checking the
//! files written, their names, the exit statuses and the trees. Plus one
//! engine per process for programs that carry Dr.Hook themselves (linked
//! with libdrhook.so, Rust `#[drhook]`), and the events a tool on the
//! layer receives (`examples/event_log.rs` of drhook-attach).

mod common;
use common::*;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use drhook_tests::Profile;

fn attach_prog(name: &str) -> PathBuf {
    prog("attach").join(name)
}

/// Runs `drhook run [opts] -- program args` in `dir`.
fn drhook_run(
    dir: &Path,
    opts: &[&str],
    program: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> Run {
    let mut a: Vec<&str> = vec!["run"];
    a.extend(opts);
    a.push("--");
    a.push(program);
    a.extend(args);
    let exe = drhook_exe();
    run_in(dir, &exe.display().to_string(), &a, env)
}

/// The profiles in `dir` (files starting with `drhook.prof.`).
fn profiles(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|f| f.starts_with("drhook.prof."))
        .collect();
    v.sort();
    v
}

/// `drhook.prof.<task>.<command>.<pid>` → (task, command, pid).
fn child_name(f: &str) -> Option<(u32, String, u32)> {
    let rest = f.strip_prefix("drhook.prof.")?;
    let (task, rest) = rest.split_once('.')?;
    let (cmd, pid) = rest.rsplit_once('.')?;
    Some((task.parse().ok()?, cmd.to_string(), pid.parse().ok()?))
}

/// Commands of the child profiles, with their counts.
fn child_commands(files: &[String]) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for f in files {
        if let Some((_, cmd, _)) = child_name(f) {
            *m.entry(cmd).or_insert(0) += 1;
        }
    }
    m
}

fn parse(dir: &Path, name: &str) -> Profile {
    let text = std::fs::read_to_string(dir.join(name))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.join(name).display()));
    Profile::parse(&text)
}

/// The program name in a profile's header.
fn program_of(p: &Profile) -> String {
    let h = &p.header[0];
    let start = h.find("program='").unwrap() + "program='".len();
    h[start..start + h[start..].find('\'').unwrap()].to_string()
}

/// Every profile in `dir` has the root region `main` on thread 1 with one
/// call; returns them by file name.
fn all_with_main(dir: &Path) -> BTreeMap<String, Profile> {
    let mut m = BTreeMap::new();
    for f in profiles(dir) {
        let p = parse(dir, &f);
        let main = p.row("main", 1);
        assert_eq!(main.calls, 1, "{f}: {main:?}");
        m.insert(f, p);
    }
    m
}

fn gcc(dir: &Path, out: &str, args: &[&str]) {
    let mut a = vec!["-O1", "-g", "-o", out];
    a.extend(args);
    tool(dir, "gcc", &a);
}

/// The unmodified C program of most scenarios.
fn life(dir: &Path) -> PathBuf {
    let src = attach_prog("life.c");
    gcc(
        dir,
        "life",
        &[&src.display().to_string(), "-lpthread", "-ldl"],
    );
    dir.join("life")
}

fn writes(r: &Run) -> usize {
    r.stderr().matches("Writing profiling information").count()
}

// --- real programs ------------------------------------------------------------

#[test]
fn shell_pipeline_one_profile_per_process() {
    let d = tempdir();
    let r = drhook_run(
        d.path(),
        &[],
        "sh",
        &["-c", "echo hello | tr a-z A-Z | cat; exit 3"],
        &[],
    );
    assert_eq!(r.output.status.code(), Some(3), "{}", r.stderr());
    assert_eq!(r.stdout(), "HELLO\n", "the program's output is unchanged");
    let files = profiles(d.path());
    let all = all_with_main(d.path());
    assert_eq!(program_of(&all["drhook.prof.1"]), "sh");
    let cmds = child_commands(&files);
    assert_eq!(cmds.get("tr"), Some(&1), "{files:?}");
    assert_eq!(cmds.get("cat"), Some(&1), "{files:?}");
    // Anything else is a subshell sh forked (the builtin echo's side).
    assert!(
        cmds.keys()
            .all(|c| ["tr", "cat", "sh"].contains(&c.as_str())),
        "{files:?}"
    );
    for f in &files {
        if let Some((task, cmd, pid)) = child_name(f) {
            assert_eq!(task, 1);
            assert!(pid > 0);
            let prog = program_of(&all[f]);
            assert!(prog.ends_with(&cmd), "{f}: program {prog}");
        }
    }
}

#[test]
fn make_j2_of_a_small_tree() {
    if !have_gcc() {
        return;
    }
    if !have_tool("make") {
        return;
    }
    let d = tempdir();
    let src = d.path().join("src");
    std::fs::create_dir_all(src.join("lib")).unwrap();
    std::fs::write(
        src.join("main.c"),
        "int one(void); int two(void);\nint main(void) { return one() + two() == 3 ? 0 : 1; }\n",
    )
    .unwrap();
    std::fs::write(src.join("lib/one.c"), "int one(void) { return 1; }\n").unwrap();
    std::fs::write(src.join("lib/two.c"), "int two(void) { return 2; }\n").unwrap();
    std::fs::write(
        src.join("Makefile"),
        "CC = gcc\nOBJ = main.o lib/one.o lib/two.o\nprog: $(OBJ)\n\t$(CC) -o $@ $(OBJ)\n%.o: %.c\n\t$(CC) -c -o $@ $<\n",
    )
    .unwrap();
    // Every process writes its profile in its working directory: here all
    // of them run in src/.
    let r = drhook_run(&src, &[], "make", &["-j2"], &[]);
    assert_eq!(r.output.status.code(), Some(0), "{}", r.stderr());
    assert!(
        Command::new(src.join("prog")).status().unwrap().success(),
        "the build is right"
    );
    let files = profiles(&src);
    let all = all_with_main(&src);
    assert_eq!(program_of(&all["drhook.prof.1"]), "make");
    let cmds = child_commands(&files);
    // 3 compilations and a link: 4 gcc drivers, 3 cc1, 3 as, 1 collect2
    // and 1 ld; make's own children exec at once and write nothing.
    assert_eq!(cmds.get("gcc"), Some(&4), "{files:?}");
    assert_eq!(cmds.get("cc1"), Some(&3), "{files:?}");
    assert_eq!(cmds.get("as"), Some(&3), "{files:?}");
    assert_eq!(cmds.get("collect2"), Some(&1), "{files:?}");
    assert_eq!(cmds.get("ld"), Some(&1), "{files:?}");
    assert!(!cmds.contains_key("make"), "{files:?}");
    assert_eq!(files.len(), 1 + 4 + 3 + 3 + 1 + 1, "{files:?}");
}

#[test]
fn python_script_with_threads_and_a_child() {
    if !have_tool("python3") {
        return;
    }
    let d = tempdir();
    let script = attach_prog("script.py");
    let r = drhook_run(
        d.path(),
        &[],
        "python3",
        &[&script.display().to_string()],
        &[],
    );
    assert_eq!(r.output.status.code(), Some(4), "{}", r.stderr());
    assert_eq!(r.stdout(), "python done child\n");
    let files = profiles(d.path());
    let all = all_with_main(d.path());
    let py = &all["drhook.prof.1"];
    let name = program_of(py);
    assert!(
        name.rsplit('/').next().unwrap().starts_with("python3"),
        "{name}"
    );
    let threads: Vec<_> = py
        .rows
        .iter()
        .filter(|r| r.name.starts_with("thread"))
        .collect();
    assert_eq!(threads.len(), 2, "two threads' roots: {:#?}", py.rows);
    assert!(threads.iter().all(|r| r.calls == 1 && r.tid >= 2));
    assert_eq!(child_commands(&files).get("sh"), Some(&1), "{files:?}");
}

#[test]
fn openmp_fortran_workers_never_return_and_are_counted() {
    if !have_gfortran() {
        return;
    }
    let d = tempdir();
    let src = attach_prog("omp.f90");
    tool(
        d.path(),
        "gfortran",
        &["-O1", "-fopenmp", "-o", "omp", &src.display().to_string()],
    );
    let r = drhook_run(d.path(), &[], "./omp", &[], &[("OMP_NUM_THREADS", "3")]);
    ok(&r);
    assert!(r.stdout().starts_with("threads 3 sum"), "{}", r.stdout());
    assert_eq!(profiles(d.path()), vec!["drhook.prof.1".to_string()]);
    let p = parse(d.path(), "drhook.prof.1");
    let main = p.row("main", 1);
    assert_eq!(p.threads, 3);
    let workers: Vec<_> = p.rows.iter().filter(|r| r.tid >= 2).collect();
    assert_eq!(workers.len(), 2, "{:#?}", p.rows);
    for w in &workers {
        assert!(w.name.starts_with("thread:libgomp"), "{w:?}");
        assert_eq!(w.calls, 1);
        // Still in their start routine at exit: counted up to the profile.
        assert!(w.total_s > 0.0 && w.total_s <= main.total_s + 1e-3, "{w:?}");
    }
}

// --- every way a process ends ---------------------------------------------------

#[test]
fn every_ending_writes_the_profile_once_with_the_programs_status() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = life(d.path());
    let exe = exe.display().to_string();
    for (scenario, code, sig) in [
        ("exit3", Some(3), None),
        ("_exit5", Some(5), None),
        ("abort", None, Some(libc::SIGABRT)),
        ("assert", None, Some(libc::SIGABRT)),
        ("sigterm", None, Some(libc::SIGTERM)),
    ] {
        let w = tempdir();
        let r = drhook_run(w.path(), &[], &exe, &[scenario], &[]);
        assert_eq!(r.output.status.code(), code, "{scenario}: {}", r.stderr());
        assert_eq!(signal(&r), sig, "{scenario}");
        assert_eq!(
            profiles(w.path()),
            vec!["drhook.prof.1".to_string()],
            "{scenario}: {}",
            r.stderr()
        );
        assert_eq!(writes(&r), 1, "{scenario}: written once:\n{}", r.stderr());
        let p = parse(w.path(), "drhook.prof.1");
        assert_eq!(p.row("main", 1).calls, 1, "{scenario}");
        if sig.is_some() {
            assert!(
                r.stderr().contains("DrHookCallTree") || r.stderr().contains("signal"),
                "{scenario}: a traceback:\n{}",
                r.stderr()
            );
        }
    }
    // DRHOOK_PROFILE_ON_FAILURE=0: no profile for a failing ending, as the
    // reference libmonitor's default.
    for scenario in ["exit3", "abort"] {
        let w = tempdir();
        let r = drhook_run(w.path(), &["--no-failure-profile"], &exe, &[scenario], &[]);
        assert_ne!(r.output.status.code(), Some(0));
        assert!(
            profiles(w.path()).is_empty(),
            "{scenario}: {:?}",
            profiles(w.path())
        );
    }
}

#[test]
fn threads_returning_exiting_and_running_at_exit() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = life(d.path());
    let r = drhook_run(d.path(), &[], &exe.display().to_string(), &["threads"], &[]);
    ok(&r);
    let p = parse(d.path(), "drhook.prof.1");
    let main = p.row("main", 1);
    let named = |n: &str| p.rows_of(n);
    assert_eq!(named("thread:worker").len(), 2, "{:#?}", p.rows);
    assert_eq!(named("thread:exits_early").len(), 1, "pthread_exit");
    // Numbered in the order they were created, whatever order they start in.
    let mut w: Vec<u32> = named("thread:worker").iter().map(|r| r.tid).collect();
    w.sort();
    assert_eq!(w, vec![2, 3]);
    assert_eq!(named("thread:exits_early")[0].tid, 4);
    assert_eq!(named("thread:forever")[0].tid, 5);
    let forever = named("thread:forever");
    assert_eq!(forever.len(), 1, "a detached thread still running at exit");
    assert!(forever[0].total_s > 0.0 && forever[0].total_s < main.total_s);
    for r in p.rows.iter().filter(|r| r.name.starts_with("thread:")) {
        assert_eq!(r.calls, 1, "{r:?}");
        assert!(r.tid >= 2);
    }
    assert_eq!(p.threads, 5);
}

#[test]
fn a_fork_child_writes_its_own_profile() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = life(d.path());
    let r = drhook_run(d.path(), &[], &exe.display().to_string(), &["fork"], &[]);
    ok(&r);
    let child: u32 = r
        .stdout()
        .lines()
        .find_map(|l| l.strip_prefix("child "))
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        profiles(d.path()),
        vec![
            "drhook.prof.1".to_string(),
            format!("drhook.prof.1.life.{child}")
        ]
    );
    let all = all_with_main(d.path());
    // The child's main counts from the fork only.
    let c = all[&format!("drhook.prof.1.life.{child}")]
        .row("main", 1)
        .total_s;
    let p = all["drhook.prof.1"].row("main", 1).total_s;
    assert!(c < p, "child {c} s, parent {p} s");
}

#[test]
fn a_fork_child_that_ran_nothing_instrumented_writes_no_time_profile() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = life(d.path());
    let r = drhook_run(
        d.path(),
        &[],
        &exe.display().to_string(),
        &["fork_exit"],
        &[],
    );
    ok(&r);
    assert!(r.stdout().contains("status 3"), "{}", r.stdout());
    // Its profile would only repeat the parent's open `main`.
    assert_eq!(profiles(d.path()), vec!["drhook.prof.1".to_string()]);
    // With the memory profile on, the child's allocations are its own: it
    // writes its files.
    let d = tempdir();
    let r = drhook_run(
        d.path(),
        &["--opt", "prof,memprof"],
        &exe.display().to_string(),
        &["fork_exit"],
        &[],
    );
    ok(&r);
    let child: Vec<String> = profiles(d.path())
        .into_iter()
        .filter(|f| child_name(f.trim_end_matches("-mem")).is_some())
        .collect();
    assert_eq!(child.len(), 2, "{child:?}");
    assert!(child.iter().any(|f| f.ends_with("-mem")), "{child:?}");
}

#[test]
fn children_of_system_posix_spawn_and_vfork_are_followed() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = life(d.path());
    let r = drhook_run(d.path(), &[], &exe.display().to_string(), &["spawn"], &[]);
    ok(&r);
    assert_eq!(r.stdout(), "spawned: system 0 posix_spawnp 0\n");
    let files = profiles(d.path());
    let cmds = child_commands(&files);
    // system() runs `sh -c true` (true is a builtin of sh), posix_spawnp
    // and vfork+exec run true: each process its own file, and none for the
    // vfork child that only execs.
    assert_eq!(cmds.get("sh"), Some(&1), "{files:?}");
    assert_eq!(cmds.get("true"), Some(&2), "{files:?}");
    assert_eq!(files.len(), 4, "{files:?}");
    all_with_main(d.path());
}

#[test]
fn a_failed_exec_changes_nothing_and_a_successful_one_passes_the_role_on() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = life(d.path()).display().to_string();
    std::fs::write(d.path().join("noexec.txt"), "not a program").unwrap();
    // Executable, but no format the kernel knows: exec fails with ENOEXEC
    // after the layer has ended the process for it.
    std::fs::write(d.path().join("bad.bin"), "garbage without a #! line").unwrap();
    Command::new("chmod")
        .args(["+x", "bad.bin"])
        .current_dir(d.path())
        .status()
        .unwrap();
    let r = drhook_run(
        d.path(),
        &[],
        &exe,
        &["execfail", "./noexec.txt", "./bad.bin"],
        &[],
    );
    ok(&r);
    assert!(
        r.stdout().contains(&format!(
            "errno {} {} {}",
            libc::ENOENT,
            libc::EACCES,
            libc::ENOEXEC
        )),
        "errno as the C library left it: {}",
        r.stdout()
    );
    assert_eq!(profiles(d.path()), vec!["drhook.prof.1".to_string()]);
    assert_eq!(writes(&r), 1, "{}", r.stderr());
    // The whole run, across the failed execs.
    assert_eq!(program_of(&parse(d.path(), "drhook.prof.1")), exe);

    let w = tempdir();
    for f in ["noexec.txt", "bad.bin"] {
        std::fs::copy(d.path().join(f), w.path().join(f)).unwrap();
    }
    let r = drhook_run(
        w.path(),
        &[],
        &exe,
        &["execfail", "./noexec.txt", "./bad.bin", "true"],
        &[],
    );
    ok(&r);
    let files = profiles(w.path());
    assert_eq!(files.len(), 2, "{files:?}");
    // The program it became writes the plain name; its own profile up to
    // the exec is a child's.
    assert_eq!(program_of(&parse(w.path(), "drhook.prof.1")), "true");
    let (_, cmd, _) = child_name(&files[1]).unwrap();
    assert_eq!(cmd, "life");
}

// --- MPI ------------------------------------------------------------------------------

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

fn have_mpi(compiler: &str) -> bool {
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

// --- one engine per process ---------------------------------------------------------

#[test]
fn a_c_program_linked_with_libdrhook_so_has_one_engine() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = c_exe(
        d.path(),
        "hooked",
        &[&attach_prog("hooked.c")],
        &["-pthread"],
        Link::Shared,
    );
    let r = drhook_run(d.path(), &[], &exe.display().to_string(), &[], &[]);
    ok(&r);
    assert_eq!(profiles(d.path()), vec!["drhook.prof.1".to_string()]);
    let p = parse(d.path(), "drhook.prof.1");
    assert_eq!(p.row("main", 1).calls, 1);
    assert_eq!(p.row("HOOKED:WORK", 1).calls, 3);
    let t = p.rows_of("HOOKED:WORK");
    assert_eq!(t.len(), 2, "{:#?}", p.rows);
    let other = t.iter().find(|r| r.tid != 1).unwrap();
    assert_eq!(other.calls, 2);
    assert_eq!(p.row("thread:hooked_thread", other.tid).calls, 1);
}

#[test]
fn a_fortran_openmp_program_linked_with_libdrhook_so_has_one_engine() {
    if !have_gfortran() {
        return;
    }
    let d = tempdir();
    yomhook(d.path(), true);
    let exe = fortran_exe(
        d.path(),
        "f_omp",
        &[&prog("f_omp.F90")],
        &["-fopenmp"],
        Link::Shared,
    );
    let r = drhook_run(
        d.path(),
        &["--opt", "prof,callpath"],
        &exe.display().to_string(),
        &[],
        &[("OMP_NUM_THREADS", "4"), ("OMP_DYNAMIC", "false")],
    );
    ok(&r);
    assert_eq!(profiles(d.path()), vec!["drhook.prof.1".to_string()]);
    let p = parse(d.path(), "drhook.prof.1");
    assert_eq!(p.row("main", 1).calls, 1);
    // OpenMP thread t calls OMP:KERNEL (t+1)*10 times under OMP:WORKER:
    // the rows keep the OpenMP numbering (@t+1), as without the preload.
    for n in 1..=4u32 {
        let k: Vec<_> = p
            .rows_of("OMP:KERNEL")
            .into_iter()
            .filter(|r| r.tid == n && r.path.first().map(String::as_str) == Some("OMP:WORKER"))
            .collect();
        assert_eq!(k.len(), 1, "KERNEL@{n} under WORKER: {:#?}", p.rows);
        assert_eq!(k[0].calls, 10 * n as u64, "KERNEL@{n}");
    }
    // The master's calls are under main, the workers' under their roots.
    let w1: Vec<_> = p
        .rows_of("OMP:WORKER")
        .into_iter()
        .filter(|r| r.tid == 1)
        .collect();
    assert!(
        w1.iter()
            .any(|r| r.path.last().map(String::as_str) == Some("main")),
        "{w1:#?}"
    );
}

#[test]
fn a_rust_drhook_binary_has_one_engine() {
    let d = tempdir();
    let prog = built("drhook-test-prog");
    let r = drhook_run(d.path(), &[], &prog.display().to_string(), &["basic"], &[]);
    ok(&r);
    assert_eq!(profiles(d.path()), vec!["drhook.prof.1".to_string()]);
    let p = parse(d.path(), "drhook.prof.1");
    let main = p.row("main", 1);
    assert_eq!(main.calls, 1);
    let leaf = p.row("BASIC:LEAF", 1);
    assert!(leaf.calls > 0);
    assert!(
        main.total_s >= leaf.total_s,
        "main covers the program's routines"
    );
}

#[test]
fn library_wrappers_join_the_preload_engine() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let libdir = shared_lib().parent().unwrap().display().to_string();
    gcc(
        d.path(),
        "libdrhook-wrap-mycos.so",
        &[
            "-shared",
            "-fPIC",
            &format!("-I{}", include_dir().display()),
            &attach_prog("mycos_wrapper.c").display().to_string(),
            &format!("-L{libdir}"),
            &format!("-Wl,-rpath,{libdir}"),
            "-ldrhook",
            "-ldl",
        ],
    );
    gcc(
        d.path(),
        "calls_cos",
        &[&attach_prog("calls_cos.c").display().to_string(), "-lm"],
    );
    let dir = d.path().display().to_string();
    let r = drhook_run(
        d.path(),
        &["--wrap", "mycos"],
        "./calls_cos",
        &[],
        &[("DRHOOK_WRAP_PATH", &dir)],
    );
    ok(&r);
    assert_eq!(profiles(d.path()), vec!["drhook.prof.1".to_string()]);
    let p = parse(d.path(), "drhook.prof.1");
    assert_eq!(p.row("main", 1).calls, 1);
    assert_eq!(p.row("WRAP:cos", 1).calls, 5, "{:#?}", p.rows);
    // DR_HOOK_WRAP does the same; an unknown name is an error naming it.
    let r = drhook_run(
        d.path(),
        &["--dry-run"],
        "true",
        &[],
        &[("DR_HOOK_WRAP", "mycos"), ("DRHOOK_WRAP_PATH", &dir)],
    );
    ok(&r);
    assert!(
        r.stdout()
            .lines()
            .next()
            .unwrap()
            .ends_with("libdrhook-wrap-mycos.so"),
        "{}",
        r.stdout()
    );
    let r = drhook_run(d.path(), &["--wrap", "nosuch"], "true", &[], &[]);
    assert_eq!(r.output.status.code(), Some(2));
    assert!(r.stderr().contains("no wrapper `nosuch`"), "{}", r.stderr());
}

// --- the static program ---------------------------------------------------------

#[test]
fn a_static_program_linked_with_the_wrap_list() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let list = crate_dir().join("share").join("drhook-wrap.list");
    let wrap = built("libdrhook_wrap.a");
    let src = attach_prog("life.c");
    // glibc warns that dlopen in a static program needs the shared
    // libraries at run time: expected here.
    let out = Command::new("gcc")
        .current_dir(d.path())
        .args(["-static", "-O1", "-o", "life_static"])
        .arg(&src)
        .arg(format!("-Wl,@{}", list.display()))
        .arg(&wrap)
        .args(["-lpthread", "-ldl", "-lm"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "static link failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let exe = d.path().join("life_static").display().to_string();
    let prof = [("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof")];
    let w = tempdir();
    let r = run_in(w.path(), &exe, &["threads"], &prof);
    ok(&r);
    let p = parse(w.path(), "drhook.prof.1");
    assert_eq!(p.row("main", 1).calls, 1);
    // Four threads' roots (unnamed: a static program has no dladdr).
    let roots: Vec<_> = p
        .rows
        .iter()
        .filter(|r| r.name.starts_with("thread"))
        .collect();
    assert_eq!(roots.len(), 4, "{:#?}", p.rows);
    assert!(roots.iter().all(|r| r.calls == 1 && r.tid >= 2));
    let w = tempdir();
    let r = run_in(w.path(), &exe, &["_exit5"], &prof);
    assert_eq!(r.output.status.code(), Some(5));
    assert_eq!(profiles(w.path()), vec!["drhook.prof.1".to_string()]);
    let w = tempdir();
    let r = run_in(w.path(), &exe, &["fork"], &prof);
    ok(&r);
    assert_eq!(profiles(w.path()).len(), 2, "{:?}", profiles(w.path()));
}

// --- options ------------------------------------------------------------------------

#[test]
fn follow_and_prefix_options() {
    let d = tempdir();
    let r = drhook_run(
        d.path(),
        &["--follow", "none"],
        "sh",
        &["-c", "echo a | cat"],
        &[],
    );
    ok(&r);
    assert_eq!(profiles(d.path()), vec!["drhook.prof.1".to_string()]);
    let d = tempdir();
    let r = drhook_run(
        d.path(),
        &["--follow", "^cat$", "--prefix", "run1/"],
        "sh",
        &["-c", "echo a | cat | tr a b"],
        &[],
    );
    ok(&r);
    assert_eq!(r.stdout(), "b\n");
    let mut in_dir: Vec<String> = std::fs::read_dir(d.path().join("run1"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    in_dir.sort();
    assert_eq!(in_dir.len(), 2, "sh and cat, not tr: {in_dir:?}");
    assert!(
        in_dir
            .iter()
            .any(|f| f.starts_with("sh.") && f.ends_with(".drhook.prof.1"))
    );
    assert!(
        in_dir
            .iter()
            .any(|f| f.starts_with("cat.") && f.ends_with(".drhook.prof.1"))
    );
}

#[test]
fn drhook_run_exit_status_and_errors() {
    let d = tempdir();
    let r = drhook_run(d.path(), &[], "/no/such/program", &[], &[]);
    assert_eq!(r.output.status.code(), Some(127));
    assert!(
        r.stderr().contains("cannot run /no/such/program"),
        "{}",
        r.stderr()
    );
    let r = run_in(
        d.path(),
        &drhook_exe().display().to_string(),
        &["run", "--preload", "/no/lib.so", "--", "true"],
        &[],
    );
    assert_eq!(r.output.status.code(), Some(2));
    assert!(r.stderr().contains("/no/lib.so"), "{}", r.stderr());
    // LD_PRELOAD already set: appended to.
    let r = run_in(
        d.path(),
        &drhook_exe().display().to_string(),
        &["run", "--dry-run", "--", "true"],
        &[("LD_PRELOAD", "libfoo.so")],
    );
    ok(&r);
    assert!(
        r.stdout().starts_with("LD_PRELOAD=libfoo.so:/")
            && r.stdout().contains("libdrhook_preload.so"),
        "{}",
        r.stdout()
    );
}

// --- the events a tool receives ------------------------------------------------------

fn events(dir: &Path, exe: &Path, scenario: &str) -> (Run, Vec<(u32, u32, String)>) {
    let log = dir.join(format!("{scenario}.log"));
    let lib = target_dir().join("examples").join("libevent_log.so");
    built("drhook");
    let r = run_in(
        dir,
        &exe.display().to_string(),
        &[scenario],
        &[
            ("LD_PRELOAD", &lib.display().to_string()),
            ("EVENT_LOG", &log.display().to_string()),
        ],
    );
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let ev = text
        .lines()
        .map(|l| {
            let mut it = l.splitn(3, ' ');
            (
                it.next().unwrap().parse().unwrap(),
                it.next().unwrap().parse().unwrap(),
                it.next().unwrap().to_string(),
            )
        })
        .collect();
    (r, ev)
}

#[test]
fn a_tool_gets_each_event_once() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = life(d.path());
    let (r, ev) = events(d.path(), &exe, "fork");
    ok(&r);
    let names: Vec<&str> = ev.iter().map(|e| e.2.as_str()).collect();
    let parent = ev[0].0;
    let child = ev.iter().find(|e| e.0 != parent).unwrap().0;
    let of = |pid: u32| -> Vec<&str> {
        ev.iter()
            .filter(|e| e.0 == pid)
            .map(|e| e.2.as_str())
            .collect()
    };
    assert_eq!(
        of(parent),
        vec![
            "init_process life forked=false argc=2",
            "pre_fork",
            &format!("post_fork Parent({child})"),
            "fini_process Return(0)",
        ],
        "{names:?}"
    );
    assert_eq!(
        of(child),
        vec![
            "post_fork Child",
            "init_process life forked=true argc=0",
            "fini_process Return(0)",
        ]
    );

    let (r, ev) = events(d.path(), &exe, "threads");
    ok(&r);
    let main_tid = ev[0].1;
    let inits: Vec<u32> = ev
        .iter()
        .filter(|e| e.2.starts_with("init_thread"))
        .map(|e| e.1)
        .collect();
    let finis: Vec<u32> = ev
        .iter()
        .filter(|e| e.2 == "fini_thread")
        .map(|e| e.1)
        .collect();
    assert_eq!(inits.len(), 4, "{ev:?}");
    assert_eq!(finis.len(), 3, "the detached thread never ends: {ev:?}");
    assert!(finis.iter().all(|t| inits.contains(t) && *t != main_tid));
    assert_eq!(ev.last().unwrap().2, "fini_process Return(0)");
    assert_eq!(
        ev.iter()
            .filter(|e| e.2.starts_with("fini_process"))
            .count(),
        1
    );

    let (r, ev) = events(d.path(), &exe, "dlopen");
    ok(&r);
    let names: Vec<&str> = ev.iter().map(|e| e.2.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "init_process life forked=false argc=2",
            "dlopen Some(\"libm.so.6\")",
            "dlclose",
            "fini_process Return(0)",
        ]
    );

    let (r, ev) = events(d.path(), &exe, "exit3");
    assert_eq!(r.output.status.code(), Some(3));
    assert_eq!(ev.last().unwrap().2, "fini_process Exit(3)");
    let (r, ev) = events(d.path(), &exe, "abort");
    assert_eq!(signal(&r), Some(libc::SIGABRT));
    assert_eq!(ev.last().unwrap().2, "fini_process Abort");
}

// --- installed: pkg-config and CMake for the static program -------------------------

#[test]
fn installed_wrap_library_through_pkg_config_and_cmake() {
    if !have_gcc()
        || !have_gfortran()
        || !have_tool("make")
        || !have_tool("pkg-config")
        || !have_tool("cmake")
    {
        return;
    }
    built("libdrhook_wrap.a");
    shared_lib();
    let d = tempdir();
    let prefix = d.path().join("prefix");
    tool(
        d.path(),
        "make",
        &[
            "-s",
            "-C",
            &crate_dir().display().to_string(),
            "install",
            &format!("PREFIX={}", prefix.display()),
            &format!("DRHOOK_LIBDIR={}", target_dir().display()),
            &format!("BUILD={}", d.path().join("build").display()),
        ],
    );
    for f in [
        "lib/libdrhook_preload.so",
        "lib/libdrhook_wrap.a",
        "share/drhook/drhook-wrap.list",
        "share/drhook/drhook-wrap-mpi.list",
        "lib/pkgconfig/drhook-wrap.pc",
        "lib/pkgconfig/drhook-wrap-mpi.pc",
    ] {
        assert!(prefix.join(f).exists(), "{f} not installed");
    }
    let pc = Command::new("pkg-config")
        .args(["--cflags", "--libs", "drhook-wrap"])
        .env("PKG_CONFIG_PATH", prefix.join("lib").join("pkgconfig"))
        .output()
        .unwrap();
    assert!(
        pc.status.success(),
        "{}",
        String::from_utf8_lossy(&pc.stderr)
    );
    let flags = String::from_utf8(pc.stdout).unwrap();
    assert!(flags.contains("drhook-wrap.list"), "{flags}");
    let mut args = vec![
        "-static".to_string(),
        "-O1".into(),
        "-o".into(),
        "life".into(),
    ];
    args.push(attach_prog("life.c").display().to_string());
    args.extend(flags.split_whitespace().map(String::from));
    let out = Command::new("gcc")
        .current_dir(d.path())
        .args(&args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let prof = [("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof")];
    let w = tempdir();
    let r = run_in(
        w.path(),
        &d.path().join("life").display().to_string(),
        &["exit3"],
        &prof,
    );
    assert_eq!(r.output.status.code(), Some(3));
    assert_eq!(parse(w.path(), "drhook.prof.1").row("main", 1).calls, 1);

    // CMake: find_package(DrHook) and DrHook::wrap.
    let proj = d.path().join("cmake-project");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::copy(attach_prog("life.c"), proj.join("life.c")).unwrap();
    std::fs::write(
        proj.join("CMakeLists.txt"),
        "cmake_minimum_required(VERSION 3.13)\nproject(life C)\nfind_package(DrHook REQUIRED)\n\
         add_executable(life life.c)\ntarget_link_options(life PRIVATE -static)\n\
         target_link_libraries(life PRIVATE DrHook::wrap)\n",
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
    let out = Command::new("cmake")
        .args(["--build", &build.display().to_string()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let w = tempdir();
    let r = run_in(
        w.path(),
        &build.join("life").display().to_string(),
        &["_exit5"],
        &prof,
    );
    assert_eq!(r.output.status.code(), Some(5));
    assert_eq!(parse(w.path(), "drhook.prof.1").row("main", 1).calls, 1);
}

#[test]
fn libdrhook_and_the_preload_refer_to_optional_symbols_weakly() {
    if !have_tool("nm") {
        return;
    }
    // Without the preload, libdrhook.so must load: its reference to the
    // layer's registration entry is weak (in every build profile).
    let undefined = |lib: &Path| -> String {
        let out = Command::new("nm")
            .args(["-D", "--undefined-only"])
            .arg(lib)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let so = undefined(&shared_lib());
    let line = so
        .lines()
        .find(|l| l.ends_with(" drhook_attach_register_engine_v1"))
        .unwrap_or_else(|| panic!("no reference to the layer:\n{so}"));
    assert!(line.trim_start().starts_with("w "), "{line}");
    // The preload refers to MPI only weakly: it loads in programs without MPI.
    let pre = undefined(&built("libdrhook_preload.so"));
    for sym in ["PMPI_Comm_rank", "PMPI_Comm_size", "ompi_mpi_comm_world"] {
        let line = pre
            .lines()
            .find(|l| l.ends_with(&format!(" {sym}")))
            .unwrap();
        assert!(line.trim_start().starts_with("w "), "{line}");
    }
}

// --- memory per routine through the preload's malloc family ----------------------

/// `(self-alloc, #allocs, #frees, self-leaked)` of each row of a `-mem`
/// file, by `NAME@tid`.
fn mem_rows(text: &str) -> BTreeMap<String, (u64, u64, u64, i64)> {
    drhook_tests::mem_rows(text)
        .into_iter()
        .map(|r| (r.name, (r.self_alloc, r.allocs, r.frees, r.leaked)))
        .collect()
}

/// `progs/attach/mem.c` built in `d`, linked with libdrhook.so.
fn mem_exe(d: &Path) -> PathBuf {
    c_exe(
        d,
        "mem",
        &[&attach_prog("mem.c")],
        &["-pthread", "-std=gnu11"],
        Link::Shared,
    )
}

#[test]
fn memprof_of_a_c_program_gets_exact_bytes_and_counts_per_routine() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = mem_exe(d.path());
    let r = drhook_run(
        d.path(),
        &["--opt", "memprof"],
        &exe.display().to_string(),
        &[],
        &[],
    );
    ok(&r);
    assert_eq!(r.stdout(), "mem done\n");
    let text = std::fs::read_to_string(d.path().join("drhook.prof.1-mem")).unwrap();
    let m = mem_rows(&text);
    assert_eq!(m["MEM:PLAIN@1"], (1024, 2, 1, 1000), "{text}");
    // The chain's last block is freed by MEM:COLLECT.
    assert_eq!(m["MEM:CHAIN@1"], (1110, 3, 2, 0), "{text}");
    assert_eq!(m["MEM:ALIGNED@1"], (4708, 3, 1, 4196), "{text}");
    // Four worker rows on four threads, freed by the main thread.
    let mut w: Vec<(u64, u64, u64, i64)> = m
        .iter()
        .filter(|(k, _)| k.starts_with("MEM:WORKER@"))
        .map(|(_, v)| *v)
        .collect();
    w.sort();
    assert_eq!(
        w,
        [
            (4096, 1, 0, 0),
            (8192, 1, 0, 0),
            (12288, 1, 0, 0),
            (16384, 1, 0, 0)
        ],
        "{text}"
    );
    assert_eq!(m["MEM:COLLECT@1"], (0, 0, 5, 0), "{text}");
    // main (the root region of the unmodified part) holds its children.
    assert!(m.contains_key("main@1"), "{text}");
}

#[test]
fn memprof_off_leaves_the_malloc_family_untouched() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = mem_exe(d.path());
    let r = drhook_run(
        d.path(),
        &["--opt", "prof"],
        &exe.display().to_string(),
        &[],
        &[],
    );
    ok(&r);
    assert_eq!(r.stdout(), "mem done\n");
    assert!(!d.path().join("drhook.prof.1-mem").exists());
    let p = parse(d.path(), "drhook.prof.1");
    assert_eq!(
        p.row("MEM:WORKER", 2).calls + p.row("MEM:PLAIN", 1).calls,
        2
    );
}

#[test]
fn memprof_of_fortran_allocate_through_the_preload() {
    if !have_gfortran() {
        return;
    }
    let d = tempdir();
    yomhook(d.path(), false);
    let exe = fortran_exe(
        d.path(),
        "f_alloc",
        &[&prog("f_alloc.F90")],
        &[],
        Link::Shared,
    );
    let r = drhook_run(
        d.path(),
        &["--opt", "memprof"],
        &exe.display().to_string(),
        &[],
        &[],
    );
    ok(&r);
    assert_eq!(r.stdout(), "sum   3000.0\n");
    let text = std::fs::read_to_string(d.path().join("drhook.prof.1-mem")).unwrap();
    let m = mem_rows(&text);
    assert_eq!(m["ALLOCS:KEEP@1"], (12000, 2, 1, 0), "{text}");
    assert_eq!(m["ALLOCS:RELEASE@1"], (0, 0, 1, 0), "{text}");
}

#[test]
fn memprof_of_a_static_program_linked_with_the_malloc_wrap_list() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let share = crate_dir().join("share");
    let wrap = built("libdrhook_wrap.a");
    let out = Command::new("gcc")
        .current_dir(d.path())
        .args([
            "-static",
            "-O1",
            "-std=gnu11",
            "-pthread",
            "-o",
            "mem_static",
        ])
        .arg(format!("-I{}", include_dir().display()))
        .arg(attach_prog("mem.c"))
        .arg(format!("-Wl,@{}", share.join("drhook-wrap.list").display()))
        .arg(format!(
            "-Wl,@{}",
            share.join("drhook-wrap-malloc.list").display()
        ))
        .arg(&wrap)
        .args(["-lpthread", "-ldl", "-lm"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "static link failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let exe = d.path().join("mem_static").display().to_string();
    let r = run_in(
        d.path(),
        &exe,
        &[],
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "memprof")],
    );
    ok(&r);
    assert_eq!(r.stdout(), "mem done\n");
    let text = std::fs::read_to_string(d.path().join("drhook.prof.1-mem")).unwrap();
    let m = mem_rows(&text);
    assert_eq!(m["MEM:PLAIN@1"], (1024, 2, 1, 1000), "{text}");
    assert_eq!(m["MEM:CHAIN@1"], (1110, 3, 2, 0), "{text}");
    assert_eq!(m["MEM:ALIGNED@1"], (4708, 3, 1, 4196), "{text}");
    assert_eq!(m["MEM:COLLECT@1"], (0, 0, 5, 0), "{text}");
    // Untracked (no memory token): the same program runs as before.
    let w = tempdir();
    let r = run_in(
        w.path(),
        &exe,
        &[],
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof")],
    );
    ok(&r);
    assert_eq!(r.stdout(), "mem done\n");
}

// --- I/O profiling through the preload's interposers -----------------------------

fn io_report(dir: &Path, name: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join(name))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.join(name).display()));
    serde_json::from_str(&text).unwrap()
}

fn io_file<'a>(r: &'a serde_json::Value, suffix: &str) -> &'a serde_json::Value {
    r["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"].as_str().unwrap().ends_with(suffix))
        .unwrap_or_else(|| panic!("no {suffix} in {r:#}"))
}

fn io_exe(d: &Path) -> PathBuf {
    c_exe(
        d,
        "io",
        &[&attach_prog("io.c")],
        &["-pthread", "-std=gnu11", "-lrt"],
        Link::Shared,
    )
}

#[test]
fn io_profile_of_posix_stdio_aio_and_a_forked_child_is_exact() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = io_exe(d.path());
    let r = drhook_run(
        d.path(),
        &["--opt", "io"],
        &exe.display().to_string(),
        &[],
        &[],
    );
    ok(&r);
    assert_eq!(r.stdout(), "io done\n");
    let rep = io_report(d.path(), "drhook.io.1");
    assert_eq!(rep["command"], "io");
    let p = io_file(&rep, "/posix.dat");
    let n =
        |f: &serde_json::Value, k: &str| f[k].as_u64().unwrap_or_else(|| panic!("{k} in {f:#}"));
    assert_eq!(n(p, "opens"), 1, "{p:#}");
    assert_eq!(n(p, "closes"), 1);
    assert_eq!(n(p, "writes"), 101);
    assert_eq!(n(p, "write_bytes"), 100 * 1000 + 4096);
    assert_eq!(n(p, "reads"), 11);
    assert_eq!(n(p, "read_bytes"), 10 * 10000 + 4096);
    assert_eq!(n(p, "seeks"), 1);
    assert_eq!(n(p, "syncs"), 1);
    assert_eq!(n(p, "max_write"), 4096);
    assert_eq!(n(p, "min_write"), 1000);
    assert_eq!(
        p["write_hist"],
        serde_json::json!([0, 100, 1, 0, 0, 0, 0, 0, 0, 0])
    );
    assert_eq!(
        p["read_hist"],
        serde_json::json!([0, 0, 11, 0, 0, 0, 0, 0, 0, 0])
    );
    // Darshan's definitions: the file's last byte starts at 0 at the open,
    // so the first write (offset 0) is neither sequential nor consecutive,
    // the 99 after it are both; the pwrite at 200000 jumps forward
    // (sequential only). The reads after the seek likewise: the first at
    // 0 neither, 9 both, the pread at 200000 sequential.
    assert_eq!(n(p, "consec_writes"), 99, "{p:#}");
    assert_eq!(n(p, "seq_writes"), 100);
    assert_eq!(n(p, "consec_reads"), 9);
    assert_eq!(n(p, "seq_reads"), 10);
    // Highest byte: the pwrite's and pread's last, 200000 + 4096 - 1.
    assert_eq!(n(p, "max_byte_written"), 204_095);
    assert_eq!(n(p, "max_byte_read"), 204_095);
    // write* -> read* -> pwrite -> pread: three switches.
    assert_eq!(n(p, "rw_switches"), 3);
    assert_eq!(p["opened_by"], "IO:POSIX@1");
    // The routines that moved its bytes: all of them IO:POSIX's.
    assert_eq!(
        p["routines"],
        serde_json::json!([{"routine": "IO:POSIX", "bytes": 2 * (100 * 1000 + 4096)}])
    );
    assert_eq!(n(p, "other_routines_bytes"), 0);
    let s = io_file(&rep, "/stdio.txt");
    assert_eq!(n(s, "stdio_writes"), 1001, "{s:#}");
    assert_eq!(n(s, "stdio_write_bytes"), 10004);
    assert_eq!(n(s, "bufsize"), 65536);
    assert_eq!(s["bufmode"], "full");
    assert_eq!((n(s, "opens"), n(s, "closes")), (1, 1));
    assert_eq!(rep["aio"]["writes"], 4, "{rep:#}");
    assert_eq!(rep["aio"]["completed"], 4);
    assert_eq!(rep["aio"]["bytes"], 32768);
    assert!(rep["aio"]["max_queue_depth"].as_u64().unwrap() >= 1);
    assert_eq!(n(io_file(&rep, "/aio.dat"), "write_bytes"), 32768);
    // The child: its own file, named with command and pid, its ancestry.
    let child = drhook_tests::files_starting_with(d.path(), "drhook.io.1.io.");
    assert_eq!(child.len(), 1, "{child:?}");
    let c = io_report(d.path(), &child[0]);
    let anc = c["ancestry"].as_array().unwrap();
    assert_eq!(anc.len(), 1, "{c:#}");
    assert!(anc[0].as_str().unwrap().ends_with("-io"));
    let cf = io_file(&c, "/child.txt");
    assert_eq!((n(cf, "writes"), n(cf, "write_bytes")), (5, 30));
    assert!(
        c["files"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| !f["path"].as_str().unwrap().ends_with("/posix.dat")),
        "the child's report holds only its own I/O"
    );
    // Per routine: the -io profile.
    let prof = std::fs::read_to_string(d.path().join("drhook.prof.1-io")).unwrap();
    let row = prof
        .lines()
        .find(|l| l.ends_with(" IO:POSIX@1"))
        .unwrap_or_else(|| panic!("{prof}"));
    let f: Vec<&str> = row.split_whitespace().collect();
    // read bytes, written bytes, #reads (the failed read(-1) is an
    // operation too), #writes, #other (open, seek, fsync, close).
    assert_eq!(&f[5..10], ["104096", "104096", "12", "101", "4"], "{prof}");
    let row = prof.lines().find(|l| l.ends_with(" IO:STDIO@1")).unwrap();
    let f: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&f[5..9], ["0", "10004", "0", "1001"], "{prof}");
    // The text report.
    let out = Command::new(drhook_exe())
        .args(["io", "drhook.io.1"])
        .current_dir(d.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("/posix.dat (IO:POSIX@1)"), "{text}");
    assert!(text.contains("by routine  IO:POSIX 203.3 KiB"), "{text}");
    assert!(text.contains("65536/full"), "{text}");
    assert!(
        text.contains("AIO: 0 reads, 4 writes, 4 completed"),
        "{text}"
    );
}

#[test]
fn io_counts_equal_what_strace_sees_for_the_same_run() {
    if !have_gcc() || !have_tool("strace") {
        return;
    }
    let d = tempdir();
    let exe = io_exe(d.path());
    let preload = built("libdrhook_preload.so");
    let out = Command::new("strace")
        .current_dir(d.path())
        .args([
            "-f",
            "-y",
            "-qq",
            "-e",
            "trace=read,write,pread64,pwrite64",
            "-e",
            "signal=none",
            "-o",
            "trace.log",
        ])
        // The environment of the traced program only (not strace's).
        .arg("-E")
        .arg(format!("LD_PRELOAD={}", preload.display()))
        .args([
            "-E",
            "DR_HOOK=1",
            "-E",
            "DR_HOOK_SILENT=1",
            "-E",
            "DR_HOOK_OPT=io",
        ])
        .arg(&exe)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = std::fs::read_to_string(d.path().join("trace.log")).unwrap();
    // System calls on a file, by call (strace -y names the file).
    let count = |file: &str, calls: &[&str]| -> (u64, u64) {
        let mut n = 0;
        let mut bytes = 0;
        for l in log.lines() {
            let l = l.split_once(' ').map_or(l, |x| x.1).trim_start();
            if calls.iter().any(|c| l.starts_with(&format!("{c}(")))
                && l.contains(&format!("/{file}>"))
            {
                n += 1;
                bytes += l
                    .rsplit("= ")
                    .next()
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .unwrap_or(0);
            }
        }
        (n, bytes)
    };
    let rep = io_report(d.path(), "drhook.io.1");
    let p = io_file(&rep, "/posix.dat");
    let ours =
        |f: &serde_json::Value, a: &str, b: &str| (f[a].as_u64().unwrap(), f[b].as_u64().unwrap());
    assert_eq!(
        count("posix.dat", &["write", "pwrite64"]),
        ours(p, "writes", "write_bytes"),
        "{log}"
    );
    assert_eq!(
        count("posix.dat", &["read", "pread64"]),
        ours(p, "reads", "read_bytes"),
        "{log}"
    );
    let child = drhook_tests::files_starting_with(d.path(), "drhook.io.1.io.");
    let c = io_report(d.path(), &child[0]);
    assert_eq!(
        count("child.txt", &["write"]),
        ours(io_file(&c, "/child.txt"), "writes", "write_bytes")
    );
    // What cannot be seen: stdio's own flushes of stdio.txt (a few large
    // writes through the 64 KiB buffer) are the C library's internal
    // calls; the report has the 1001 stream calls and their bytes instead.
    let (n, bytes) = count("stdio.txt", &["write"]);
    assert!(
        bytes == 10004 && (1..10).contains(&n),
        "{n} writes of {bytes} bytes:\n{log}"
    );
    let st = io_file(&rep, "/stdio.txt");
    assert_eq!(ours(st, "writes", "write_bytes"), (0, 0));
    assert_eq!(ours(st, "stdio_writes", "stdio_write_bytes"), (1001, 10004));
}

#[test]
fn io_profile_of_a_rust_drhook_program_fills_its_routines() {
    let d = tempdir();
    let prog = built("drhook-test-prog");
    let r = drhook_run(
        d.path(),
        &["--opt", "io"],
        &prog.display().to_string(),
        &["io"],
        &[],
    );
    ok(&r);
    assert_eq!(r.stdout(), "read 1000\n");
    let prof = std::fs::read_to_string(d.path().join("drhook.prof.1-io")).unwrap();
    let cols = |name: &str| -> Vec<String> {
        let l = prof
            .lines()
            .find(|l| l.ends_with(name))
            .unwrap_or_else(|| panic!("{name}: {prof}"));
        l.split_whitespace().map(String::from).collect()
    };
    // read bytes, written bytes, #reads, #writes.
    assert_eq!(
        cols(" IO:WRITER@1")[5..9],
        ["0", "1000", "0", "10"],
        "{prof}"
    );
    // 300, 300, 300, 100, then 0 at the end of the file.
    assert_eq!(
        cols(" IO:READER@1")[5..9],
        ["1000", "0", "5", "0"],
        "{prof}"
    );
    let rep = io_report(d.path(), "drhook.io.1");
    let f = io_file(&rep, "/io_test.dat");
    assert_eq!(f["opened_by"], "IO:WRITER@1", "{f:#}");
    assert_eq!(
        (f["writes"].as_u64(), f["write_bytes"].as_u64()),
        (Some(10), Some(1000))
    );
    assert_eq!(
        (f["reads"].as_u64(), f["read_bytes"].as_u64()),
        (Some(5), Some(1000))
    );
}

#[test]
fn io_profile_of_tar_and_gzip() {
    if !have_tool("tar") || !have_tool("gzip") {
        return;
    }
    let d = tempdir();
    let src = d.path().join("src");
    std::fs::create_dir(&src).unwrap();
    for i in 0..20 {
        std::fs::write(
            src.join(format!("f{i:02}")),
            vec![b'a' + (i % 26) as u8; 10240],
        )
        .unwrap();
    }
    let r = drhook_run(
        d.path(),
        &["--opt", "io"],
        "tar",
        &["czf", "out.tgz", "src"],
        &[],
    );
    ok(&r);
    let tar = io_report(d.path(), "drhook.io.1");
    assert_eq!(tar["command"], "tar");
    for i in 0..20 {
        let f = io_file(&tar, &format!("/src/f{i:02}"));
        assert_eq!(f["read_bytes"].as_u64(), Some(10240), "{f:#}");
        assert_eq!(f["opens"].as_u64(), Some(1));
    }
    // gzip, started by tar, writes the archive: its bytes are the file's.
    let gz = drhook_tests::files_starting_with(d.path(), "drhook.io.1.gzip.");
    assert_eq!(gz.len(), 1, "{gz:?}");
    let g = io_report(d.path(), &gz[0]);
    assert!(
        g["ancestry"][0].as_str().unwrap().ends_with("-tar"),
        "{g:#}"
    );
    let size = std::fs::metadata(d.path().join("out.tgz")).unwrap().len();
    let out = io_file(&g, "/out.tgz");
    assert_eq!(out["write_bytes"].as_u64(), Some(size), "{out:#}");
}

#[test]
fn io_profile_of_fortran_formatted_and_unformatted_files() {
    if !have_gfortran() {
        return;
    }
    let d = tempdir();
    let exe = d.path().join("f_io");
    tool(
        d.path(),
        &fc(),
        &["-O1", "-o", "f_io", &prog("f_io.f90").display().to_string()],
    );
    let r = drhook_run(
        d.path(),
        &["--opt", "io"],
        &exe.display().to_string(),
        &[],
        &[],
    );
    ok(&r);
    assert_eq!(r.stdout(), "f_io done\n");
    let rep = io_report(d.path(), "drhook.io.1");
    for name in ["formatted.txt", "unformatted.bin"] {
        let f = io_file(&rep, &format!("/{name}"));
        let size = std::fs::metadata(d.path().join(name)).unwrap().len();
        assert_eq!(f["write_bytes"].as_u64(), Some(size), "{name}: {f:#}");
        assert_eq!(f["opens"].as_u64(), Some(1), "{name}: {f:#}");
    }
    // 10 records of 8000 bytes, each between two 4-byte markers.
    assert_eq!(
        std::fs::metadata(d.path().join("unformatted.bin"))
            .unwrap()
            .len(),
        80080
    );
}

#[test]
fn io_profile_with_100000_opens_and_64_writing_threads() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = c_exe(
        d.path(),
        "io_stress",
        &[&attach_prog("io_stress.c")],
        &["-pthread", "-std=gnu11"],
        Link::Shared,
    );
    let w = tempdir();
    let r = drhook_run(
        w.path(),
        &["--opt", "io"],
        &exe.display().to_string(),
        &["opens"],
        &[],
    );
    ok(&r);
    let rep = io_report(w.path(), "drhook.io.1");
    let files = rep["files"].as_array().unwrap();
    let same = io_file(&rep, "/same.dat");
    assert_eq!(same["opens"].as_u64(), Some(100_001));
    assert_eq!(same["closes"].as_u64(), Some(100_001));
    // 5000 distinct files: those beyond the table's room are counted
    // together, none lost.
    let opens: u64 = files
        .iter()
        .filter(|f| {
            let p = f["path"].as_str().unwrap();
            p.contains("/many/f") || p == "<other files>"
        })
        .map(|f| f["opens"].as_u64().unwrap())
        .sum();
    assert_eq!(opens, 5000, "{rep:#}");
    let w = tempdir();
    let r = drhook_run(
        w.path(),
        &["--opt", "io"],
        &exe.display().to_string(),
        &["threads"],
        &[],
    );
    ok(&r);
    let rep = io_report(w.path(), "drhook.io.1");
    for i in 0..64 {
        let f = io_file(&rep, &format!("/t{i:02}.dat"));
        assert_eq!(f["writes"].as_u64(), Some(1000), "{f:#}");
        assert_eq!(f["write_bytes"].as_u64(), Some(10000));
    }
}

/// The operation lines of a `drhook.iotrace.*` file, split at `!`.
fn trace_lines(dir: &Path, name: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(dir.join(name))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.join(name).display()));
    let (head, ops): (Vec<&str>, Vec<&str>) = text.lines().partition(|l| l.starts_with('#'));
    let ops = ops
        .iter()
        .map(|l| l.split('!').map(String::from).collect::<Vec<_>>())
        .collect();
    (head.into_iter().map(String::from).collect(), ops)
}

#[test]
fn io_trace_of_the_matching_paths_operation_by_operation() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = io_exe(d.path());
    // (--io-trace sets DRHOOK_IO_TRACE and adds io to the options.)
    let r = drhook_run(
        d.path(),
        &["--opt", "prof", "--io-trace", "posix|child"],
        &exe.display().to_string(),
        &[],
        &[],
    );
    ok(&r);
    assert_eq!(r.stdout(), "io done\n");
    let (head, ops) = trace_lines(d.path(), "drhook.iotrace.1");
    assert!(head[0] == "#drhook-iotrace!1", "{head:?}");
    assert!(head.iter().any(|h| h.starts_with("#ancestry!")), "{head:?}");
    // t_us!dur_us!op!fd!bytes!offset!calling-tree!caller
    for o in &ops {
        assert_eq!(o.len(), 8, "{o:?}");
        assert!(
            o[0].parse::<f64>().is_ok() && o[1].parse::<f64>().is_ok(),
            "{o:?}"
        );
        // Only the matching file (not stdio.txt, aio.dat).
        assert!(o[6].starts_with("IO:POSIX@1<main"), "{o:?}");
        assert!(
            o[7].starts_with("io+0x"),
            "the caller is in the program: {o:?}"
        );
    }
    let of = |op: &str| -> Vec<&Vec<String>> { ops.iter().filter(|o| o[2] == op).collect() };
    let opens = of("o");
    assert_eq!(opens.len(), 1, "{ops:?}");
    assert!(opens[0][4].ends_with("/posix.dat"), "{:?}", opens[0]);
    let writes = of("w");
    assert_eq!(writes.len(), 101);
    let bytes =
        |v: &[&Vec<String>]| -> u64 { v.iter().map(|o| o[4].parse::<u64>().unwrap()).sum() };
    assert_eq!(bytes(&writes), 100 * 1000 + 4096);
    // The 100 writes one after the other, then the pwrite at its offset.
    let offsets: Vec<&str> = writes.iter().map(|o| o[5].as_str()).collect();
    assert_eq!(offsets[..3], ["0", "1000", "2000"]);
    assert_eq!(offsets[100], "200000");
    let reads = of("r");
    assert_eq!((reads.len(), bytes(&reads)), (11, 10 * 10000 + 4096));
    assert_eq!(of("c").len(), 1);
    // The open's native traceback starts at the open's caller.
    let tb = head
        .iter()
        .find(|h| h.starts_with("#trcbk_open!"))
        .unwrap_or_else(|| panic!("{head:?}"));
    assert!(tb.contains("/posix.dat!"), "{tb}");
    let frames: Vec<&str> = tb.rsplit('!').next().unwrap().split(':').collect();
    assert!(frames.len() >= 2, "{tb}");
    assert_eq!(frames[0], opens[0][7]);
    // The caller is the call's own line in io.c (addr2line, from binutils).
    if have_tool("addr2line") {
        let line = |caller: &str| {
            let off = u64::from_str_radix(caller.trim_start_matches("io+0x"), 16).unwrap();
            let out = Command::new("addr2line")
                .args(["-i", "-e"])
                .arg(&exe)
                .arg(format!("{:#x}", off - 1))
                .output()
                .unwrap();
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        let io_c = std::fs::read_to_string(attach_prog("io.c")).unwrap();
        let line_of = |needle: &str| io_c.lines().position(|l| l.contains(needle)).unwrap() + 1;
        let w = line(&writes[0][7]);
        assert!(
            w.contains(&format!("io.c:{}", line_of("write(fd, buf, 1000)"))),
            "{w}"
        );
        let o = line(&opens[0][7]);
        assert!(
            o.contains(&format!("io.c:{}", line_of("open(\"posix.dat\""))),
            "{o}"
        );
    }
    // The forked child: a trace of its own.
    let child = drhook_tests::files_starting_with(d.path(), "drhook.iotrace.1.io.");
    assert_eq!(child.len(), 1, "{child:?}");
    let (_, cops) = trace_lines(d.path(), &child[0]);
    let cw: Vec<_> = cops.iter().filter(|o| o[2] == "w").collect();
    assert_eq!(cw.len(), 5, "{cops:?}");
    assert!(
        cw.iter().all(|o| o[4] == "6" && o[6] == "main@1"),
        "{cops:?}"
    );

    // A pattern that does not compile: said once, nothing traced, the
    // program unchanged.
    let w = tempdir();
    let r = drhook_run(
        w.path(),
        &["--opt", "io"],
        &exe.display().to_string(),
        &[],
        &[("ECIOPROF_LLTRACE_PATHS", "posix(")],
    );
    ok(&r);
    assert_eq!(r.stdout(), "io done\n");
    assert_eq!(
        r.stderr()
            .matches("ECIOPROF_LLTRACE_PATHS=\"posix(\" is not a POSIX extended regular expression")
            .count(),
        1,
        "{}",
        r.stderr()
    );
    assert!(drhook_tests::files_starting_with(w.path(), "drhook.iotrace").is_empty());
}

#[test]
fn io_report_and_trace_names_follow_exec() {
    let d = tempdir();
    let input: String = (1..=1000).map(|i| format!("{i}\n")).collect();
    std::fs::write(d.path().join("in.txt"), &input).unwrap();
    // A shell that writes a file, then becomes `cat` by exec.
    let r = drhook_run(
        d.path(),
        &["--opt", "io", "--io-trace", "in\\.txt|/x$"],
        "sh",
        &["-c", "echo hi > x; exec cat in.txt"],
        &[],
    );
    ok(&r);
    assert_eq!(r.stdout(), input);
    // The program the process became has the plain names and no ancestry;
    // the shell before the exec a child's name.
    let top = io_report(d.path(), "drhook.io.1");
    assert_eq!(top["command"], "cat", "{top:#}");
    assert_eq!(top["ancestry"], serde_json::json!([]));
    assert_eq!(
        io_file(&top, "/in.txt")["read_bytes"].as_u64(),
        Some(input.len() as u64)
    );
    let sh = drhook_tests::files_starting_with(d.path(), "drhook.io.1.sh.");
    assert_eq!(sh.len(), 1, "{sh:?}");
    let sh = io_report(d.path(), &sh[0]);
    assert_eq!(sh["ending"], "exec", "{sh:#}");
    assert_eq!(sh["status"], serde_json::Value::Null, "{sh:#}");
    assert_eq!(io_file(&sh, "/x")["write_bytes"].as_u64(), Some(3));
    let (head, ops) = trace_lines(d.path(), "drhook.iotrace.1");
    assert!(head.contains(&"#program!cat".to_string()), "{head:?}");
    assert!(ops.iter().any(|o| o[2] == "r" && o[4] != "0"), "{ops:?}");
    let sh = drhook_tests::files_starting_with(d.path(), "drhook.iotrace.1.sh.");
    assert_eq!(sh.len(), 1, "{sh:?}");
    let (head, ops) = trace_lines(d.path(), &sh[0]);
    assert!(head.contains(&"#program!sh".to_string()), "{head:?}");
    assert!(ops.iter().any(|o| o[2] == "w" && o[4] == "3"), "{ops:?}");
}

fn io_cases_exe(d: &Path) -> PathBuf {
    c_exe(
        d,
        "io_cases",
        &[&attach_prog("io_cases.c")],
        &["-std=gnu11", "-fopenmp"],
        Link::Shared,
    )
}

/// `io_cases <case>` plain and under `drhook run --opt io` (each in its own
/// directory): the same output and status; the profiled run's directory.
fn io_case(exe: &Path, case: &str, expect: &str) -> tempfile::TempDir {
    let plain = tempdir();
    let r = run_in(plain.path(), &exe.display().to_string(), &[case], &[]);
    ok(&r);
    assert_eq!(r.stdout(), expect, "plain run");
    let w = tempdir();
    let r = drhook_run(
        w.path(),
        &["--opt", "io"],
        &exe.display().to_string(),
        &[case],
        &[("OMP_NUM_THREADS", "4")],
    );
    ok(&r);
    assert_eq!(r.stdout(), expect, "under the preload");
    w
}

#[test]
fn io_profile_passes_an_interrupted_read_through() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = io_cases_exe(d.path());
    // A read of a FIFO interrupted by SIGALRM (no SA_RESTART): the program
    // sees -1 and EINTR, as without the preload.
    let w = io_case(&exe, "eintr", "read -1 EINTR\nwrite 5 read 5 hello\n");
    let rep = io_report(w.path(), "drhook.io.1");
    let f = io_file(&rep, "/fifo");
    let n = |k: &str| f[k].as_u64().unwrap_or_else(|| panic!("{k} in {f:#}"));
    // The interrupted read is an operation of 0 bytes, not a size.
    assert_eq!((n("reads"), n("read_bytes")), (2, 5), "{f:#}");
    assert_eq!((n("writes"), n("write_bytes")), (1, 5));
    assert_eq!((n("min_read"), n("max_read")), (5, 5));
    assert_eq!(
        f["read_hist"],
        serde_json::json!([1, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    );
    // Its wait (until the next 20 ms tick) is I/O time.
    assert!(f["read_time"].as_f64().unwrap() > 0.0, "{f:#}");
}

#[test]
fn io_profile_of_one_file_appended_to_by_five_processes_at_once() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = io_cases_exe(d.path());
    let w = io_case(&exe, "procs", "procs ok size 9600\n");
    // Each process counts its own writes in its own report; together they
    // are the file.
    let rep = io_report(w.path(), "drhook.io.1");
    let mine = io_file(&rep, "/shared.dat");
    assert_eq!(mine["writes"].as_u64(), Some(100), "{mine:#}");
    assert_eq!(mine["write_bytes"].as_u64(), Some(5000));
    let children = drhook_tests::files_starting_with(w.path(), "drhook.io.1.io_cases.");
    assert_eq!(children.len(), 4, "{children:?}");
    let mut bytes: Vec<u64> = children
        .iter()
        .map(|c| {
            let r = io_report(w.path(), c);
            let f = io_file(&r, "/shared.dat");
            assert_eq!(f["writes"].as_u64(), Some(100), "{f:#}");
            assert_eq!(f["opens"].as_u64(), Some(1));
            f["write_bytes"].as_u64().unwrap()
        })
        .collect();
    bytes.sort();
    assert_eq!(bytes, [1000, 1100, 1200, 1300]);
    let size = std::fs::metadata(w.path().join("shared.dat"))
        .unwrap()
        .len();
    assert_eq!(5000 + bytes.iter().sum::<u64>(), size);
}

#[test]
fn io_profile_of_openmp_threads_with_a_file_each() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = io_cases_exe(d.path());
    let w = io_case(&exe, "omp", "omp read 10000\n");
    let rep = io_report(w.path(), "drhook.io.1");
    // Only the program's files: Dr.Hook's own reads (a new thread's name
    // from the symbol tables: /proc/self/maps, the library) are not its.
    let paths: Vec<&str> = rep["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths.len(), 4, "{paths:?}");
    let mut openers = std::collections::BTreeSet::new();
    for t in 0..4u64 {
        let f = io_file(&rep, &format!("/thread{t}.dat"));
        let n = |k: &str| f[k].as_u64().unwrap_or_else(|| panic!("{k} in {f:#}"));
        let b = 1000 * (t + 1);
        assert_eq!(
            (n("stdio_writes"), n("stdio_write_bytes")),
            (100, b),
            "{f:#}"
        );
        assert_eq!(n("read_bytes"), b);
        assert_eq!((n("opens"), n("closes")), (2, 2));
        // Opened by the thread's root region: one thread each; its bytes
        // (written, read back) that root's.
        let opener = f["opened_by"].as_str().unwrap().to_string();
        let root = opener.rsplit_once('@').unwrap().0;
        assert_eq!(
            f["routines"],
            serde_json::json!([{"routine": root, "bytes": 2 * b}]),
            "{f:#}"
        );
        openers.insert(opener);
    }
    assert_eq!(openers.len(), 4, "{openers:?}");
    assert!(openers.contains("main@1"), "{openers:?}");
    // Per routine: each thread's root has its own file's bytes.
    let prof = std::fs::read_to_string(w.path().join("drhook.prof.1-io")).unwrap();
    let mut read: Vec<u64> = prof
        .lines()
        .filter(|l| l.contains('@') && !l.contains("Routine@"))
        .map(|l| l.split_whitespace().nth(5).unwrap().parse().unwrap())
        .collect();
    read.sort();
    assert_eq!(read, [1000, 2000, 3000, 4000], "{prof}");
}

#[test]
fn memprof_allocation_counts_agree_with_heaptrack() {
    if !have_gcc() || !have_tool("heaptrack") || !have_tool("heaptrack_print") {
        return;
    }
    let d = tempdir();
    let exe = mem_exe(d.path());
    // Ours.
    let r = drhook_run(
        d.path(),
        &["--opt", "memprof"],
        &exe.display().to_string(),
        &[],
        &[],
    );
    ok(&r);
    let text = std::fs::read_to_string(d.path().join("drhook.prof.1-mem")).unwrap();
    let m = mem_rows(&text);
    let ours = |routine: &str| -> u64 {
        m.iter()
            .filter(|(k, _)| k.starts_with(&format!("{routine}@")))
            .map(|(_, v)| v.1)
            .sum()
    };
    // heaptrack's, on the same program (Dr.Hook off): calls to allocation
    // functions per function, summed over its call sites.
    let h = tempdir();
    let out = Command::new("heaptrack")
        .arg("-o")
        .arg(h.path().join("ht"))
        .arg(&exe)
        .current_dir(h.path())
        .env_remove("LD_PRELOAD")
        .env_remove("DR_HOOK")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let data = std::fs::read_dir(h.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("ht"))
        .expect("heaptrack data file");
    let out = Command::new("heaptrack_print")
        .arg("-f")
        .arg(&data)
        .args(["-p", "0", "-T", "0", "-a", "1", "-n", "1000", "-s", "0"])
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    let mut theirs: BTreeMap<String, u64> = BTreeMap::new();
    let lines: Vec<&str> = report.lines().collect();
    for w in lines.windows(2) {
        if let Some(n) = w[0].split(" calls to allocation functions").next()
            && w[0].contains(" calls to allocation functions")
            && let Ok(n) = n.trim().parse::<u64>()
        {
            *theirs.entry(w[1].trim().to_string()).or_default() += n;
        }
    }
    for (routine, function) in [
        ("MEM:PLAIN", "mem_plain"),
        ("MEM:CHAIN", "mem_chain"),
        ("MEM:ALIGNED", "mem_aligned"),
        ("MEM:WORKER", "mem_worker"),
    ] {
        assert_eq!(
            Some(&ours(routine)),
            theirs.get(function),
            "{routine} vs heaptrack's {function}:\n{report}\n{text}"
        );
    }
}
