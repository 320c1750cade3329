//! MPI for real: `mpirun -n 4` on a C and a Fortran MPI program
//! instrumented with Dr.Hook (libdrhook), one profile per rank (names and
//! `proc#` from the rank), and `drhook merge` checked against the per-rank
//! files. Skips (or fails under `DRHOOK_REQUIRE_FORTRAN=1`) when Open MPI
//! is not installed.

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use drhook_cli::profile::text::{self, ReadOptions};

fn works(cmd: &str, arg: &str) -> bool {
    Command::new(cmd)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success())
}

fn have_mpi(fortran: bool) -> bool {
    let c = works("mpirun", "--version") && works("mpicc", "--version");
    let ok = c && (!fortran || works("mpif90", "--version"));
    require(
        ok,
        if fortran {
            "Open MPI with Fortran (mpirun, mpif90; apt-get install openmpi-bin libopenmpi-dev)"
        } else {
            "Open MPI (mpirun, mpicc; apt-get install openmpi-bin libopenmpi-dev)"
        },
    )
}

/// `libdrhook.a`, built on first use.
fn libdrhook() -> PathBuf {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| cargo_build(&["-p", "drhook-ffi", "--lib"]));
    let p = target_dir().join("libdrhook.a");
    assert!(p.exists(), "{} not built", p.display());
    p
}

fn tool(dir: &Path, program: &str, args: &[&str]) {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {}\nfailed:\n{}{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn progs() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/progs")
}

/// Runs `exe` under `mpirun -n 4` in `dir` with `DR_HOOK_OPT=opt`.
fn mpirun4(dir: &Path, exe: &str, opt: &str) -> String {
    mpirun4_env(dir, exe, &[("DR_HOOK_OPT", opt)])
}

/// [`mpirun4`] with these variables (`DR_HOOK=1` besides).
fn mpirun4_env(dir: &Path, exe: &str, env: &[(&str, &str)]) -> String {
    let mut args = vec!["-n", "4"];
    // Open MPI refuses root unless told; CI runs as root.
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::getuid() } == 0 {
        args.push("--allow-run-as-root");
    }
    args.extend(["--oversubscribe", exe]);
    let mut vars = vec![("DR_HOOK", "1")];
    vars.extend_from_slice(env);
    let o = run_with_env(dir, Path::new("mpirun"), &args, &vars);
    let out = ok(&o);
    for r in 0..4 {
        assert!(out.contains(&format!("rank {r} of 4 done")), "{out}");
    }
    out
}

/// Per-rank values straight from the files: (calls, self, total) per
/// routine (one thread per rank).
fn rank_values(dir: &Path) -> Vec<HashMap<String, (u64, f64, f64)>> {
    (1..=4)
        .map(|n| {
            let p = text::read(
                &dir.join(format!("drhook.prof.{n}")),
                ReadOptions::default(),
            )
            .unwrap();
            assert_eq!(p.header.proc, n, "proc# from the rank");
            assert_eq!(p.header.nprocs, 4);
            assert_eq!(p.header.nthreads, 1);
            p.rows
                .iter()
                .map(|r| (r.routine.clone(), (r.calls, r.self_s, r.total_s)))
                .collect()
        })
        .collect()
}

/// `drhook merge --json` against the rank files, and the exact call
/// counts the programs make. With CPU profiles (per-thread CPU time, not
/// disturbed by 4 ranks sharing 2 cores and spinning in MPI calls) also
/// where the time is: rank 3 works four times as much as rank 0.
fn check_merge(dir: &Path, prefix: &str, cpu: bool) {
    let ranks = rank_values(dir);
    let j: serde_json::Value = serde_json::from_str(&ok(&run_drhook(
        dir,
        &[
            "merge",
            "--json",
            "drhook.prof.1",
            "drhook.prof.2",
            "drhook.prof.3",
            "drhook.prof.4",
        ],
    )))
    .unwrap();
    assert_eq!(j["ntasks"], 4);
    let routines = j["routines"].as_array().unwrap();
    let names: Vec<&str> = routines
        .iter()
        .map(|r| r["routine"].as_str().unwrap())
        .collect();
    for n in ["MAIN", "WORK", "EXCHANGE", "EVEN_ONLY"] {
        assert!(
            names.contains(&format!("{prefix}:{n}").as_str()),
            "{names:?}"
        );
    }
    for r in routines {
        let name = r["routine"].as_str().unwrap();
        for (k, key) in ["calls", "self_s", "total_s"].iter().enumerate() {
            let v: Vec<f64> = ranks
                .iter()
                .map(|m| {
                    m.get(name).map_or(0.0, |x| match k {
                        0 => x.0 as f64,
                        1 => x.1,
                        _ => x.2,
                    })
                })
                .collect();
            let mean = v.iter().sum::<f64>() / 4.0;
            let max = v.iter().copied().fold(f64::MIN, f64::max);
            let min = v.iter().copied().fold(f64::MAX, f64::min);
            let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 4.0).sqrt();
            let st = &r[key];
            let f = |s: &str| st[s].as_f64().unwrap();
            assert!((f("max") - max).abs() < 1e-12, "{name} {key} max");
            assert!((f("min") - min).abs() < 1e-12, "{name} {key} min");
            assert!((f("mean") - mean).abs() < 1e-12, "{name} {key} mean");
            assert!((f("stddev") - sd).abs() < 1e-9, "{name} {key} stddev");
        }
    }
    let get = |n: &str| {
        routines
            .iter()
            .find(|r| r["routine"] == format!("{prefix}:{n}"))
            .unwrap()
    };
    let work = get("WORK");
    assert_eq!(work["tasks"], 4);
    assert_eq!(
        (
            work["calls"]["min"].as_f64(),
            work["calls"]["max"].as_f64(),
            work["calls"]["mean"].as_f64()
        ),
        (Some(10.0), Some(40.0), Some(25.0))
    );
    assert_eq!(work["calls"]["max_task"], 4);
    if cpu {
        assert_eq!(
            work["self_s"]["max_task"], 4,
            "rank 3 works 4 times as much as rank 0"
        );
        // 40 / 25 with perfectly proportional times.
        let imb = work["imbalance"].as_f64().unwrap();
        assert!(imb > 1.4 && imb < 1.8, "{work}");
    }
    let even = get("EVEN_ONLY");
    assert_eq!(even["tasks"], 2, "only proc#1 and proc#3");
    assert_eq!(
        (
            even["calls"]["min"].as_f64(),
            even["calls"]["mean"].as_f64()
        ),
        (Some(0.0), Some(0.5))
    );
    let ex = get("EXCHANGE");
    assert_eq!(
        (ex["calls"]["min"].as_f64(), ex["calls"]["max"].as_f64()),
        (Some(3.0), Some(3.0))
    );
    // The text table, as a user sees it.
    let t = ok(&run_drhook(dir, &["merge", "."]));
    let kind = if cpu { "CPU-time" } else { "wall-clock" };
    assert!(
        t.starts_with(&format!(
            "4 tasks merged ({kind} profiles, proc#1-4), 4 routines"
        )),
        "{t}"
    );
    if cpu {
        let work_line = t
            .lines()
            .find(|l| l.ends_with(&format!("{prefix}:WORK")))
            .unwrap();
        assert!(
            work_line.contains(" 4:1 "),
            "max on task 4, thread 1: {work_line}"
        );
    }
    assert!(
        t.lines()
            .any(|l| l.ends_with(&format!("2/4  {prefix}:EVEN_ONLY"))),
        "{t}"
    );
    eprintln!("{t}");
}

/// Compiles `mpi_c.c` with libdrhook into `dir/mpi_c`.
fn build_mpi_c(dir: &Path) {
    let inc = workspace().join("drhook-ffi/include");
    let src = progs().join("mpi_c.c");
    let lib = libdrhook();
    tool(
        dir,
        "mpicc",
        &[
            "-std=c99",
            "-O1",
            "-Wall",
            &format!("-I{}", inc.display()),
            "-o",
            "mpi_c",
            src.to_str().unwrap(),
            lib.to_str().unwrap(),
            "-lpthread",
            "-ldl",
            "-lm",
        ],
    );
}

#[test]
fn mpirun_c_program_one_profile_per_rank_and_merge() {
    if !have_mpi(false) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    build_mpi_c(d.path());
    mpirun4(d.path(), "./mpi_c", "prof");
    for n in 1..=4 {
        let t = std::fs::read_to_string(d.path().join(format!("drhook.prof.{n}"))).unwrap();
        let first = t.lines().next().unwrap();
        assert!(
            first.starts_with("Profiling information for program='")
                && first.ends_with(&format!("mpi_c', proc#{n}:")),
            "{first}"
        );
    }
    check_merge(d.path(), "MPI_C", false);
}

/// The timeline under `mpirun -n 4`: one trace per rank (pid = the rank's
/// task number, the rank's calls), and `drhook trace merge` makes the
/// ranks processes of one trace, each moved by its own start time.
#[test]
fn mpirun_c_program_one_timeline_per_rank_and_trace_merge() {
    if !have_mpi(false) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    build_mpi_c(d.path());
    mpirun4(d.path(), "./mpi_c", "trace");
    let read = |name: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(d.path().join(name)).unwrap()).unwrap()
    };
    let mut firsts = Vec::new();
    for n in 1..=4u64 {
        let doc = read(&format!("drhook.trace.{n}.json"));
        assert_eq!(doc["otherData"]["proc"], n.to_string());
        assert_eq!(doc["otherData"]["nprocs"], "4");
        let tracks = trace_tracks(&doc);
        assert_eq!(tracks.keys().copied().collect::<Vec<_>>(), [(n, 1)]);
        let work = tracks[&(n, 1)]
            .iter()
            .filter(|s| s.path.last().unwrap() == "MPI_C:WORK")
            .count();
        assert_eq!(work as u64, 10 * n, "proc#{n}");
        let even = tracks[&(n, 1)]
            .iter()
            .any(|s| s.path.last().unwrap() == "MPI_C:EVEN_ONLY");
        assert_eq!(even, n % 2 == 1, "proc#{n}");
        let start: i128 = doc["otherData"]["start_unix_ns"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap();
        firsts.push((start, tracks[&(n, 1)][0].begin));
    }
    ok(&run_drhook(
        d.path(),
        &[
            "trace",
            "merge",
            "drhook.trace.1.json",
            "drhook.trace.2.json",
            "drhook.trace.3.json",
            "drhook.trace.4.json",
            "-o",
            "all.json",
        ],
    ));
    let all = read("all.json");
    let merged = trace_tracks(&all);
    assert_eq!(
        merged.keys().copied().collect::<Vec<_>>(),
        [(1, 1), (2, 1), (3, 1), (4, 1)],
        "ranks apart"
    );
    let earliest = firsts.iter().map(|f| f.0).min().unwrap();
    for (n, (start, begin)) in (1..=4u64).zip(&firsts) {
        let work = merged[&(n, 1)]
            .iter()
            .filter(|s| s.path.last().unwrap() == "MPI_C:WORK")
            .count();
        assert_eq!(work as u64, 10 * n);
        let shift = (start - earliest) as f64 / 1000.0;
        let got = merged[&(n, 1)][0].begin;
        assert!(
            (got - (begin + shift)).abs() < 0.002,
            "proc#{n}: {got} vs {begin} + {shift}"
        );
    }
}

#[test]
fn mpirun_fortran_program_one_profile_per_rank_and_merge() {
    if !have_mpi(true) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let yom = workspace().join("drhook-ffi/fortran/yomhook.F90");
    let src = progs().join("mpi_f.F90");
    let lib = libdrhook();
    tool(d.path(), "mpif90", &["-O1", "-c", yom.to_str().unwrap()]);
    tool(
        d.path(),
        "mpif90",
        &[
            "-O1",
            "-o",
            "mpi_f",
            src.to_str().unwrap(),
            "yomhook.o",
            lib.to_str().unwrap(),
            "-lpthread",
            "-ldl",
            "-lm",
        ],
    );
    mpirun4(d.path(), "./mpi_f", "cpuprof");
    for n in 1..=4 {
        let t = std::fs::read_to_string(d.path().join(format!("drhook.prof.{n}"))).unwrap();
        assert!(
            t.lines()
                .next()
                .unwrap()
                .ends_with(&format!("mpi_f', proc#{n}:")),
            "{t}"
        );
    }
    check_merge(d.path(), "MPI_F", true);
}

/// `drhook json --hatchet` of an MPI job is one call tree indexed by
/// (node, rank, thread) with the run's metadata (issue 28): Hatchet reads
/// it, `drop_index_levels` folds ranks into nodes, a load-imbalance
/// computation over ranks finds WORK's 10/20/30/40 calls (max/mean 1.6),
/// and Thicket compares two runs told apart by their `DR_HOOK_META` pairs.
#[test]
fn hatchet_and_thicket_read_one_tree_per_job_with_rank_and_thread_index() {
    if !have_mpi(false) {
        return;
    }
    let python = |m: &str| {
        Command::new("python3")
            .args(["-c", &format!("import {m}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !require(
        python("hatchet") && python("thicket"),
        "python3 with hatchet and thicket (pip install llnl-hatchet llnl-thicket)",
    ) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    build_mpi_c(d.path());
    let mut files = Vec::new();
    for case in ["a", "b"] {
        let run = d.path().join(case);
        std::fs::create_dir(&run).unwrap();
        let meta = format!("case={case}, grid=O96");
        mpirun4_env(
            &run,
            "../mpi_c",
            &[
                ("DR_HOOK_OPT", "prof,callpath,json"),
                ("DR_HOOK_META", &meta),
            ],
        );
        let out = d.path().join(format!("{case}.json"));
        ok(&run_drhook(
            d.path(),
            &["json", "--hatchet", case, "-o", out.to_str().unwrap()],
        ));
        files.push(out);
    }
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    assert_eq!(
        v["dataframe_indices"],
        serde_json::json!(["node", "rank", "thread"])
    );
    let md = &v["metadata"];
    assert_eq!(md["case"], "a", "{md}");
    assert_eq!(md["grid"], "O96", "{md}");
    assert_eq!(md["ranks"], 4, "{md}");
    assert!(md["command"].as_str().unwrap().ends_with("mpi_c"), "{md}");
    assert!(
        md["dr_hook_opt"].as_str().unwrap().contains("callpath"),
        "{md}"
    );
    assert!(!md["hosts"].as_str().unwrap().is_empty(), "{md}");
    let script = r#"
import sys, json
import hatchet as ht
from thicket import Thicket

def read(path):
    with open(path) as f:
        spec = json.load(f)
    gf = ht.GraphFrame.from_json(json.dumps(spec))
    gf.metadata = spec["metadata"]
    return gf

gf = read(sys.argv[1])
df = gf.dataframe
print("index", list(df.index.names))
print("ranks", sorted(set(df.index.get_level_values("rank"))))
work = df[df["name"] == "MPI_C:WORK"]
print("work_calls", sorted(int(c) for c in work["calls"]))
# Load imbalance over ranks (Hatchet's and Thicket's recipe): per node,
# max over ranks / mean over ranks.
per = work.groupby(level="node")["calls"]
print("imbalance", round(float((per.max() / per.mean()).iloc[0]), 3))
roots = len(gf.graph.roots)
gf.drop_index_levels(function=sum)
print("dropped", list(gf.dataframe.index.names), roots)
w = gf.dataframe[gf.dataframe["name"] == "MPI_C:WORK"]
print("work_sum", len(w), int(w["calls"].iloc[0]))

tk = Thicket.reader_dispatch(read, False, True, True, sys.argv[1:])
print("profiles", len(tk.profile), sorted(tk.metadata["case"]))
calls = tk.dataframe[tk.dataframe["name"] == "MPI_C:WORK"]["calls"]
by_case = calls.groupby(level="profile").sum().rename(index=tk.metadata["case"].to_dict())
print("compare", {k: int(v) for k, v in sorted(by_case.items())})
"#;
    let o = Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(&files)
        .output()
        .unwrap();
    let out = ok(&o);
    let want = [
        "index ['node', 'rank', 'thread']",
        "ranks [0, 1, 2, 3]",
        "work_calls [10, 20, 30, 40]",
        "imbalance 1.6",
        "dropped ['node'] 1",
        "work_sum 1 100",
        "profiles 2 ['a', 'b']",
        "compare {'a': 100, 'b': 100}",
    ];
    for w in want {
        assert!(out.lines().any(|l| l == w), "no {w:?} in\n{out}");
    }
}
