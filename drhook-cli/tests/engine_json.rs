//! The engine's JSON companion (`DR_HOOK_OPT=...,json`: `drhook.prof.N.json`
//! beside `drhook.prof.N`) on real runs of the weather example: it
//! validates against `docs/profile-schema.json`, has "format" first, and
//! its full call-path tree agrees with the text profile of the same run —
//! routine by routine, path by path, in `drhook merge`, and the commands
//! read it (a flame graph gets real call paths without `callpath`).

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::*;
use drhook_cli::profile::text::{self, ReadOptions};
use drhook_cli::profile::{Node, Profile, json};

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Runs weather (4 steps x 3 threads) under `opt` in a fresh directory;
/// returns it with the text and JSON profiles read.
fn run(opt: &str, steps: u32) -> (tempfile::TempDir, Profile, Profile, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let o = run_with_env(
        dir.path(),
        &weather(),
        &[&steps.to_string(), "3"],
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", opt)],
    );
    let err = stderr(&o);
    ok(&o);
    assert!(
        err.contains("Writing the JSON profile of proc#1 into file 'drhook.prof.1.json'"),
        "{err}"
    );
    let text_path = dir.path().join("drhook.prof.1");
    let json_path = dir.path().join("drhook.prof.1.json");
    let raw = std::fs::read_to_string(&json_path).unwrap();
    assert!(
        raw.starts_with("{\"format\":\"drhook-profile\",\"version\":1,"),
        "format first: {}",
        &raw[..80.min(raw.len())]
    );
    let doc: serde_json::Value = serde_json::from_str(&raw).unwrap();
    let t = text::read(&text_path, ReadOptions::default()).unwrap();
    let mut j = json::parse(&raw, &json_path).unwrap();
    assert_eq!(j.len(), 1, "one task");
    (dir, t, j.remove(0), doc)
}

/// Routine names from the root to `n`, by id.
fn path_of(n: &Node, by_id: &BTreeMap<u64, &Node>) -> Vec<String> {
    let mut v = vec![n.routine.clone()];
    let mut p = n.parent;
    while let Some(id) = p {
        let q = by_id[&id];
        v.push(q.routine.clone());
        p = q.parent;
    }
    v.reverse();
    v
}

/// Per (routine, thread) from the tree: calls, self, total over the
/// nodes without an ancestor of the same routine — straight from the
/// nodes, independent of the tools' code.
fn per_routine_of_tree(tree: &[Node]) -> BTreeMap<(String, u32), (u64, f64, f64)> {
    let by_id: BTreeMap<u64, &Node> = tree.iter().map(|n| (n.id, n)).collect();
    let mut m: BTreeMap<(String, u32), (u64, f64, f64)> = BTreeMap::new();
    for n in tree {
        let path = path_of(n, &by_id);
        let outermost = !path[..path.len() - 1].contains(&n.routine);
        let e = m.entry((n.routine.clone(), n.thread)).or_default();
        e.0 += n.calls;
        e.1 += n.self_s;
        if outermost {
            e.2 += n.total_s;
        }
    }
    m
}

/// The same from the text rows (with call paths: several rows per
/// routine and thread), with the number of rows added (each rounded to
/// the millisecond).
fn per_routine_of_rows(p: &Profile) -> BTreeMap<(String, u32), (u64, f64, f64, usize)> {
    let mut m: BTreeMap<(String, u32), (u64, f64, f64, usize)> = BTreeMap::new();
    for r in &p.rows {
        let e = m.entry((r.routine.clone(), r.thread)).or_default();
        e.0 += r.calls;
        e.1 += r.self_s;
        if !r.path.contains(&r.routine) {
            e.2 += r.total_s;
        }
        e.3 += 1;
    }
    m
}

fn check_agreement(opt: &str, t: &Profile, j: &Profile, doc: &serde_json::Value) {
    assert_valid(&schema(), doc);
    let task = &doc["tasks"][0];
    assert!(task.get("rows").is_none(), "the engine writes the tree");
    // Header facts.
    let (th, jh) = (&t.header, &j.header);
    assert_eq!(jh.kind, th.kind, "{opt}");
    assert_eq!(
        (jh.proc, jh.nprocs, jh.nthreads),
        (th.proc, th.nprocs, th.nthreads)
    );
    assert_eq!(jh.routines_called, th.routines_called, "{opt}");
    assert_eq!((&jh.started, &jh.ended), (&th.started, &th.ended));
    assert_eq!(jh.program, th.program);
    assert!(
        (jh.total_s.unwrap() - th.total_s.unwrap()).abs() <= 0.0051,
        "{opt}"
    );
    assert!((jh.overhead_pct.unwrap() - th.overhead_pct.unwrap()).abs() <= 0.0051);
    assert_eq!(jh.threads.len(), th.threads.len());
    for (a, b) in jh.threads.iter().zip(&th.threads) {
        assert_eq!(
            (a.id, a.self_cycles, a.cycles),
            (b.id, b.self_cycles, b.cycles)
        );
        assert!(
            (a.time_s - b.time_s).abs() <= 0.0051,
            "{opt} thread {}",
            a.id
        );
    }
    assert_eq!(
        jh.memory_usage.as_ref().unwrap().len(),
        th.memory_usage.as_ref().unwrap().len()
    );
    // Routine by routine.
    let tree = j.tree.as_ref().expect("the full tree");
    let from_tree = per_routine_of_tree(tree);
    let from_rows = per_routine_of_rows(t);
    assert_eq!(
        from_tree.keys().collect::<Vec<_>>(),
        from_rows.keys().collect::<Vec<_>>(),
        "{opt}: the same (routine, thread) pairs"
    );
    for (k, (calls, own, total)) in &from_tree {
        let (rc, rs, rt, nrows) = from_rows[k];
        let tol = 0.0005 * nrows as f64 + 1e-9;
        assert_eq!(*calls, rc, "{opt} {k:?} calls");
        assert!((own - rs).abs() <= tol, "{opt} {k:?} self {own} vs {rs}");
        assert!(
            (total - rt).abs() <= tol,
            "{opt} {k:?} total {total} vs {rt}"
        );
    }
    // Every node's self is its total less its children's, never negative.
    for n in tree {
        let children: f64 = tree
            .iter()
            .filter(|c| c.parent == Some(n.id))
            .map(|c| c.total_s)
            .sum();
        assert!(n.self_s >= 0.0 && n.total_s >= 0.0);
        assert!(
            (n.self_s - (n.total_s - children).max(0.0)).abs() <= 1e-9,
            "{opt}: node {n:?}"
        );
    }
}

#[test]
fn the_json_companion_agrees_with_the_text_profile() {
    for opt in ["prof,json", "cpuprof,json", "prof,json,self,clusterinfo"] {
        let (_dir, t, j, doc) = run(opt, 20);
        let t = Profile {
            // `$drhook` rows (`self`) are the text's: the tree has the
            // routines only.
            rows: t
                .rows
                .iter()
                .filter(|r| r.routine != "$drhook")
                .cloned()
                .collect(),
            ..t
        };
        check_agreement(opt, &t, &j, &doc);
    }
}

#[test]
fn with_callpath_the_tree_has_the_texts_call_paths() {
    let (_dir, t, j, doc) = run("prof,callpath,json", 20);
    check_agreement("prof,callpath,json", &t, &j, &doc);
    let tree = j.tree.as_ref().unwrap();
    let by_id: BTreeMap<u64, &Node> = tree.iter().map(|n| (n.id, n)).collect();
    // One node per (thread, call path), with the row's calls.
    let mut from_tree: BTreeMap<(u32, Vec<String>), u64> = BTreeMap::new();
    for n in tree {
        *from_tree.entry((n.thread, path_of(n, &by_id))).or_default() += n.calls;
    }
    let from_rows: BTreeMap<(u32, Vec<String>), u64> = t
        .rows
        .iter()
        .map(|r| {
            let mut p: Vec<String> = r.path.iter().rev().cloned().collect();
            p.push(r.routine.clone());
            ((r.thread, p), r.calls)
        })
        .collect();
    assert_eq!(from_tree, from_rows);
    assert!(from_tree.keys().any(|(_, p)| p.len() >= 5), "deep paths");
}

#[test]
fn merge_top_and_flamegraph_read_the_companion() {
    let (dir, t, _j, _doc) = run("prof,json", 20);
    let d = dir.path();
    let merged = |file: &str| -> serde_json::Value {
        serde_json::from_str(&ok(&run_drhook(d, &["merge", "--json", file]))).unwrap()
    };
    let (a, b) = (merged("drhook.prof.1"), merged("drhook.prof.1.json"));
    let rows = |v: &serde_json::Value| -> BTreeMap<String, serde_json::Value> {
        v["routines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["routine"].as_str().unwrap().to_string(), r.clone()))
            .collect()
    };
    let (ra, rb) = (rows(&a), rows(&b));
    assert_eq!(ra.keys().collect::<Vec<_>>(), rb.keys().collect::<Vec<_>>());
    for (name, x) in &ra {
        let y = &rb[name];
        assert_eq!(x["calls"]["max"], y["calls"]["max"], "{name}");
        for key in ["self_s", "total_s"] {
            let (p, q) = (
                x[key]["max"].as_f64().unwrap(),
                y[key]["max"].as_f64().unwrap(),
            );
            assert!((p - q).abs() <= 0.0006, "{name} {key}: {p} vs {q}");
        }
    }
    // Both files of the task given (or their directory): read once, from
    // the companion.
    for args in [
        vec!["merge", "--json", "drhook.prof.1", "drhook.prof.1.json"],
        vec!["merge", "--json", "."],
    ] {
        let v: serde_json::Value = serde_json::from_str(&ok(&run_drhook(d, &args))).unwrap();
        assert_eq!(v["ntasks"], 1, "{args:?}");
        assert_eq!(rows(&v).len(), ra.len());
    }
    // The flame graph gets real call paths without `callpath`.
    let o = run_drhook(d, &["flamegraph", "--folded", "drhook.prof.1.json"]);
    let folded = ok(&o);
    assert!(!stderr(&o).contains("no call paths"), "{}", stderr(&o));
    assert!(
        folded
            .lines()
            .any(|l| l.starts_with("thread 1;MODEL:MAIN;MODEL:TEAM_LOOP;PHYS:PHYSICS;")),
        "{folded}"
    );
    // The text with its companion beside it: read from the companion,
    // saying so (issue 28: the text's times are rounded to 1 ms).
    let o = run_drhook(d, &["flamegraph", "--folded", "drhook.prof.1"]);
    assert_eq!(ok(&o), folded);
    assert!(stderr(&o).contains("JSON companion"), "{}", stderr(&o));
    // From the text alone: one frame per routine, and the rounding said.
    let o = run_drhook(
        d,
        &["flamegraph", "--folded", "--no-companion", "drhook.prof.1"],
    );
    assert!(stderr(&o).contains("no call paths"));
    assert!(stderr(&o).contains("rounded to 1 ms"), "{}", stderr(&o));
    // The SVG is drawn.
    let svg = d.join("prof.svg");
    ok(&run_drhook(
        d,
        &["flamegraph", "drhook.prof.1.json", "-o", s(&svg)],
    ));
    assert!(
        std::fs::read_to_string(&svg)
            .unwrap()
            .contains("PHYS:CLOUDSC")
    );
    // top draws the tree, with the text's calls.
    let top = ok(&run_drhook(
        d,
        &[
            "top",
            "drhook.prof.1.json",
            "--thread",
            "1",
            "-n",
            "0",
            "--width",
            "200",
        ],
    ));
    let calls_text: u64 = t
        .rows
        .iter()
        .filter(|r| r.routine == "PHYS:CLOUDSC" && r.thread == 1)
        .map(|r| r.calls)
        .sum();
    let line = top
        .lines()
        .find(|l| l.contains("PHYS:CLOUDSC"))
        .unwrap_or_else(|| panic!("{top}"));
    assert!(line.contains("└─") || line.contains("├─"), "{line}");
    assert!(
        line.split_whitespace().any(|w| w == calls_text.to_string()),
        "{line} vs {calls_text}"
    );
}

#[test]
fn hpmprof_json_carries_counters_per_node() {
    let (_dir, t, j, doc) = run("hpmprof,json", 5);
    check_agreement("hpmprof,json", &t, &j, &doc);
    let names = &j.header.counters;
    assert!(!names.is_empty(), "counter names");
    assert_eq!(doc["tasks"][0]["columns"], "counters");
    for n in j.tree.as_ref().unwrap() {
        let c = n.counters.as_ref().expect("counters on every node");
        assert_eq!((c.excl.len(), c.incl.len()), (names.len(), names.len()));
        assert!(c.excl.iter().zip(&c.incl).all(|(e, i)| e <= i), "{n:?}");
    }
}

/// A crash: the helper process writes the JSON companion and the timeline
/// too, the activations open at the crash timed up to it.
#[test]
fn after_a_crash_the_companion_and_the_timeline_are_written() {
    cargo_build(&["-p", "drhook-tests", "--bin", "drhook-test-prog"]);
    let prog: PathBuf = target_dir().join("drhook-test-prog");
    let dir = tempfile::tempdir().unwrap();
    let o = run_with_env(
        dir.path(),
        &prog,
        &["segv"],
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof,json,trace")],
    );
    assert_ne!(o.status.code(), Some(0), "the program crashed");
    let raw = std::fs::read_to_string(dir.path().join("drhook.prof.1.json"))
        .unwrap_or_else(|e| panic!("{e}\n{}", stderr(&o)));
    let doc: serde_json::Value = serde_json::from_str(&raw).unwrap();
    assert_valid(&schema(), &doc);
    let p = json::parse(&raw, Path::new("drhook.prof.1.json")).unwrap();
    let tree = p[0].tree.as_ref().unwrap();
    let level3 = tree
        .iter()
        .find(|n| n.routine == "CRASH:LEVEL3")
        .expect("the routine that crashed");
    assert_eq!(level3.calls, 1);
    let trace: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("drhook.trace.1.json")).unwrap(),
    )
    .unwrap();
    let events = trace["traceEvents"].as_array().unwrap();
    let names: BTreeSet<&str> = events
        .iter()
        .filter(|e| e["ph"] == "B")
        .filter_map(|e| e["name"].as_str())
        .collect();
    assert!(names.contains("CRASH:LEVEL3"), "{names:?}");
    let b = events.iter().filter(|e| e["ph"] == "B").count();
    let e = events.iter().filter(|e| e["ph"] == "E").count();
    assert_eq!(b, e, "open activations end at the write");
}
