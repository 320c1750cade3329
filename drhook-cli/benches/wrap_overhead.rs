//! The cost of a wrapped library call: `crc32` on 64 (and 0) bytes from
//! zlib, called in a loop, plain vs inside a hand-written Dr.Hook
//! enter/exit pair (`drhook.h` macros: the reference "one pair") vs
//! through the wrapper `drhook wrap` made (run time: LD_PRELOAD with
//! `libdrhook.so`; link time: `-Wl,--wrap` with `libdrhook.a`) — the three
//! loops alternately in one process, so that the differences are paired —
//! and vs `ltrace`, in one run; then instructions per call under
//! callgrind, counted inside each loop only (`--toggle-collect`).
//!
//! `cargo bench -p drhook-cli --bench wrap_overhead`
//! (`DRHOOK_BENCH_QUICK=1`: 1 M calls × 5 samples instead of 5 M × 9;
//! `DRHOOK_BENCH_CALLGRIND=0`: no valgrind.)
//!
//! Each program runs as one child process per configuration (Dr.Hook reads
//! its environment once per process).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn target_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_drhook"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn build_libdrhook() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let st = Command::new(env!("CARGO"))
        .args([
            "build",
            "--release",
            "-p",
            "drhook-ffi",
            "--lib",
            "--manifest-path",
        ])
        .arg(root.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(target_dir().parent().unwrap())
        .status()
        .expect("cargo");
    assert!(st.success(), "building libdrhook failed");
}

fn sh(dir: &Path, argv: &[String], env: &[(&str, &str)]) -> String {
    let out = Command::new(&argv[0])
        .args(&argv[1..])
        .envs(env.iter().copied())
        .current_dir(dir)
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", argv[0]));
    assert!(
        out.status.success(),
        "{}:\n{}{}",
        argv.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

fn have(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

fn command(program: &Path, env: &[(&str, &str)], preload: Option<&Path>) -> Command {
    let mut cmd = Command::new(program);
    for (k, _) in std::env::vars() {
        if k.starts_with("DR_HOOK") || k.starts_with("DRHOOK_") || k == "LD_PRELOAD" {
            cmd.env_remove(k);
        }
    }
    cmd.env("DR_HOOK_SILENT", "1")
        .env("DR_HOOK_PROFILE", "/dev/null/never-written");
    for (k, v) in env {
        cmd.env(k, v);
    }
    if let Some(p) = preload {
        cmd.env("LD_PRELOAD", p);
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
    let quick = std::env::var_os("DRHOOK_BENCH_QUICK").is_some();
    let (n, samples) = if quick {
        (1_000_000u64, 5)
    } else {
        (5_000_000u64, 9)
    };
    build_libdrhook();
    let lib = target_dir();
    let work = std::env::temp_dir().join(format!("drhook-wrap-bench-{}", std::process::id()));
    std::fs::create_dir_all(&work).unwrap();

    // The wrapper, as a user makes it.
    let drhook = env!("CARGO_BIN_EXE_drhook");
    sh(
        &work,
        &s(&[
            drhook, "wrap", "init", "--name", "zlib", "--header", "zlib.h", "--lib", "z",
        ]),
        &[],
    );
    let wdir = work.join("wrap-zlib");
    // zlib's crc32 calls crc32_z through its own PLT: with both wrapped, a
    // crc32 call is two routines (two pairs). Measure one wrapper.
    let filter = wdir.join("filter");
    let mut f = std::fs::read_to_string(&filter).unwrap();
    f.push_str("EXCLUDE FUNCTION crc32_z\n");
    std::fs::write(&filter, f).unwrap();
    sh(&wdir, &s(&["make", "-s"]), &[]);
    let preload = wdir.join("libdrhook-wrap-zlib.so");
    let pc = wdir.display().to_string();
    let static_libs = sh(
        &work,
        &s(&["pkg-config", "--libs", "drhook-wrap-zlib-static"]),
        &[("PKG_CONFIG_PATH", &pc)],
    );

    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/progs/bench_wrap.c");
    let inc = format!(
        "-I{}",
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../drhook-ffi/include")
            .display()
    );
    let cc = |out: &str, libs: Vec<String>| {
        let mut a = s(&["cc", "-O2", &inc, src.to_str().unwrap(), "-o", out]);
        a.extend(libs);
        a.push("-ldl".into());
        sh(&work, &a, &[]);
        work.join(out)
    };
    // Run time: the program linked with libdrhook.so, the wrapper preloaded.
    let so = cc(
        "bench_so",
        s(&[
            "-lz",
            &format!("-L{}", lib.display()),
            &format!("-Wl,-rpath,{}", lib.display()),
            "-ldrhook",
        ]),
    );
    // Link time: --wrap list, the link-time archive and libdrhook.a.
    let lt = cc(
        "bench_linktime_a",
        static_libs.split_whitespace().map(String::from).collect(),
    );
    let flavours: [(&str, &Path, Option<&Path>); 2] = [
        ("run time (LD_PRELOAD, libdrhook.so)", &so, Some(&preload)),
        ("link time (--wrap, libdrhook.a)", &lt, None),
    ];

    for len in [64u32, 0] {
        println!(
            "drhook wrap overhead: crc32 on {len} bytes, ns per call, {n} calls x {samples} samples, the three loops timed alternately in one process per row (medians; minimums in parentheses)\n"
        );
        println!(
            "| flavour | configuration | crc32 plain | in a hand-written pair | through the wrapper | pair − plain | wrapper − plain | wrapper − pair (paired median) |"
        );
        println!("|---|---|---:|---:|---:|---:|---:|---:|");
        let args = [
            "time".to_string(),
            n.to_string(),
            samples.to_string(),
            len.to_string(),
        ];
        for (fname, prog, pre) in &flavours {
            for (cname, env) in CONFIGS {
                let out = command(prog, env, *pre).args(&args).output().expect("run");
                assert!(
                    out.status.success(),
                    "{}: {}",
                    prog.display(),
                    String::from_utf8_lossy(&out.stderr)
                );
                let m = fields(&String::from_utf8_lossy(&out.stdout));
                let g = |k: &str| m.get(k).copied().unwrap_or(f64::NAN);
                let cell = |k: &str| format!("{:.2} ({:.2})", g(k), g(&format!("{k}_min")));
                println!(
                    "| {fname} | {cname} | {} | {} | {} | {:.2} | {:.2} | {:.2} |",
                    cell("plain"),
                    cell("pair"),
                    cell("crc"),
                    g("pair") - g("plain"),
                    g("crc") - g("plain"),
                    g("diff"),
                );
            }
        }
        println!();
    }

    if have("ltrace") {
        let m = 20_000u64;
        let out = command(Path::new("ltrace"), &[], None)
            .args(["-e", "crc32", "-o", "/dev/null"])
            .arg(&so)
            .args(["time", &m.to_string(), "3", "64"])
            .output()
            .expect("ltrace");
        let f = fields(&String::from_utf8_lossy(&out.stdout));
        println!(
            "ltrace -e crc32 (the run-time program without the wrapper, 64 bytes, DR_HOOK unset, {m} calls x 3 samples): {:.0} ns per call ({:.0} min), plain {:.2} ns",
            f.get("crc").copied().unwrap_or(f64::NAN),
            f.get("crc_min").copied().unwrap_or(f64::NAN),
            f.get("plain").copied().unwrap_or(f64::NAN),
        );
    } else {
        println!("(ltrace not found: its row is skipped)");
    }

    if std::env::var("DRHOOK_BENCH_CALLGRIND").as_deref() == Ok("0") || !have("valgrind") {
        println!("\n(callgrind skipped: valgrind not found or DRHOOK_BENCH_CALLGRIND=0)");
        let _ = std::fs::remove_dir_all(&work);
        return;
    }
    let calls = 100_000u64;
    println!(
        "\nInstructions per call (callgrind, user space, inside each loop only with --toggle-collect, {calls} calls of crc32 on 64 bytes):\n"
    );
    println!(
        "| flavour | configuration | crc32 plain | pair added | wrapper added | wrapper − pair |"
    );
    println!("|---|---|---:|---:|---:|---:|");
    let count = |prog: &Path, which: &str, env: &[(&str, &str)], pre: Option<&Path>| -> f64 {
        let mut cmd = command(Path::new("valgrind"), env, pre);
        cmd.args([
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            &format!("--toggle-collect=loop_{which}"),
        ])
        .arg(prog)
        .args([which, &calls.to_string(), "64"]);
        let out = cmd.output().expect("valgrind");
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .find_map(|l| l.split("Collected :").nth(1)?.trim().parse::<f64>().ok())
            .map(|v| v / calls as f64)
            .unwrap_or(f64::NAN)
    };
    for (fname, prog, pre) in &flavours {
        for (cname, env) in CONFIGS {
            let plain = count(prog, "plain", env, *pre);
            let pair = count(prog, "pair", env, *pre) - plain;
            let wrapped = count(prog, "crc", env, *pre) - plain;
            println!(
                "| {fname} | {cname} | {plain:.1} | {pair:.1} | {wrapped:.1} | {:.1} |",
                wrapped - pair
            );
        }
    }
    println!();
    cxx_callgrind(&work, &lib, calls);
    let _ = std::fs::remove_dir_all(&work);
}

/// The C++ wrappers (`drhook wrap -x c++`): instructions per call of
/// yaml-cpp's `YAML::Emitter::good() const` (a member through `this`, a few
/// instructions of body), plain, in a hand-written pair, and through the
/// generated wrapper, run time and link time (`benches/progs/bench_wrap_cxx.cc`).
fn cxx_callgrind(work: &Path, lib: &Path, calls: u64) {
    let drhook = env!("CARGO_BIN_EXE_drhook");
    let ok = Command::new("c++")
        .args(["-x", "c++", "-E", "-", "-o", "/dev/null"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin
                .take()
                .unwrap()
                .write_all(b"#include <yaml-cpp/yaml.h>\n")?;
            c.wait()
        })
        .is_ok_and(|s| s.success());
    if !ok {
        println!("(C++ rows skipped: c++ or yaml-cpp's headers (libyaml-cpp-dev) not found)\n");
        return;
    }
    sh(
        work,
        &s(&[
            drhook,
            "wrap",
            "init",
            "-x",
            "c++",
            "--name",
            "yamlcpp",
            "--header",
            "yaml-cpp/yaml.h",
            "--lib",
            "yaml-cpp",
        ]),
        &[],
    );
    let wdir = work.join("wrap-yamlcpp");
    sh(&wdir, &s(&["make", "-s"]), &[]);
    let preload = wdir.join("libdrhook-wrap-yamlcpp.so");
    let pc = wdir.display().to_string();
    let lt_libs = sh(
        work,
        &s(&["pkg-config", "--libs", "drhook-wrap-yamlcpp-static"]),
        &[("PKG_CONFIG_PATH", &pc)],
    );
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/progs/bench_wrap_cxx.cc");
    let inc = format!(
        "-I{}",
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../drhook-ffi/include")
            .display()
    );
    let cxx = |out: &str, libs: Vec<String>| {
        let mut a = s(&["c++", "-O2", &inc, src.to_str().unwrap(), "-o", out]);
        a.extend(libs);
        a.push("-ldl".into());
        sh(work, &a, &[]);
        work.join(out)
    };
    let so = cxx(
        "bench_cxx_so",
        s(&[
            "-lyaml-cpp",
            &format!("-L{}", lib.display()),
            &format!("-Wl,-rpath,{}", lib.display()),
            "-ldrhook",
        ]),
    );
    let lt = cxx(
        "bench_cxx_linktime_a",
        lt_libs.split_whitespace().map(String::from).collect(),
    );
    println!(
        "Instructions per call (callgrind, as above, {calls} calls of the C++ member YAML::Emitter::good() const, wrapped by `drhook wrap -x c++`):\n"
    );
    println!(
        "| flavour | configuration | good() plain | pair added | wrapper added | wrapper − pair |"
    );
    println!("|---|---|---:|---:|---:|---:|");
    let count = |prog: &Path, which: &str, env: &[(&str, &str)], pre: Option<&Path>| -> f64 {
        let mut cmd = command(Path::new("valgrind"), env, pre);
        cmd.args([
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            &format!("--toggle-collect=loop_{which}"),
        ])
        .arg(prog)
        .args([which, &calls.to_string()]);
        let out = cmd.output().expect("valgrind");
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .find_map(|l| l.split("Collected :").nth(1)?.trim().parse::<f64>().ok())
            .map(|v| v / calls as f64)
            .unwrap_or(f64::NAN)
    };
    let flavours: [(&str, &Path, Option<&Path>); 2] = [
        ("run time (LD_PRELOAD, libdrhook.so)", &so, Some(&preload)),
        ("link time (--wrap, libdrhook.a)", &lt, None),
    ];
    for (fname, prog, pre) in &flavours {
        for (cname, env) in CONFIGS {
            let plain = count(prog, "plain", env, *pre);
            let pair = count(prog, "pair", env, *pre) - plain;
            let wrapped = count(prog, "good", env, *pre) - plain;
            println!(
                "| {fname} | {cname} | {plain:.1} | {pair:.1} | {wrapped:.1} | {:.1} |",
                wrapped - pair
            );
        }
    }
    println!();
}
