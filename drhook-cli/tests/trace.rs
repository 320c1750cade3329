//! The timeline (`DR_HOOK_OPT=trace`): the engine's Chrome/Perfetto trace
//! of a real run with 4 threads — balanced, nested, monotonic, named
//! tracks, and activation for activation the calls of the profile of the
//! same run; a full buffer stops recording and says so; `drhook trace
//! merge` puts tasks in one trace as processes on one time axis.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::*;
use drhook_cli::profile::{Node, json};

fn read(p: &Path) -> serde_json::Value {
    serde_json::from_str(
        &std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())),
    )
    .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn path_of(n: &Node, by_id: &BTreeMap<u64, &Node>) -> Vec<String> {
    let mut v = vec![n.routine.clone()];
    let mut p = n.parent;
    while let Some(id) = p {
        v.push(by_id[&id].routine.clone());
        p = by_id[&id].parent;
    }
    v.reverse();
    v
}

#[test]
fn four_threads_balanced_nested_and_as_many_activations_as_calls() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = run_with_env(
        d,
        &weather(),
        &["10", "4"],
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof,json,trace")],
    );
    ok(&o);
    assert!(
        stderr(&o).contains("Writing the timeline of proc#1 into file 'drhook.trace.1.json'"),
        "{}",
        stderr(&o)
    );
    let doc = read(&d.join("drhook.trace.1.json"));
    assert_eq!(doc["otherData"]["format"], "drhook-trace");
    assert_eq!(doc["otherData"]["proc"], "1");
    assert_eq!(doc["otherData"]["dropped_activations"], "0");
    let tracks = trace_tracks(&doc);
    let tids: Vec<u64> = tracks
        .keys()
        .map(|&(pid, tid)| {
            assert_eq!(pid, 1);
            tid
        })
        .collect();
    assert_eq!(tids, [1, 2, 3, 4], "one track per thread");
    let names = doc["traceEvents"].as_array().unwrap();
    assert!(names.iter().any(|e| e["name"] == "thread_name"
        && e["tid"] == 2
        && e["args"]["name"].as_str().unwrap().starts_with("thread 2")));
    // The profile of the same run: every activation is a call of a node
    // of the same call path on the same thread.
    let p = json::parse(
        &std::fs::read_to_string(d.join("drhook.prof.1.json")).unwrap(),
        Path::new("drhook.prof.1.json"),
    )
    .unwrap();
    let tree = p[0].tree.as_ref().unwrap();
    let by_id: BTreeMap<u64, &Node> = tree.iter().map(|n| (n.id, n)).collect();
    let mut calls: BTreeMap<(u64, Vec<String>), u64> = BTreeMap::new();
    let mut totals: BTreeMap<(u64, Vec<String>), f64> = BTreeMap::new();
    for n in tree {
        let k = (u64::from(n.thread), path_of(n, &by_id));
        *calls.entry(k.clone()).or_default() += n.calls;
        *totals.entry(k).or_default() += n.total_s;
    }
    let mut seen: BTreeMap<(u64, Vec<String>), u64> = BTreeMap::new();
    let mut spent: BTreeMap<(u64, Vec<String>), f64> = BTreeMap::new();
    for (&(_, tid), slices) in &tracks {
        for s in slices {
            assert!(s.end >= s.begin);
            let k = (tid, s.path.clone());
            *seen.entry(k.clone()).or_default() += 1;
            *spent.entry(k).or_default() += (s.end - s.begin) * 1e-6;
        }
    }
    assert_eq!(seen, calls, "activations per thread and call path");
    // Time: the outermost routine of thread 1 lasts as long in both.
    let main = (1, vec!["MODEL:MAIN".to_string()]);
    let (a, b) = (spent[&main], totals[&main]);
    assert!(
        (a - b).abs() <= 0.05 * b + 0.001,
        "MODEL:MAIN {a} s in the trace, {b} s in the profile"
    );
}

#[test]
fn a_full_buffer_stops_recording_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let o = run_with_env(
        d,
        &weather(),
        &["10", "2"],
        &[
            ("DR_HOOK", "1"),
            ("DR_HOOK_OPT", "trace"),
            ("DR_HOOK_TRACE_EVENTS", "1000"),
        ],
    );
    ok(&o);
    let err = stderr(&o);
    assert!(
        !d.join("drhook.prof.1").exists(),
        "trace alone writes no profile"
    );
    assert!(
        err.contains("Warning - the trace buffer of thread 1 is full (1000 events"),
        "{err}"
    );
    let doc = read(&d.join("drhook.trace.1.json"));
    let dropped: u64 = doc["otherData"]["dropped_activations"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(dropped > 1000, "{dropped}");
    let tracks = trace_tracks(&doc);
    assert_eq!(tracks.len(), 2);
    let events = doc["traceEvents"].as_array().unwrap();
    for tid in [1u64, 2] {
        let on = |ph: &str| {
            events
                .iter()
                .filter(|e| e["tid"] == tid && e["ph"] == ph)
                .count()
        };
        assert!(on("B") + on("E") <= 1000, "thread {tid}: within the buffer");
        assert!(on("B") >= 400, "thread {tid}: recorded until full");
        let note = events
            .iter()
            .find(|e| e["tid"] == tid && e["ph"] == "i")
            .unwrap_or_else(|| panic!("no note on thread {tid}"));
        assert_eq!(note["name"], "drhook: trace buffer full");
        assert_eq!(note["args"]["capacity"], 1000);
        assert!(note["args"]["not_recorded"].as_u64().unwrap() > 0);
    }
    // Merged, the loss is reported again.
    let o = run_drhook(
        d,
        &["trace", "merge", "drhook.trace.1.json", "-o", "all.json"],
    );
    ok(&o);
    assert!(
        stderr(&o).contains("activations were not recorded"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn trace_merge_puts_tasks_apart_on_one_time_axis() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for r in 0..4 {
        weather_run(d, r, 4, 3 + r, "prof,trace");
    }
    let files: Vec<String> = (1..=4).map(|n| format!("drhook.trace.{n}.json")).collect();
    let mut args = vec!["trace", "merge"];
    args.extend(files.iter().map(String::as_str));
    args.extend(["-o", "all.json"]);
    ok(&run_drhook(d, &args));
    // A directory stands for its drhook.trace.N.json files.
    ok(&run_drhook(d, &["trace", "merge", ".", "-o", "dir.json"]));
    let all = read(&d.join("all.json"));
    assert_eq!(all, read(&d.join("dir.json")));
    assert_eq!(all["otherData"]["merged_tasks"], "4");
    let merged = trace_tracks(&all);
    let events = all["traceEvents"].as_array().unwrap();
    let mut last_end = f64::MIN;
    for n in 1..=4u64 {
        let one = read(&d.join(format!("drhook.trace.{n}.json")));
        let alone = trace_tracks(&one);
        // The task's activations, each thread apart, under pid = task.
        let mine: BTreeMap<u64, &Vec<Slice>> = merged
            .iter()
            .filter(|((pid, _), _)| *pid == n)
            .map(|((_, tid), s)| (*tid, s))
            .collect();
        assert_eq!(mine.len(), alone.len(), "proc#{n}: its threads");
        let shift = mine[&1][0].begin - alone[&(n, 1)][0].begin;
        for (&(_, tid), slices) in &alone {
            let m = mine[&tid];
            assert_eq!(m.len(), slices.len());
            for (a, b) in m.iter().zip(slices) {
                assert_eq!(a.path, b.path);
                assert!(
                    (a.begin - b.begin - shift).abs() < 0.002,
                    "one shift per task"
                );
            }
        }
        assert!(events.iter().any(|e| e["name"] == "process_name"
            && e["pid"] == n
            && e["args"]["name"] == format!("proc#{n} weather")));
        // The runs were one after the other: so are the tasks.
        let first = mine
            .values()
            .flat_map(|s| s.iter())
            .map(|s| s.begin)
            .fold(f64::MAX, f64::min);
        let end = mine
            .values()
            .flat_map(|s| s.iter())
            .map(|s| s.end)
            .fold(f64::MIN, f64::max);
        assert!(
            first > last_end,
            "proc#{n} starts after proc#{} ended",
            n - 1
        );
        last_end = end;
    }
    // Bad input is named.
    let o = run_drhook(d, &["trace", "merge", "drhook.prof.1"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("drhook.prof.1"), "{}", stderr(&o));
    let o = run_drhook(
        d,
        &[
            "trace",
            "merge",
            "drhook.trace.2.json",
            "drhook.trace.2.json",
        ],
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("a trace of proc#2 again"),
        "{}",
        stderr(&o)
    );
}
