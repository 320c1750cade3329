//! `drhook io` over a whole job (issue 23): real reports from real runs
//! under `drhook run --opt io` — a shell's process tree (`dd` children
//! appending to one shared file and writing their own, `cat` reading the
//! shared one) and, when Open MPI is installed, 4 ranks of a C program
//! (`progs/mpi_io.c`) writing one shared file and one file each. Expected
//! values come from what the programs did (sizes) and, for the
//! reduction, from the per-process reports read here independently
//! (sums, largest, smallest, fastest, slowest, variances).

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;
use serde_json::Value;

/// The preload library of this build (built on first use).
fn preload() -> PathBuf {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| cargo_build(&["-p", "drhook-preload", "--lib"]));
    let p = target_dir().join("libdrhook_preload.so");
    assert!(p.exists(), "{} not built", p.display());
    p
}

/// `drhook run --opt io -- args...` in `dir`.
fn run_io(dir: &Path, args: &[&str]) -> String {
    let lib = preload();
    let mut all = vec![
        "run",
        "--no-out-dir",
        "--preload",
        lib.to_str().unwrap(),
        "--opt",
        "io",
        "--",
    ];
    all.extend(args);
    let o = run_with_env(
        dir,
        Path::new(env!("CARGO_BIN_EXE_drhook")),
        &all,
        &[("LC_ALL", "C")],
    );
    ok(&o)
}

/// Every `drhook.io.*` report in `dir`: (file name, document).
fn reports(dir: &Path) -> Vec<(String, Value)> {
    let mut v: Vec<(String, Value)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("drhook.io."))
        .map(|n| {
            let doc = serde_json::from_str(&std::fs::read_to_string(dir.join(&n)).unwrap())
                .unwrap_or_else(|e| panic!("{n}: {e}"));
            (n, doc)
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

fn json(dir: &Path, args: &[&str]) -> Value {
    let mut all = vec!["io", "--json"];
    all.extend(args);
    serde_json::from_str(&ok(&run_drhook(dir, &all))).unwrap()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a u64: {v}"))
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The job summary's record of the file whose path ends with `/name`.
fn job_file<'a>(s: &'a Value, name: &str) -> &'a Value {
    let want = format!("/{name}");
    let all: Vec<&Value> = s["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["path"].as_str().unwrap().ends_with(&want))
        .collect();
    assert_eq!(all.len(), 1, "{name}: {all:#?}");
    all[0]
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-12)
}

/// Checks the reduction of the file ending in `/name` against the
/// per-process records of `reps` (the reports summarized): each process
/// (pid; its images before an `exec` added) a unit.
fn check_reduction(s: &Value, reps: &[(String, Value)], name: &str) -> usize {
    let want = format!("/{name}");
    // pid -> (task, bytes, time, records)
    let mut per: BTreeMap<u64, (u64, u64, f64, Vec<&Value>)> = BTreeMap::new();
    for (_, r) in reps {
        for x in r["files"].as_array().unwrap() {
            if !x["path"].as_str().unwrap().ends_with(&want) {
                continue;
            }
            let e = per
                .entry(u(&r["pid"]))
                .or_insert((u(&r["task"]), 0, 0.0, Vec::new()));
            if r["ending"] != "exec" && !r["ending"].as_str().unwrap().starts_with("Exec") {
                e.0 = u(&r["task"]);
            }
            e.1 += u(&x["read_bytes"])
                + u(&x["write_bytes"])
                + u(&x["stdio_read_bytes"])
                + u(&x["stdio_write_bytes"]);
            e.2 += [
                "read_time",
                "write_time",
                "meta_time",
                "open_time",
                "close_time",
            ]
            .iter()
            .map(|k| f(&x[*k]))
            .sum::<f64>();
            e.3.push(x);
        }
    }
    let j = job_file(s, name);
    let recs: Vec<&Value> = per.values().flat_map(|e| e.3.iter().copied()).collect();
    let sum = |k: &str| recs.iter().map(|x| u(&x[k])).sum::<u64>();
    let max = |k: &str| recs.iter().map(|x| u(&x[k])).max().unwrap();
    for k in [
        "opens",
        "closes",
        "reads",
        "writes",
        "read_bytes",
        "write_bytes",
        "seq_reads",
        "seq_writes",
        "consec_reads",
        "consec_writes",
        "meta_ops",
        "seeks",
    ] {
        assert_eq!(u(&j[k]), sum(k), "{name}: {k}");
    }
    for k in ["max_read", "max_write", "max_byte_read", "max_byte_written"] {
        if recs[0].get(k).is_some() {
            assert_eq!(u(&j[k]), max(k), "{name}: {k}");
        }
    }
    let min_write = recs.iter().filter_map(|x| x["min_write"].as_u64()).min();
    assert_eq!(j["min_write"].as_u64(), min_write, "{name}: min_write");
    for h in ["read_hist", "write_hist"] {
        let want: Vec<u64> = (0..10)
            .map(|b| recs.iter().map(|x| u(&x[h][b])).sum())
            .collect();
        let got: Vec<u64> = j[h].as_array().unwrap().iter().map(u).collect();
        assert_eq!(got, want, "{name}: {h}");
    }
    let first = recs
        .iter()
        .map(|x| f(&x["first"]))
        .filter(|&t| t > 0.0)
        .fold(f64::INFINITY, f64::min);
    assert!(close(f(&j["first"]), first), "{name}: first");
    let last = recs.iter().map(|x| f(&x["last"])).fold(0.0, f64::max);
    assert!(close(f(&j["last"]), last), "{name}: last");
    assert_eq!(u(&j["processes"]), per.len() as u64, "{name}");
    if per.len() > 1 {
        assert_eq!(j["shared"], true, "{name}");
        let n = per.len() as f64;
        let times: Vec<f64> = per.values().map(|e| e.2).collect();
        let bytes: Vec<f64> = per.values().map(|e| e.1 as f64).collect();
        let var = |xs: &[f64]| {
            let m = xs.iter().sum::<f64>() / n;
            xs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / n
        };
        assert!(
            close(f(&j["variance_time"]), var(&times)),
            "{name}: variance of time {} vs {}",
            j["variance_time"],
            var(&times)
        );
        assert!(
            close(f(&j["variance_bytes"]), var(&bytes)),
            "{name}: variance of bytes {} vs {}",
            j["variance_bytes"],
            var(&bytes)
        );
        let (lo_pid, lo) = per
            .iter()
            .min_by(|a, b| a.1.2.total_cmp(&b.1.2))
            .map(|(p, e)| (*p, e))
            .unwrap();
        let (hi_pid, hi) = per
            .iter()
            .max_by(|a, b| a.1.2.total_cmp(&b.1.2))
            .map(|(p, e)| (*p, e))
            .unwrap();
        assert_eq!(u(&j["fastest"]["pid"]), lo_pid, "{name}: fastest");
        assert_eq!(u(&j["fastest"]["bytes"]), lo.1, "{name}: fastest bytes");
        assert_eq!(u(&j["fastest"]["task"]), lo.0, "{name}: fastest task");
        assert!(close(f(&j["fastest"]["time"]), lo.2), "{name}");
        assert_eq!(u(&j["slowest"]["pid"]), hi_pid, "{name}: slowest");
        assert_eq!(u(&j["slowest"]["bytes"]), hi.1, "{name}: slowest bytes");
        assert!(close(f(&j["slowest"]["time"]), hi.2), "{name}");
    } else {
        assert_eq!(j["shared"], false, "{name}");
        assert!(j.get("fastest").is_none() && j.get("variance_time").is_none());
    }
    per.len()
}

/// The job's totals equal the processes' sums, and the root process's
/// "with the processes below it" holds them all.
fn check_totals(s: &Value, reps: &[(String, Value)]) {
    let mut read = 0;
    let mut written = 0;
    for (_, r) in reps {
        for x in r["files"].as_array().unwrap() {
            read += u(&x["read_bytes"]) + u(&x["stdio_read_bytes"]);
            written += u(&x["write_bytes"]) + u(&x["stdio_write_bytes"]);
        }
    }
    let t = &s["totals"];
    assert_eq!(u(&t["read_bytes"]) + u(&t["stdio_read_bytes"]), read);
    assert_eq!(u(&t["write_bytes"]) + u(&t["stdio_write_bytes"]), written);
    assert_eq!(s["processes"].as_array().unwrap().len(), reps.len());
    let root = &s["processes"][0];
    assert_eq!(root["depth"], 0);
    let w = &root["with_children"];
    assert_eq!(u(&w["read_bytes"]) + u(&w["stdio_read_bytes"]), read);
    assert_eq!(u(&w["write_bytes"]) + u(&w["stdio_write_bytes"]), written);
}

fn command<'a>(s: &'a Value, name: &str) -> &'a Value {
    s["commands"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["command"] == name)
        .unwrap_or_else(|| panic!("no command {name}: {:#}", s["commands"]))
}

#[test]
fn job_summary_of_a_process_tree() {
    let d = tempfile::tempdir().unwrap();
    // Three dd append 1000, 2000 and 3000 B to shared.dat one after the
    // other; three more, in the background, write 500 B to their own
    // file each; cat reads shared.dat back.
    let script = "for i in 1 2 3; do \
        dd if=/dev/zero of=shared.dat bs=$((i*1000)) count=1 oflag=append conv=notrunc status=none; \
        dd if=/dev/zero of=own$i.dat bs=500 count=1 status=none & \
        done; wait; cat shared.dat > /dev/null";
    run_io(d.path(), &["sh", "-c", script]);
    let reps = reports(d.path());
    let s = json(d.path(), &["."]);
    assert_eq!(s["format"], "drhook-io-job");
    assert_eq!(s["tasks"], serde_json::json!([1]));

    let sh = job_file(&s, "shared.dat");
    assert_eq!(u(&sh["write_bytes"]), 6000);
    assert_eq!(u(&sh["writes"]), 3);
    assert_eq!(u(&sh["read_bytes"]), 6000);
    assert_eq!(u(&sh["bytes"]), 12000);
    assert_eq!(u(&sh["max_write"]), 3000);
    assert_eq!(sh["min_write"], 1000);
    // Three dd and cat: bytes 1000, 2000, 3000, 6000 (mean 3000).
    assert_eq!(check_reduction(&s, &reps, "shared.dat"), 4);
    assert_eq!(f(&sh["variance_bytes"]), 3.5e6);
    assert!(sh["slowest"]["command"].as_str().is_some());
    for i in 1..=3 {
        let name = format!("own{i}.dat");
        let o = job_file(&s, &name);
        assert_eq!((u(&o["write_bytes"]), u(&o["writes"])), (500, 1), "{name}");
        assert_eq!(check_reduction(&s, &reps, &name), 1);
    }
    // Per command: six dd wrote 7500 B (and nothing else).
    let dd = command(&s, "dd");
    assert_eq!(u(&dd["processes"]), 6);
    assert_eq!(u(&dd["totals"]["write_bytes"]), 7500);
    assert_eq!(u(&command(&s, "cat")["processes"]), 1);
    assert!(u(&command(&s, "cat")["totals"]["read_bytes"]) >= 6000);
    check_totals(&s, &reps);
    // The tree: sh at the root, every other process below it.
    let procs = s["processes"].as_array().unwrap();
    assert_eq!(procs[0]["command"], "sh");
    assert!(procs[1..].iter().all(|p| u(&p["depth"]) >= 1));
    // Top lists name the shared file first by bytes.
    assert!(
        s["top_by_bytes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p.as_str().unwrap().ends_with("/shared.dat"))
    );

    // Text: the summary by default for several reports, the tables with
    // --per-process, one table for one report.
    let text = ok(&run_drhook(d.path(), &["io", "."]));
    assert!(text.starts_with("I/O of a job: "), "{text}");
    assert!(text.contains("/shared.dat: 4 processes (1 task)"), "{text}");
    assert!(text.contains("variance across processes: time "), "{text}");
    assert!(text.contains("\nCommands\n"), "{text}");
    let per = ok(&run_drhook(d.path(), &["io", "--per-process", "."]));
    assert_eq!(per.matches("I/O of ").count(), reps.len(), "{per}");
    assert!(per.contains("ended: return 0"), "{per}");
    let one = ok(&run_drhook(d.path(), &["io", "drhook.io.1"]));
    assert!(one.starts_with("I/O of sh (pid "), "{one}");
    let one = json(d.path(), &["--summary", "drhook.io.1"]);
    assert_eq!(one["processes"].as_array().unwrap().len(), 1);
}

#[test]
fn io_profiles_read_by_json_and_top() {
    let d = tempfile::tempdir().unwrap();
    run_io(
        d.path(),
        &[
            "sh",
            "-c",
            "dd if=/dev/zero of=a.dat bs=3000 count=2 status=none; dd if=a.dat of=b.dat bs=1000 status=none",
        ],
    );
    let v = schema();
    let mut checked = 0;
    let (mut profs, mut written) = (Vec::new(), 0u64);
    for (name, rep) in reports(d.path()) {
        if rep["command"] != "dd" {
            continue;
        }
        // drhook.io.1.dd.PID -> drhook.prof.1.dd.PID-io
        let prof = format!("{}-io", name.replacen("drhook.io.", "drhook.prof.", 1));
        let doc: Value =
            serde_json::from_str(&ok(&run_drhook(d.path(), &["json", &prof]))).unwrap();
        assert_valid(&v, &doc);
        let task = &doc["tasks"][0];
        assert_eq!(task["kind"], "io");
        let rows = task["rows"].as_array().unwrap();
        let sum = |k: &str| rows.iter().map(|r| u(&r["io"][k])).sum::<u64>();
        // The per-routine profile and the per-file report of one process
        // count the same calls.
        let files = rep["files"].as_array().unwrap();
        let fsum = |k: &str| files.iter().map(|x| u(&x[k])).sum::<u64>();
        assert_eq!(
            sum("read_bytes"),
            fsum("read_bytes") + fsum("stdio_read_bytes"),
            "{prof}"
        );
        assert_eq!(
            sum("write_bytes"),
            fsum("write_bytes") + fsum("stdio_write_bytes"),
            "{prof}"
        );
        assert_eq!(sum("reads"), fsum("reads"), "{prof}");
        assert_eq!(sum("writes"), fsum("writes"), "{prof}");
        assert_eq!(sum("write_bytes"), 6000, "{prof}: {doc:#}");
        written += sum("write_bytes");
        let top = ok(&run_drhook(d.path(), &["top", "--width", "100", &prof]));
        assert!(top.contains("I/O profile"), "{top}");
        assert!(top.contains("main@1"), "{top}");
        assert!(top.lines().all(|l| l.chars().count() <= 100), "{top}");
        checked += 1;
        profs.push(prof);
    }
    assert_eq!(checked, 2);
    // merge makes the I/O table of the processes (column 25: the sum of
    // the bytes written).
    let mut a = vec!["merge"];
    a.extend(profs.iter().map(String::as_str));
    let m = ok(&run_drhook(d.path(), &a));
    assert!(
        m.starts_with("2 tasks merged (I/O profiles, proc#1)"),
        "{m}"
    );
    let col: u64 = m
        .lines()
        .skip(3)
        .map(|l| {
            l.split_whitespace()
                .nth(25)
                .unwrap()
                .parse::<u64>()
                .unwrap()
        })
        .sum();
    assert_eq!(col, written, "{m}");
}

fn works(cmd: &str, arg: &str) -> bool {
    Command::new(cmd)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn job_summary_of_four_mpi_ranks() {
    if !require(
        works("mpirun", "--version") && works("mpicc", "--version"),
        "Open MPI (mpirun, mpicc; apt-get install openmpi-bin libopenmpi-dev)",
    ) {
        return;
    }
    let d = tempfile::tempdir().unwrap();
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/progs/mpi_io.c");
    let o = Command::new("mpicc")
        .args(["-O1", "-o", "mpi_io", src.to_str().unwrap()])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let mut args = vec!["mpirun", "-n", "4"];
    // SAFETY: getuid has no preconditions.
    if unsafe { libc::getuid() } == 0 {
        args.push("--allow-run-as-root");
    }
    args.extend(["--oversubscribe", "./mpi_io"]);
    let out = run_io(d.path(), &args);
    assert!(out.contains("read 10240"), "{out}");
    let all = reports(d.path());
    let ranks: Vec<(String, Value)> = all
        .iter()
        .filter(|(_, r)| r["command"] == "mpi_io")
        .cloned()
        .collect();
    let mut tasks: Vec<u64> = ranks.iter().map(|(_, r)| u(&r["task"])).collect();
    tasks.sort_unstable();
    assert_eq!(tasks, [1, 2, 3, 4], "one report per rank");

    // The four ranks' reports named one by one.
    let names: Vec<&str> = ranks.iter().map(|(n, _)| n.as_str()).collect();
    let s = json(d.path(), &names);
    assert_eq!(s["tasks"], serde_json::json!([1, 2, 3, 4]));
    let sh = job_file(&s, "shared.dat");
    // (r+1) KiB written by rank r; read back by rank 0 in 4096, 4096,
    // 2048 and the read of 0 at the end.
    assert_eq!((u(&sh["write_bytes"]), u(&sh["writes"])), (10240, 4));
    assert_eq!((u(&sh["read_bytes"]), u(&sh["reads"])), (10240, 4));
    assert_eq!((u(&sh["tasks"]), u(&sh["processes"])), (4, 4));
    assert_eq!(u(&sh["max_write"]), 4096);
    assert_eq!(sh["min_write"], 1024);
    if sh.get("max_byte_written").is_some() {
        assert_eq!(u(&sh["max_byte_written"]), 10239);
        assert_eq!(u(&sh["max_byte_read"]), 10239);
    }
    // Sizes by bin (each bin holds its upper edge): 1024 in 101-1K,
    // 2048, 3072, 4096 in 1K-10K.
    assert_eq!(u(&sh["write_hist"][1]), 1);
    assert_eq!(u(&sh["write_hist"][2]), 3);
    assert_eq!(check_reduction(&s, &ranks, "shared.dat"), 4);
    // Bytes per rank: 1 KiB + 10 KiB read, 2, 3, 4 KiB (mean 5 KiB).
    let b = [11264.0f64, 2048.0, 3072.0, 4096.0];
    let want = b.iter().map(|x| (x - 5120.0).powi(2)).sum::<f64>() / 4.0;
    assert_eq!(f(&sh["variance_bytes"]), want);
    for r in 0..4u64 {
        let name = format!("rank{r}.dat");
        let o = job_file(&s, &name);
        assert_eq!(
            (u(&o["write_bytes"]), u(&o["writes"])),
            (200 * (r + 1), 2),
            "{name}"
        );
        assert_eq!(check_reduction(&s, &ranks, &name), 1);
    }
    let c = command(&s, "mpi_io");
    assert_eq!(u(&c["processes"]), 4);
    check_totals_of_ranks(&s, &ranks);

    // The whole directory (the launcher too): the same shared record.
    let whole = json(d.path(), &["."]);
    let w = job_file(&whole, "shared.dat");
    for k in ["write_bytes", "read_bytes", "processes", "tasks", "bytes"] {
        assert_eq!(w[k], sh[k], "{k}");
    }
    assert_eq!(w["variance_bytes"], sh["variance_bytes"]);
    check_totals(&whole, &all);
    assert_eq!(u(&command(&whole, "mpi_io")["processes"]), 4);
    let text = ok(&run_drhook(d.path(), &["io", "."]));
    assert!(
        text.contains("/shared.dat: 4 processes (4 tasks)"),
        "{text}"
    );
}

/// The ranks' totals (no common root among them: each is a root).
fn check_totals_of_ranks(s: &Value, ranks: &[(String, Value)]) {
    let written: u64 = ranks
        .iter()
        .flat_map(|(_, r)| r["files"].as_array().unwrap().iter())
        .map(|x| u(&x["write_bytes"]) + u(&x["stdio_write_bytes"]))
        .sum();
    let t = &s["totals"];
    assert_eq!(u(&t["write_bytes"]) + u(&t["stdio_write_bytes"]), written);
    let procs = s["processes"].as_array().unwrap();
    assert_eq!(procs.len(), 4);
    assert!(procs.iter().all(|p| p["depth"] == 0));
}
