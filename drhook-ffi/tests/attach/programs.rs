//! Real programs: a shell pipeline, make, Python, OpenMP Fortran.

use super::*;

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
