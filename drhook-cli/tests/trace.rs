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

/// The slices per (pid, tid) of a trace.
type Tracks = BTreeMap<(u64, u64), Vec<Slice>>;

/// A figure per (thread, call path).
type PerPath<T> = BTreeMap<(u64, Vec<String>), T>;

/// Per (thread, call path) of `drhook.prof.1.json` in `d`: the calls and
/// the total seconds.
fn profile_calls(d: &Path) -> (PerPath<u64>, PerPath<f64>) {
    let p = json::parse(
        &std::fs::read_to_string(d.join("drhook.prof.1.json")).unwrap(),
        Path::new("drhook.prof.1.json"),
    )
    .unwrap();
    let tree = p[0].tree.as_ref().unwrap();
    let by_id: BTreeMap<u64, &Node> = tree.iter().map(|n| (n.id, n)).collect();
    let mut calls: PerPath<u64> = BTreeMap::new();
    let mut totals: PerPath<f64> = BTreeMap::new();
    for n in tree {
        let k = (u64::from(n.thread), path_of(n, &by_id));
        *calls.entry(k.clone()).or_default() += n.calls;
        *totals.entry(k).or_default() += n.total_s;
    }
    (calls, totals)
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
    let (calls, totals) = profile_calls(d);
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

/// Runs weather (`steps` steps, 2 threads) with `prof,json,trace` and
/// `env`, merges its trace with `drhook trace merge` (complete events),
/// and returns the merged slices and the profile's calls per (thread,
/// call path).
fn traced(d: &Path, steps: &str, env: &[(&str, &str)]) -> (Tracks, PerPath<u64>, String) {
    let mut all = vec![("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof,json,trace")];
    all.extend_from_slice(env);
    let o = run_with_env(d, &weather(), &[steps, "2"], &all);
    ok(&o);
    let o2 = run_drhook(
        d,
        &["trace", "merge", "drhook.trace.1.json", "-o", "merged.json"],
    );
    ok(&o2);
    let merged = read(&d.join("merged.json"));
    assert_eq!(merged["otherData"]["events"], "complete");
    let events = merged["traceEvents"].as_array().unwrap();
    assert!(
        events.iter().all(|e| e["ph"] != "B" && e["ph"] != "E"),
        "pairs became complete events"
    );
    (trace_tracks(&merged), profile_calls(d).0, stderr(&o))
}

fn count_by_path(tracks: &Tracks) -> PerPath<u64> {
    let mut seen = BTreeMap::new();
    for (&(_, tid), slices) in tracks {
        for s in slices {
            *seen.entry((tid, s.path.clone())).or_default() += 1;
        }
    }
    seen
}

#[test]
fn complete_events_of_the_merge_are_the_activations_of_the_profile() {
    let dir = tempfile::tempdir().unwrap();
    let (tracks, calls, _) = traced(dir.path(), "6", &[]);
    assert_eq!(count_by_path(&tracks), calls);
    // Half the size, about: the same run merged as pairs.
    let d = dir.path();
    ok(&run_drhook(
        d,
        &[
            "trace",
            "merge",
            "--begin-end",
            "drhook.trace.1.json",
            "-o",
            "pairs.json",
        ],
    ));
    let pairs = read(&d.join("pairs.json"));
    assert_eq!(count_by_path(&trace_tracks(&pairs)), calls);
    let (x, be) = (
        std::fs::metadata(d.join("merged.json")).unwrap().len(),
        std::fs::metadata(d.join("pairs.json")).unwrap().len(),
    );
    assert!(x * 10 < be * 8, "complete {x} bytes, pairs {be} bytes");
}

#[test]
fn depth_and_name_filters_keep_exactly_the_chosen_routines() {
    let dir = tempfile::tempdir().unwrap();
    let (tracks, calls, err) = traced(dir.path(), "6", &[("DR_HOOK_TRACE_DEPTH", "2")]);
    assert!(err.contains("timeline: depth at most 2"), "{err}");
    let shallow: BTreeMap<_, _> = calls
        .iter()
        .filter(|((_, p), _)| p.len() <= 2)
        .map(|(k, v)| (k.clone(), *v))
        .collect();
    assert!(shallow.len() < calls.len());
    assert_eq!(count_by_path(&tracks), shallow);

    let dir = tempfile::tempdir().unwrap();
    let (tracks, calls, _) = traced(dir.path(), "6", &[("DR_HOOK_TRACE_MATCH", "^(PHYS|IO):")]);
    // Per thread and routine: the recorded activations are the calls of
    // the matching routines (their slices nest among themselves only).
    let mut want: BTreeMap<(u64, String), u64> = BTreeMap::new();
    for ((tid, p), n) in &calls {
        let name = p.last().unwrap();
        if name.starts_with("PHYS:") || name.starts_with("IO:") {
            *want.entry((*tid, name.clone())).or_default() += n;
        }
    }
    let mut got: BTreeMap<(u64, String), u64> = BTreeMap::new();
    for ((tid, p), n) in count_by_path(&tracks) {
        assert!(
            p.iter()
                .all(|r| r.starts_with("PHYS:") || r.starts_with("IO:")),
            "{p:?}"
        );
        *got.entry((tid, p.last().unwrap().clone())).or_default() += n;
    }
    assert!(want.len() >= 4, "{want:?}");
    assert_eq!(got, want);
}

#[test]
fn a_minimum_duration_drops_the_short_activations_only() {
    let dir = tempfile::tempdir().unwrap();
    let (tracks, calls, _) = traced(dir.path(), "6", &[("DR_HOOK_TRACE_MIN_US", "200")]);
    let seen = count_by_path(&tracks);
    let all: u64 = calls.values().sum();
    let kept: u64 = seen.values().sum();
    assert!(kept > 0 && kept < all, "{kept} of {all} activations kept");
    for ((tid, p), n) in &seen {
        assert!(
            calls.get(&(*tid, p.clone())).is_some_and(|c| n <= c),
            "{p:?}"
        );
    }
    for slices in tracks.values() {
        for s in slices {
            assert!(
                s.end - s.begin >= 200.0 - 0.002,
                "{:?}: {} us",
                s.path,
                s.end - s.begin
            );
        }
    }
    assert_eq!(seen[&(1, vec!["MODEL:MAIN".to_string()])], 1);
}

#[test]
fn a_ring_keeps_the_end_of_the_run() {
    let dir = tempfile::tempdir().unwrap();
    let (tracks, calls, err) = traced(
        dir.path(),
        "20",
        &[
            ("DR_HOOK_TRACE_RING", "1"),
            ("DR_HOOK_TRACE_EVENTS", "1000"),
        ],
    );
    assert!(
        err.contains("the trace of thread 1 keeps its last 1000 events (DR_HOOK_TRACE_RING)"),
        "{err}"
    );
    assert!(!err.contains("is full"), "{err}");
    let d = dir.path();
    let one = read(&d.join("drhook.trace.1.json"));
    assert_eq!(one["otherData"]["kept_events"], "last");
    assert_eq!(one["otherData"]["dropped_activations"], "0");
    let lost: u64 = one["otherData"]["overwritten_events"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(lost > 1000, "{lost}");
    let seen = count_by_path(&tracks);
    let all: u64 = calls.values().sum();
    let kept: u64 = seen.values().sum();
    // At most 500 pairs per thread, plus the activations begun before.
    assert!(kept <= 2 * 500 + 2 * 8 && kept < all, "{kept} of {all}");
    // The outermost activations, begun long before the window, are there
    // (from its start) and end with the run: the end was kept.
    for (tid, root) in [(1u64, "MODEL:MAIN"), (2, "MODEL:TEAM_LOOP")] {
        let slices = &tracks[&(1, tid)];
        let outer = slices
            .iter()
            .find(|s| s.path == [root.to_string()])
            .unwrap_or_else(|| panic!("{root} on thread {tid}"));
        let last_end = slices.iter().map(|s| s.end).fold(f64::MIN, f64::max);
        assert_eq!(outer.end, last_end);
        let first_begin = slices.iter().map(|s| s.begin).fold(f64::MAX, f64::min);
        assert_eq!(outer.begin, first_begin);
    }
    // The last steps are complete: as many PHYS:PHYSICS on thread 2 as
    // kept MODEL:TEAM_LOOP's physics calls in the window, each whole.
    let phys = seen
        .iter()
        .filter(|((t, p), _)| *t == 2 && p.last().is_some_and(|r| r == "PHYS:PHYSICS"))
        .map(|(_, n)| n)
        .sum::<u64>();
    assert!((1..20).contains(&phys), "{phys}");
}

#[test]
fn the_merge_shows_no_progress_bar_when_stderr_is_not_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    big_trace(&d.join("drhook.trace.1.json"));
    let o = run_drhook(d, &["trace", "merge", ".", "-o", "all.json"]);
    ok(&o);
    assert_eq!(stderr(&o), "", "nothing on a pipe");
    // On a terminal (script(1) gives it one), the bar is drawn.
    if !require(
        std::process::Command::new("script")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success()),
        "script (util-linux), for a terminal",
    ) {
        return;
    }
    let cmd = format!("{} trace merge . -o tty.json", env!("CARGO_BIN_EXE_drhook"));
    let o = std::process::Command::new("script")
        .args(["-qefc", &cmd, "/dev/null"])
        .current_dir(d)
        .env("TERM", "xterm")
        .output()
        .unwrap();
    ok(&o);
    let out = stdout(&o);
    assert!(out.contains("drhook trace merge: ["), "{out:?}");
    assert_eq!(read(&d.join("tty.json")), read(&d.join("all.json")));
}

/// A trace of about 20 MB (the bar is for long work).
fn big_trace(p: &Path) {
    use std::io::Write;
    let mut w = std::io::BufWriter::new(std::fs::File::create(p).unwrap());
    write!(
        w,
        "{{\"otherData\":{{\"format\":\"drhook-trace\",\"proc\":\"1\",\"start_unix_ns\":\"1\"}},\"traceEvents\":[\n{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":1,\"tid\":0,\"args\":{{\"name\":\"proc#1 big\"}}}}"
    )
    .unwrap();
    for i in 0..100_000u64 {
        let t = i as f64 * 2.0;
        write!(
            w,
            ",\n{{\"ph\":\"B\",\"name\":\"BIG:ROUTINE_WITH_A_LONG_NAME\",\"pid\":1,\"tid\":1,\"ts\":{t:.3}}},\n{{\"ph\":\"E\",\"pid\":1,\"tid\":1,\"ts\":{:.3}}}",
            t + 1.0
        )
        .unwrap();
    }
    writeln!(w, "\n]}}").unwrap();
}
