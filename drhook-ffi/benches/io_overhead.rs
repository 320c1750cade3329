//! What the I/O profile costs (issue 12), in one run on this machine:
//! small `write`s (16 bytes, to a regular file) and `fwrite`s (16 bytes,
//! a buffered stream) of `progs/bench_io.c`, plain; under the preload
//! library with Dr.Hook on and no `io` token (the wrappers pass through);
//! with `DR_HOOK_OPT=io`; under `strace -c -f` and `ltrace -c` (Debian
//! packages; skipped with a message when absent; fewer calls, they are
//! slow). Instructions per call under callgrind (difference of two run
//! lengths) are the repeatable figure.
//!
//! `cargo bench -p drhook-ffi --bench io_overhead`

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
        .args(["build", "--release", "-p", "drhook-preload", "--lib"])
        .arg("--manifest-path")
        .arg(dir.join("..").join("Cargo.toml"))
        .arg("--target-dir")
        .arg(target.parent().unwrap())
        .status()
        .expect("cargo");
    assert!(st.success(), "building the preload library failed");
    let exe = work.join("bench_io");
    let st = Command::new("gcc")
        .args(["-O2", "-o"])
        .arg(&exe)
        .arg(dir.join("benches/progs/bench_io.c"))
        .status()
        .expect("gcc");
    assert!(st.success(), "compiling bench_io.c failed");
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
    under: Vec<&'static str>,
    /// Calls per batch and batches (the tracers are slow).
    n: &'static str,
    batches: &'static str,
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

fn ns(work: &Path, c: &Config, exe: &Path, mode: &str) -> Option<f64> {
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

fn instructions(work: &Path, c: &Config, exe: &Path, mode: &str) -> Option<f64> {
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

fn main() {
    let work = tempfile::tempdir().unwrap();
    let (exe, preload) = build(work.path());
    let pre = preload.display().to_string();
    let grind = have("valgrind");
    let mut cfgs = vec![
        Config {
            name: "plain",
            env: vec![],
            under: vec![],
            n: "1000000",
            batches: "7",
        },
        Config {
            name: "preload, DR_HOOK_OPT=prof (io off)",
            env: vec![
                ("LD_PRELOAD", pre.clone()),
                ("DR_HOOK", "1".into()),
                ("DR_HOOK_OPT", "prof".into()),
            ],
            under: vec![],
            n: "1000000",
            batches: "7",
        },
        Config {
            name: "preload, DR_HOOK_OPT=io",
            env: vec![
                ("LD_PRELOAD", pre.clone()),
                ("DR_HOOK", "1".into()),
                ("DR_HOOK_OPT", "io".into()),
            ],
            under: vec![],
            n: "1000000",
            batches: "7",
        },
    ];
    if have("strace") {
        cfgs.push(Config {
            name: "strace -c -f (10^5 calls)",
            env: vec![],
            under: vec!["strace", "-c", "-f", "-o", "/dev/null"],
            n: "100000",
            batches: "1",
        });
    } else {
        println!("strace not found: its row is skipped");
    }
    if have("ltrace") {
        cfgs.push(Config {
            name: "ltrace -c (10^5 calls)",
            env: vec![],
            under: vec!["ltrace", "-c", "-o", "/dev/null"],
            n: "100000",
            batches: "1",
        });
    } else {
        println!("ltrace not found: its row is skipped");
    }
    for mode in ["write", "fwrite"] {
        println!("\n{mode}() of 16 bytes, median of the batches, one run:\n");
        println!("| configuration | ns/call | over plain | instructions/call (callgrind) |");
        println!("|---|---:|---:|---:|");
        // Every row measured first: the comparison is with the first
        // row's own measurement, in the same pass.
        let times: Vec<Option<f64>> = cfgs
            .iter()
            .map(|c| ns(work.path(), c, &exe, mode))
            .collect();
        let base = times[0];
        for (c, &t) in cfgs.iter().zip(&times) {
            let i = if grind {
                instructions(work.path(), c, &exe, mode)
            } else {
                None
            };
            println!(
                "| {} | {} | {} | {} |",
                c.name,
                t.map_or("-".into(), |t| format!("{t:.1}")),
                match (t, base) {
                    (Some(t), Some(b)) => format!("{:+.1} ns ({:.2}x)", t - b, t / b),
                    _ => "-".into(),
                },
                i.map_or("-".into(), |i| format!("{i:.1}")),
            );
        }
    }
}
