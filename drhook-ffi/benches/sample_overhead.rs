//! What sampling (`DR_HOOK_OPT=sample`, `drhook run --sample`) costs a
//! CPU-bound program: `tests/progs/attach/shares.c` (4 threads, ~1.2 s of
//! CPU in all, unmodified) run under the preload library with and without
//! sampling at 1 kHz, and under `perf record -F 1000 -e cpu-clock
//! --call-graph fp` where perf works; rounds interleaved, medians of the
//! CPU time (user + system of the whole command, perf's own process
//! included) and of the wall time.
//!
//! `cargo bench -p drhook-ffi --bench sample_overhead`
//! (`DRHOOK_BENCH_QUICK=1`: fewer rounds).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

mod common;
use common::target_dir;

fn cpu_of_children() -> f64 {
    // SAFETY: plain data filled by getrusage.
    let mut r: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid out-pointer.
    unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut r) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 * 1e-6;
    t(r.ru_utime) + t(r.ru_stime)
}

struct Config {
    name: &'static str,
    prefix: Vec<String>,
    env: Vec<(&'static str, String)>,
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Samples recorded by the last sampled run in `dir`.
fn samples(dir: &Path) -> u64 {
    let t = std::fs::read_to_string(dir.join("drhook.prof.1-sample.json")).unwrap_or_default();
    let v: serde_json::Value = serde_json::from_str(&t).unwrap_or_default();
    v["samples"].as_u64().unwrap_or(0)
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let quick = std::env::var("DRHOOK_BENCH_QUICK").is_ok_and(|v| v == "1");
    let rounds = if quick { 3 } else { 9 };
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let st = Command::new(env!("CARGO"))
        .args([
            "build",
            "--release",
            "-p",
            "drhook-preload",
            "--lib",
            "--manifest-path",
        ])
        .arg(dir.join("..").join("Cargo.toml"))
        .arg("--target-dir")
        .arg(target_dir().parent().unwrap())
        .status()
        .expect("cargo");
    assert!(st.success(), "building the preload library failed");
    let preload = target_dir().join("libdrhook_preload.so");
    let work = tempfile::tempdir().unwrap();
    let exe: PathBuf = work.path().join("shares");
    let src = dir.join("tests/progs/attach/shares.c");
    let ok = Command::new("gcc")
        .args(["-O1", "-g", "-fno-omit-frame-pointer", "-fno-inline", "-o"])
        .arg(&exe)
        .arg(&src)
        .arg("-lpthread")
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "gcc failed on {}", src.display());
    let pre = |opt: &str| {
        vec![
            ("LD_PRELOAD", preload.display().to_string()),
            ("DR_HOOK", "1".to_string()),
            ("DR_HOOK_OPT", opt.to_string()),
            ("DR_HOOK_TRAPFPE", "0".to_string()),
            ("DR_HOOK_SILENT", "1".to_string()),
        ]
    };
    let mut configs = vec![
        Config {
            name: "plain",
            prefix: vec![],
            env: vec![],
        },
        Config {
            name: "drhook run (prof)",
            prefix: vec![],
            env: pre("prof"),
        },
        Config {
            name: "drhook run --sample (1 kHz)",
            prefix: vec![],
            env: pre("prof,sample"),
        },
    ];
    let perf_data = work.path().join("perf.data");
    let perf_ok = Command::new("perf")
        .args(["record", "-q", "-F", "1000", "-e", "cpu-clock", "-o"])
        .arg(&perf_data)
        .args(["--", "true"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if perf_ok {
        configs.push(Config {
            name: "perf record -F 1000 -e cpu-clock --call-graph fp",
            prefix: [
                "perf",
                "record",
                "-q",
                "-F",
                "1000",
                "-e",
                "cpu-clock",
                "--call-graph",
                "fp",
                "-o",
            ]
            .map(String::from)
            .into_iter()
            .chain([perf_data.display().to_string(), "--".into()])
            .collect(),
            env: vec![],
        });
    } else {
        println!("perf record -e cpu-clock does not work here: its column is skipped");
    }
    let units = "60";
    let mut cpu = vec![Vec::new(); configs.len()];
    let mut wall = vec![Vec::new(); configs.len()];
    let mut nsamples = Vec::new();
    for _ in 0..rounds {
        for (i, c) in configs.iter().enumerate() {
            let (prog, args): (String, Vec<String>) = match c.prefix.split_first() {
                Some((p, rest)) => (
                    p.clone(),
                    rest.iter()
                        .cloned()
                        .chain([exe.display().to_string(), units.into()])
                        .collect(),
                ),
                None => (exe.display().to_string(), vec![units.into()]),
            };
            let c0 = cpu_of_children();
            let t0 = Instant::now();
            let st = Command::new(&prog)
                .args(&args)
                .envs(c.env.iter().map(|(k, v)| (*k, v)))
                .current_dir(work.path())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .expect("run");
            assert!(st.success(), "{}: {st}", c.name);
            wall[i].push(t0.elapsed().as_secs_f64());
            cpu[i].push(cpu_of_children() - c0);
            if c.name.contains("--sample") {
                nsamples.push(samples(work.path()) as f64);
            }
        }
    }
    let cpus: Vec<f64> = cpu.iter_mut().map(|v| median(v)).collect();
    let walls: Vec<f64> = wall.iter_mut().map(|v| median(v)).collect();
    let n = median(&mut nsamples);
    println!("| configuration | CPU s (median) | vs drhook run (prof) | wall s (median) |");
    println!("|---|---:|---:|---:|");
    for (i, c) in configs.iter().enumerate() {
        println!(
            "| {} | {:.3} | {:+.2}% | {:.3} |",
            c.name,
            cpus[i],
            (cpus[i] / cpus[1] - 1.0) * 100.0,
            walls[i]
        );
    }
    println!(
        "\nsamples per sampled run (median): {n:.0}; CPU per sample: {:.2} us",
        (cpus[2] - cpus[1]) / n.max(1.0) * 1e6
    );
}
