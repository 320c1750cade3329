//! Fortran programs using the YOMHOOK module (`fortran/yomhook.F90`
//! compiled with gfortran), run under Dr.Hook environments and checked
//! through their profiles, call trees and diagnostics.

mod common;
use common::*;

const PROF: &[(&str, &str)] = &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof")];
const CALLPATH: &[(&str, &str)] = &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof,callpath")];

/// Builds a Fortran test program (yomhook compiled first) in a fresh
/// directory; `None` when gfortran is missing.
fn build(
    progs: &[&str],
    openmp: bool,
    link: Link,
) -> Option<(tempfile::TempDir, std::path::PathBuf)> {
    if !have_gfortran() {
        return None;
    }
    let d = tempdir();
    yomhook(d.path(), openmp);
    let srcs: Vec<std::path::PathBuf> = progs.iter().map(|p| prog(p)).collect();
    let refs: Vec<&std::path::Path> = srcs.iter().map(|p| p.as_path()).collect();
    let flags: &[&str] = if openmp { &["-fopenmp"] } else { &[] };
    let exe = fortran_exe(d.path(), "prog", &refs, flags, link);
    Some((d, exe))
}

#[test]
fn generic_dr_hook_and_every_specific() {
    let Some((d, exe)) = build(&["f_specifics.F90"], false, Link::Static) else {
        return;
    };
    let r = run(d.path(), &exe, PROF);
    ok(&r);
    assert_eq!(r.stdout().trim(), "X= 165.0 LHOOK=T");
    let p = r.profile("drhook.prof.1");
    let row = |n: &str| p.row(n, 1);
    assert_eq!(row("F_SPECIFICS").calls, 1);
    assert_eq!(row("SPEC:LEAF8").calls, 6);
    assert_eq!(row("SPEC:LEAF4").calls, 5, "4-byte handles");
    // DR_HOOK_FILE: the basename of the file after the name.
    assert_eq!(row("SPEC:WITH_FILE").calls, 5);
    assert_eq!(row("SPEC:WITH_FILE").suffix, ":with_file.F90");
    // DR_HOOK_SIZE: sizes 10..50 counted at exit.
    let s = row("SPEC:WITH_SIZE").sizes.expect("size line");
    assert_eq!((s[0], s[2], s[3], s[4]), (150, 30, 10, 50));
    assert_eq!(row("SPEC:WITH_SIZE").suffix, "");
    // DR_HOOK_FILE_SIZE.
    let fs = row("SPEC:WITH_FILE_SIZE");
    assert_eq!((fs.calls, fs.suffix.as_str()), (5, ":fs.F90"));
    assert_eq!(fs.sizes.unwrap()[0], 15);
    // MULTI forms without OpenMP: every element on the calling thread.
    assert_eq!(row("SPEC:MULTI").calls, 3);
    assert_eq!(row("SPEC:MULTI_FILE").calls, 2);
    assert_eq!(row("SPEC:MULTI_FILE").suffix, ":multi.F90");
    assert_eq!(row("SPEC:MULTI_SIZE").sizes.unwrap()[0], 10);
    assert_eq!(row("SPEC:MULTI_FILE_SIZE").sizes.unwrap()[0], 9);
    // Names built at run time at one stack address are told apart.
    assert_eq!(row("SPEC:DYN_A").calls, 2);
    assert_eq!(row("SPEC:DYN_B").calls, 2);
    assert!(
        p.rows_of("SPEC:IGNORED").is_empty(),
        "KSWITCH 2 does nothing"
    );
    // Exits with a handle 0 left nothing (the run did not abort) and the
    // real exit then closed the region.
    assert_eq!(row("SPEC:ZERO").calls, 1);
    // LHOOK = .FALSE. inside SPEC:LHOOK_OFF: nothing entered, the exit of
    // the region entered still left it (SHOW_TREE below is a child of the
    // main program, not of SPEC:LHOOK_OFF).
    assert_eq!(row("SPEC:LHOOK_OFF").calls, 1);
    assert!(p.rows_of("SPEC:NOT_ENTERED").is_empty());
    // Trailing blanks are not part of a name; case is, without `trim`.
    assert_eq!(row("spec:Cases").calls, 1);
    assert_eq!(row("SPEC:CASES").calls, 1);
    // DR_HOOK_CALLTREE printed the current tree.
    let err = r.stderr();
    let tree: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("[DrHookCallTree] :"))
        .collect();
    assert_eq!(tree.len(), 2, "{err}");
    assert!(tree[0].contains(":  F_SPECIFICS ") && tree[1].contains(":   SPEC:SHOW_TREE "));

    // The same run with call paths: who called whom.
    let r = run(d.path(), &exe, CALLPATH);
    ok(&r);
    let p = r.profile("drhook.prof.1");
    let path_of = |n: &str| -> Vec<Vec<String>> {
        let mut v: Vec<Vec<String>> = p.rows_of(n).iter().map(|r| r.path.clone()).collect();
        v.sort();
        v
    };
    assert_eq!(
        path_of("SPEC:LEAF8"),
        [
            vec![
                "SPEC:MULTI_FILE_SIZE",
                "SPEC:MULTI_SIZE",
                "SPEC:MULTI_SIZE",
                "SPEC:MULTI_FILE",
                "SPEC:MULTI_FILE",
                "SPEC:MULTI",
                "SPEC:MULTI",
                "SPEC:MULTI",
                "F_SPECIFICS"
            ],
            vec!["SPEC:WITH_FILE", "F_SPECIFICS"],
        ]
    );
    assert_eq!(
        path_of("SPEC:LEAF4"),
        [vec!["SPEC:WITH_FILE_SIZE", "F_SPECIFICS"]]
    );
}

#[test]
fn shared_library_and_dr_hook_off() {
    let Some((d, exe)) = build(&["f_specifics.F90"], false, Link::Shared) else {
        return;
    };
    let r = run(d.path(), &exe, PROF);
    ok(&r);
    assert_eq!(r.profile("drhook.prof.1").row("SPEC:LEAF8", 1).calls, 6);
    // DR_HOOK_OPT=trim: names compare case-insensitively.
    let r = run(
        d.path(),
        &exe,
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof,trim")],
    );
    ok(&r);
    let p = r.profile("drhook.prof.1");
    let cases: Vec<_> = p
        .rows
        .iter()
        .filter(|r| r.name.eq_ignore_ascii_case("spec:cases"))
        .collect();
    assert_eq!(cases.len(), 1, "{cases:#?}");
    assert_eq!(cases[0].calls, 2);
    // Off: LHOOK becomes .FALSE. at the first call, nothing is written.
    let r = run(d.path(), &exe, &[("DR_HOOK", "0"), ("DR_HOOK_OPT", "prof")]);
    ok(&r);
    assert_eq!(r.stdout().trim(), "X= 165.0 LHOOK=F");
    assert_eq!(r.stderr(), "");
}

#[test]
fn yomhook_wrapper_variant_for_other_calling_conventions() {
    // -DDRHOOK_YOMHOOK_WRAPPERS: DR_HOOK_DEFAULT8/4 as module procedures
    // over the C ABI, for compilers whose convention differs.
    if !have_gfortran() {
        return;
    }
    let d = tempdir();
    let src = crate_dir().join("fortran").join("yomhook.F90");
    tool(
        d.path(),
        &fc(),
        &[
            "-O2",
            "-DDRHOOK_YOMHOOK_WRAPPERS",
            "-c",
            &src.display().to_string(),
        ],
    );
    let exe = fortran_exe(
        d.path(),
        "prog",
        &[&prog("f_specifics.F90")],
        &[],
        Link::Static,
    );
    let r = run(d.path(), &exe, PROF);
    ok(&r);
    assert_eq!(r.stdout().trim(), "X= 165.0 LHOOK=T");
    let p = r.profile("drhook.prof.1");
    assert_eq!(p.row("F_SPECIFICS", 1).calls, 1);
    assert_eq!(p.row("SPEC:LEAF8", 1).calls, 6);
    assert_eq!(p.row("SPEC:LEAF4", 1).calls, 5);
    assert_eq!(p.row("SPEC:DYN_A", 1).calls, 2);
    let r = run(d.path(), &exe, &[("DR_HOOK", "0")]);
    ok(&r);
    assert_eq!(r.stdout().trim(), "X= 165.0 LHOOK=F");
}

#[test]
fn lhook_is_set_by_the_first_call_or_dr_hook_init() {
    let Some((d, exe)) = build(&["f_init.F90"], false, Link::Static) else {
        return;
    };
    let out = |env: &[(&str, &str)], arg: &str| {
        let r = run_in(d.path(), &exe.display().to_string(), &[arg], env);
        ok(&r);
        r.stdout().split_whitespace().collect::<Vec<_>>().join(" ")
    };
    assert_eq!(out(&[], "init"), "START=T INIT=F AFTER=F");
    assert_eq!(out(&[], "-"), "START=T AFTER=F");
    assert_eq!(out(&[("DR_HOOK", "1")], "init"), "START=T INIT=T AFTER=T");
    assert_eq!(out(&[("DR_HOOK", "yes")], "-"), "START=T AFTER=T");
}

#[test]
fn openmp_thread_numbers_multi_regions_and_nesting() {
    let Some((d, exe)) = build(&["f_omp.F90"], true, Link::Static) else {
        return;
    };
    let mut env = CALLPATH.to_vec();
    env.push(("OMP_NUM_THREADS", "4"));
    env.push(("OMP_DYNAMIC", "false"));
    let r = run(d.path(), &exe, &env);
    ok(&r);
    assert_eq!(
        r.stdout().trim(),
        "X=  10.0  20.0  30.0  40.0 Y=   2.0   2.0   2.0   2.0"
    );
    let p = r.profile("drhook.prof.1");
    // @n is omp_get_thread_num()+1: thread n made 10*n calls.
    for n in 1..=4u32 {
        let k: Vec<_> = p
            .rows_of("OMP:KERNEL")
            .into_iter()
            .filter(|r| r.tid == n && r.path.first().map(String::as_str) == Some("OMP:WORKER"))
            .collect();
        assert_eq!(k.len(), 1, "KERNEL@{n} under WORKER: {:#?}", p.rows);
        assert_eq!(k[0].calls, 10 * n as u64, "KERNEL@{n}");
    }
    assert_eq!(
        p.threads,
        4 + 2,
        "4 OpenMP threads + 2 new inner-team threads"
    );
    // The MULTI form opened OMP:REGION on all four threads; the kernels of
    // the next parallel region ran inside it on each thread.
    for n in 1..=4u32 {
        let reg = p
            .rows_of("OMP:REGION")
            .into_iter()
            .filter(|r| r.tid == n)
            .count();
        assert_eq!(reg, 1, "OMP:REGION@{n}");
        let inside = p
            .rows_of("OMP:KERNEL")
            .into_iter()
            .filter(|r| r.tid == n && r.path.first().map(String::as_str) == Some("OMP:REGION"))
            .count();
        assert_eq!(inside, 1, "KERNEL@{n} inside OMP:REGION: {:#?}", p.rows);
    }
    // Nested regions: 4 executions of OMP:INNER on 4 distinct threads.
    let inner = p.rows_of("OMP:INNER");
    let mut tids: Vec<u32> = inner.iter().map(|r| r.tid).collect();
    tids.sort();
    tids.dedup();
    assert_eq!(tids.len(), 4, "{inner:#?}");
    assert!(inner.iter().all(|r| r.calls == 1), "{inner:#?}");
}

#[test]
fn fortran_main_calls_a_rust_drhook_routine_in_one_tree() {
    let Some((d, exe)) = build(&["f_calls_rust.F90"], false, Link::RustInFortran) else {
        return;
    };
    let r = run(d.path(), &exe, CALLPATH);
    ok(&r);
    assert_eq!(r.stdout().trim(), "X=  30.0");
    let p = r.profile("drhook.prof.1");
    let leaf = p.row("RUST:LEAF", 1);
    assert_eq!(leaf.calls, 12);
    assert_eq!(leaf.path, ["F:PARENT", "F:MAIN"]);
    assert_eq!(p.threads, 1);
}

#[test]
fn c_main_calls_fortran_in_one_tree() {
    if !have_gfortran() || !have_gcc() {
        return;
    }
    let d = tempdir();
    yomhook(d.path(), false);
    let inc = format!("-I{}", include_dir().display());
    let c = prog("c_calls_f.c").display().to_string();
    tool(
        d.path(),
        "gcc",
        &[
            "-std=c99",
            "-Wall",
            "-Wextra",
            "-Wpedantic",
            "-O1",
            &inc,
            "-c",
            &c,
            "-o",
            "c_calls_f.o",
        ],
    );
    let obj = d.path().join("c_calls_f.o");
    let exe = fortran_exe(
        d.path(),
        "prog",
        &[&prog("f_work.F90"), &obj],
        &[],
        Link::Static,
    );
    let r = run(d.path(), &exe, CALLPATH);
    ok(&r);
    assert_eq!(r.stdout().trim(), "x=6");
    let p = r.profile("drhook.prof.1");
    assert_eq!(p.row("F:LEAF", 1).calls, 6);
    assert_eq!(p.row("F:LEAF", 1).path, ["F:WORK", "c_driver", "main"]);
    assert_eq!(p.row("c_driver", 1).suffix, ":c_calls_f.c");
}

#[test]
fn dr_hook_end_writes_the_profile() {
    let Some((d, exe)) = build(&["f_end.F90"], false, Link::Static) else {
        return;
    };
    let r = run(d.path(), &exe, PROF);
    ok(&r);
    assert_eq!(
        r.stdout().split_whitespace().collect::<Vec<_>>(),
        ["BEFORE=F", "AFTER=T"]
    );
    assert_eq!(r.profile("drhook.prof.1").row("F_END:WORK", 1).calls, 1);
    // Written by DR_HOOK_END, then again at exit with the final numbers.
    let writes = r.stderr().matches("Writing profiling information").count();
    assert_eq!(writes, 2, "{}", r.stderr());
}

#[test]
fn reference_c_abi_from_fortran() {
    let Some((d, exe)) = build(&["f_capi.F90"], false, Link::Static) else {
        return;
    };
    let r = run(d.path(), &exe, PROF);
    ok(&r);
    assert_eq!(
        r.stdout().split_whitespace().collect::<Vec<_>>(),
        ["LEVEL=2", "PROFILE=T"]
    );
    let p = r.profile("drhook.prof.1");
    assert_eq!(p.row("CAPI:OUTER", 1).suffix, "");
    let inner = p.row("CAPI:INNER", 1);
    assert_eq!(inner.suffix, ":f_capi.F90");
    assert_eq!(inner.sizes.unwrap()[0], 77);
    let err = r.stderr();
    assert!(err.contains("[DrHookCallTree] :   CAPI:INNER"), "{err}");
}

/// Diagnostic lines of a mismatch, then death by SIGABRT (not SIGSEGV).
fn assert_mismatch_abort(r: &Run, lines: &[&str]) {
    let err = r.stderr();
    assert_eq!(
        signal(r),
        Some(libc::SIGABRT),
        "status {:?}\n{err}",
        r.output.status
    );
    for l in lines {
        assert!(err.contains(l), "missing {l:?} in:\n{err}");
    }
    assert!(!r.stdout().contains("NOT REACHED"));
    // The reference's abort lines, after "Aborting..." and before the tree
    // (compat §3.5), which regression scripts grep for.
    let all: Vec<&str> = err.lines().collect();
    let at = |p: &dyn Fn(&str) -> bool| all.iter().position(|l| p(l));
    let aborting = at(&|l| l.ends_with("[signal#6(SIGABRT)]: Aborting...")).expect(&err);
    let abor1 = at(&|l| {
        l.starts_with("ABOR1     [PROC=1,THRD=1] from [mismatch.rs +")
            && l.ends_with("] : *** Fatal error; drhook_abort ...")
    })
    .expect(&err);
    assert_eq!(
        all[abor1 + 1],
        "MPL_ABORT [PROC=1,THRD=1] : *** Fatal error; drhook_abort ..."
    );
    assert!(
        all[abor1 + 2].contains("[DrHookCallTree] DR_HOOK call tree"),
        "{err}"
    );
    assert!(aborting < abor1);
}

#[test]
fn missing_exit_from_fortran_is_diagnosed_and_aborts() {
    let Some((d, exe)) = build(&["f_mismatch.F90"], false, Link::Static) else {
        return;
    };
    let r = run_in(
        d.path(),
        &exe.display().to_string(),
        &["missing"],
        &[("DR_HOOK", "1")],
    );
    assert_mismatch_abort(
        &r,
        &[
            "invalid key-pointer/handle while leaving the routine 'CRASH_MOD:LEVEL2'",
            "A probable routine missing the closing DR_HOOK-call is 'CRASH_MOD:LEVEL3'",
            "[DrHookCallTree] :    CRASH_MOD:LEVEL3",
        ],
    );
}

#[test]
fn garbage_handle_from_fortran_is_diagnosed_and_aborts() {
    let Some((d, exe)) = build(&["f_mismatch.F90"], false, Link::Shared) else {
        return;
    };
    let r = run_in(
        d.path(),
        &exe.display().to_string(),
        &["garbage"],
        &[("DR_HOOK", "1")],
    );
    assert_mismatch_abort(
        &r,
        &[
            "invalid key-pointer/handle while leaving the routine 'CRASH_MOD:GARBAGE'",
            "[DrHookCallTree] :   CRASH_MOD:GARBAGE",
        ],
    );
}

#[test]
fn strict_regions_check_the_name_given_at_exit() {
    let Some((d, exe)) = build(&["f_mismatch.F90"], false, Link::Static) else {
        return;
    };
    let exe = exe.display().to_string();
    // Without DR_HOOK_STRICT_REGIONS the handle alone decides.
    let r = run_in(d.path(), &exe, &["strict"], &[("DR_HOOK", "1")]);
    ok(&r);
    assert_eq!(r.stdout().trim(), "NOT STRICT");
    let r = run_in(
        d.path(),
        &exe,
        &["strict"],
        &[("DR_HOOK", "1"), ("DR_HOOK_STRICT_REGIONS", "1")],
    );
    assert_mismatch_abort(
        &r,
        &[
            "the exit names 'CRASH_MOD:OTHER_NAME' but the routine being left is 'CRASH_MOD:WRONG_NAME'",
        ],
    );
}
