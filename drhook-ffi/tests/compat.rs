//! The rest of the reference's ABI, called from Fortran and C: watch
//! points (`DR_HOOK_WATCH_MOD`, `c_drhook_watch_`), `c_drhook_getenv_`,
//! `c_drhook_raise_`, `c_drhook_memcounter_`, the `util_*` timers,
//! `c_drhook_prof_` (no write at exit), `DR_HOOK_CALLTREE` of another
//! thread, `DR_HOOK_STACKCHECK`/`DR_HOOK_HEAPCHECK`, the header's OpenMP
//! thread count, `drhook_PREFIX`/`drhook_TIMESTR`, `trapfpe_slave_threads_`
//! and `drhook_abort` with the reference's `ABOR1` lines.

mod common;
use common::*;

use std::path::Path;

/// `f_compat.F90` with `dr_hook_watch_mod.F90`, OpenMP, libdrhook.a.
fn fortran() -> Option<(tempfile::TempDir, std::path::PathBuf)> {
    fortran_with(Link::Static)
}

fn fortran_with(link: Link) -> Option<(tempfile::TempDir, std::path::PathBuf)> {
    if !have_gfortran() {
        return None;
    }
    let d = tempdir();
    yomhook(d.path(), true);
    let watch = crate_dir().join("fortran").join("dr_hook_watch_mod.F90");
    let p = prog("f_compat.F90");
    let exe = fortran_exe(
        d.path(),
        "prog",
        &[watch.as_path(), p.as_path()],
        &["-fopenmp", "-fno-inline"],
        link,
    );
    Some((d, exe))
}

fn run_mode(dir: &Path, exe: &Path, mode: &str, env: &[(&str, &str)]) -> Run {
    run_in(dir, &exe.display().to_string(), &[mode], env)
}

/// The text after `[function@file:line] ` of a prefixed line.
fn body(l: &str) -> &str {
    l.split_once("] [")
        .and_then(|(_, r)| r.split_once("] ["))
        .and_then(|(_, r)| r.split_once("] "))
        .map_or(l, |(_, r)| r)
}

#[test]
fn watch_points_from_fortran_report_changes_with_the_tree() {
    let Some((d, exe)) = fortran() else { return };
    let r = run_mode(d.path(), &exe, "watch", &[("DR_HOOK", "1")]);
    ok(&r);
    assert_eq!(r.stdout().trim(), "WATCH DONE");
    let err = r.stderr();
    let lines: Vec<&str> = err.lines().collect();
    // Set: the reference's line (prefix only), then the values (5I12).
    let bytes: Vec<u8> = (1..=10i32).flat_map(|i| i.to_ne_bytes()).collect();
    let crc = drhook::watch::cksum(&bytes);
    let set = lines
        .iter()
        .position(|l| l.contains("***Warning: Watch point 'IARR' set at address 0x"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(lines[set].starts_with("[EC_DRHOOK:"), "{err}");
    assert!(
        lines[set].ends_with(&format!("(40 bytes [10 values]) : crc32={crc:#x}")),
        "{err}"
    );
    assert_eq!(
        lines[set + 1],
        "           1           2           3           4           5"
    );
    assert_eq!(
        lines[set + 2],
        "           6           7           8           9          10"
    );
    // Changed inside COMPAT:CHANGE: seen when leaving it, as a warning
    // (LDABORT=.FALSE.), values, then the calling tree.
    let mut changed: Vec<u8> = bytes.clone();
    changed[8..12].copy_from_slice(&(-3i32).to_ne_bytes());
    let new_crc = drhook::watch::cksum(&changed);
    let ch = lines
        .iter()
        .position(|l| l.contains("Watch point 'IARR' value(s) changed"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(lines[ch].contains("[check_watch@watch.rs:"), "{err}");
    assert!(
        body(lines[ch])
            .starts_with("***Warning: Watch point 'IARR' value(s) changed at address 0x"),
        "{err}"
    );
    assert!(
        lines[ch].ends_with(&format!(
            "(40 bytes [#10 values]) -- when leaving routine COMPAT:CHANGE : new crc32={new_crc:#x}"
        )),
        "{err}"
    );
    assert_eq!(
        lines[ch + 1],
        "           1           2          -3           4           5"
    );
    assert!(
        lines[ch + 3].contains("[DrHookCallTree] DR_HOOK call tree"),
        "{err}"
    );
    assert!(lines[ch + 5].ends_with(":   COMPAT:CHANGE "), "{err}");
    // Reported once: no other change of IARR (nothing "no change since").
    assert_eq!(
        err.matches("Watch point 'IARR' value(s) changed").count(),
        1
    );
    assert!(!err.contains("no change since"), "{err}");
    // DR_HOOK_CHECK_WATCH: the scalar changed outside any routine call.
    assert!(
        err.lines().any(
            |l| l.contains("***Warning: Watch point 'ZVAL' value(s) changed")
                && l.contains("(8 bytes [#1 values]) -- whilst at manual check : new crc32=")
        ),
        "{err}"
    );
}

#[test]
fn a_watch_point_that_aborts_prints_abor1_and_the_tree() {
    let Some((d, exe)) = fortran() else { return };
    let r = run_mode(d.path(), &exe, "abort", &[("DR_HOOK", "1")]);
    let err = r.stderr();
    assert_eq!(signal(&r), Some(libc::SIGABRT), "{err}");
    assert!(!r.stdout().contains("WATCH DONE"));
    let lines: Vec<&str> = err.lines().collect();
    let ch = lines
        .iter()
        .position(|l| l.contains("***Error: Watch point 'IARR' value(s) changed"))
        .unwrap_or_else(|| panic!("{err}"));
    let abor1 = lines
        .iter()
        .position(|l| l.starts_with("ABOR1     [PROC=1,THRD=1] from [watch.rs +"))
        .unwrap_or_else(|| panic!("{err}"));
    assert!(abor1 > ch);
    assert_eq!(
        lines[abor1 + 1],
        "MPL_ABORT [PROC=1,THRD=1] : *** Fatal error; drhook_abort ..."
    );
}

#[test]
fn watch_points_do_nothing_when_dr_hook_is_off() {
    let Some((d, exe)) = fortran() else { return };
    let r = run_mode(d.path(), &exe, "abort", &[]);
    ok(&r);
    assert_eq!(r.stdout().trim(), "WATCH DONE");
    assert_eq!(r.stderr(), "");
}

#[test]
fn getenv_timers_and_memcounter_from_fortran() {
    let Some((d, exe)) = fortran() else { return };
    let r = run_mode(
        d.path(),
        &exe,
        "env",
        &[
            ("DR_HOOK", "1"),
            ("COMPAT_VAR", "hello world, longer than 12"),
        ],
    );
    ok(&r);
    assert_eq!(
        r.stdout(),
        "[hello world,]\n[            ]\nTIMERS T T T\nKEY 0\n"
    );
}

#[test]
fn c_drhook_prof_writes_now_and_not_at_exit() {
    let Some((d, exe)) = fortran() else { return };
    let r = run_mode(
        d.path(),
        &exe,
        "prof",
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof")],
    );
    ok(&r);
    // Written once, with the one call of COMPAT:WORK before C_DRHOOK_PROF.
    assert_eq!(
        r.stderr().matches("Writing profiling information").count(),
        1
    );
    assert_eq!(r.profile("drhook.prof.1").row("COMPAT:WORK", 1).calls, 1);
}

#[test]
fn c_drhook_raise_raises_the_signal() {
    let Some((d, exe)) = fortran() else { return };
    let r = run_mode(d.path(), &exe, "raise", &[("DR_HOOK", "1")]);
    assert_eq!(signal(&r), Some(libc::SIGTERM), "{}", r.stderr());
    assert!(!r.stdout().contains("NOT REACHED"));
    assert!(
        r.stderr().contains("Received signal#15 (SIGTERM)"),
        "{}",
        r.stderr()
    );
}

#[test]
fn calltree_of_another_thread_stack_and_heap_checks_and_thread_count() {
    let Some((d, exe)) = fortran() else { return };
    let r = run_mode(
        d.path(),
        &exe,
        "calltree",
        &[
            ("DR_HOOK", "1"),
            ("DR_HOOK_OPT", "prof"),
            ("OMP_NUM_THREADS", "3"),
            ("DR_HOOK_STACKCHECK", "yes"),
            ("DR_HOOK_HEAPCHECK", "ON"),
        ],
    );
    ok(&r);
    let err = r.stderr();
    // Thread 1 printed thread 2's tree: the routines thread 2 is in, with
    // thread 2's prefix (the reference's PREFIX(tid) of the thread asked).
    let tree: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("[DrHookCallTree] :"))
        .collect();
    assert!(tree.iter().any(|l| l.contains(":   COMPAT:HELD ")), "{err}");
    assert!(tree.iter().all(|l| l.contains(":1:2:")), "{err}");
    // STACKCHECK: threads other than 1, the reference's line layout.
    let stack = err
        .lines()
        .find(|l| l.starts_with("STACKCHECK Max stack usage by thread  2 ="))
        .unwrap_or_else(|| panic!("{err}"));
    let depth = &stack["STACKCHECK Max stack usage by thread  2 =".len()..];
    assert_eq!(depth.find("  COMPAT:"), Some(12), "{stack}");
    assert!(
        !err.contains("STACKCHECK Max stack usage by thread  1"),
        "{err}"
    );
    // HEAPCHECK: thread 1, gfortran's list-directed layout.
    assert!(
        err.lines()
            .any(|l| l.starts_with(" HEAPCHECK Max heap at beg of routine =")
                && l.ends_with("  COMPAT:MAIN")
                && l.len() == " HEAPCHECK Max heap at beg of routine =".len() + 21 + 2 + 11),
        "{err}"
    );
    // The header counts OMP_NUM_THREADS threads, one line each.
    let prof = std::fs::read_to_string(d.path().join("drhook.prof.1")).unwrap();
    assert!(
        prof.contains("sec on proc#1 (1 procs, 3 threads)\n"),
        "{prof}"
    );
    assert!(
        prof.contains("\tThread#3:        0.00 sec (0.00%) -- Cycles: 0 (0)\n"),
        "{prof}"
    );
}

#[test]
fn watch_points_and_prefixes_from_c() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = c_exe(
        d.path(),
        "c_compat",
        &[&prog("c_compat.c")],
        &[],
        Link::Shared,
    );
    let r = run(d.path(), &exe, &[("DR_HOOK", "1")]);
    ok(&r);
    let r = run_in(
        d.path(),
        &exe.display().to_string(),
        &["watch"],
        &[("DR_HOOK", "1")],
    );
    ok(&r);
    let err = r.stderr();
    assert!(
        err.contains("***Warning: Watch point 'values' set at address 0x")
            && err.contains("(32 bytes [4 values]) : crc32="),
        "{err}"
    );
    // Traceback when set (print_traceback_when_set): the tree right after
    // the values.
    let lines: Vec<&str> = err.lines().collect();
    let set = lines
        .iter()
        .position(|l| l.contains("set at address"))
        .unwrap();
    assert!(
        lines[set + 2].contains("[DrHookCallTree] DR_HOOK call tree"),
        "{err}"
    );
    assert!(
        err.contains("***Warning: Watch point 'values' value(s) changed at address")
            && err.contains("-- when leaving routine touch : new crc32="),
        "{err}"
    );
    assert!(!err.contains("whilst at in main"), "{err}");
    assert_eq!(r.stdout().trim(), "WATCH DONE");
}

#[test]
fn prefixes_timers_and_aborts_from_c() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = c_exe(
        d.path(),
        "c_compat",
        &[&prog("c_compat.c")],
        &[],
        Link::Static,
    );
    let r = run_in(
        d.path(),
        &exe.display().to_string(),
        &["prefix"],
        &[("DR_HOOK", "1")],
    );
    ok(&r);
    let out = r.stdout();
    let pid = out.lines().next().unwrap();
    assert!(
        pid.starts_with("PREFIX [EC_DRHOOK:") && pid.ends_with("]"),
        "{out}"
    );
    assert_eq!(pid.matches(':').count(), 5, "{out}");
    let ts = out.lines().nth(1).unwrap();
    assert!(
        ts.starts_with("TIMESTR [") && ts.len() == "TIMESTR [YYYYMMDD:HHMMSS:0.000]".len(),
        "{out}"
    );
    assert!(out.contains("WALL 1 CPU 1"), "{out}");

    // c_drhook_print_ to a Fortran unit without the Fortran companion:
    // stderr, with one warning; option 4 (memory profile) warns.
    let r = run_in(
        d.path(),
        &exe.display().to_string(),
        &["print"],
        &[("DR_HOOK", "1")],
    );
    ok(&r);
    assert_eq!(r.stdout().trim(), "LEVEL 1");
    let err = r.stderr();
    assert!(err.contains("[DrHookCallTree] :  C_COMPAT "), "{err}");
    assert!(
        err.contains("printing to Fortran unit 77 needs dr_hook_watch_mod.F90"),
        "{err}"
    );
    assert!(
        err.contains("c_drhook_print_ option 4 is not implemented"),
        "{err}"
    );

    // drhook_abort: the reference's ABOR1/MPL_ABORT lines, the tree, SIGABRT.
    let r = run_in(
        d.path(),
        &exe.display().to_string(),
        &["abort"],
        &[("DR_HOOK", "1")],
    );
    assert_eq!(signal(&r), Some(libc::SIGABRT));
    let err = r.stderr();
    let lines: Vec<&str> = err.lines().collect();
    let a = lines
        .iter()
        .position(|l| *l == "ABOR1     [PROC=1,THRD=1] from [c_compat.c +42] : my own fatal error")
        .unwrap_or_else(|| panic!("{err}"));
    assert_eq!(
        lines[a + 1],
        "MPL_ABORT [PROC=1,THRD=1] : my own fatal error"
    );
    assert!(
        lines[a + 2].contains("[DrHookCallTree] DR_HOOK call tree"),
        "{err}"
    );
    // With a hook: the hook instead of the ABOR1 lines, then the abort.
    let r = run_in(
        d.path(),
        &exe.display().to_string(),
        &["hook"],
        &[("DR_HOOK", "1")],
    );
    assert_eq!(signal(&r), Some(libc::SIGABRT));
    assert!(
        r.stderr().contains("MY ABORT HOOK c_compat.c 1 hooked"),
        "{}",
        r.stderr()
    );
    assert!(!r.stderr().contains("ABOR1"), "{}", r.stderr());
}

#[test]
fn c_drhook_print_writes_to_a_fortran_unit() {
    // libdrhook finds the companion's writer through a weak reference:
    // resolved by the static link, or by the dynamic linker from the
    // executable with libdrhook.so.
    for link in [Link::Static, Link::Shared] {
        print_to_unit(link);
    }
}

fn print_to_unit(link: Link) {
    let Some((d, exe)) = fortran_with(link) else {
        return;
    };
    let r = run_mode(d.path(), &exe, "unit", &[("DR_HOOK", "1")]);
    ok(&r);
    assert_eq!(r.stdout().trim(), "LEVEL 2");
    let file = std::fs::read_to_string(d.path().join("tree.txt")).unwrap();
    let lines: Vec<&str> = file.lines().collect();
    assert_eq!(lines.len(), 4, "{file}");
    assert!(
        lines[0].contains("[DrHookCallTree] DR_HOOK call tree"),
        "{file}"
    );
    assert!(
        lines[1].ends_with("[DrHookCallTree] :  COMPAT:MAIN "),
        "{file}"
    );
    assert!(
        lines[2].ends_with("[DrHookCallTree] :   COMPAT:PRINT_TREE "),
        "{file}"
    );
    assert_eq!(lines[3], "AFTER");
    assert!(!r.stderr().contains("DrHookCallTree"), "{}", r.stderr());
}

/// `DR_HOOK_FUNCENTER/FUNCEXIT`, `DR_HOOK_TIMELINE` and `DR_HACK` from
/// Fortran (`DR_HOOK` calls through `libdrhook.a`): the lines of thread 1
/// and of OpenMP thread 2.
#[test]
fn reference_per_call_lines_from_fortran() {
    let Some((d, exe)) = fortran() else { return };
    let r = run_mode(
        d.path(),
        &exe,
        "prof",
        &[
            ("DR_HOOK", "1"),
            ("DR_HOOK_FUNCENTER", "1"),
            ("DR_HOOK_FUNCEXIT", "1"),
            ("DR_HOOK_TIMELINE", "1"),
            ("DR_HOOK_TIMELINE_FREQ", "1"),
            ("DR_HOOK_TIMELINE_UNITNO", "0"),
            ("DR_HACK", "1"),
        ],
    );
    ok(&r);
    let out = r.stdout();
    let func: Vec<String> = out
        .lines()
        .filter(|l| l.starts_with('<'))
        .map(|l| {
            // `<e> 1 1 NAME HEAP STACK`: the numbers are the engine's.
            let f: Vec<&str> = l.split(' ').collect();
            assert_eq!(f.len(), 6, "{l}");
            assert!(
                f[4].parse::<u64>().is_ok() && f[5].parse::<u64>().unwrap() > 0,
                "{l}"
            );
            format!("{} {} {} {}", f[0], f[1], f[2], f[3])
        })
        .collect();
    let mut want = vec!["<e> 1 1 COMPAT:MAIN".to_string()];
    for _ in 0..3 {
        want.push("<e> 1 1 COMPAT:WORK".into());
        want.push("<x> 1 1 COMPAT:WORK".into());
    }
    want.push("<x> 1 1 COMPAT:MAIN".into());
    assert_eq!(func, want, "{out}");
    let err = r.stderr();
    let tl: Vec<&str> = err
        .lines()
        .filter_map(|l| l.split_once(" tl:").map(|x| x.1))
        .collect();
    assert_eq!(tl.len(), 2 + want.len(), "{err}");
    assert!(
        tl[0].starts_with("B ") && tl[0].ends_with("'#PROGRAM BEGIN'[#1]"),
        "{err}"
    );
    assert!(
        tl[1].starts_with("> ") && tl[1].ends_with("'COMPAT:MAIN'[#1]"),
        "{err}"
    );
    assert!(tl[tl.len() - 1].starts_with("E "), "{err}");
    let hack = std::fs::read_to_string(d.path().join("drhack.txt")).unwrap();
    assert_eq!(
        hack.lines().take(3).collect::<Vec<_>>(),
        [" <COMPAT_MAIN>", " <COMPAT_WORK>", " </COMPAT_WORK>"]
    );
    // OpenMP thread 2's exits only.
    let r = run_mode(
        d.path(),
        &exe,
        "calltree",
        &[
            ("DR_HOOK", "1"),
            ("OMP_NUM_THREADS", "2"),
            ("DR_HOOK_FUNCEXIT", "2"),
        ],
    );
    ok(&r);
    let out = r.stdout();
    let x: Vec<&str> = out.lines().filter(|l| l.starts_with("<x> ")).collect();
    assert!(x.iter().all(|l| l.starts_with("<x> 1 2 ")), "{x:?}");
    assert!(
        x.iter().any(|l| l.starts_with("<x> 1 2 COMPAT:HELD ")),
        "{x:?}"
    );
}
