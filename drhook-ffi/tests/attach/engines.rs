//! One engine per process.

use super::*;

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
