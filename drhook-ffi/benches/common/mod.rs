//! What the memory and I/O benchmarks share: where the built libraries
//! are, building them and a C program, the configurations a program runs
//! under (environment, a tracer in front), ns per operation printed by the
//! program, instructions per operation under callgrind, and the table.

#![allow(dead_code, reason = "each benchmark uses part of it")]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The target directory of this build (`target/release`).
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

/// Builds `packages` (libraries, release) and compiles the C program
/// `benches/progs/<name>.c` into `work` (linked with `libdrhook` when
/// `with_drhook`); returns the program and the preload library.
pub fn build(work: &Path, packages: &[&str], name: &str, with_drhook: bool) -> (PathBuf, PathBuf) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = target_dir();
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args(["build", "--release", "--lib"]);
    for p in packages {
        cmd.args(["-p", p]);
    }
    let st = cmd
        .arg("--manifest-path")
        .arg(dir.join("..").join("Cargo.toml"))
        .arg("--target-dir")
        .arg(target.parent().unwrap())
        .status()
        .expect("cargo");
    assert!(st.success(), "building {packages:?} failed");
    let exe = work.join(name);
    let mut cc = Command::new("gcc");
    cc.args(["-O2", "-o"])
        .arg(&exe)
        .arg(format!("-I{}", dir.join("include").display()))
        .arg(dir.join(format!("benches/progs/{name}.c")));
    if with_drhook {
        cc.arg(format!("-L{}", target.display()))
            .arg(format!("-Wl,-rpath,{}", target.display()))
            .args(["-ldrhook", "-lpthread", "-ldl", "-lm"]);
    }
    assert!(
        cc.status().expect("gcc").success(),
        "compiling {name}.c failed"
    );
    (exe, target.join("libdrhook_preload.so"))
}

/// Whether `program` is on the PATH.
pub fn have(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// One configuration of a run.
pub struct Config {
    pub name: &'static str,
    pub env: Vec<(&'static str, String)>,
    /// A program in front (a tracer) and its arguments; empty: none.
    pub under: Vec<&'static str>,
    /// Operations per batch and batches (tracers are slow: fewer).
    pub n: &'static str,
    pub batches: &'static str,
}

impl Config {
    /// A configuration of 7 batches of 10^6 operations.
    pub fn new(name: &'static str, env: Vec<(&'static str, String)>) -> Config {
        Config {
            name,
            env,
            under: Vec::new(),
            n: "1000000",
            batches: "7",
        }
    }
}

fn command(work: &Path, c: &Config, exe: &Path, args: &[&str], grind: bool) -> Command {
    let mut cmd = if let Some((first, rest)) = c.under.split_first() {
        let mut x = Command::new(first);
        x.args(rest).arg(exe);
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

/// ns per operation printed by the program (the median of its batches;
/// the program's line comes first, a tracer prints its own after).
pub fn ns(work: &Path, c: &Config, exe: &Path, mode: &str) -> Option<f64> {
    let out = command(work, c, exe, &[mode, c.n, c.batches], false)
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!("{}: {}", c.name, String::from_utf8_lossy(&out.stderr));
        return None;
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.trim().parse().ok())
}

/// Instructions per operation under callgrind: one batch at two lengths,
/// the difference is the loop's alone (start-up and exit cancel out).
pub fn instructions(work: &Path, c: &Config, exe: &Path, mode: &str) -> Option<f64> {
    if !c.under.is_empty() {
        return None;
    }
    let ir = |n: &str| -> Option<f64> {
        let out = command(work, c, exe, &[mode, n, "1"], true).output().ok()?;
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .find_map(|l| l.split("Collected :").nth(1)?.trim().parse::<f64>().ok())
    };
    let (a, b) = (ir("20000")?, ir("60000")?);
    Some((b - a) / 40000.0)
}

/// One table: ns per operation of every configuration, compared with the
/// first one's measurement of the same pass, and instructions per
/// operation.
pub fn table(
    work: &Path,
    exe: &Path,
    cfgs: &[Config],
    mode: &str,
    versus: &str,
    compare: impl Fn(f64, f64) -> String,
) {
    let grind = have("valgrind");
    println!("| configuration | ns/op | {versus} | instructions/op (callgrind) |");
    println!("|---|---:|---:|---:|");
    let times: Vec<Option<f64>> = cfgs.iter().map(|c| ns(work, c, exe, mode)).collect();
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
