//! What attaching to an unmodified program costs: the preload library
//! (`libdrhook_preload.so`) side by side with HPCToolkit's libmonitor, in
//! one run, on this machine.
//!
//! `cargo bench -p drhook-ffi --bench attach_overhead`
//!
//! * start-up of `/bin/true` (each configuration spawned in turn, rounds
//!   interleaved, medians);
//! * system calls at start-up (`strace -f -c /bin/true`; `rt_sigaction`
//!   counted apart: handlers installed);
//! * `pthread_create`+`pthread_join`, `fork`+`waitpid` and a failed
//!   `execv` (`benches/progs/bench_attach.c`, medians of samples inside
//!   one process per configuration);
//! * 10^7 instrumented calls of a C program linked with `libdrhook.so`,
//!   linked directly vs through the preload (`bench_c.c` of
//!   `ffi_overhead`), in ns per pair and in instructions per pair under
//!   callgrind (the repeatable figure).
//!
//! libmonitor is not part of this repository: build it yourself outside it
//! (`./configure && make` in a checkout of HPCToolkit/libmonitor) and give
//! the library's path in `DRHOOK_BENCH_LIBMONITOR`
//! (e.g. `/work/ext/libmonitor/src/.libs/libmonitor.so`); without it its
//! column is skipped with a message. `DRHOOK_BENCH_QUICK=1`: fewer rounds.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

mod common;
use common::target_dir;

fn build_libraries() -> PathBuf {
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
            "--manifest-path",
        ])
        .arg(dir.join("..").join("Cargo.toml"))
        .arg("--target-dir")
        .arg(target.parent().unwrap())
        .status()
        .expect("cargo");
    assert!(st.success(), "building the libraries failed");
    target
}

fn have(program: &str, arg: &str) -> bool {
    Command::new(program)
        .arg(arg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// One configuration: a name and the environment it adds.
struct Config {
    name: &'static str,
    env: Vec<(String, String)>,
}

fn configs(preload: &Path, libmonitor: Option<&Path>) -> Vec<Config> {
    let pre = preload.display().to_string();
    let mut v = vec![Config {
        name: "plain",
        env: vec![],
    }];
    if let Some(m) = libmonitor {
        v.push(Config {
            name: "libmonitor",
            env: vec![("LD_PRELOAD".into(), m.display().to_string())],
        });
    }
    v.push(Config {
        name: "drhook layer (DR_HOOK unset)",
        env: vec![("LD_PRELOAD".into(), pre.clone())],
    });
    v.push(Config {
        name: "drhook, DR_HOOK=1",
        env: vec![
            ("LD_PRELOAD".into(), pre.clone()),
            ("DR_HOOK".into(), "1".into()),
            ("DR_HOOK_SILENT".into(), "1".into()),
        ],
    });
    v.push(Config {
        name: "drhook, DR_HOOK_OPT=prof",
        env: vec![
            ("LD_PRELOAD".into(), pre),
            ("DR_HOOK".into(), "1".into()),
            ("DR_HOOK_OPT".into(), "prof".into()),
            ("DR_HOOK_SILENT".into(), "1".into()),
        ],
    });
    v
}

fn command(work: &Path, program: &Path, c: &Config) -> Command {
    let mut cmd = Command::new(program);
    cmd.current_dir(work)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    for (k, _) in std::env::vars() {
        if k.starts_with("DR_HOOK") || k.starts_with("DRHOOK_") || k == "LD_PRELOAD" {
            cmd.env_remove(k);
        }
    }
    for (k, v) in &c.env {
        cmd.env(k, v);
    }
    cmd
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Spawns `c`'s `/bin/true` and waits: (wall ms, CPU ms of the child).
#[allow(clippy::zombie_processes, reason = "reaped with wait4 for its rusage")]
fn spawn_true(work: &Path, c: &Config) -> (f64, f64) {
    let t = Instant::now();
    let child = command(work, Path::new("/bin/true"), c).spawn().unwrap();
    let mut status = 0;
    // SAFETY: plain data that wait4 fills in.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waiting for our own child (reaped here: `child` is only
    // dropped, never waited for again).
    unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut ru) };
    drop(child);
    let wall = t.elapsed().as_secs_f64() * 1e3;
    assert_eq!(status, 0, "{}: /bin/true failed", c.name);
    let tv = |t: libc::timeval| t.tv_sec as f64 * 1e3 + t.tv_usec as f64 * 1e-3;
    (wall, tv(ru.ru_utime) + tv(ru.ru_stime))
}

/// Instructions of `/bin/true` under `c` (callgrind, user space,
/// dynamic loader included).
fn startup_instructions(work: &Path, c: &Config) -> Option<f64> {
    let mut cmd = command(work, Path::new("valgrind"), c);
    cmd.stderr(Stdio::piped());
    cmd.args([
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        "/bin/true",
    ]);
    let out = cmd.output().ok()?;
    let err = String::from_utf8_lossy(&out.stderr);
    err.lines()
        .find_map(|l| l.split("Collected :").nth(1)?.trim().parse::<f64>().ok())
}

fn startup(work: &Path, cfgs: &[Config], rounds: usize) {
    let mut wall: Vec<Vec<f64>> = vec![Vec::new(); cfgs.len()];
    let mut cpu: Vec<Vec<f64>> = vec![Vec::new(); cfgs.len()];
    for r in 0..rounds + 20 {
        for (i, c) in cfgs.iter().enumerate() {
            let (w, u) = spawn_true(work, c);
            if r >= 20 {
                wall[i].push(w);
                cpu[i].push(u);
            }
        }
    }
    let grind = have("valgrind", "--version");
    let base_w = median(&mut wall[0].clone());
    let base_c = median(&mut cpu[0].clone());
    let base_i = if grind {
        startup_instructions(work, &cfgs[0])
    } else {
        None
    };
    println!(
        "\n/bin/true start-up (spawn + wait; medians of {rounds} interleaved rounds; CPU = user + system time of the child; instructions: callgrind, user space incl. the dynamic loader):\n"
    );
    println!(
        "| configuration | wall ms | vs plain | CPU ms | vs plain | instructions | vs plain |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (i, c) in cfgs.iter().enumerate() {
        let w = median(&mut wall[i]);
        let u = median(&mut cpu[i]);
        let ir = if grind {
            startup_instructions(work, c)
        } else {
            None
        };
        let ir_s = match (ir, base_i) {
            (Some(a), Some(b)) => format!("{a:.0} | {:+.0} ({:.2}x)", a - b, a / b),
            _ => "- | -".into(),
        };
        println!(
            "| {} | {w:.3} | {:+.3} ({:.2}x) | {u:.3} | {:+.3} | {ir_s} |",
            c.name,
            w - base_w,
            w / base_w,
            u - base_c
        );
    }
}

fn syscalls(work: &Path, cfgs: &[Config]) {
    if !have("strace", "-V") {
        println!("\n(system calls skipped: strace not found)");
        return;
    }
    println!("\nSystem calls of /bin/true (strace -f -c; rt_sigaction: signal handlers set):\n");
    println!("| configuration | system calls | of which rt_sigaction | extra vs plain |");
    println!("|---|---:|---:|---:|");
    let mut base = 0;
    for (i, c) in cfgs.iter().enumerate() {
        let out_file = work.join("strace.out");
        let mut cmd = command(work, Path::new("strace"), c);
        cmd.args(["-f", "-c", "-o"]).arg(&out_file).arg("/bin/true");
        let st = cmd.status().unwrap();
        assert!(st.success());
        let text = std::fs::read_to_string(&out_file).unwrap();
        let field = |line: &str| -> u64 {
            // % time, seconds, usecs/call, calls, [errors], syscall
            let f: Vec<&str> = line.split_whitespace().collect();
            f.get(3).and_then(|x| x.parse().ok()).unwrap_or(0)
        };
        let total = text
            .lines()
            .find(|l| l.trim_end().ends_with("total"))
            .map(field)
            .unwrap_or(0);
        let sigaction = text
            .lines()
            .find(|l| l.trim_end().ends_with("rt_sigaction"))
            .map(field)
            .unwrap_or(0);
        if i == 0 {
            base = total;
        }
        println!(
            "| {} | {total} | {sigaction} | {:+} |",
            c.name,
            total as i64 - base as i64
        );
    }
}

fn lifecycle(work: &Path, cfgs: &[Config], quick: bool) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/progs/bench_attach.c");
    let exe = work.join("bench_attach");
    let st = Command::new("gcc")
        .args(["-O2", "-o"])
        .arg(&exe)
        .arg(&src)
        .arg("-lpthread")
        .status()
        .unwrap();
    assert!(st.success(), "gcc bench_attach.c");
    let samples = if quick { "3" } else { "5" };
    let rounds = if quick { 2 } else { 7 };
    let tests = [
        (
            "pthread_create+join",
            "threads",
            if quick { 2000 } else { 20000 },
        ),
        ("fork+waitpid", "fork", if quick { 200 } else { 2000 }),
        (
            "failed execv",
            "execfail",
            if quick { 20000 } else { 200000 },
        ),
    ];
    println!(
        "\nLifecycle operations ({rounds} interleaved rounds of one process per configuration, each the median of {samples} samples; the median over rounds; wall ns and CPU ns — user + system of the process and its children — per operation):\n"
    );
    print!("| operation |");
    for c in cfgs {
        print!(" {} |", c.name);
    }
    println!();
    print!("|---|");
    for _ in cfgs {
        print!("---:|");
    }
    println!();
    for (label, which, n) in tests {
        // Rounds of one process per configuration, interleaved; the median
        // over rounds of each process's median (the load of the machine
        // drifts between rounds, not within one).
        let mut wall = vec![Vec::new(); cfgs.len()];
        let mut cpu = vec![Vec::new(); cfgs.len()];
        for _ in 0..rounds {
            for (i, c) in cfgs.iter().enumerate() {
                let out = command(work, &exe, c)
                    .args([which, &n.to_string(), samples])
                    .stdout(Stdio::piped())
                    .output()
                    .unwrap();
                let text = String::from_utf8_lossy(&out.stdout);
                let get = |k: &str| -> f64 {
                    text.split_whitespace()
                        .find_map(|w| w.strip_prefix(k)?.parse().ok())
                        .unwrap_or(f64::NAN)
                };
                wall[i].push(get("ns="));
                cpu[i].push(get("cpu="));
            }
        }
        let mut wall_row = format!("| {label}, wall |");
        let mut cpu_row = format!("| {label}, CPU |");
        let (bw, bc) = (median(&mut wall[0].clone()), median(&mut cpu[0].clone()));
        for i in 0..cfgs.len() {
            let (w, c) = (median(&mut wall[i]), median(&mut cpu[i]));
            if i == 0 {
                wall_row.push_str(&format!(" {w:.0} |"));
                cpu_row.push_str(&format!(" {c:.0} |"));
            } else {
                wall_row.push_str(&format!(" {w:.0} ({:+.0}, {:.2}x) |", w - bw, w / bw));
                cpu_row.push_str(&format!(" {c:.0} ({:+.0}, {:.2}x) |", c - bc, c / bc));
            }
        }
        println!("{wall_row}");
        println!("{cpu_row}");
    }
}

fn calls(work: &Path, libdir: &Path, preload: &Path, quick: bool) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"));
    let exe = work.join("bench_c_shared");
    let st = Command::new("gcc")
        .args(["-O2", "-std=c99", "-o"])
        .arg(&exe)
        .arg(src.join("benches/progs/bench_c.c"))
        .arg(format!("-I{}", src.join("include").display()))
        .arg(format!("-L{}", libdir.display()))
        .arg(format!("-Wl,-rpath,{}", libdir.display()))
        .args(["-ldrhook", "-lpthread", "-ldl", "-lm"])
        .status()
        .unwrap();
    assert!(st.success(), "gcc bench_c.c");
    let prof = vec![
        ("DR_HOOK".to_string(), "1".to_string()),
        ("DR_HOOK_OPT".to_string(), "prof".to_string()),
        ("DR_HOOK_SILENT".to_string(), "1".to_string()),
    ];
    let mut through = prof.clone();
    through.push(("LD_PRELOAD".into(), preload.display().to_string()));
    let linked = Config {
        name: "libdrhook.so linked, DR_HOOK_OPT=prof",
        env: prof,
    };
    let pre = Config {
        name: "same program under the preload",
        env: through,
    };
    let n = if quick { 1_000_000 } else { 10_000_000 };
    println!(
        "\n{n} instrumented calls (bench_c.c, instrumented leaf under an instrumented parent), linked vs preloaded:\n"
    );
    println!(
        "| configuration | ns/pair (median) | paired ratio to uninstrumented | instructions/pair (callgrind) |"
    );
    println!("|---|---:|---:|---:|");
    for c in [&linked, &pre] {
        let out = command(work, &exe, c)
            .args(["time", &n.to_string(), if quick { "5" } else { "9" }])
            .stdout(Stdio::piped())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let get = |k: &str| -> f64 {
            text.split_whitespace()
                .find_map(|w| w.strip_prefix(k)?.parse().ok())
                .unwrap_or(f64::NAN)
        };
        let (ns, base, paired) = (get("ns="), get("base="), get("paired="));
        let ir = if have("valgrind", "--version") {
            let count = |which: &str| -> Option<f64> {
                let mut cmd = command(work, Path::new("valgrind"), c);
                cmd.stderr(Stdio::piped());
                cmd.args([
                    "--tool=callgrind",
                    "--callgrind-out-file=/dev/null",
                    &format!("--toggle-collect=loop_{which}"),
                ])
                .arg(&exe)
                .args([which, "100000"]);
                let out = cmd.output().ok()?;
                let err = String::from_utf8_lossy(&out.stderr);
                err.lines()
                    .find_map(|l| l.split("Collected :").nth(1)?.trim().parse::<f64>().ok())
            };
            match (count("leaf"), count("plain")) {
                (Some(a), Some(b)) => format!("{:.1}", (a - b) / 100_000.0),
                _ => "valgrind failed".into(),
            }
        } else {
            "no valgrind".into()
        };
        println!(
            "| {} | {:.2} | {:.2} (base {base:.2} ns) | {ir} |",
            c.name,
            ns - base,
            paired
        );
    }
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    if !have("gcc", "--version") {
        println!("attach_overhead: skipped (gcc not found)");
        return;
    }
    let quick = std::env::var("DRHOOK_BENCH_QUICK").as_deref() == Ok("1");
    let libdir = build_libraries();
    let preload = libdir.join("libdrhook_preload.so");
    let libmonitor = std::env::var_os("DRHOOK_BENCH_LIBMONITOR").map(PathBuf::from);
    let libmonitor = match libmonitor {
        Some(p) if p.is_file() => Some(p),
        Some(p) => {
            println!(
                "libmonitor column skipped: DRHOOK_BENCH_LIBMONITOR={} is not a file",
                p.display()
            );
            None
        }
        None => {
            println!(
                "libmonitor column skipped: set DRHOOK_BENCH_LIBMONITOR to a libmonitor.so built outside this repository"
            );
            None
        }
    };
    let work = std::env::temp_dir().join(format!("drhook-attach-bench-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let cfgs = configs(&preload, libmonitor.as_deref());
    println!(
        "machine: {} cores; every figure below is from this one run",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    startup(&work, &cfgs, if quick { 50 } else { 400 });
    syscalls(&work, &cfgs);
    lifecycle(&work, &cfgs, quick);
    calls(&work, &libdir, &preload, quick);
    let _ = std::fs::remove_dir_all(&work);
}
