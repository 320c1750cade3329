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

/// Builds and runs `omp_prog` with `DR_HOOK_OPT=prof,json`; the elapsed
/// time measured around the run.
fn run_omp(dir: &Path) -> Option<f64> {
    if !have_openmp(dir) {
        return None;
    }
    let inc = workspace().join("drhook-ffi/include");
    let src = workspace().join("drhook-cli/tests/progs/omp_prog.c");
    let lib = libdrhook();
    let out = Command::new("cc")
        .args(["-std=c99", "-O1", "-fopenmp"])
        .arg(format!("-I{}", inc.display()))
        .args(["-o", "omp_prog"])
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
        assert!(r["imbalance_pct"].is_number(), "{r}");
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
