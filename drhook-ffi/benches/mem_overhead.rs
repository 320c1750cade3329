//! What the memory profile costs (issue 11), in one run on this machine:
//!
//! * `malloc(64)` + `free` pairs of a C program (`progs/bench_malloc.c`):
//!   plain; under the preload library with Dr.Hook on but no memory token
//!   (the malloc family untracked); with `DR_HOOK_OPT=prof,memprof`
//!   (tracked, per routine); under heaptrack (Debian package; skipped with
//!   a message when absent);
//! * Dr.Hook enter/exit pairs of a leaf routine (the program linked with
//!   `libdrhook.so`): `prof` vs `prof,memprof`;
//! * both in instructions per operation under callgrind (difference of
//!   two run lengths: start-up and the profile write cancel out).
//!
//! `cargo bench -p drhook-ffi --bench mem_overhead`

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

fn build(work: &Path) -> (PathBuf, PathBuf) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = target_dir();
    let st = Command::new(env!("CARGO"))
        .args([
            "build",
            "--release",
            "-p",
            "drhook-ffi",
            "--lib",
            "-p",
            "drhook-preload",
        ])
        .arg("--manifest-path")
        .arg(dir.join("..").join("Cargo.toml"))
        .arg("--target-dir")
        .arg(target.parent().unwrap())
        .status()
        .expect("cargo");
    assert!(st.success(), "building the libraries failed");
    let exe = work.join("bench_malloc");
    let st = Command::new("gcc")
        .args(["-O2", "-o"])
        .arg(&exe)
        .arg(format!("-I{}", dir.join("include").display()))
        .arg(dir.join("benches/progs/bench_malloc.c"))
        .arg(format!("-L{}", target.display()))
        .arg(format!("-Wl,-rpath,{}", target.display()))
        .args(["-ldrhook", "-lpthread", "-ldl", "-lm"])
        .status()
        .expect("gcc");
    assert!(st.success(), "compiling bench_malloc.c failed");
    (exe, target.join("libdrhook_preload.so"))
}

fn have(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

struct Config {
    name: &'static str,
    env: Vec<(&'static str, String)>,
    /// Program to run the benchmark under (heaptrack).
    under: Option<&'static str>,
}

fn command(work: &Path, c: &Config, exe: &Path, args: &[&str], grind: bool) -> Command {
    let mut cmd = if let Some(u) = c.under {
        let mut x = Command::new(u);
        x.arg(exe);
        x
    } else if grind {
        let mut x = Command::new("valgrind");
        x.args(["--tool=callgrind", "--callgrind-out-file=/dev/null"])
            .arg(exe);
        x
    } else {
        Command::new(exe)
    };
    cmd.args(args).current_dir(work).stdin(Stdio::null());
    for (k, _) in std::env::vars() {
        if k.starts_with("DR_HOOK") || k.starts_with("DRHOOK_") || k == "LD_PRELOAD" {
            cmd.env_remove(k);
        }
    }
    cmd.env("DR_HOOK_SILENT", "1");
    for (k, v) in &c.env {
        cmd.env(k, v);
    }
    cmd
}

/// ns per operation printed by the program (median of its batches).
fn ns(work: &Path, c: &Config, exe: &Path, mode: &str, n: &str) -> Option<f64> {
    let out = command(work, c, exe, &[mode, n], false).output().ok()?;
    if !out.status.success() {
        eprintln!("{}: {}", c.name, String::from_utf8_lossy(&out.stderr));
        return None;
    }
    // The program's line comes first (heaptrack prints its own after).
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.trim().parse().ok())
}

/// Instructions per operation under callgrind (7 batches of n, two
/// lengths: the difference is the loop's alone).
fn instructions(work: &Path, c: &Config, exe: &Path, mode: &str) -> Option<f64> {
    if c.under.is_some() {
        return None;
    }
    let ir = |n: &str| -> Option<f64> {
        let out = command(work, c, exe, &[mode, n], true).output().ok()?;
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .find_map(|l| l.split("Collected :").nth(1)?.trim().parse::<f64>().ok())
    };
    let (a, b) = (ir("20000")?, ir("60000")?);
    Some((b - a) / (7.0 * 40000.0))
}

fn main() {
    let work = tempfile::tempdir().unwrap();
    let (exe, preload) = build(work.path());
    let pre = preload.display().to_string();
    let grind = have("valgrind");
    let mut alloc = vec![
        Config {
            name: "plain (glibc)",
            env: vec![],
            under: None,
        },
        Config {
            name: "preload, DR_HOOK_OPT=prof (untracked)",
            env: vec![
                ("LD_PRELOAD", pre.clone()),
                ("DR_HOOK", "1".into()),
                ("DR_HOOK_OPT", "prof".into()),
            ],
            under: None,
        },
        Config {
            name: "preload, DR_HOOK_OPT=prof,memprof",
            env: vec![
                ("LD_PRELOAD", pre.clone()),
                ("DR_HOOK", "1".into()),
                ("DR_HOOK_OPT", "prof,memprof".into()),
            ],
            under: None,
        },
    ];
    if have("heaptrack") {
        alloc.push(Config {
            name: "heaptrack",
            env: vec![],
            under: Some("heaptrack"),
        });
    } else {
        println!("heaptrack not found: its row is skipped");
    }
    println!("\nmalloc(64) + free, 7 batches of 10^6 (median), one run:\n");
    table(
        work.path(),
        &exe,
        &alloc,
        "alloc",
        "vs plain",
        grind,
        |t, b| format!("{:.2}x", t / b),
    );
    let pair = [
        Config {
            name: "DR_HOOK_OPT=prof",
            env: vec![("DR_HOOK", "1".into()), ("DR_HOOK_OPT", "prof".into())],
            under: None,
        },
        Config {
            name: "DR_HOOK_OPT=prof,memprof",
            env: vec![
                ("DR_HOOK", "1".into()),
                ("DR_HOOK_OPT", "prof,memprof".into()),
            ],
            under: None,
        },
    ];
    println!("\nDr.Hook enter/exit pair of a leaf (libdrhook.so), 7 batches of 10^6 (median):\n");
    table(
        work.path(),
        &exe,
        &pair,
        "pair",
        "vs prof",
        grind,
        |t, b| format!("{:+.2} ns", t - b),
    );
}

/// One table: ns per operation against the first configuration's, and
/// instructions per operation.
fn table(
    work: &Path,
    exe: &Path,
    cfgs: &[Config],
    mode: &str,
    versus: &str,
    grind: bool,
    compare: impl Fn(f64, f64) -> String,
) {
    println!("| configuration | ns/op | {versus} | instructions/op (callgrind) |");
    println!("|---|---:|---:|---:|");
    // Every row measured first: the comparison is with the first row's
    // own measurement, in the same pass.
    let times: Vec<Option<f64>> = cfgs
        .iter()
        .map(|c| ns(work, c, exe, mode, "1000000"))
        .collect();
    let base = times[0];
    for (c, &t) in cfgs.iter().zip(&times) {
        let i = if grind {
            instructions(work, c, exe, mode)
        } else {
            None
        };
        println!(
            "| {} | {} | {} | {} |",
            c.name,
            t.map_or("-".into(), |t| format!("{t:.2}")),
            match (t, base) {
                (Some(t), Some(b)) => compare(t, b),
                _ => "-".into(),
            },
            i.map_or("-".into(), |i| format!("{i:.1}")),
        );
    }
}
