//! The memory profile (`DR_HOOK_OPT=memprof`) of a Rust program whose
//! global allocator is `drhook::Alloc`: exact bytes and counts per routine,
//! on 4 threads, with cross-thread frees, reallocation chains and a leak.

use std::collections::HashMap;

use drhook_tests::{MemRow, mem_rows as parse, run_in};

const PROG: &str = env!("CARGO_BIN_EXE_drhook-test-alloc");

fn by_routine(rows: &[MemRow]) -> HashMap<String, Vec<MemRow>> {
    let mut m: HashMap<String, Vec<MemRow>> = HashMap::new();
    for r in rows {
        let routine = r.name.split('@').next().unwrap().to_string();
        m.entry(routine).or_default().push(r.clone());
    }
    m
}

#[test]
fn exact_bytes_and_counts_per_routine() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_in(
        dir.path(),
        PROG,
        &[],
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "memprof")],
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(
        !dir.path().join("drhook.prof.1").exists(),
        "memprof alone writes only the -mem file"
    );
    let text = std::fs::read_to_string(dir.path().join("drhook.prof.1-mem")).unwrap();
    assert!(
        text.starts_with("Memory-profiling information for program="),
        "{text}"
    );
    assert!(
        text.contains("\tNo. of procs/threads: 1 procs, 5 threads\n"),
        "{text}"
    );
    let m = by_routine(&parse(&text));

    // alloc_a: 1000 kept (freed by run) + 24 freed at once.
    let a = &m["drhook_test_alloc::alloc_a"];
    assert_eq!(a.len(), 1, "{text}");
    assert_eq!(
        (
            a[0].self_alloc,
            a[0].allocs,
            a[0].frees,
            a[0].leaked,
            a[0].children
        ),
        (1024, 2, 1, 0, 0),
        "{text}"
    );
    // grow: 10 -> 100 -> 1000: three allocations, two frees (the
    // reallocations), the last block freed by run.
    let g = &m["drhook_test_alloc::grow"][0];
    assert_eq!(
        (g.self_alloc, g.allocs, g.frees, g.leaked),
        (1110, 3, 2, 0),
        "{text}"
    );
    // The workers: one block each, (k+1)*4096 bytes, freed on another thread.
    let mut w: Vec<(u64, u64, u64, i64)> = m["drhook_test_alloc::worker"]
        .iter()
        .map(|r| (r.self_alloc, r.allocs, r.frees, r.leaked))
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
    assert!(
        m["drhook_test_alloc::worker"]
            .iter()
            .all(|r| !r.name.ends_with("@1"))
    );
    // collector frees the four blocks and the list (4 x 24 bytes).
    let c = &m["drhook_test_alloc::collector"][0];
    assert_eq!((c.self_alloc, c.allocs, c.frees), (0, 0, 5), "{text}");
    assert!(c.heap >= 40960, "the heap held the workers' blocks: {text}");
    // leaker: 5000 bytes never freed.
    let l = &m["drhook_test_alloc::leaker"][0];
    assert_eq!(
        (l.self_alloc, l.allocs, l.frees, l.leaked),
        (5000, 1, 0, 5000),
        "{text}"
    );
    // run: its children's bytes, and the frees of alloc_a's and grow's blocks.
    let run = &m["drhook_test_alloc::run"][0];
    assert_eq!(run.children, 1024 + 1110 + 5000, "{text}");
    assert!(run.frees >= 2 && run.calls == 1, "{text}");
    assert!(run.stack > 0 && run.heap >= c.heap, "{text}");
    // Sorted by self bytes; the header counts the leak.
    let rows = parse(&text);
    assert!(
        rows.windows(2).all(|p| p[0].self_alloc >= p[1].self_alloc),
        "{text}"
    );
}

#[test]
fn with_prof_and_callpath_both_files_and_paths() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_in(
        dir.path(),
        PROG,
        &[],
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof,memprof,callpath")],
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    r.profile("drhook.prof.1");
    let text = std::fs::read_to_string(dir.path().join("drhook.prof.1-mem")).unwrap();
    let m = by_routine(&parse(&text));
    assert_eq!(m["drhook_test_alloc::grow"][0].self_alloc, 1110, "{text}");
    // The call path of grow is printed under its row.
    let at = text.find("drhook_test_alloc::grow@1").unwrap();
    assert!(
        text[at..].lines().nth(1).unwrap().trim() == "drhook_test_alloc::run",
        "{text}"
    );
}

#[test]
fn memory_off_allocates_nothing_in_the_profile_and_keeps_the_program_working() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_in(
        dir.path(),
        PROG,
        &[],
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof")],
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    r.profile("drhook.prof.1");
    assert!(!dir.path().join("drhook.prof.1-mem").exists());
    let r = run_in(dir.path(), PROG, &[], &[]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
}

#[test]
fn with_hpmprof_and_after_a_crash() {
    // Counters per routine at the same time (software events where the
    // kernel denies hardware ones): the memory numbers do not change.
    let dir = tempfile::tempdir().unwrap();
    let r = run_in(
        dir.path(),
        PROG,
        &[],
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "hpmprof,memprof")],
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let text = std::fs::read_to_string(dir.path().join("drhook.prof.1-mem")).unwrap();
    let m = by_routine(&parse(&text));
    assert_eq!(m["drhook_test_alloc::grow"][0].self_alloc, 1110, "{text}");
    assert_eq!(m["drhook_test_alloc::leaker"][0].leaked, 5000, "{text}");
    // A crash: the memory profile is written on the way out, with the
    // crashing routine's allocation.
    let dir = tempfile::tempdir().unwrap();
    let r = run_in(
        dir.path(),
        PROG,
        &["crash"],
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "memprof")],
    );
    assert!(!r.output.status.success());
    let text = std::fs::read_to_string(dir.path().join("drhook.prof.1-mem"))
        .unwrap_or_else(|e| panic!("{e}: {}", r.stderr()));
    let m = by_routine(&parse(&text));
    let c = &m["drhook_test_alloc::crasher"][0];
    assert_eq!(
        (c.self_alloc, c.allocs, c.leaked),
        (2048, 1, 2048),
        "{text}"
    );
    // The traceback shows the memory fields of each routine.
    assert!(r.stderr().contains(",hwm="), "{}", r.stderr());
}

/// Threads that end while others start and while the profile is written
/// (issue 22, item 13): the trees of ended threads are freed, but blocks
/// they allocated and another thread frees later are taken back from
/// their rows (kept while such blocks live), and every thread is counted
/// once: 1 200 threads, 100 bytes each, a third of them leaked.
#[test]
fn threads_that_ended_keep_their_leaks_exactly() {
    let (dir, text) = memprof_of("churn");
    let m = by_routine(&parse(&text));
    let work = &m["drhook_test_alloc::churn_work"];
    let sum = |f: fn(&MemRow) -> i64| work.iter().map(f).sum::<i64>();
    assert_eq!(sum(|r| r.calls as i64), 1200, "{text}");
    assert_eq!(sum(|r| r.allocs as i64), 1200, "{text}");
    assert_eq!(sum(|r| r.self_alloc as i64), 120_000, "{text}");
    assert_eq!(sum(|r| r.leaked), 400 * 100, "{text}");
    // 256 threads with blocks of their own, the others summed in one.
    assert_eq!(work.len(), 257, "{text}");
    let prof = std::fs::read_to_string(dir.path().join("drhook.prof.1")).unwrap();
    assert!(
        prof.contains("\tThreads that ended, summed : 944 in Thread#"),
        "{prof}"
    );
}

/// The heap level is kept per thread and folded into the process's at each
/// enter and exit and at the thread's end: a block a thread allocated
/// after its last exit, and kept, is in the heap level that a routine
/// entered after the thread ended sees.
#[test]
fn a_threads_share_of_the_heap_is_folded_in_at_its_end() {
    let (_, text) = memprof_of("share");
    let m = by_routine(&parse(&text));
    let after = &m["drhook_test_alloc::share_after"][0];
    assert!(after.heap >= 1 << 20, "{text}");
}

/// Runs the test program's mode `arg` with `prof,memprof` (it must succeed
/// and print "<arg> done"): its directory and memory profile.
fn memprof_of(arg: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let r = run_in(
        dir.path(),
        PROG,
        &[arg],
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof,memprof")],
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(r.stdout().trim(), format!("{arg} done"));
    let text = std::fs::read_to_string(dir.path().join("drhook.prof.1-mem")).unwrap();
    (dir, text)
}
