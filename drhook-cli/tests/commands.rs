//! Every `drhook` subcommand on real profiles: the weather example run as
//! four tasks (the launcher's rank variables, no MPI library), with and
//! without call paths, and the reference's example files (snapshots where
//! the output is deterministic).

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use common::*;
use drhook_cli::profile::text::{self, ReadOptions};
use drhook_cli::profile::write::to_text;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Per-task value of each routine in a flat wall profile: calls summed
/// over threads, self and total of the busiest thread (independent of the
/// merge code: straight from the rows).
fn per_task(p: &Path) -> HashMap<String, (u64, f64, f64)> {
    let prof = text::read(p, ReadOptions::default()).unwrap();
    let mut m: HashMap<String, (u64, f64, f64)> = HashMap::new();
    for r in &prof.rows {
        let e = m.entry(r.routine.clone()).or_insert((0, 0.0, 0.0));
        e.0 += r.calls;
        e.1 = e.1.max(r.self_s);
        e.2 = e.2.max(r.total_s);
    }
    m
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
}

#[test]
fn merge_of_four_weather_tasks_matches_the_task_files() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<PathBuf> = (0..4)
        .map(|r| weather_run(dir.path(), r, 4, 4 + 2 * r, "prof"))
        .collect();
    let merged = ok(&run_drhook(dir.path(), &["merge", "--json", s(dir.path())]));
    let t: serde_json::Value = serde_json::from_str(&merged).unwrap();
    assert_eq!(t["ntasks"], 4);
    assert_eq!(t["kind"], "wall");
    assert_eq!(t["procs"], serde_json::json!([1, 2, 3, 4]));
    let tasks: Vec<HashMap<String, (u64, f64, f64)>> = files.iter().map(|f| per_task(f)).collect();
    let routines = t["routines"].as_array().unwrap();
    assert!(routines.len() >= 10, "{merged}");
    let mut prev_max = f64::INFINITY;
    for r in routines {
        let name = r["routine"].as_str().unwrap();
        let vals = |k: usize| -> Vec<f64> {
            tasks
                .iter()
                .map(|t| {
                    t.get(name).map_or(0.0, |v| match k {
                        0 => v.0 as f64,
                        1 => v.1,
                        _ => v.2,
                    })
                })
                .collect()
        };
        let present = tasks.iter().filter(|t| t.contains_key(name)).count();
        assert_eq!(r["tasks"], present, "{name}");
        for (k, key) in ["calls", "self_s", "total_s"].iter().enumerate() {
            let v = vals(k);
            let mean = v.iter().sum::<f64>() / 4.0;
            let sd = (v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / 4.0).sqrt();
            let max = v.iter().copied().fold(f64::MIN, f64::max);
            let min = v.iter().copied().fold(f64::MAX, f64::min);
            let st = &r[key];
            let got = |f: &str| st[f].as_f64().unwrap();
            assert!(
                close(got("max"), max),
                "{name} {key} max {} vs {max}",
                st["max"]
            );
            assert!(close(got("min"), min), "{name} {key} min");
            assert!(close(got("mean"), mean), "{name} {key} mean");
            assert!((got("stddev") - sd).abs() < 1e-9, "{name} {key} stddev");
            // The task of the max has the max.
            let task = st["max_task"].as_u64().unwrap() as usize;
            assert!(close(v[task - 1], max), "{name} {key} max_task {task}");
        }
        let self_max = r["self_s"]["max"].as_f64().unwrap();
        assert!(self_max <= prev_max, "sorted by max self time");
        prev_max = self_max;
    }
    // Calls are exact: MODEL:STEP runs once per step, 4, 6, 8 and 10 steps.
    let step = routines
        .iter()
        .find(|r| r["routine"] == "MODEL:STEP")
        .unwrap();
    assert_eq!(step["calls"]["min"], 4.0);
    assert_eq!(step["calls"]["max"], 10.0);
    assert_eq!(step["calls"]["mean"], 7.0);
    assert_eq!(step["calls"]["max_task"], 4);
    // Text and CSV say the same; files given one by one = the directory.
    let mut args: Vec<&str> = vec!["merge"];
    args.extend(files.iter().map(|f| s(f)));
    let text = ok(&run_drhook(dir.path(), &args));
    assert!(
        text.starts_with("4 tasks merged (wall-clock profiles, proc#1-4)"),
        "{text}"
    );
    assert!(text.contains("MODEL:STEP"));
    assert_eq!(text.lines().count(), 3 + routines.len(), "{text}");
    args.push("--csv");
    let csv_text = ok(&run_drhook(dir.path(), &args));
    let mut rd = csv::Reader::from_reader(csv_text.as_bytes());
    let head = rd.headers().unwrap().clone();
    assert_eq!(&head[0], "routine");
    let recs: Vec<csv::StringRecord> = rd.records().map(|r| r.unwrap()).collect();
    assert_eq!(recs.len(), routines.len());
    let col = head.iter().position(|h| h == "calls_max").unwrap();
    let step_rec = recs.iter().find(|r| &r[0] == "MODEL:STEP").unwrap();
    assert_eq!(&step_rec[col], "10");
    // One worker or two: the same table.
    let one = ok(&run_drhook(
        dir.path(),
        &["merge", "--json", "--jobs", "1", s(dir.path())],
    ));
    assert_eq!(one, merged);
}

#[test]
fn flamegraph_from_call_paths_and_from_flat_rows() {
    let dir = tempfile::tempdir().unwrap();
    let cp = weather_run(dir.path(), 0, 1, 4, "prof,callpath");
    let svg = dir.path().join("prof.svg");
    ok(&run_drhook(
        dir.path(),
        &["flamegraph", s(&cp), "-o", s(&svg)],
    ));
    let text = svg_text(&svg);
    for name in [
        "MODEL:MAIN",
        "MODEL:TEAM_LOOP",
        "DYN:MG_VCYCLE",
        "PHYS:CLOUDSC",
        "thread 1",
        "thread 2",
    ] {
        assert!(text.contains(name), "{name} not in the SVG");
    }
    // Folded stacks: the tree's paths, counts = self µs.
    let folded = ok(&run_drhook(dir.path(), &["flamegraph", "--folded", s(&cp)]));
    let prof = text::read(&cp, ReadOptions::default()).unwrap();
    let mut sum = 0u64;
    for l in folded.lines() {
        let (stack, n) = l.rsplit_once(' ').unwrap();
        sum += n.parse::<u64>().unwrap();
        assert!(stack.starts_with("thread "), "{l}");
    }
    let self_us: f64 = prof.rows.iter().map(|r| r.self_s * 1e6).sum();
    assert!(
        (sum as f64 - self_us).abs() < 1.0 * prof.rows.len() as f64,
        "{sum} vs {self_us}"
    );
    // Every row with self time is a stack of its own, callers first; the
    // recursion of the multigrid solver is in the profile as nested call
    // paths, and where a nested level has self time (its self time is
    // printed in ms: a fast machine rounds the inner levels to 0, and a
    // frame with no self time has no line of its own) it appears as nested
    // frames.
    let recursive = prof
        .rows
        .iter()
        .filter(|r| {
            r.routine == "DYN:MG_VCYCLE" && r.path.first().is_some_and(|c| c == "DYN:MG_VCYCLE")
        })
        .collect::<Vec<_>>();
    assert!(
        !recursive.is_empty(),
        "the recursion's call paths are in the profile"
    );
    for r in prof.rows.iter().filter(|r| r.self_s > 0.0) {
        let mut frames: Vec<&str> = r.path.iter().rev().map(String::as_str).collect();
        frames.push(&r.routine);
        let stack = format!("thread {};{} ", r.thread, frames.join(";"));
        assert!(folded.contains(&stack), "{stack} not in\n{folded}");
        if r.routine == "DYN:MG_VCYCLE" && r.path.first().is_some_and(|c| c == "DYN:MG_VCYCLE") {
            assert!(stack.contains("DYN:MG_VCYCLE;DYN:MG_VCYCLE "), "{stack}");
        }
    }
    let t2 = ok(&run_drhook(
        dir.path(),
        &["flamegraph", "--folded", "--thread", "2", s(&cp)],
    ));
    assert!(t2.lines().all(|l| l.starts_with("MODEL:TEAM_LOOP")), "{t2}");
    // Without call paths: one frame per routine, and a warning.
    let flat_dir = tempfile::tempdir().unwrap();
    let flat = weather_run(flat_dir.path(), 0, 1, 4, "prof");
    let o = run_drhook(flat_dir.path(), &["flamegraph", s(&flat), "-o", "f.svg"]);
    ok(&o);
    assert!(stderr(&o).contains("no call paths"), "{}", stderr(&o));
    assert!(svg_text(&flat_dir.path().join("f.svg")).contains("PHYS:CLOUDSC"));
    let o = run_drhook(flat_dir.path(), &["flamegraph", s(&flat), "--thread", "99"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no routine with self time on thread 99"));
}

/// Parses an SVG with quick-xml (it must be well-formed XML) and returns
/// its text and attribute values.
fn svg_text(p: &Path) -> String {
    use quick_xml::events::Event;
    let data = std::fs::read_to_string(p).unwrap();
    let mut r = quick_xml::Reader::from_str(&data);
    let mut out = String::new();
    let mut depth = 0i64;
    let mut elements = 0;
    loop {
        match r.read_event() {
            Ok(Event::Eof) => break,
            Ok(Event::Start(e)) => {
                depth += 1;
                elements += 1;
                if elements == 1 {
                    assert_eq!(e.name().as_ref(), "svg");
                }
            }
            Ok(Event::End(_)) => depth -= 1,
            Ok(Event::Text(t)) => out.push_str(t.as_ref()),
            Ok(_) => {}
            Err(e) => panic!(
                "{}: not well-formed XML at {}: {e}",
                p.display(),
                r.buffer_position()
            ),
        }
    }
    assert_eq!(depth, 0, "unbalanced elements");
    assert!(elements > 10);
    out
}

#[test]
fn diff_sorts_by_change_and_gates_ci() {
    let dir = tempfile::tempdir().unwrap();
    let before = dir.path().join("before");
    let after = dir.path().join("after");
    std::fs::create_dir_all(&before).unwrap();
    std::fs::create_dir_all(&after).unwrap();
    let p = weather_run(&before, 0, 1, 6, "prof");
    // After: the same profile with one routine three times slower
    // (deterministic, unlike a second run).
    let mut prof = text::read(&p, ReadOptions::default()).unwrap();
    let i = prof
        .rows
        .iter()
        .position(|r| r.routine == "DYN:STENCIL")
        .unwrap();
    prof.rows[i].self_s = (prof.rows[i].self_s * 3.0 * 1000.0).round() / 1000.0 + 0.05;
    prof.rows[i].total_s = prof.rows[i].self_s;
    std::fs::write(after.join("drhook.prof.1"), to_text(&prof)).unwrap();

    let o = run_drhook(
        dir.path(),
        &["diff", "before", "after", "--threshold", "50"],
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    let first = out.lines().nth(3).unwrap();
    assert!(
        first.ends_with("DYN:STENCIL"),
        "largest change first:\n{out}"
    );
    assert!(
        stderr(&o).contains("regression: DYN:STENCIL self time"),
        "{}",
        stderr(&o)
    );
    // Same profile both sides: nothing grew.
    let o = run_drhook(dir.path(), &["diff", s(&p), s(&p), "--threshold", "0"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // A looser threshold passes.
    let o = run_drhook(
        dir.path(),
        &["diff", "before", "after", "--threshold", "100000"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The noise floor: nothing is checked under 1000 s.
    let o = run_drhook(
        dir.path(),
        &[
            "diff",
            "before",
            "after",
            "--threshold",
            "50",
            "--min-self",
            "1000",
        ],
    );
    assert_eq!(o.status.code(), Some(0));
    // JSON.
    let j: serde_json::Value = serde_json::from_str(&ok(&run_drhook(
        dir.path(),
        &["diff", "before", "after", "--json"],
    )))
    .unwrap();
    assert_eq!(j["routines"][0]["routine"], "DYN:STENCIL");
    assert_eq!(
        j["routines"][0]["calls"]["before"],
        j["routines"][0]["calls"]["after"]
    );
    // Calls change with the work: 6 steps before, 9 after.
    let more = dir.path().join("more");
    std::fs::create_dir_all(&more).unwrap();
    weather_run(&more, 0, 1, 9, "prof");
    let j: serde_json::Value = serde_json::from_str(&ok(&run_drhook(
        dir.path(),
        &["diff", "before", "more", "--json"],
    )))
    .unwrap();
    let step = j["routines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["routine"] == "MODEL:STEP")
        .unwrap();
    assert_eq!(
        (
            step["calls"]["before"].as_f64(),
            step["calls"]["after"].as_f64()
        ),
        (Some(6.0), Some(9.0))
    );
}

#[test]
fn top_draws_the_tree_or_the_table_to_the_width() {
    let dir = tempfile::tempdir().unwrap();
    let cp = weather_run(dir.path(), 0, 1, 4, "prof,callpath");
    let out = ok(&run_drhook(dir.path(), &["top", s(&cp), "--width", "100"]));
    assert!(
        !out.contains('\u{1b}'),
        "no colour when stdout is not a terminal"
    );
    assert!(
        out.contains("Thread 1:") && out.contains("Thread 2:"),
        "{out}"
    );
    assert!(out.contains("MODEL:MAIN"));
    assert!(out.contains("─ MODEL:TEAM_LOOP"), "{out}");
    for l in out.lines() {
        assert!(l.chars().count() <= 100, "line wider than 100:\n{l}");
    }
    let narrow = ok(&run_drhook(dir.path(), &["top", s(&cp), "--width", "60"]));
    for l in narrow.lines() {
        assert!(l.chars().count() <= 60, "line wider than 60:\n{l}");
    }
    assert!(narrow.contains('…'), "long names are cut:\n{narrow}");
    let coloured = ok(&run_drhook(
        dir.path(),
        &["top", s(&cp), "--color", "always"],
    ));
    assert!(coloured.contains("\u{1b}["));
    let flat = ok(&run_drhook(
        dir.path(),
        &["top", s(&cp), "--flat", "--width", "110"],
    ));
    assert!(flat.contains("Self%") && flat.contains('█'), "{flat}");
    let limited = ok(&run_drhook(
        dir.path(),
        &["top", s(&cp), "--thread", "1", "-n", "3"],
    ));
    assert!(limited.contains("more nodes"), "{limited}");
    assert!(!limited.contains("Thread 2:"));
}

/// Every layout our engine writes is read, and written back byte for byte.
#[test]
fn engine_profile_variants_read_and_write_back() {
    use drhook_cli::profile::{Columns, Kind, PerCall};
    let dir = tempfile::tempdir().unwrap();
    let read = |opt: &str, extra: &[(&str, &str)], packed: bool| {
        let sub = dir
            .path()
            .join(opt.replace(',', "_") + &extra.len().to_string());
        std::fs::create_dir_all(&sub).unwrap();
        let p = weather_run_env(&sub, 0, 1, 3, opt, extra);
        let prof = text::read(
            &p,
            ReadOptions {
                packed_callpath: packed,
            },
        )
        .unwrap();
        if !packed {
            let original = std::fs::read_to_string(&p).unwrap();
            assert_eq!(to_text(&prof), original, "{opt}");
        }
        prof
    };
    let p = read("prof,callpath,clusterinfo,self", &[], false);
    assert!(p.header.clusterinfo && p.header.sizeinfo);
    assert!(p.rows.iter().all(|r| r.cluster.is_some()));
    assert!(p.rows.iter().any(|r| r.routine == "$drhook"));
    assert!(
        p.rows.iter().any(|r| r.sizes.is_some()),
        "IO:ENCODE has sizes"
    );
    let tree = p.tree.as_ref().unwrap();
    let paths = drhook_cli::profile::tree::paths(tree);
    assert!(
        paths
            .iter()
            .any(|v| v.ends_with(&["DYN:MG_VCYCLE", "DYN:MG_VCYCLE", "DYN:MG_VCYCLE"])),
        "recursive paths"
    );
    assert!(tree.iter().all(|n| !n.inferred), "every caller has its row");
    let c = read("cpuprof", &[], false);
    assert_eq!(c.header.kind, Kind::Cpu);
    let h = read("hpmprof", &[], false);
    assert_eq!(h.header.columns, Columns::Counters);
    assert!(
        h.rows
            .iter()
            .all(|r| matches!(r.per_call, PerCall::Counters { .. }))
    );
    // Packed call paths give the same tree shape as indented ones.
    let packed = read("prof,callpath", &[("DR_HOOK_CALLPATH_PACKED", "1")], true);
    let indented = read("prof,callpath", &[], false);
    let shape = |p: &drhook_cli::profile::Profile| {
        let t = p.tree.as_ref().unwrap();
        let mut v: Vec<(u32, String, u64)> = drhook_cli::profile::tree::paths(t)
            .iter()
            .zip(t)
            .map(|(path, n)| (n.thread, path.join("/"), n.calls))
            .collect();
        v.sort();
        v
    };
    assert_eq!(shape(&packed), shape(&indented));
}

/// Deterministic outputs on the reference's example files.
#[test]
fn snapshots_of_the_reference_examples() {
    let fx = fixtures();
    let run = |args: &[&str]| ok(&run_drhook(&fx, args));
    let wall = "prof_example.wallprof.drhook.prof.1";
    let cp = "prof_example.prof_callpath_clusterinfo_self.drhook.prof.1";
    insta::assert_snapshot!("merge_wall_and_callpath", run(&["merge", wall, cp]));
    insta::assert_snapshot!("top_callpath", run(&["top", cp, "--width", "100"]));
    insta::assert_snapshot!("top_flat", run(&["top", wall, "--width", "100"]));
    insta::assert_snapshot!("diff_wall_callpath", run(&["diff", wall, cp]));
    insta::assert_snapshot!("folded_callpath", run(&["flamegraph", "--folded", cp]));
    insta::assert_snapshot!(
        "hatchet_callpath",
        run(&["json", "--hatchet-literal", "--pretty", cp])
    );
}

#[test]
fn bad_input_is_exit_status_2_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good =
        std::fs::read_to_string(fixtures().join("prof_example.wallprof.drhook.prof.1")).unwrap();
    std::fs::write(d.join("cut.1"), &good[..good.len() - 20]).unwrap();
    std::fs::write(d.join("notes.txt"), "hello\n").unwrap();
    for args in [
        vec!["merge", "cut.1"],
        vec!["top", "cut.1"],
        vec!["json", "cut.1"],
        vec!["flamegraph", "cut.1"],
        vec!["diff", "cut.1", "cut.1"],
    ] {
        let o = run_drhook(d, &args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert_eq!(
            stderr(&o),
            "drhook: error: cut.1:22: the file ends in the middle of a line: truncated profile (the last line has no newline)\n",
            "{args:?}"
        );
    }
    let e = stderr(&run_drhook(d, &["merge", "notes.txt"]));
    assert!(
        e.starts_with("drhook: error: notes.txt:1: not a Dr.Hook profile"),
        "{e}"
    );
    let e = stderr(&run_drhook(d, &["merge", "missing.1"]));
    assert!(
        e.starts_with("drhook: error: missing.1: No such file"),
        "{e}"
    );
    std::fs::create_dir(d.join("empty")).unwrap();
    let e = stderr(&run_drhook(d, &["merge", "empty"]));
    assert!(e.contains("empty: no profiles in this directory"), "{e}");
    let fx = fixtures();
    let e = stderr(&run_drhook(
        &fx,
        &[
            "merge",
            "prof_example.wallprof.drhook.prof.1",
            "prof_example.cpuprof.drhook.prof.1",
        ],
    ));
    assert!(e.contains("prof_example.cpuprof.drhook.prof.1: a CPU-time profile cannot be merged with wall-clock profiles"), "{e}");
    // A memory profile after a time profile: no times to merge; a memory
    // profile first, then a time profile: not a memory profile.
    let mem = "prof_example.memprof.drhook.prof.1-mem";
    let wall = "prof_example.wallprof.drhook.prof.1";
    let e = stderr(&run_drhook(&fx, &["merge", wall, mem]));
    assert!(
        e.contains("a memory or I/O profile has no times to merge"),
        "{e}"
    );
    let e = stderr(&run_drhook(&fx, &["merge", mem, wall]));
    assert!(
        e.contains("a time profile cannot be merged with memory profiles"),
        "{e}"
    );
    // A usage error is status 2 too (clap).
    assert_eq!(run_drhook(d, &["merge"]).status.code(), Some(2));
}

#[test]
fn ranks_with_different_routine_sets() {
    // Task 2 lacks a routine that task 1 has, and has one of its own.
    let fx = fixtures();
    let dir = tempfile::tempdir().unwrap();
    let mut p1 = text::read(
        &fx.join("prof_example.wallprof.drhook.prof.1"),
        ReadOptions::default(),
    )
    .unwrap();
    let mut p2 = p1.clone();
    p2.header.proc = 2;
    p2.rows.retain(|r| r.routine != "PROF_EX_MOD:DRIVER");
    p2.rows.push({
        let mut r = p2.rows[0].clone();
        r.routine = "ONLY_ON_2".into();
        r.star = false;
        r
    });
    for (i, r) in p2.rows.iter_mut().enumerate() {
        r.rank = i as u64 + 1;
    }
    p1.header.nprocs = 2;
    p2.header.nprocs = 2;
    std::fs::write(dir.path().join("drhook.prof.1"), to_text(&p1)).unwrap();
    std::fs::write(dir.path().join("drhook.prof.2"), to_text(&p2)).unwrap();
    let t: serde_json::Value = serde_json::from_str(&ok(&run_drhook(
        dir.path(),
        &["merge", "--json", "drhook.prof.1", "drhook.prof.2"],
    )))
    .unwrap();
    let get = |n: &str| {
        t["routines"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["routine"] == n)
            .unwrap()
            .clone()
    };
    let driver = get("PROF_EX_MOD:DRIVER");
    assert_eq!(driver["tasks"], 1);
    assert_eq!(driver["self_s"]["min"], 0.0, "missing counts as 0");
    assert_eq!(driver["self_s"]["max"], 0.044);
    assert_eq!(driver["self_s"]["mean"], 0.022);
    assert_eq!(driver["self_s"]["max_task"], 1);
    let only = get("ONLY_ON_2");
    assert_eq!(
        (only["tasks"].as_u64(), only["self_s"]["max_task"].as_u64()),
        (Some(1), Some(2))
    );
    let text = ok(&run_drhook(
        dir.path(),
        &["merge", "drhook.prof.1", "drhook.prof.2"],
    ));
    let line = text
        .lines()
        .find(|l| l.ends_with("PROF_EX_MOD:DRIVER"))
        .unwrap();
    assert!(line.contains(" 1/2  "), "{line}");
}
