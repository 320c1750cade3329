//! What the MPI wrappers cost (issue 24): `MPI_Allreduce` of 8 bytes on 2
//! ranks (`progs/bench_mpi.c`, Open MPI's `mpirun -n 2`, shared memory),
//! plain; under the preload library with Dr.Hook on and no `mpi` token
//! (the wrapper passes through); with `DR_HOOK_OPT=mpi` (each call a row
//! with its bytes). ns per call: the median of 7 batches of 10^5 calls
//! (dominated by the ranks' polling on a loaded machine); instructions per
//! call executed inside the preload library (the wrappers' own cost, the
//! repeatable figure: MPI's polling is left out, and so is the memory
//! tool's pass-through of MPI's own `malloc`/`free`; `PMPI_Type_size` and
//! `PMPI_Comm_size`, run in the MPI library, are not in it either), rank 0
//! under callgrind
//! (rank 1 runs natively; difference of two run lengths). Skipped with a
//! message without mpicc.
//!
//! `cargo bench -p drhook-ffi --bench mpi_overhead`
//!
//! `DRHOOK_BENCH_BASELINE=<dir>/libdrhook_preload.so` adds its rows with
//! another build of the preload library (an earlier commit's), measured in
//! the same run. `DRHOOK_BENCH_MPIP=<dir>/libmpiP.so` adds mpiP's rows
//! (LLNL's mpiP built outside the repository, preloaded; ns only).

mod common;
use common::have;

use std::path::Path;
use std::process::{Command, Stdio};

fn mpirun(work: &Path, env: &[(&str, String)], grind: bool, n: &str, batches: &str) -> Command {
    let mut c = Command::new("mpirun");
    c.args([
        "--allow-run-as-root",
        "--oversubscribe",
        "--bind-to",
        "none",
    ])
    .current_dir(work)
    .stdin(Stdio::null());
    for (k, _) in std::env::vars() {
        if k.starts_with("DR_HOOK") || k.starts_with("DRHOOK_") || k == "LD_PRELOAD" {
            c.env_remove(k);
        }
    }
    let mut xs = vec!["-x".to_string(), "DR_HOOK_SILENT=1".to_string()];
    for (k, v) in env {
        xs.push("-x".into());
        xs.push(format!("{k}={v}"));
    }
    let app = |c: &mut Command, under: &[&str]| {
        c.args(&xs).args(["-n", "1"]).args(under);
        c.args(["./bench_mpi", n, batches]);
    };
    if grind {
        app(
            &mut c,
            &[
                "valgrind",
                "--tool=callgrind",
                "--callgrind-out-file=cg.out",
            ],
        );
        c.arg(":");
        app(&mut c, &[]);
    } else {
        c.args(&xs).args(["-n", "2", "./bench_mpi", n, batches]);
    }
    c
}

fn ns(work: &Path, env: &[(&str, String)]) -> Option<f64> {
    let out = mpirun(work, env, false, "100000", "7").output().ok()?;
    if !out.status.success() {
        eprintln!("{}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.trim().parse().ok())
}

/// The instructions executed inside `object` (self cost of its
/// functions) in a callgrind output file. Cost lines follow `fn=`; the
/// line after `calls=` is a call's inclusive cost, charged to the caller,
/// and is skipped; names may be compressed (`ob=(3) path` or `cob=(3)
/// path`, then `ob=(3)`).
fn instructions_in(text: &str, object: &str) -> f64 {
    type Names = std::collections::HashMap<String, String>;
    // `(id) name` defines a compressed name, `(id)` uses it.
    let name_of = |v: &str, names: &mut Names| -> String {
        let v = v.trim();
        match v.strip_prefix('(').and_then(|r| r.split_once(')')) {
            Some((id, rest)) if !rest.trim().is_empty() => {
                names.insert(id.to_string(), rest.trim().to_string());
                rest.trim().to_string()
            }
            Some((id, _)) => names.get(id).cloned().unwrap_or_default(),
            None => v.to_string(),
        }
    };
    let (mut obs, mut fns) = (Names::default(), Names::default());
    let (mut ob_is_it, mut alloc_fn, mut skip_next) = (false, false, false);
    let mut total = 0.0;
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("ob=") {
            ob_is_it = name_of(v, &mut obs).contains(object);
            continue;
        }
        if let Some(v) = line.strip_prefix("cob=") {
            name_of(v, &mut obs);
            continue;
        }
        if let Some(v) = line.strip_prefix("fn=") {
            // The memory tool's pass-through of MPI's own allocations is
            // not the wrappers' cost.
            let name = name_of(v, &mut fns);
            alloc_fn = matches!(
                name.as_str(),
                "malloc" | "free" | "calloc" | "realloc" | "posix_memalign" | "aligned_alloc"
            ) || name.contains("::alloc::");
            continue;
        }
        if let Some(v) = line.strip_prefix("cfn=") {
            name_of(v, &mut fns);
            continue;
        }
        if line.starts_with("calls=") {
            skip_next = true;
            continue;
        }
        let first = line.bytes().next();
        if first.is_some_and(|b| b.is_ascii_digit() || b == b'+' || b == b'-' || b == b'*') {
            if skip_next {
                skip_next = false;
                continue;
            }
            if ob_is_it && !alloc_fn {
                total += line
                    .split_whitespace()
                    .nth(1)
                    .and_then(|x| x.parse::<f64>().ok())
                    .unwrap_or(0.0);
            }
        }
    }
    total
}

/// Instructions per call executed inside the preload library (the
/// wrapper and the engine's enter/exit), rank 0 under callgrind: two run
/// lengths, the difference is the loop's alone.
fn instructions(work: &Path, env: &[(&str, String)]) -> Option<f64> {
    let ir = |n: &str| -> Option<f64> {
        let out = mpirun(work, env, true, n, "1").output().ok()?;
        if !out.status.success() {
            return None;
        }
        let text = std::fs::read_to_string(work.join("cg.out")).ok()?;
        Some(instructions_in(&text, "libdrhook_preload"))
    };
    let (a, b) = (ir("20000")?, ir("60000")?);
    Some((b - a) / 40000.0)
}

fn main() {
    if !have("mpicc") || !have("mpirun") {
        println!("mpicc or mpirun not found: the MPI benchmark is skipped");
        return;
    }
    let work = tempfile::tempdir().unwrap();
    // The preload library (release) and the program.
    let (_, preload) = common::build(work.path(), &["drhook-preload"], "bench_io", false);
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/progs/bench_mpi.c");
    let st = Command::new("mpicc")
        .args(["-O2", "-o"])
        .arg(work.path().join("bench_mpi"))
        .arg(src)
        .status()
        .expect("mpicc");
    assert!(st.success(), "compiling bench_mpi.c failed");
    let pre = preload.display().to_string();
    let on = |opt: &str| {
        vec![
            ("LD_PRELOAD", pre.clone()),
            ("DR_HOOK", "1".to_string()),
            ("DR_HOOK_OPT", opt.to_string()),
        ]
    };
    let mut cfgs = vec![
        ("plain".to_string(), vec![]),
        (
            "preload, DR_HOOK_OPT=prof (mpi off)".to_string(),
            on("prof"),
        ),
        ("preload, DR_HOOK_OPT=mpi".to_string(), on("mpi")),
    ];
    if let Some(base) = std::env::var_os("DRHOOK_BENCH_BASELINE") {
        let base = base.to_string_lossy().into_owned();
        for opt in ["prof", "mpi"] {
            let mut e = on(opt);
            e[0].1.clone_from(&base);
            cfgs.push((format!("baseline preload, DR_HOOK_OPT={opt}"), e));
        }
    }
    // mpiP (LLNL's MPI profiler, built outside the repository: its
    // `libmpiP.so`), preloaded as its documentation says: its default
    // (each call site found by a one-level backtrace) and `-k0` (no call
    // sites). Under callgrind its rank never finishes here: ns only.
    let n_grind = cfgs.len();
    if let Some(mpip) = std::env::var_os("DRHOOK_BENCH_MPIP") {
        let mpip = mpip.to_string_lossy().into_owned();
        cfgs.push((
            "mpiP (call sites: 1 level)".to_string(),
            vec![("LD_PRELOAD", mpip.clone())],
        ));
        cfgs.push((
            "mpiP, MPIP=-k0 (no call sites)".to_string(),
            vec![("LD_PRELOAD", mpip), ("MPIP", "-k0".to_string())],
        ));
    }
    let grind = have("valgrind");
    println!(
        "| configuration | ns/call | over plain | instructions/call in the preload library (rank 0, callgrind) |"
    );
    println!("|---|---:|---:|---:|");
    let times: Vec<Option<f64>> = cfgs.iter().map(|(_, e)| ns(work.path(), e)).collect();
    for (k, ((name, e), t)) in cfgs.iter().zip(&times).enumerate() {
        let i = if grind && k < n_grind {
            instructions(work.path(), e)
        } else {
            None
        };
        println!(
            "| {name} | {} | {} | {} |",
            t.map_or("-".into(), |t| format!("{t:.1}")),
            match (t, times[0]) {
                (Some(t), Some(b)) => format!("{:+.1} ns", t - b),
                _ => "-".into(),
            },
            i.map_or("-".into(), |i| format!("{i:.1}")),
        );
    }
}
