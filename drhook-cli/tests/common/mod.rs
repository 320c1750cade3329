//! Shared by the integration tests: generators of profiles (proptest),
//! where the fixtures are, running the `drhook` binary and the example
//! programs, and the skip-or-fail rule for optional tools.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use drhook_cli::profile::{
    Cluster, Columns, Header, Kind, MemColumns, MemItem, PerCall, Profile, Row, RowSizes,
    ThreadInfo,
};
use proptest::prelude::*;

/// The validator of `docs/profile-schema.json`.
pub fn schema() -> jsonschema::Validator {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/profile-schema.json");
    let s: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    jsonschema::validator_for(&s).expect("the schema is a valid JSON Schema")
}

/// Asserts that `doc` validates, listing every error.
pub fn assert_valid(v: &jsonschema::Validator, doc: &serde_json::Value) {
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}\n{doc:#}");
}

/// The reference's example profiles, copied into the workspace's
/// `tests/fixtures`.
pub fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

/// The profile fixtures (wall, CPU, callpath+clusterinfo+self, C with
/// files, memory).
pub fn fixture_profiles() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

/// The `drhook` binary of this build.
pub fn drhook() -> Command {
    Command::new(env!("CARGO_BIN_EXE_drhook"))
}

/// Runs `drhook args...` in `dir`.
pub fn run_drhook(dir: &Path, args: &[&str]) -> Output {
    drhook()
        .args(args)
        .current_dir(dir)
        .output()
        .expect("running drhook")
}

/// stdout as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// stderr as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Asserts exit status 0.
pub fn ok(o: &Output) -> String {
    assert_eq!(
        o.status.code(),
        Some(0),
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        stdout(o),
        stderr(o)
    );
    stdout(o)
}

/// Whether an optional tool is usable; prints that the test is skipped if
/// not, or fails when CI requires every tool (`DRHOOK_REQUIRE_FORTRAN=1`,
/// set by `.ci/run`, which installs them).
pub fn require(usable: bool, what: &str) -> bool {
    if usable {
        return true;
    }
    let required = std::env::var("DRHOOK_REQUIRE_FORTRAN").as_deref() == Ok("1");
    assert!(
        !required,
        "{what} is not available and DRHOOK_REQUIRE_FORTRAN=1"
    );
    eprintln!("SKIPPED: {what} is not available (set DRHOOK_REQUIRE_FORTRAN=1 to fail instead)");
    false
}

fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        "[A-Z][A-Z0-9_]{0,8}(:[A-Z][A-Z0-9_]{0,10})?",
        "[a-z_][a-z0-9_]{0,6}(::[a-z_][a-z0-9_]{0,8}){0,2}",
        "[a-z][a-z@$ ]{0,10}[a-z]",
        Just("$drhook".to_string()),
    ]
}

fn fixed(decimals: u32, max: u64) -> impl Strategy<Value = f64> {
    (0..max).prop_map(move |m| m as f64 / 10f64.powi(decimals as i32))
}

fn thread_info() -> impl Strategy<Value = ThreadInfo> {
    (
        1u32..64,
        fixed(2, 10_000_000),
        fixed(2, 10_000),
        proptest::option::of(any::<u64>()),
        proptest::option::of(any::<u64>()),
    )
        .prop_map(|(id, time_s, pct, self_cycles, cycles)| ThreadInfo {
            id,
            time_s,
            pct,
            self_cycles,
            cycles,
        })
}

fn mem_item() -> impl Strategy<Value = MemItem> {
    (
        "[a-z][a-z.]{0,8}",
        any::<u64>(),
        prop_oneof![Just(""), Just("MB")],
    )
        .prop_map(|(name, value, unit)| MemItem {
            name,
            value,
            unit: unit.to_string(),
        })
}

#[derive(Clone, Debug)]
struct Shape {
    kind: Kind,
    columns: Columns,
    clusterinfo: bool,
    sizeinfo: bool,
    indent: usize,
}

fn shape() -> impl Strategy<Value = Shape> {
    (
        prop_oneof![Just(Kind::Wall), Just(Kind::Cpu), Just(Kind::Memory)],
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        1usize..9,
    )
        .prop_map(|(kind, counters, clusterinfo, sizeinfo, indent)| {
            let memory = kind == Kind::Memory;
            Shape {
                kind,
                columns: if counters && !memory {
                    Columns::Counters
                } else {
                    Columns::PerCall
                },
                clusterinfo: clusterinfo && !memory,
                sizeinfo: sizeinfo && !memory,
                indent,
            }
        })
}

fn row(s: Shape) -> impl Strategy<Value = Row> {
    (
        (
            fixed(2, 1_000_000),
            fixed(3, 1_000_000_000),
            fixed(3, 1_000_000_000),
            fixed(3, 1_000_000_000),
            0u64..1_000_000_000_000,
            fixed(2, 100_000_000),
            fixed(2, 100_000_000),
        ),
        (
            proptest::option::of(0u64..100_000),
            proptest::option::of(0u64..100_000),
            any::<bool>(),
            name(),
            1u32..1000,
            proptest::option::of("[a-z_]{1,8}\\.(c|F90)"),
        ),
        (
            (0u64..10_000, 0u64..64),
            proptest::option::of(any::<[u64; 5]>()),
            proptest::collection::vec("[A-Z][A-Z0-9_:]{0,12}", 0..5),
            any::<[u32; 8]>(),
        ),
    )
        .prop_map(
            move |(
                (pct, cumul, self_s, total_s, calls, sms, tms),
                (mips, mflops, star, routine, thread, file),
                ((cid, csize), sizes, path, m),
            )| {
                let memory = s.kind == Kind::Memory;
                Row {
                    rank: 0,
                    pct,
                    cumul_s: if memory { 0.0 } else { cumul },
                    self_s: if memory { 0.0 } else { self_s },
                    total_s: if memory { 0.0 } else { total_s },
                    calls,
                    per_call: match (s.kind, s.columns) {
                        (Kind::Memory, _) => PerCall::None,
                        (_, Columns::PerCall) => PerCall::Ms {
                            self_ms: sms,
                            total_ms: tms,
                        },
                        (_, Columns::Counters) => PerCall::Counters {
                            mips: mips.map(|v| v as f64),
                            mflops: mflops.map(|v| v as f64),
                        },
                    },
                    star,
                    routine,
                    thread,
                    file: if memory { None } else { file },
                    cluster: s.clusterinfo.then_some(Cluster {
                        id: cid,
                        size: csize,
                    }),
                    sizes: sizes.filter(|_| s.sizeinfo).map(|v| RowSizes {
                        sum: v[0],
                        per_sec: v[1],
                        per_call: v[2],
                        min: v[3],
                        max: v[4],
                    }),
                    path: if memory { Vec::new() } else { path },
                    memory: memory.then(|| MemColumns {
                        self_alloc: i64::from(m[0]) - 7,
                        children_alloc: i64::from(m[1]),
                        self_leaked: i64::from(m[2]),
                        heap: i64::from(m[3]),
                        max_stack: i64::from(m[4]),
                        paging: i64::from(m[5]),
                        allocs: u64::from(m[6] % 3),
                        frees: u64::from(m[7] % 3),
                    }),
                    io: None,
                }
            },
        )
}

/// Random profiles of every kind and layout, with numbers at the
/// precision the text prints (so text round trips are exact).
pub fn profile() -> impl Strategy<Value = Profile> {
    shape()
        .prop_flat_map(|s| {
            (
                (
                    "[./a-z_]{1,16}",
                    1u32..5000,
                    1u32..5000,
                    1u32..256,
                    any::<u32>(),
                    "[0-9]{8} [0-9]{6}",
                    "[0-9]{8} [0-9]{6}",
                ),
                (
                    fixed(2, 100_000),
                    proptest::option::of(proptest::collection::vec(mem_item(), 1..8)),
                    fixed(2, 10_000_000),
                    proptest::collection::vec(thread_info(), 0..4),
                    proptest::collection::vec("Extra: [a-z ]{0,12}[a-z]", 0..2),
                ),
                proptest::collection::vec(row(s.clone()), 0..12),
                Just(s),
            )
        })
        .prop_map(
            |(
                (program, proc, nprocs, nthreads, routines, started, ended),
                (overhead, mem, total, threads, extra),
                mut rows,
                s,
            )| {
                let memory = s.kind == Kind::Memory;
                for (i, r) in rows.iter_mut().enumerate() {
                    r.rank = i as u64 + 1;
                }
                let has_paths = rows.iter().any(|r| !r.path.is_empty());
                Profile {
                    source: None,
                    header: Header {
                        kind: s.kind,
                        program,
                        proc,
                        nprocs,
                        nthreads,
                        routines_called: u64::from(routines),
                        started,
                        ended,
                        overhead_pct: (!memory).then_some(overhead),
                        memory_usage: mem,
                        total_s: (!memory).then_some(total),
                        elapsed_s: None,
                        threads: if memory { Vec::new() } else { threads },
                        columns: s.columns,
                        clusterinfo: s.clusterinfo,
                        sizeinfo: s.sizeinfo,
                        callpath_indent: has_paths.then_some(s.indent),
                        counters: Vec::new(),
                        extra_header: extra,
                        metadata: None,
                    },
                    rows,
                    tree: None,
                }
            },
        )
}

/// `target/<profile>` of this test build.
pub fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

/// The workspace root.
pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Builds other workspace targets (`cargo build <args>`) into this test
/// build's target directory and profile; a no-op when up to date.
pub fn cargo_build(args: &[&str]) {
    let mut cmd = Command::new(env!("CARGO"));
    cmd.arg("build")
        .args(args)
        .arg("--manifest-path")
        .arg(workspace().join("Cargo.toml"))
        .arg("--target-dir")
        .arg(target_dir().parent().unwrap());
    if target_dir().file_name().is_some_and(|n| n == "release") {
        cmd.arg("--release");
    }
    let out = cmd.output().expect("cargo");
    assert!(
        out.status.success(),
        "cargo build {args:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `program` in `dir` with a clean Dr.Hook environment plus `env`.
pub fn run_with_env(dir: &Path, program: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(program);
    cmd.args(args).current_dir(dir);
    for (k, _) in std::env::vars() {
        if k.starts_with("DR_HOOK") || k.starts_with("DRHOOK_") {
            cmd.env_remove(k);
        }
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output()
        .unwrap_or_else(|e| panic!("{}: {e}", program.display()))
}

/// The `weather` example (built on first use).
pub fn weather() -> PathBuf {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| cargo_build(&["-p", "drhook-examples", "--bin", "weather"]));
    target_dir().join("weather")
}

/// Runs the weather model as MPI task `rank` of `nranks` (the launcher's
/// variables, no MPI library) with `steps` time steps on 2 threads, in
/// `dir`, under `DR_HOOK_OPT=opt`; returns the profile's path.
pub fn weather_run(dir: &Path, rank: u32, nranks: u32, steps: u32, opt: &str) -> PathBuf {
    weather_run_env(dir, rank, nranks, steps, opt, &[])
}

/// [`weather_run`] with more environment variables.
pub fn weather_run_env(
    dir: &Path,
    rank: u32,
    nranks: u32,
    steps: u32,
    opt: &str,
    extra: &[(&str, &str)],
) -> PathBuf {
    let r = rank.to_string();
    let n = nranks.to_string();
    let s = steps.to_string();
    let mut env = vec![
        ("DR_HOOK", "1"),
        ("DR_HOOK_OPT", opt),
        ("OMPI_COMM_WORLD_RANK", r.as_str()),
        ("OMPI_COMM_WORLD_SIZE", n.as_str()),
    ];
    env.extend_from_slice(extra);
    let o = run_with_env(dir, &weather(), &[&s, "2"], &env);
    ok(&o);
    let p = dir.join(format!("drhook.prof.{}", rank + 1));
    assert!(p.exists(), "{} not written:\n{}", p.display(), stderr(&o));
    p
}

/// One activation of a timeline: the routines from the thread's outermost
/// open activation down to it, its begin and end (µs).
#[derive(Clone, Debug, PartialEq)]
pub struct Slice {
    pub path: Vec<String>,
    pub begin: f64,
    pub end: f64,
}

/// Checks a Chrome/Perfetto trace as the engine writes it and returns its
/// activations per (pid, tid): every B/E pair balanced and nested on its
/// thread, timestamps never decreasing on a thread, a `process_name` per
/// pid and a `thread_name` per thread with events. Complete events
/// (`X`, as `drhook trace merge` writes by default) are nested by their
/// times, and their slices come in the order of their ends, as pairs'.
pub fn trace_tracks(doc: &serde_json::Value) -> std::collections::BTreeMap<(u64, u64), Vec<Slice>> {
    use std::collections::{BTreeMap, BTreeSet};
    let events = doc["traceEvents"].as_array().expect("traceEvents");
    let mut open: BTreeMap<(u64, u64), Vec<(String, f64)>> = BTreeMap::new();
    let mut last: BTreeMap<(u64, u64), f64> = BTreeMap::new();
    let mut out: BTreeMap<(u64, u64), Vec<Slice>> = BTreeMap::new();
    let (mut procs, mut threads) = (BTreeSet::new(), BTreeSet::new());
    // Per track: (name, begin, end) of the complete events.
    type Spans = Vec<(String, f64, f64)>;
    let mut complete: BTreeMap<(u64, u64), Spans> = BTreeMap::new();
    for e in events {
        let pid = e["pid"].as_u64().expect("pid");
        let tid = e["tid"].as_u64().expect("tid");
        let ph = e["ph"].as_str().expect("ph");
        if ph == "M" {
            match e["name"].as_str().unwrap() {
                "process_name" => {
                    assert!(e["args"]["name"].is_string());
                    procs.insert(pid);
                }
                "thread_name" => {
                    assert!(e["args"]["name"].is_string());
                    threads.insert((pid, tid));
                }
                _ => {}
            }
            continue;
        }
        let ts = e["ts"].as_f64().expect("ts");
        let key = (pid, tid);
        if ph == "X" {
            let dur = e["dur"].as_f64().expect("dur");
            assert!(dur >= 0.0, "negative duration on {key:?}");
            complete.entry(key).or_default().push((
                e["name"].as_str().expect("name").to_string(),
                ts,
                ts + dur,
            ));
            continue;
        }
        let l = last.entry(key).or_insert(f64::MIN);
        assert!(ts >= *l, "time goes back on {key:?}: {ts} after {l}");
        *l = ts;
        let stack = open.entry(key).or_default();
        match ph {
            "B" => stack.push((e["name"].as_str().expect("name").to_string(), ts)),
            "E" => {
                let path: Vec<String> = stack.iter().map(|(n, _)| n.clone()).collect();
                let (_, begin) = stack
                    .pop()
                    .unwrap_or_else(|| panic!("E with nothing open on {key:?}"));
                out.entry(key).or_default().push(Slice {
                    path,
                    begin,
                    end: ts,
                });
            }
            "i" => {}
            other => panic!("unexpected phase {other}"),
        }
    }
    for (key, mut xs) in complete {
        assert!(
            !out.contains_key(&key) && open.get(&key).is_none_or(Vec::is_empty),
            "{key:?}: both pairs and complete events"
        );
        open.insert(key, Vec::new());
        // Outer first at equal begins; a slice is inside the last one
        // open that it fits in (times have 3 decimals: 1 ns of slack).
        xs.sort_by(|a, b| a.1.total_cmp(&b.1).then(b.2.total_cmp(&a.2)));
        let mut stack: Vec<(String, f64, f64)> = Vec::new();
        let mut slices = Vec::new();
        for (name, begin, end) in xs {
            while stack
                .last()
                .is_some_and(|t| end > t.2 + 0.0015 || begin > t.2)
            {
                stack.pop();
            }
            let mut path: Vec<String> = stack.iter().map(|t| t.0.clone()).collect();
            path.push(name.clone());
            slices.push(Slice { path, begin, end });
            stack.push((name, begin, end));
        }
        slices.sort_by(|a, b| {
            a.end
                .total_cmp(&b.end)
                .then(b.path.len().cmp(&a.path.len()))
        });
        out.insert(key, slices);
    }
    for (key, stack) in &open {
        assert!(stack.is_empty(), "{key:?}: never ended: {stack:?}");
        assert!(procs.contains(&key.0), "no process_name for pid {}", key.0);
        assert!(threads.contains(key), "no thread_name for {key:?}");
    }
    out
}
