//! Overhead of Dr.Hook called from Fortran (through `yomhook.F90`) and from
//! C (the `drhook.h` macros): the Fortran and C twins of the engine
//! benchmark — an instrumented leaf called from an instrumented parent,
//! against the same loop over an uninstrumented leaf — under `DR_HOOK`
//! unset, `DR_HOOK=1` and `DR_HOOK_OPT=prof`, linked statically
//! (`libdrhook.a`) and dynamically (`libdrhook.so`); the floor of any exact
//! wall-clock profile (two `rdtsc` reads around the uninstrumented call,
//! in C); and instructions per pair under callgrind, counted inside the
//! timing loop only (`--toggle-collect`).
//!
//! `cargo bench -p drhook-ffi --bench ffi_overhead`
//! (`DRHOOK_BENCH_QUICK=1`: 1 M calls × 5 samples instead of 10 M × 9;
//! `DRHOOK_BENCH_CALLGRIND=0`: no valgrind.)
//!
//! Every program runs as a child process per configuration (Dr.Hook reads
//! its environment once per process); each child times its instrumented
//! and uninstrumented loops alternately and prints medians, minimums and
//! the median of the per-sample ratios (which cancels the stretches where
//! the whole VM slows down).

use std::collections::HashMap;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;

use drhook::drhook;

// --- the Rust twin (this executable as a child) ------------------------------

/// The instrumented leaf of the Rust twin: the same work as the Fortran and
/// C leaves (a double incremented through a pointer).
#[inline(never)]
#[drhook(name = "BENCH:LEAF")]
fn rust_leaf(x: &mut f64) {
    *black_box(x) += 1.0;
}

#[inline(never)]
fn rust_plain(x: &mut f64) {
    *black_box(x) += 1.0;
}

/// The loops callgrind counts (`--toggle-collect=*rust_loop_*`).
#[inline(never)]
#[drhook(name = "BENCH:PARENT")]
fn rust_loop_leaf(n: u64, x: &mut f64) {
    for _ in 0..n {
        rust_leaf(x);
    }
}

#[inline(never)]
#[drhook(name = "BENCH:PLAIN_PARENT")]
fn rust_loop_plain(n: u64, x: &mut f64) {
    for _ in 0..n {
        rust_plain(x);
    }
}

/// `<this> rust leaf|plain N` or `rust time N SAMPLES`, as the Fortran and
/// C programs take them.
fn rust_child(args: &[String]) {
    let mut x = 0.0;
    let n: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1000);
    rust_loop_leaf(10, &mut x);
    rust_loop_plain(10, &mut x);
    match args.first().map(String::as_str) {
        Some("leaf") => rust_loop_leaf(n, &mut x),
        Some("plain") => rust_loop_plain(n, &mut x),
        _ => {
            let samples: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(9);
            let time = |f: &mut dyn FnMut()| {
                let t = std::time::Instant::now();
                f();
                t.elapsed().as_nanos() as f64 / n as f64
            };
            rust_loop_leaf(n / 10, &mut x);
            rust_loop_plain(n / 10, &mut x);
            let (mut a, mut b, mut r) = (Vec::new(), Vec::new(), Vec::new());
            for i in 0..samples {
                let (ta, tb);
                if i % 2 == 0 {
                    ta = time(&mut || rust_loop_leaf(n, &mut x));
                    tb = time(&mut || rust_loop_plain(n, &mut x));
                } else {
                    tb = time(&mut || rust_loop_plain(n, &mut x));
                    ta = time(&mut || rust_loop_leaf(n, &mut x));
                }
                a.push(ta);
                b.push(tb);
                r.push(ta / tb);
            }
            let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
            println!(
                "ns={:.4} base={:.4} ns_min={:.4} base_min={:.4} paired={:.4}",
                median(&mut a.clone()),
                median(&mut b.clone()),
                min(&a),
                min(&b),
                median(&mut r)
            );
        }
    }
    if x < 0.0 {
        println!("{x}");
    }
}

/// The row of the Rust twin.
const RUST: &str = "Rust #[drhook] (same leaf)";

fn cargo_release_libs() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The bench executable lives in target/release/deps.
    let exe = std::env::current_exe().unwrap();
    let target = exe.parent().unwrap().parent().unwrap().to_path_buf();
    let mut cmd = Command::new(env!("CARGO"));
    cmd.args([
        "build",
        "--release",
        "-p",
        "drhook-ffi",
        "--lib",
        "--manifest-path",
    ])
    .arg(dir.join("Cargo.toml"))
    .arg("--target-dir")
    .arg(target.parent().unwrap());
    let st = cmd.status().expect("cargo");
    assert!(st.success(), "building libdrhook failed");
    target
}

fn sh(dir: &Path, program: &str, args: &[String]) {
    let out = Command::new(program)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(
        out.status.success(),
        "{program} {}:\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The row of the flang-new program.
const FLANG_STATIC: &str = "Fortran (flang-new), libdrhook.a";
const CYG_STATIC: &str = "C -finstrument-functions, libdrhook.a";

/// A flang-new compiler: `$DRHOOK_FC` if it names one, else the first of
/// `flang-new`, `flang-new-19`, ... found.
fn flang() -> Option<String> {
    if let Ok(fc) = std::env::var("DRHOOK_FC")
        && fc.contains("flang")
    {
        return have(&fc).then_some(fc);
    }
    [
        "flang-new",
        "flang-new-22",
        "flang-new-21",
        "flang-new-20",
        "flang-new-19",
    ]
    .into_iter()
    .find(|c| have(c))
    .map(String::from)
}

fn have(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Compiles the benchmark programs; returns (name, path) pairs.
fn build(work: &Path, libdir: &Path) -> Vec<(&'static str, PathBuf)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"));
    let s = |p: &str| src.join(p).display().to_string();
    let a = libdir.join("libdrhook.a").display().to_string();
    let shared = [
        format!("-L{}", libdir.display()),
        format!("-Wl,-rpath,{}", libdir.display()),
        "-ldrhook".to_string(),
    ];
    let sys = ["-lpthread", "-ldl", "-lm"].map(String::from);
    let mut progs = Vec::new();
    if have("gfortran") {
        sh(
            work,
            "gfortran",
            &["-O2".into(), "-c".into(), s("fortran/yomhook.F90")],
        );
        sh(
            work,
            "gfortran",
            &["-O2".into(), "-c".into(), s("benches/progs/bench_leaf.F90")],
        );
        let base = vec![
            "-O2".to_string(),
            s("benches/progs/bench_f.F90"),
            "bench_leaf.o".into(),
            "yomhook.o".into(),
        ];
        let mut st = base.clone();
        st.extend(["-o".into(), "bench_f_static".into(), a.clone()]);
        st.extend(sys.clone());
        sh(work, "gfortran", &st);
        let mut dy = base;
        dy.extend(["-o".into(), "bench_f_shared".into()]);
        dy.extend(shared.clone());
        sh(work, "gfortran", &dy);
        progs.push(("Fortran, libdrhook.a", work.join("bench_f_static")));
        progs.push(("Fortran, libdrhook.so", work.join("bench_f_shared")));
    } else {
        println!("(gfortran not found: Fortran rows skipped)\n");
    }
    // flang-new, if installed: its calling convention (checked by the
    // tests with DRHOOK_FC) and its names, which it copies to the stack.
    if let Some(flang) = flang() {
        let dir = work.join("flang");
        std::fs::create_dir_all(&dir).unwrap();
        sh(
            &dir,
            &flang,
            &["-O2".into(), "-c".into(), s("fortran/yomhook.F90")],
        );
        sh(
            &dir,
            &flang,
            &["-O2".into(), "-c".into(), s("benches/progs/bench_leaf.F90")],
        );
        let mut st = vec![
            "-O2".to_string(),
            s("benches/progs/bench_f.F90"),
            "bench_leaf.o".into(),
            "yomhook.o".into(),
            "-o".into(),
            "bench_flang_static".into(),
            a.clone(),
        ];
        st.extend(sys.clone());
        sh(&dir, &flang, &st);
        progs.push((FLANG_STATIC, dir.join("bench_flang_static")));
    }
    let base = vec![
        "-std=c99".to_string(),
        "-O2".into(),
        format!("-I{}", s("include")),
        s("benches/progs/bench_c.c"),
    ];
    let mut st = base.clone();
    st.extend(["-o".into(), "bench_c_static".into(), a.clone()]);
    st.extend(sys.clone());
    sh(work, "gcc", &st);
    let mut dy = base.clone();
    dy.extend(["-o".into(), "bench_c_shared".into()]);
    dy.extend(shared);
    sh(work, "gcc", &dy);
    progs.push(("C, libdrhook.a", work.join("bench_c_static")));
    progs.push(("C, libdrhook.so", work.join("bench_c_shared")));
    // The same leaf timed by -finstrument-functions' hooks alone.
    let mut cyg = base;
    cyg[3] = s("benches/progs/bench_cyg.c");
    cyg.extend([
        "-finstrument-functions".into(),
        "-o".into(),
        "bench_cyg_static".into(),
        a,
    ]);
    cyg.extend(sys);
    sh(work, "gcc", &cyg);
    progs.push((CYG_STATIC, work.join("bench_cyg_static")));
    progs
}

/// Where the children run: `DR_HOOK_PROFILE` names a directory that cannot
/// exist, so the profile falls back to the working directory (a scratch
/// directory removed at the end, not the source tree).
fn scratch() -> &'static Path {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().unwrap()).path()
}

fn command(program: &Path, env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(program);
    cmd.current_dir(scratch());
    for (k, _) in std::env::vars() {
        if k.starts_with("DR_HOOK") || k.starts_with("DRHOOK_") {
            cmd.env_remove(k);
        }
    }
    if program == std::env::current_exe().unwrap().as_path() {
        cmd.env("DRHOOK_FFI_BENCH_RUST", "1");
    }
    cmd.env("DR_HOOK_SILENT", "1")
        .env("DR_HOOK_PROFILE", "/dev/null/never-written");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

fn fields(out: &str) -> HashMap<String, f64> {
    out.split_whitespace()
        .filter_map(|w| {
            let (k, v) = w.split_once('=')?;
            Some((k.to_string(), v.parse().ok()?))
        })
        .collect()
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

const CONFIGS: &[(&str, &[(&str, &str)])] = &[
    ("DR_HOOK unset", &[]),
    ("DR_HOOK=1 (call tree)", &[("DR_HOOK", "1")]),
    (
        "DR_HOOK_OPT=prof",
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof")],
    ),
];

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    if std::env::var_os("DRHOOK_FFI_BENCH_RUST").is_some() {
        let args: Vec<String> = std::env::args().skip(1).collect();
        return rust_child(&args);
    }
    let quick = std::env::var_os("DRHOOK_BENCH_QUICK").is_some();
    let (n, samples) = if quick {
        (1_000_000u64, 5)
    } else {
        (10_000_000u64, 9)
    };
    let libdir = cargo_release_libs();
    let work = std::env::temp_dir().join(format!("drhook-ffi-bench-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();
    let mut progs = build(&work, &libdir);
    progs.push((RUST, std::env::current_exe().unwrap()));

    println!(
        "drhook-ffi overhead: ns per iteration (an instrumented leaf called from an instrumented parent), {n} calls x {samples} samples per configuration, medians and minimums, one run\n"
    );
    println!(
        "| program | configuration | ns/iter (median) | ns/iter (min) | uninstrumented (median) | ns added per pair (paired median) | ns added (min) |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|");
    let mut results: HashMap<(&str, &str), HashMap<String, f64>> = HashMap::new();
    for (pname, prog) in &progs {
        for (cname, env) in CONFIGS {
            let out = command(prog, env)
                .args(["time", &n.to_string(), &samples.to_string()])
                .output()
                .expect("run");
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            if !out.status.success() {
                println!("| {pname} | {cname} | failed: {} | | | | |", out.status);
                continue;
            }
            let f = fields(&text);
            let g = |k: &str| f.get(k).copied().unwrap_or(f64::NAN);
            println!(
                "| {pname} | {cname} | {:.2} | {:.2} | {:.2} | {:.2} | {:.2} |",
                g("ns"),
                g("ns_min"),
                g("base"),
                (g("paired") - 1.0) * g("base"),
                g("ns_min") - g("base_min"),
            );
            results.insert((pname, cname), f);
        }
    }
    // The two-rdtsc floor, from the C children (all configurations).
    let mut floors: Vec<f64> = results
        .iter()
        .filter(|((p, _), _)| p.starts_with("C,"))
        .filter_map(|(_, f)| f.get("floor").copied())
        .collect();
    let floor_mins: Vec<f64> = results
        .iter()
        .filter(|((p, _), _)| p.starts_with("C,"))
        .filter_map(|(_, f)| f.get("floor_min").copied())
        .collect();
    let mut floor_paired: Vec<f64> = results
        .iter()
        .filter(|((p, _), _)| p.starts_with("C,"))
        .filter_map(|(_, f)| f.get("floor_paired").copied())
        .collect();
    if floors.is_empty() {
        return;
    }
    let (floor, floor_min, floor_rel) = (
        median(&mut floors),
        floor_mins.iter().copied().fold(f64::INFINITY, f64::min),
        median(&mut floor_paired),
    );
    println!(
        "\nFloor: two rdtsc reads around the uninstrumented call (C): {floor:.2} ns/iter median, {floor_min:.2} min, {floor_rel:.2}x the uninstrumented call (paired median)\n"
    );
    println!("Against the targets:\n");
    println!(
        "| program | call tree: ns added per pair (paired median / min) | target | prof / two-rdtsc floor (medians / minimums / paired) | target |"
    );
    println!("|---|---:|---|---:|---|");
    for (pname, _) in &progs {
        let tree = results.get(&(pname, "DR_HOOK=1 (call tree)"));
        let prof = results.get(&(pname, "DR_HOOK_OPT=prof"));
        let (Some(t), Some(p)) = (tree, prof) else {
            continue;
        };
        let g = |m: &HashMap<String, f64>, k: &str| m.get(k).copied().unwrap_or(f64::NAN);
        println!(
            "| {pname} | {:.2} / {:.2} | <= 6 ns (Fortran) | {:.2} / {:.2} / {:.2} | <= 1.3 (Fortran) |",
            (g(t, "paired") - 1.0) * g(t, "base"),
            g(t, "ns_min") - g(t, "base_min"),
            g(p, "ns") / floor,
            g(p, "ns_min") / floor_min,
            g(p, "paired") / floor_rel,
        );
    }
    // Fortran against the Rust path, ns added per pair in the same run.
    if let Some(rust) = results.get(&(RUST, "DR_HOOK=1 (call tree)")) {
        println!("\nFortran against the Rust path (ns added per pair, same run; target <= 1.3):\n");
        println!(
            "| program | call tree: x Rust (paired medians / minimums) | prof: x Rust (paired medians / minimums) |"
        );
        println!("|---|---:|---:|");
        let g = |m: &HashMap<String, f64>, k: &str| m.get(k).copied().unwrap_or(f64::NAN);
        let added = |m: &HashMap<String, f64>| {
            (
                (g(m, "paired") - 1.0) * g(m, "base"),
                g(m, "ns_min") - g(m, "base_min"),
            )
        };
        let rust_prof = results.get(&(RUST, "DR_HOOK_OPT=prof"));
        for (pname, _) in progs.iter().filter(|(p, _)| p.starts_with("Fortran")) {
            let (Some(t), Some(p), Some(rp)) = (
                results.get(&(pname, "DR_HOOK=1 (call tree)")),
                results.get(&(pname, "DR_HOOK_OPT=prof")),
                rust_prof,
            ) else {
                continue;
            };
            let ((tm, tn), (rm, rn)) = (added(t), added(rust));
            let ((pm, pn), (qm, qn)) = (added(p), added(rp));
            println!(
                "| {pname} | {:.2} / {:.2} | {:.2} / {:.2} |",
                tm / rm,
                tn / rn,
                pm / qm,
                pn / qn
            );
        }
    }

    if std::env::var("DRHOOK_BENCH_CALLGRIND").as_deref() == Ok("0") || !have("valgrind") {
        println!("\n(callgrind skipped: valgrind not found or DRHOOK_BENCH_CALLGRIND=0)");
        return;
    }
    println!(
        "\nInstructions per pair (callgrind, user space, counted inside the loop only with --toggle-collect, 100000 pairs; the uninstrumented loop subtracted):\n"
    );
    println!("| program | DR_HOOK unset | DR_HOOK=1 (call tree) | DR_HOOK_OPT=prof | targets |");
    println!("|---|---:|---:|---:|---|");
    let pairs = 100_000u64;
    for (pname, prog) in &progs {
        let fortran = pname.starts_with("Fortran");
        // flang inlines the loops into the main program: count inside the
        // leaf (and what it calls) instead; the difference is the same.
        let loop_fn = |which: &str| {
            if *pname == FLANG_STATIC {
                format!("_QMbench_leafP{which}")
            } else if *pname == RUST {
                format!("*rust_loop_{which}*")
            } else if fortran {
                format!("__bench_loops_MOD_loop_{which}")
            } else {
                format!("loop_{which}")
            }
        };
        let count_n = |which: &str, env: &[(&str, &str)], pairs: u64| -> Option<f64> {
            let mut cmd = command(Path::new("valgrind"), env);
            if *pname == RUST {
                cmd.env("DRHOOK_FFI_BENCH_RUST", "1");
            }
            cmd.args([
                "--tool=callgrind",
                "--callgrind-out-file=/dev/null",
                &format!("--toggle-collect={}", loop_fn(which)),
            ])
            .arg(prog)
            .args([which, &pairs.to_string()]);
            let out = cmd.output().ok()?;
            let err = String::from_utf8_lossy(&out.stderr);
            err.lines()
                .find_map(|l| l.split("Collected :").nth(1)?.trim().parse::<f64>().ok())
        };
        // The compiler hooks resolve a function's name at its first call
        // (the warm-up, inside the counted loop function): count the
        // difference of two run lengths instead, which leaves it out.
        let count = |which: &str, env: &[(&str, &str)]| -> Option<f64> {
            if *pname == CYG_STATIC {
                Some(count_n(which, env, 2 * pairs)? - count_n(which, env, pairs)?)
            } else {
                count_n(which, env, pairs)
            }
        };
        let mut row = Vec::new();
        for (_, env) in CONFIGS {
            let v = match (count("leaf", env), count("plain", env)) {
                (Some(a), Some(b)) => format!("{:.1}", (a - b) / pairs as f64),
                _ => "valgrind failed".into(),
            };
            row.push(v);
        }
        let targets = if *pname == CYG_STATIC {
            "<= the C pair (`DRHOOK_START/END`, libdrhook.a) + 20"
        } else if fortran {
            "<= 60 / <= 100 (reference ~700 / ~900)"
        } else if *pname == RUST {
            "(the Rust path: <= 60 / <= 90)"
        } else {
            "<= 60 / <= 90 (reference ~690 / ~890)"
        };
        println!(
            "| {pname} | {} | {} | {} | {targets} |",
            row[0], row[1], row[2]
        );
    }
    let _ = std::fs::remove_dir_all(&work);
}
