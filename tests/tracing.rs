//! The tracing front door (`drhook::DrHookLayer`) and `#[drhook]` on
//! `async fn`, run as real programs (`progs/tracing_prog.rs`): nesting with
//! `#[drhook]` in both directions, spans that do not nest, futures moved
//! between threads, a tokio runtime, per-layer filters, counters, and
//! configuration from code.

use drhook_tests::{Profile, Run, run_in};

const PROG: &str = env!("CARGO_BIN_EXE_drhook-test-tracing");

fn run(scenario: &str, env: &[(&str, &str)]) -> (Run, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let r = run_in(dir.path(), PROG, &[scenario], env);
    assert_eq!(r.code(), 0, "{scenario}: {}", r.stderr());
    assert!(
        !r.stderr().contains("invalid key-pointer") && !r.stderr().contains("DrHookCallTree"),
        "{scenario}: no mismatch diagnostics: {}",
        r.stderr()
    );
    (r, dir)
}

const PROF: &[(&str, &str)] = &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof,callpath")];

/// Sum of a routine's rows over threads: (calls, self, total, threads).
fn sum(p: &Profile, name: &str) -> (u64, f64, f64, usize) {
    let rows = p.rows_of(name);
    assert!(!rows.is_empty(), "no row for {name}");
    (
        rows.iter().map(|r| r.calls).sum(),
        rows.iter().map(|r| r.self_s).sum(),
        rows.iter().map(|r| r.total_s).sum(),
        rows.len(),
    )
}

/// The calling tree as text: one line per (routine, thread, call path),
/// with calls, sorted — the part of a profile that does not depend on time.
fn tree_text(p: &Profile) -> String {
    let mut lines: Vec<String> = p
        .rows
        .iter()
        .map(|r| {
            let mut path: Vec<&str> = r.path.iter().rev().map(String::as_str).collect();
            path.push(&r.name);
            format!("{} @{} calls={}", path.join(" > "), r.tid, r.calls)
        })
        .collect();
    lines.sort();
    lines.join("\n")
}

#[test]
fn spans_and_drhook_functions_nest_in_one_tree_both_ways() {
    let (r, _d) = run("tree", PROF);
    let p = r.profile("drhook.prof.1");
    insta::assert_snapshot!(tree_text(&p), @r"
    mix_top > MIX:OUTER > mix_middle > MIX:INNER > instrumented_leaf @1 calls=6
    mix_top > MIX:OUTER > mix_middle > MIX:INNER @1 calls=2
    mix_top > MIX:OUTER > mix_middle @1 calls=2
    mix_top > MIX:OUTER @1 calls=1
    mix_top @1 calls=1
    ");
    // Times: the leaf spins 500 µs per call.
    let leaf = p.row("instrumented_leaf", 1);
    assert!(leaf.self_s >= 0.002, "{leaf:?}");
    let inner = p.row("MIX:INNER", 1);
    assert!(
        inner.total_s >= leaf.total_s && inner.self_s < leaf.self_s,
        "{inner:?}"
    );
}

#[test]
fn spans_left_out_of_order_or_on_other_threads_never_abort() {
    let (r, _d) = run("cross_thread", PROF);
    assert!(r.stdout().contains("cross_thread done"));
    let p = r.profile("drhook.prof.1");
    // Entered on thread 2 inside a region that returned first: closed with it.
    let crossing = p
        .rows
        .iter()
        .find(|x| x.name == "crossing" && x.tid == 2 && x.path == ["CROSS:ENTERING"])
        .unwrap_or_else(|| panic!("{:#?}", p.rows));
    assert_eq!(crossing.calls, 1);
    assert!(crossing.self_s >= 0.002, "spins 3 ms: {crossing:?}");
    // Entered again after an exit that found it already closed: a
    // resumption (no call) with no invented suspension time.
    let again = p
        .rows
        .iter()
        .find(|x| x.name == "crossing" && x.tid == 2 && x.path.is_empty())
        .expect("the resumed activation, at the top of thread 2");
    assert_eq!(again.calls, 0);
    assert!(again.total_s < 0.5, "{again:?}");
    // The exit on thread 3, where it was never entered, is ignored.
    assert!(p.rows.iter().all(|x| !(x.name == "crossing" && x.tid == 3)));
    assert_eq!(p.row("CROSS:EXITING", 3).calls, 1);
    // Out of order on one thread: b is closed with a.
    assert_eq!(p.row("order_b", 1).path, vec!["order_a", "CROSS:MAIN"]);
    assert_eq!(p.row("order_a", 1).calls, 1);
    // Still entered when the guard below it was left: closed silently.
    assert_eq!(p.row("left_open", 1).calls, 1);
    assert_eq!(p.row("CROSS:MAIN", 1).calls, 1);
}

#[test]
fn async_fn_counts_calls_not_polls_and_total_spans_its_suspensions() {
    let (r, _d) = run("migrate", PROF);
    // Each poll ran on a new thread, 40 ms apart.
    assert!(
        r.stdout().contains("async_work=42 polls=4"),
        "{}",
        r.stdout()
    );
    assert!(r.stdout().contains("span_work=7 polls=2"), "{}", r.stdout());
    let p = r.profile("drhook.prof.1");
    let (calls, self_s, total, threads) = sum(&p, "ASYNC:WORK");
    assert_eq!(calls, 1, "one call however many polls");
    assert!(threads >= 4, "accounted on each polling thread: {threads}");
    // Busy: 3 x 2 ms spinning of its own; suspended: 3 pauses of 40 ms.
    assert!(
        (0.0055..0.1).contains(&self_s),
        "self = busy time: {self_s}"
    );
    assert!(
        total >= 0.12 + 0.006,
        "total spans the suspensions: {total}"
    );
    let (calls, self_s, total, _) = sum(&p, "ASYNC:CHILD");
    assert_eq!(calls, 1);
    assert!(self_s >= 0.001 && total >= 0.04, "{self_s} {total}");
    // A tracing `Instrumented` future: the same semantics.
    let (calls, self_s, total, threads) = sum(&p, "span_future");
    assert_eq!(calls, 1);
    assert!(threads >= 2);
    assert!((0.0035..0.1).contains(&self_s), "{self_s}");
    assert!(total >= 0.04 + 0.004, "{total}");
}

#[test]
fn tokio_tasks_are_counted_once_whichever_worker_polls_them() {
    let (r, _d) = run("tokio", PROF);
    assert!(r.stdout().contains("tokio total=1012"), "{}", r.stdout());
    let p = r.profile("drhook.prof.1");
    let (calls, _, total, _) = sum(&p, "tokio_task");
    assert_eq!(calls, 8, "8 spawned tasks");
    assert!(total >= 8.0 * 0.015, "each task sleeps 3 x 5 ms: {total}");
    let (calls, self_s, _, _) = sum(&p, "ASYNC:CHILD");
    assert_eq!(calls, 24, "3 calls per task");
    assert!(self_s >= 24.0 * 0.001, "each spins 1 ms: {self_s}");
    for row in p.rows_of("ASYNC:CHILD") {
        assert_eq!(row.path, vec!["tokio_task"], "{row:?}");
    }
}

#[test]
fn per_layer_filters_are_respected() {
    let (r, _d) = run("filters", PROF);
    let p = r.profile("drhook.prof.1");
    insta::assert_snapshot!(tree_text(&p), @r"
    FILTER:MAIN > kept > kept_inner @1 calls=2
    FILTER:MAIN > kept @1 calls=2
    FILTER:MAIN @1 calls=1
    ");
}

#[test]
fn spans_get_counters_under_hpmprof() {
    let (r, _d) = run("tree", &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "hpmprof")]);
    let csv = std::fs::read_to_string(r.dir.join("drhook.prof.1.csv")).unwrap();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let col = header
        .iter()
        .position(|h| *h == "task-clock(excl)" || *h == "cycles(excl)")
        .unwrap_or_else(|| panic!("a counter column: {csv}"));
    let leaf: Vec<&str> = csv
        .lines()
        .find(|l| l.starts_with("instrumented_leaf,"))
        .unwrap_or_else(|| panic!("{csv}"))
        .split(',')
        .collect();
    assert_eq!(leaf[8], "6", "{csv}");
    assert!(
        leaf[col].parse::<u64>().unwrap() > 0,
        "the span spins: {csv}"
    );
}

#[test]
fn settings_configure_dr_hook_from_code() {
    // No DR_HOOK variables at all: the builder's settings switch it on.
    let (r, _d) = run("settings", &[]);
    assert!(
        r.stdout().contains("second init: Err(AlreadyInitialized)"),
        "{}",
        r.stdout()
    );
    let p = r.profile("from_code.1");
    assert_eq!(p.row("configured", 1).calls, 1);
    assert!(!r.dir.join("drhook.prof.1").exists());
}

#[test]
fn with_dr_hook_off_the_layer_changes_nothing_and_writes_nothing() {
    // Off from the start, the span table is never filled: lookups and
    // removals stop at a bucket's first slot. Spans entered on other
    // threads, exited where they were not entered and out of order still
    // run the program as without the layer's work.
    for scenario in ["cross_thread", "tree"] {
        let (off, _d) = run(scenario, &[("DR_HOOK", "0")]);
        let (on, _e) = run(scenario, PROF);
        assert_eq!(off.stdout(), on.stdout(), "{scenario}: same program output");
        let written: Vec<_> = std::fs::read_dir(&off.dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().starts_with("drhook"))
            .collect();
        assert!(
            written.is_empty(),
            "{scenario}: off writes nothing: {written:?}"
        );
        assert!(
            on.dir.join("drhook.prof.1").exists(),
            "{scenario}: on writes its profile"
        );
    }
}
