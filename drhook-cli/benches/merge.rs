//! `drhook merge` at scale: 1024 synthetic rank files of 5000 routines
//! each (the issue's target: ≤ 5 s and bounded memory on the 2-core
//! machine).
//!
//! ```text
//! cargo bench -p drhook-cli --bench merge            # 1024 x 5000
//! cargo bench -p drhook-cli --bench merge -- 256 5000
//! ```
//!
//! The files are written with the library's own profile writer into a
//! temporary directory (wall-clock profiles, two threads; each rank lacks
//! a few routines, so the routine sets differ), then the release `drhook`
//! binary merges them as a user would, three times per setting. Reported:
//! wall time of each run (median and minimum) and the peak RSS of the
//! merging process (`wait4`'s resource usage of each run). The same
//! is done with a quarter of the files: equal peak RSS shows that memory
//! does not grow with the number of files.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

use drhook_cli::profile::write::{header, row};
use drhook_cli::profile::{Columns, Header, Kind, MemItem, PerCall, Row, ThreadInfo};

fn lcg(x: &mut u64) -> u64 {
    *x = x
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    *x >> 33
}

fn write_rank(dir: &Path, rank: u32, nranks: u32, nroutines: usize) -> u64 {
    let mut seed = u64::from(rank) * 7919 + 1;
    let h = Header {
        kind: Kind::Wall,
        program: "./model".into(),
        proc: rank,
        nprocs: nranks,
        nthreads: 2,
        routines_called: nroutines as u64,
        started: "20261122 093830".into(),
        ended: "20261122 094830".into(),
        overhead_pct: Some(0.5),
        memory_usage: Some(vec![MemItem {
            name: "heap".into(),
            value: 110,
            unit: "MB".into(),
        }]),
        total_s: Some(600.0),
        elapsed_s: Some(600.0),
        threads: vec![
            ThreadInfo {
                id: 1,
                time_s: 600.0,
                pct: 100.0,
                self_cycles: Some(1),
                cycles: Some(2),
            },
            ThreadInfo {
                id: 2,
                time_s: 300.0,
                pct: 50.0,
                self_cycles: Some(1),
                cycles: Some(2),
            },
        ],
        columns: Columns::PerCall,
        clusterinfo: false,
        sizeinfo: true,
        callpath_indent: None,
        counters: Vec::new(),
        extra_header: Vec::new(),
        metadata: None,
    };
    let mut text = String::with_capacity(150 * nroutines + 2048);
    header(&mut text, &h);
    let mut rank_no = 0;
    let mut cumul = 0.0;
    for r in 0..nroutines {
        // Each rank lacks about 1% of the routines.
        if (r as u32 + rank) % 97 == 0 {
            continue;
        }
        rank_no += 1;
        let self_ms = (lcg(&mut seed) % 100_000) as f64;
        let self_s = self_ms / 1000.0;
        cumul += self_s;
        let calls = 1 + lcg(&mut seed) % 1_000_000;
        let thread = if r % 5 == 0 { 2 } else { 1 };
        let row_ = Row {
            rank: rank_no,
            pct: (self_s / 6.0 * 100.0).round() / 100.0,
            cumul_s: (cumul * 1000.0).round() / 1000.0,
            self_s,
            total_s: self_s * 2.0,
            calls,
            per_call: PerCall::Ms {
                self_ms: self_ms / calls as f64,
                total_ms: 2.0 * self_ms / calls as f64,
            },
            star: thread == 1,
            routine: format!("MODULE_{:03}:ROUTINE_{r:05}", r % 200),
            thread,
            file: None,
            cluster: None,
            sizes: None,
            path: Vec::new(),
            memory: None,
            io: None,
        };
        row(&mut text, &h, &row_);
    }
    let path = dir.join(format!("drhook.prof.{rank}"));
    std::fs::write(&path, &text).unwrap();
    text.len() as u64
}

/// Runs `cmd` to its end; returns (success, its own peak RSS in KiB),
/// from `wait4`'s resource usage of that one child.
// The child is reaped by wait4 below, not by std's wait.
#[allow(clippy::zombie_processes)]
fn run_measured(cmd: &mut Command) -> (bool, i64) {
    let child = cmd.spawn().unwrap();
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: a zeroed rusage is valid; wait4 fills it and the status.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is our child, not yet reaped (std's Child is never waited).
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    assert_eq!(r, pid, "wait4: {}", std::io::Error::last_os_error());
    (
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        ru.ru_maxrss,
    )
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let nranks: u32 = args.first().and_then(|a| a.parse().ok()).unwrap_or(1024);
    let nroutines: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(5000);
    let drhook = env!("CARGO_BIN_EXE_drhook");
    let tmp = tempfile::Builder::new()
        .prefix("drhook-merge-bench-")
        .tempdir()
        .unwrap();
    let t0 = Instant::now();
    let mut bytes = 0;
    for rank in 1..=nranks {
        bytes += write_rank(tmp.path(), rank, nranks, nroutines);
    }
    println!(
        "generated {nranks} files x {nroutines} routines ({:.0} MB) in {:.1} s",
        bytes as f64 / 1e6,
        t0.elapsed().as_secs_f64()
    );
    // A quarter of the files, in their own directory, for the memory check.
    let quarter = tmp.path().join("quarter");
    std::fs::create_dir(&quarter).unwrap();
    for rank in 1..=nranks / 4 {
        let name = format!("drhook.prof.{rank}");
        std::fs::hard_link(tmp.path().join(&name), quarter.join(&name)).unwrap();
    }
    println!("| files | jobs | wall s (median of 3) | wall s (min) | peak RSS MiB |");
    println!("|---:|---:|---:|---:|---:|");
    for (dir, n) in [
        (tmp.path().to_path_buf(), nranks),
        (quarter.clone(), nranks / 4),
    ] {
        for jobs in ["1", "2"] {
            let mut times = Vec::new();
            let mut rss = 0;
            for _ in 0..3 {
                let t = Instant::now();
                let (ok, kib) = run_measured(
                    Command::new(drhook)
                        .args(["merge", "--jobs", jobs, "--csv", "-o", "/dev/null"])
                        .arg(&dir)
                        .stdout(Stdio::null()),
                );
                times.push(t.elapsed().as_secs_f64());
                assert!(ok, "drhook merge failed");
                rss = rss.max(kib);
            }
            times.sort_by(f64::total_cmp);
            println!(
                "| {n} | {jobs} | {:.2} | {:.2} | {:.1} |",
                times[1],
                times[0],
                rss as f64 / 1024.0
            );
        }
    }
}
