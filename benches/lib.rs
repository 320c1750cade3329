//! Shared pieces of the drhook benchmark harnesses: timing loops that run in
//! a child process per configuration (Dr.Hook reads its environment once
//! per process) and the table printing.

use std::process::Command;

/// Median of a sample.
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn time_ns(n: u64, f: &mut impl FnMut(u64)) -> f64 {
    let t = std::time::Instant::now();
    f(n);
    t.elapsed().as_nanos() as f64 / n as f64
}

/// Timing statistics of one configuration and of the baseline timed with it.
#[derive(Clone, Copy, Debug)]
pub struct Timing {
    /// Median ns per iteration.
    pub median: f64,
    /// Minimum ns per iteration.
    pub min: f64,
    /// Median ns per iteration of the baseline.
    pub base_median: f64,
    /// Minimum ns per iteration of the baseline.
    pub base_min: f64,
    /// Median over samples of (this sample / the baseline sample timed next
    /// to it): robust against the machine slowing down for a while.
    pub paired_ratio: f64,
}

/// Nanoseconds per iteration of `f` and of `base`, timed alternately
/// (`samples` samples of `n` iterations each) so that both come from the
/// same stretch of machine time.
pub fn ns_per_iter_vs(
    n: u64,
    samples: usize,
    mut f: impl FnMut(u64),
    mut base: impl FnMut(u64),
) -> Timing {
    f(n / 10 + 1); // warm-up
    base(n / 10 + 1);
    let mut a = Vec::with_capacity(samples);
    let mut b = Vec::with_capacity(samples);
    for s in 0..samples {
        // Alternate the order so neither loop always runs first.
        if s % 2 == 0 {
            a.push(time_ns(n, &mut f));
            b.push(time_ns(n, &mut base));
        } else {
            b.push(time_ns(n, &mut base));
            a.push(time_ns(n, &mut f));
        }
    }
    if std::env::var_os("DRHOOK_BENCH_DUMP").is_some() {
        let r = |v: &[f64]| {
            v.iter()
                .map(|x| (x * 100.0).round() / 100.0)
                .collect::<Vec<_>>()
        };
        eprintln!("samples {:?}\nbase    {:?}", r(&a), r(&b));
    }
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let mut ratios: Vec<f64> = a.iter().zip(&b).map(|(x, y)| x / y).collect();
    Timing {
        min: min(&a),
        base_min: min(&b),
        paired_ratio: median(&mut ratios),
        median: median(&mut a),
        base_median: median(&mut b),
    }
}

/// Timing statistics of several loops timed together (see
/// [`ns_per_iter_multi`]).
#[derive(Clone, Debug)]
pub struct MultiTiming {
    /// Median ns per iteration of each loop.
    pub median: Vec<f64>,
    /// Minimum ns per iteration of each loop.
    pub min: Vec<f64>,
    /// Median over samples of (loop i / loop 0, timed in the same sample).
    pub paired: Vec<f64>,
}

/// Nanoseconds per iteration of every loop in `loops`, timed in turn
/// (`samples` samples of `n` iterations each, the order rotating from one
/// sample to the next) so that all come from the same stretches of machine
/// time; ratios are taken against `loops[0]` sample by sample.
pub fn ns_per_iter_multi(n: u64, samples: usize, loops: &mut [&mut dyn FnMut(u64)]) -> MultiTiming {
    let k = loops.len();
    for l in loops.iter_mut() {
        l(n / 10 + 1); // warm-up
    }
    let mut t = vec![Vec::with_capacity(samples); k];
    for s in 0..samples {
        let mut row = vec![0.0; k];
        for j in 0..k {
            let i = (s + j) % k;
            let mut f = |m: u64| (loops[i])(m);
            row[i] = time_ns(n, &mut f);
        }
        for i in 0..k {
            t[i].push(row[i]);
        }
    }
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let paired = (0..k)
        .map(|i| {
            let mut r: Vec<f64> = t[i].iter().zip(&t[0]).map(|(x, y)| x / y).collect();
            median(&mut r)
        })
        .collect();
    MultiTiming {
        min: t.iter().map(|v| min(v)).collect(),
        median: t.iter_mut().map(|v| median(v)).collect(),
        paired,
    }
}

/// Runs this executable as a child in `mode` with extra environment
/// variables and returns its stdout.
pub fn run_child(
    mode: &str,
    env: &[(&str, &str)],
    wrapper: &[&str],
) -> Result<(String, String), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut cmd = if wrapper.is_empty() {
        Command::new(&exe)
    } else {
        let mut c = Command::new(wrapper[0]);
        c.args(&wrapper[1..]).arg(&exe);
        c
    };
    cmd.env("DRHOOK_BENCH_CHILD", mode);
    for k in ["DR_HOOK", "DR_HOOK_OPT", "DR_HOOK_PROFILE"] {
        cmd.env_remove(k);
    }
    cmd.env("DR_HOOK_SILENT", "1");
    // Their profiles go to a scratch directory, never into the source tree.
    cmd.current_dir(scratch());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd
        .output()
        .map_err(|e| format!("{}: {e}", wrapper.first().copied().unwrap_or("child")))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        return Err(format!("child {mode} failed: {}\n{stderr}", out.status));
    }
    Ok((stdout, stderr))
}

/// The directory the children run in (their profiles land there): one per
/// benchmark run, in the system's temporary directory, removed by
/// [`remove_scratch`].
pub fn scratch() -> &'static std::path::Path {
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("drhook-bench-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
        d
    })
}

/// Removes [`scratch`] and what the children wrote there.
pub fn remove_scratch() {
    let _ = std::fs::remove_dir_all(scratch());
}

/// Extracts `key=value` from a child's output.
pub fn field(out: &str, key: &str) -> Option<f64> {
    out.split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
}

/// Parses valgrind's "Collected : N" instruction total.
pub fn callgrind_total(stderr: &str) -> Option<u64> {
    stderr
        .lines()
        .find_map(|l| l.split("Collected :").nth(1)?.trim().parse().ok())
}

/// Whether a program can be run.
pub fn have(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}
