//! Numbers that must be right (issue 28), on a real C OpenMP program
//! (`progs/omp_prog.c`, libdrhook): two threads run different routines at
//! the same time, so the reference's `Wall-time` (the sum over routines of
//! the busiest thread's self time) is twice the elapsed time. The profile
//! says the true elapsed time (header line, JSON `elapsed_s`), every view
//! shows it, `top`'s Self% sums to 100%, and `merge` names its imbalances
//! and has no thread for calls.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use common::*;

/// `libdrhook.a`, built on first use.
fn libdrhook() -> PathBuf {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| cargo_build(&["-p", "drhook-ffi", "--lib"]));
    let p = target_dir().join("libdrhook.a");
    assert!(p.exists(), "{} not built", p.display());
    p
}

/// Whether `cc -fopenmp` links a program.
fn have_openmp(dir: &Path) -> bool {
    std::fs::write(
        dir.join("t.c"),
        "#include <omp.h>\nint main(void){return omp_get_max_threads()<0;}\n",
    )
    .unwrap();
    let ok = Command::new("cc")
        .args(["-fopenmp", "t.c", "-o", "t"])
        .current_dir(dir)
        .output()
        .is_ok_and(|o| o.status.success());
    require(ok, "a C compiler with OpenMP (cc -fopenmp)")
}

/// Compiles `progs/<name>.c` with libdrhook into `dir/<name>`.
fn build_c(dir: &Path, name: &str, flags: &[&str]) {
    let inc = workspace().join("drhook-ffi/include");
    let src = workspace().join(format!("drhook-cli/tests/progs/{name}.c"));
    let lib = libdrhook();
    let out = Command::new("cc")
        .args(["-std=c99", "-O1"])
        .args(flags)
        .arg(format!("-I{}", inc.display()))
        .args(["-o", name])
        .arg(&src)
        .arg(&lib)
        .args(["-lpthread", "-ldl", "-lm"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cc: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Builds and runs `omp_prog` with `DR_HOOK_OPT=prof,json`; the elapsed
/// time measured around the run.
fn run_omp(dir: &Path) -> Option<f64> {
    if !have_openmp(dir) {
        return None;
    }
    build_c(dir, "omp_prog", &["-fopenmp"]);
    let t = Instant::now();
    let out = run_with_env(
        dir,
        &dir.join("omp_prog"),
        &[],
        &[
            ("DR_HOOK", "1"),
            ("DR_HOOK_OPT", "prof,json"),
            ("OMP_NUM_THREADS", "2"),
        ],
    );
    let measured = t.elapsed().as_secs_f64();
    assert!(out.status.success(), "{}", stderr(&out));
    Some(measured)
}

fn header_secs(text: &str, prefix: &str) -> f64 {
    let l = text
        .lines()
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no {prefix:?} line in\n{text}"));
    l.split_whitespace().next().unwrap().parse().unwrap()
}

#[test]
fn elapsed_time_is_the_runs_and_every_view_says_it() {
    let d = tempfile::tempdir().unwrap();
    let Some(measured) = run_omp(d.path()) else {
        return;
    };
    let text = std::fs::read_to_string(d.path().join("drhook.prof.1")).unwrap();
    let wall = header_secs(&text, "\tWall-time is ");
    let elapsed = header_secs(&text, "\tElapsed time is ");
    // The run lasts ~0.6 s (two steps of 0.3 s); its reference Wall-time
    // counts PHYSICS@1 and DYNAMICS@2, which ran at the same time, twice.
    assert!(
        elapsed <= measured + 0.01 && elapsed > 0.8 * measured,
        "elapsed {elapsed} vs measured {measured}"
    );
    assert!(wall > 1.6 * elapsed, "Wall-time {wall}, elapsed {elapsed}");
    let doc: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(d.path().join("drhook.prof.1.json")).unwrap(),
    )
    .unwrap();
    let task = &doc["tasks"][0];
    let el_json = task["elapsed_s"].as_f64().expect("elapsed_s");
    assert!((el_json - elapsed).abs() < 0.001, "{el_json} vs {elapsed}");
    assert_valid(&schema(), &doc);

    for file in ["drhook.prof.1", "drhook.prof.1.json"] {
        let top = ok(&run_drhook(d.path(), &["top", file]));
        assert!(top.contains(&format!("elapsed {elapsed:.3} s")), "{top}");
        assert!(top.contains("not the elapsed time"), "{top}");
        if file.ends_with(".json") {
            // The companion's tree: per-thread shares (no flat rows).
            continue;
        }
        // Self% sums to 100% over the rows.
        let top = ok(&run_drhook(d.path(), &["top", "--flat", file]));
        let sum: f64 = top
            .lines()
            .filter_map(|l| l.split_whitespace().nth(1)?.strip_suffix('%'))
            .filter_map(|v| v.parse::<f64>().ok())
            .sum();
        assert!((sum - 100.0).abs() < 0.1, "Self% sums to {sum}:\n{top}");
    }
    for file in ["drhook.prof.1", "drhook.prof.1.json"] {
        let merge = ok(&run_drhook(d.path(), &["merge", file]));
        assert!(
            merge.contains(&format!("elapsed {elapsed:.3} s")),
            "{merge}"
        );
        let json: serde_json::Value =
            serde_json::from_str(&ok(&run_drhook(d.path(), &["merge", "--json", file]))).unwrap();
        assert!((json["elapsed_s"].as_f64().unwrap() - elapsed).abs() < 0.001);
    }
    // `drhook json` of the text carries it too.
    let j: serde_json::Value =
        serde_json::from_str(&ok(&run_drhook(d.path(), &["json", "drhook.prof.1"]))).unwrap();
    assert!((j["tasks"][0]["elapsed_s"].as_f64().unwrap() - elapsed).abs() < 0.001);
}

#[test]
fn merge_names_its_imbalances_and_gives_calls_no_thread() {
    let d = tempfile::tempdir().unwrap();
    if run_omp(d.path()).is_none() {
        return;
    }
    let json: serde_json::Value = serde_json::from_str(&ok(&run_drhook(
        d.path(),
        &["merge", "--json", "drhook.prof.1"],
    )))
    .unwrap();
    for r in json["routines"].as_array().unwrap() {
        assert!(r["calls"]["max_thread"].is_null(), "{r}");
        assert!(r["self_s"]["max_thread"].as_u64().unwrap() >= 1, "{r}");
        // Imbalance is named where there is self time to compare; a
        // routine whose self time rounds to 0 in the text profile has none.
        if r["self_s"]["max"].as_f64().unwrap() > 0.0 {
            assert!(r["imbalance_pct"].is_number(), "{r}");
        } else {
            assert!(r["imbalance_pct"].is_null(), "{r}");
        }
    }
    let csv = ok(&run_drhook(d.path(), &["merge", "--csv", "drhook.prof.1"]));
    let head: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let row: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    let col = |n: &str| head.iter().position(|h| *h == n).unwrap();
    assert_eq!(row[col("calls_max_thread")], "", "{csv}");
    assert!(head.contains(&"imbalance_pct"), "{csv}");
    let text = ok(&run_drhook(d.path(), &["merge", "drhook.prof.1"]));
    assert!(
        text.contains("Max/mean") && text.contains("Imbal-%"),
        "{text}"
    );
}

#[test]
fn top_of_an_absent_thread_or_a_directory_fails_clearly() {
    let d = tempfile::tempdir().unwrap();
    let f = fixtures().join("prof_example.wallprof.drhook.prof.1");
    let o = run_drhook(d.path(), &["top", "--thread", "9", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stderr(&o).contains("no thread 9"), "{}", stderr(&o));
    let o = run_drhook(d.path(), &["top", d.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let e = stderr(&o);
    assert!(e.contains("a directory") && !e.contains("os error"), "{e}");
}

/// Runs `vcycle_prog LEVELS MAIN_MS` in `dir` (built there if needed)
/// with `DR_HOOK_OPT=prof,callpath,json`.
fn run_vcycle(dir: &Path, main_ms: &str) {
    if !dir.join("vcycle_prog").exists() {
        build_c(dir, "vcycle_prog", &[]);
    }
    let out = run_with_env(
        dir,
        &dir.join("vcycle_prog"),
        &["7", main_ms],
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof,callpath,json")],
    );
    assert!(out.status.success(), "{}", stderr(&out));
}

/// The deepest run of `MG_VCYCLE` frames in folded stacks.
fn vcycle_depth(folded: &str) -> usize {
    folded
        .lines()
        .map(|l| l.split(';').filter(|f| f.starts_with("MG_VCYCLE")).count())
        .max()
        .unwrap_or(0)
}

/// The count of the folded line whose stack is `stack`.
fn count_of(folded: &str, stack: &str) -> Vec<u64> {
    folded
        .lines()
        .find_map(|l| l.strip_prefix(stack)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no {stack:?} in\n{folded}"))
        .split(' ')
        .map(|v| v.parse().unwrap())
        .collect()
}

#[test]
fn flame_graph_labels_inclusive_times_and_reads_microseconds() {
    let d = tempfile::tempdir().unwrap();
    if !require(
        Command::new("cc").arg("--version").output().is_ok(),
        "a C compiler (cc)",
    ) {
        return;
    }
    run_vcycle(d.path(), "20");
    // With the companion beside the text: read from it, every level kept.
    let o = run_drhook(d.path(), &["flamegraph", "--folded", "drhook.prof.1"]);
    let fine = ok(&o);
    assert!(stderr(&o).contains("JSON companion"), "{}", stderr(&o));
    assert_eq!(vcycle_depth(&fine), 7, "{fine}");
    // The text alone: levels under 1 ms vanish, and it says so.
    let o = run_drhook(
        d.path(),
        &["flamegraph", "--folded", "--no-companion", "drhook.prof.1"],
    );
    let coarse = ok(&o);
    assert!(stderr(&o).contains("rounded to 1 ms"), "{}", stderr(&o));
    assert!(vcycle_depth(&coarse) < 7, "{coarse}");
    // The SVG's tooltip of MAIN: its inclusive time, named so.
    let doc: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(d.path().join("drhook.prof.1.json")).unwrap(),
    )
    .unwrap();
    let task = &doc["tasks"][0];
    let main = task["tree"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["routine"] == "MAIN")
        .unwrap();
    let total_us = main["total_s"].as_f64().unwrap() * 1e6;
    let self_us = main["self_s"].as_f64().unwrap() * 1e6;
    let svg = ok(&run_drhook(d.path(), &["flamegraph", "drhook.prof.1.json"]));
    let title = svg
        .split("<title>")
        .skip(1)
        .find(|t| t.starts_with("MAIN ("))
        .unwrap_or_else(|| panic!("no MAIN frame in {svg}"));
    let (num, rest) = title["MAIN (".len()..].split_once(' ').unwrap();
    let shown: f64 = num.replace(',', "").parse().unwrap();
    assert!(rest.starts_with("µs inclusive"), "{title}");
    assert!(
        (shown - total_us).abs() <= 8.0,
        "{shown} vs total {total_us}"
    );
    assert!(shown > self_us + 1000.0, "{shown} vs self {self_us}");
    let elapsed = task["elapsed_s"].as_f64().unwrap();
    assert!(
        svg.contains(&format!("elapsed {elapsed:.3} s")),
        "no elapsed in the SVG"
    );
}

#[test]
fn flame_graphs_merge_threads_and_tasks_and_draw_the_difference() {
    let d = tempfile::tempdir().unwrap();
    if run_omp(d.path()).is_none() {
        return;
    }
    let sum = |f: &str| -> u64 {
        f.lines()
            .map(|l| l.rsplit(' ').next().unwrap().parse::<u64>().unwrap())
            .sum()
    };
    let per_thread = ok(&run_drhook(
        d.path(),
        &["flamegraph", "--folded", "drhook.prof.1.json"],
    ));
    assert!(
        per_thread.lines().all(|l| l.starts_with("thread ")),
        "{per_thread}"
    );
    let merged = ok(&run_drhook(
        d.path(),
        &[
            "flamegraph",
            "--folded",
            "--merge-threads",
            "drhook.prof.1.json",
        ],
    ));
    assert!(!merged.contains("thread "), "{merged}");
    assert_eq!(sum(&merged), sum(&per_thread));

    // Two runs of the V-cycle, MAIN 20 ms then 60 ms.
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    for (dir, ms) in [(&a, "20"), (&b, "60")] {
        std::fs::create_dir(dir).unwrap();
        run_vcycle(dir, ms);
    }
    let diff = ok(&run_drhook(
        d.path(),
        &[
            "flamegraph",
            "--folded",
            "b/drhook.prof.1.json",
            "--diff",
            "a/drhook.prof.1.json",
        ],
    ));
    let main = count_of(&diff, "MAIN");
    assert_eq!(main.len(), 2, "{diff}");
    assert!(main[1] > main[0] + 30_000, "{diff}");
    let svg = ok(&run_drhook(
        d.path(),
        &[
            "flamegraph",
            "b/drhook.prof.1.json",
            "--diff",
            "a/drhook.prof.1.json",
        ],
    ));
    assert!(svg.contains("against a/drhook.prof.1.json"), "no title");
    // The two runs as two tasks, summed into one flame.
    let both = ok(&run_drhook(
        d.path(),
        &[
            "flamegraph",
            "--folded",
            "--merge-tasks",
            "a/drhook.prof.1.json",
            "b/drhook.prof.1.json",
        ],
    ));
    // `top --merge`: the threads as one tree, and two tasks of one JSON
    // document as one (same paths summed: MAIN called once in each).
    let top = ok(&run_drhook(
        d.path(),
        &["top", "--merge", "--color", "never", "drhook.prof.1.json"],
    ));
    assert!(
        top.contains("All threads merged") && !top.contains("Thread 2"),
        "{top}"
    );
    assert!(top.contains("PHYSICS") && top.contains("DYNAMICS"), "{top}");
    let doc = d.path().join("both.json");
    ok(&run_drhook(
        d.path(),
        &[
            "json",
            "a/drhook.prof.1.json",
            "b/drhook.prof.1.json",
            "-o",
            doc.to_str().unwrap(),
        ],
    ));
    let top = ok(&run_drhook(
        d.path(),
        &["top", "--merge", "--color", "never", "both.json"],
    ));
    let main_line = top
        .lines()
        .find(|l| l.ends_with(" MAIN"))
        .unwrap_or_else(|| panic!("{top}"));
    assert_eq!(main_line.split_whitespace().nth(4), Some("2"), "{top}");
    let one = |dir: &str| {
        count_of(
            &ok(&run_drhook(d.path(), &["flamegraph", "--folded", dir])),
            "MAIN",
        )[0]
    };
    assert_eq!(
        count_of(&both, "MAIN")[0],
        one("a/drhook.prof.1.json") + one("b/drhook.prof.1.json")
    );
}

#[test]
fn diff_over_repeated_runs_gives_mean_spread_and_elapsed() {
    let d = tempfile::tempdir().unwrap();
    if !require(
        Command::new("cc").arg("--version").output().is_ok(),
        "a C compiler (cc)",
    ) {
        return;
    }
    build_c(d.path(), "vcycle_prog", &[]);
    // Two runs with MAIN 20 ms, two with 60 ms.
    for (name, ms) in [("a1", "20"), ("a2", "20"), ("b1", "60"), ("b2", "60")] {
        let dir = d.path().join(name);
        std::fs::create_dir(&dir).unwrap();
        std::fs::copy(d.path().join("vcycle_prog"), dir.join("vcycle_prog")).unwrap();
        run_vcycle(&dir, ms);
        std::fs::remove_file(dir.join("vcycle_prog")).unwrap();
    }
    let args = [
        "diff",
        "--json",
        "a1",
        "b1",
        "--before-run",
        "a2",
        "--after-run",
        "b2",
    ];
    let j: serde_json::Value = serde_json::from_str(&ok(&run_drhook(d.path(), &args))).unwrap();
    assert_eq!(j["before_runs"], 2);
    assert_eq!(j["after_runs"], 2);
    let main = j["routines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["routine"] == "MAIN")
        .unwrap();
    let s = &main["self_s"];
    let (b, a) = (s["before"].as_f64().unwrap(), s["after"].as_f64().unwrap());
    assert!(
        (0.018..0.03).contains(&b) && (0.058..0.075).contains(&a),
        "{s}"
    );
    for k in ["before_sd", "after_sd"] {
        let sd = s[k].as_f64().unwrap_or_else(|| panic!("no {k} in {s}"));
        assert!((0.0..0.01).contains(&sd), "{s}");
    }
    assert_eq!(main["calls"]["before_sd"], 0.0, "{main}");
    let text = ok(&run_drhook(
        d.path(),
        &args[..1]
            .iter()
            .chain(&args[2..])
            .copied()
            .collect::<Vec<_>>(),
    ));
    assert!(text.contains("2 runs, elapsed"), "{text}");
    assert!(text.contains("±"), "{text}");
    // One run a side: its elapsed time.
    let one = ok(&run_drhook(d.path(), &["diff", "a1", "b1"]));
    assert!(one.contains("1 task, elapsed 0.0"), "{one}");
}

/// `measured instrumentation cost per call pair: wall X ns` of a run's
/// stderr.
fn pair_cost_ns(err: &str) -> f64 {
    let l = err
        .lines()
        .find_map(|l| l.split("cost per call pair: wall ").nth(1))
        .unwrap_or_else(|| panic!("no pair cost in\n{err}"));
    l.split_whitespace().next().unwrap().parse().unwrap()
}

/// `hpmprof` (here without a hardware PMU, on getrusage or software
/// events) says what a counter read costs at start-up, counts its reads in
/// the measured cost per call that is removed from the times, and warns
/// when they were a noticeable part of the run.
#[test]
fn hpmprof_counts_its_reads_in_the_instrumentations_cost_and_says_so() {
    let d = tempfile::tempdir().unwrap();
    if !require(
        Command::new("cc").arg("--version").output().is_ok(),
        "a C compiler (cc)",
    ) {
        return;
    }
    build_c(d.path(), "calls_prog", &[]);
    let run = |opt: &str| {
        let o = run_with_env(
            d.path(),
            &d.path().join("calls_prog"),
            &["200000"],
            &[("DR_HOOK", "1"), ("DR_HOOK_OPT", opt)],
        );
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o)
    };
    let plain = pair_cost_ns(&run("prof"));
    let err = run("hpmprof");
    let read_us: f64 = err
        .split("one read of the counters costs ")
        .nth(1)
        .unwrap_or_else(|| panic!("no read cost in the notice:\n{err}"))
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!(err.contains("removed from the profile's times"), "{err}");
    let counted = pair_cost_ns(&err);
    // Two reads per call pair are part of the measured (and removed) cost.
    assert!(
        counted > plain + read_us * 1e3,
        "pair cost {counted} ns with hpmprof, {plain} ns without, read {read_us} us"
    );
    if read_us > 0.5 {
        // getrusage or software events: 400 000 reads are a large part.
        assert!(err.contains("Warning: hpmprof"), "{err}");
    }
    assert!(run("hpmprof,noself").contains("NOT removed"));
}
