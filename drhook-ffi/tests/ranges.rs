//! `DR_HOOK_NVTX` / `DR_HOOK_ROCTX` without a GPU: an NVTX injection
//! library built here (`progs/nvtx_inject.c`, the NVTX v3 protocol) and a
//! fake `libroctx64.so` (`progs/roctx_fake.c`) record every push and pop
//! with its thread; C and Fortran OpenMP programs run under them. The
//! ranges nest per thread as the calling tree does, their counts are the
//! profile's calls minus the ranges the spam filter skipped, and the names
//! are the routines'.

mod common;
use common::*;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Builds the two tools in `dir`: `libnvtxinject.so` and
/// `roctx/libroctx64.so`.
fn tools(dir: &Path) -> (PathBuf, PathBuf) {
    let inject = dir.join("libnvtxinject.so");
    let roctx = dir.join("roctx");
    std::fs::create_dir_all(&roctx).unwrap();
    for (src, out) in [
        ("nvtx_inject.c", inject.clone()),
        ("roctx_fake.c", roctx.join("libroctx64.so")),
    ] {
        let s = prog(src).display().to_string();
        let o = out.display().to_string();
        tool(
            dir,
            "gcc",
            &[
                "-shared",
                "-fPIC",
                "-O1",
                "-Wall",
                "-o",
                &o,
                &s,
                "-lpthread",
            ],
        );
    }
    (inject, roctx)
}

/// What a log says: per name, the ranges pushed; the (parent, child)
/// pairs of names seen nested; the threads that pushed.
#[derive(Debug, Default)]
struct Ranges {
    pushes: BTreeMap<String, u64>,
    pairs: BTreeSet<(String, String)>,
    threads: BTreeSet<u64>,
}

/// Reads a log, checking that every thread's pops match its pushes (no
/// pop without a push, nothing left open).
fn read_log(path: &Path) -> Ranges {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut stacks: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    let mut r = Ranges::default();
    for line in text.lines() {
        let mut f = line.splitn(3, ' ');
        let tid: u64 = f.next().unwrap().parse().unwrap();
        match f.next().unwrap() {
            "init" => continue,
            "push" => {
                let name = f.next().unwrap_or("").to_string();
                let s = stacks.entry(tid).or_default();
                let parent = s.last().cloned().unwrap_or_default();
                r.pairs.insert((parent, name.clone()));
                *r.pushes.entry(name.clone()).or_default() += 1;
                r.threads.insert(tid);
                s.push(name);
            }
            "pop" => {
                let s = stacks.entry(tid).or_default();
                assert!(s.pop().is_some(), "a pop without a push on {tid}:\n{text}");
            }
            other => panic!("unknown line {other}: {line}"),
        }
    }
    for (tid, s) in &stacks {
        assert!(s.is_empty(), "ranges left open on thread {tid}: {s:?}");
    }
    r
}

/// The skipped count of `tool` in the profile header.
fn skipped(p: &drhook_tests::Profile, tool: &str) -> u64 {
    let key = format!("{tool} ranges skipped by the spam filter : ");
    let l = p
        .header
        .iter()
        .find_map(|l| l.trim().strip_prefix(&key).map(str::to_string))
        .unwrap_or_else(|| panic!("no '{key}' line in {:#?}", p.header));
    l.trim().parse().unwrap()
}

/// Σ calls per routine over the profile's rows.
fn calls(p: &drhook_tests::Profile) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for r in &p.rows {
        *m.entry(r.name.clone()).or_default() += r.calls;
    }
    m
}

/// (caller, routine) pairs of the call-path profile (`""`: no caller).
fn tree_pairs(p: &drhook_tests::Profile) -> BTreeSet<(String, String)> {
    p.rows
        .iter()
        .map(|r| (r.path.first().cloned().unwrap_or_default(), r.name.clone()))
        .collect()
}

fn env<'a>(
    d: &'a Path,
    inject: &'a str,
    roctx: &'a str,
    extra: &[(&'a str, &'a str)],
) -> Vec<(&'a str, String)> {
    let mut v: Vec<(&str, String)> = vec![
        ("DR_HOOK", "1".into()),
        ("DR_HOOK_OPT", "prof,callpath".into()),
        ("DR_HOOK_NVTX", "1".into()),
        ("DR_HOOK_ROCTX", "1".into()),
        ("NVTX_INJECTION64_PATH", inject.into()),
        ("NVTX_TEST_LOG", d.join("nvtx.log").display().to_string()),
        ("ROCTX_TEST_LOG", d.join("roctx.log").display().to_string()),
        ("LD_LIBRARY_PATH", roctx.into()),
        ("OMP_NUM_THREADS", "4".into()),
        ("OMP_DYNAMIC", "false".into()),
    ];
    v.extend(extra.iter().map(|(k, x)| (*k, x.to_string())));
    v
}

fn run_env(d: &Path, exe: &Path, e: &[(&str, String)]) -> drhook_tests::Run {
    let e: Vec<(&str, &str)> = e.iter().map(|(k, v)| (*k, v.as_str())).collect();
    run(d, exe, &e)
}

#[test]
fn c_openmp_ranges_nest_as_the_tree_on_every_thread_without_a_filter() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let (inject, roctx) = tools(d.path());
    let exe = c_exe(
        d.path(),
        "c_threads",
        &[&prog("c_threads.c")],
        &["-fopenmp"],
        Link::Static,
    );
    let (i, r) = (inject.display().to_string(), roctx.display().to_string());
    let e = env(
        d.path(),
        &i,
        &r,
        &[
            ("DR_HOOK_NVTX_SPAM_CALL_COUNT", "1000000"),
            ("DR_HOOK_ROCTX_SPAM_CALL_COUNT", "1000000"),
        ],
    );
    let run = run_env(d.path(), &exe, &e);
    ok(&run);
    let err = run.stderr();
    for l in [
        "DR_HOOK_NVTX=1",
        "DR_HOOK_NVTX_SPAM_CALL_COUNT=1000000",
        "DR_HOOK_NVTX_SPAM_WT=0.0001",
        "DR_HOOK_ROCTX_SPAM_CALL_COUNT=1000000",
    ] {
        assert!(err.contains(l), "no '{l}' in the echo:\n{err}");
    }
    assert!(!err.contains("not supported"), "{err}");
    let p = run.profile("drhook.prof.1");
    assert_eq!(skipped(&p, "NVTX"), 0);
    assert_eq!(skipped(&p, "ROCTX"), 0);
    let tree = tree_pairs(&p);
    for log in ["nvtx.log", "roctx.log"] {
        let g = read_log(&d.path().join(log));
        assert_eq!(g.pushes, calls(&p), "{log}: one range per call, by name");
        assert!(
            g.threads.len() >= 6,
            "{log}: ranges from every thread: {:?}",
            g.threads
        );
        for pair in &g.pairs {
            assert!(
                tree.contains(pair),
                "{log}: {pair:?} is not in the calling tree {tree:?}"
            );
        }
    }
}

#[test]
fn fortran_openmp_ranges_follow_the_reference_spam_filter() {
    if !have_gfortran() {
        return;
    }
    let d = tempdir();
    let (inject, roctx) = tools(d.path());
    yomhook(d.path(), true);
    let exe = fortran_exe(
        d.path(),
        "prog",
        &[&prog("f_omp.F90")],
        &["-fopenmp"],
        Link::Static,
    );
    let (i, r) = (inject.display().to_string(), roctx.display().to_string());
    let e = env(d.path(), &i, &r, &[("DR_HOOK_SILENT", "0")]);
    let run = run_env(d.path(), &exe, &e);
    ok(&run);
    let p = run.profile("drhook.prof.1");
    let all = calls(&p);
    let tree = tree_pairs(&p);
    for (log, tool) in [("nvtx.log", "NVTX"), ("roctx.log", "ROCTX")] {
        let g = read_log(&d.path().join(log));
        // OMP:KERNEL under OMP:WORKER: 10*n tiny calls on thread n, the
        // first 10 of each get a range (the reference's defaults: more
        // than 10 calls and under 1e-4 s so far).
        let skip = skipped(&p, tool);
        assert_eq!(skip, 10 + 20 + 30, "{tool}: {:#?}", p.header);
        let pushed: u64 = g.pushes.values().sum();
        assert_eq!(
            pushed,
            all.values().sum::<u64>() - skip,
            "{tool}: calls minus skipped"
        );
        for (name, n) in &all {
            let got = g.pushes.get(name).copied().unwrap_or(0);
            if name != "OMP:KERNEL" {
                assert_eq!(got, *n, "{tool}: {name}");
            }
        }
        for pair in &g.pairs {
            assert!(tree.contains(pair), "{tool}: {pair:?} not in {tree:?}");
        }
    }
    assert!(
        run.stderr()
            .contains("DRHOOK:NVTX: Skipping opening of region OMP:KERNEL"),
        "{}",
        run.stderr()
    );
}

#[test]
fn without_a_tool_the_program_runs_and_says_so() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = c_exe(
        d.path(),
        "c_threads",
        &[&prog("c_threads.c")],
        &["-fopenmp"],
        Link::Static,
    );
    let run = run(
        d.path(),
        &exe,
        &[
            ("DR_HOOK", "1"),
            ("DR_HOOK_OPT", "prof"),
            ("DR_HOOK_NVTX", "1"),
            ("DR_HOOK_ROCTX", "1"),
            ("NVTX_INJECTION64_PATH", ""),
            ("LD_LIBRARY_PATH", d.path().to_str().unwrap()),
        ],
    );
    ok(&run);
    let err = run.stderr();
    assert!(err.contains("DRHOOK:NVTX: no NVTX tool attached"), "{err}");
    assert!(
        err.contains("DRHOOK:ROCTX: libroctx64.so could not be loaded"),
        "{err}"
    );
    assert!(run.stdout().contains("sink="));
    // Without a tool the ranges are not even tried: no header line.
    let p = run.profile("drhook.prof.1");
    assert!(
        !p.header.iter().any(|l| l.contains("ranges skipped")),
        "{:#?}",
        p.header
    );
    // Off: no header line.
    let plain = common::run(d.path(), &exe, &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof")]);
    ok(&plain);
    let p = plain.profile("drhook.prof.1");
    assert!(
        !p.header.iter().any(|l| l.contains("ranges skipped")),
        "{:#?}",
        p.header
    );
}
