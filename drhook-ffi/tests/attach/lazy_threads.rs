//! Threads started without a tree (issue 29): a thread started through
//! the layer gets its tree at its first instrumented call, or never; its
//! profile lines are those of a tree made at its start.

use super::*;

/// The JSON profile's nodes: (routine, thread, parent routine, calls,
/// self_s, total_s).
fn nodes(dir: &Path) -> Vec<(String, u64, Option<String>, u64, f64, f64)> {
    let text = std::fs::read_to_string(dir.join("drhook.prof.1.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let tree = v["tasks"][0]["tree"].as_array().unwrap();
    let by_id: BTreeMap<u64, &serde_json::Value> = tree
        .iter()
        .map(|n| (n["id"].as_u64().unwrap(), n))
        .collect();
    tree.iter()
        .map(|n| {
            let parent = n["parent"]
                .as_u64()
                .map(|p| by_id[&p]["routine"].as_str().unwrap().to_string());
            (
                n["routine"].as_str().unwrap().to_string(),
                n["thread"].as_u64().unwrap(),
                parent,
                n["calls"].as_u64().unwrap(),
                n["self_s"].as_f64().unwrap(),
                n["total_s"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn threads_with_and_without_instrumented_calls_keep_their_profile_lines() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = lazy_threads_exe(d.path());
    // 140 plain and 140 hooked threads, one after the other (numbers 2 to
    // 281, plain ones even), then `late_hooked` (282) and `pool` (283).
    let r = drhook_run(
        d.path(),
        &["--opt", "prof,json"],
        &exe.display().to_string(),
        &["140"],
        &[],
    );
    ok(&r);
    assert!(r.stdout().contains("threads 282"), "{}", r.stdout());
    let all = nodes(d.path());
    let find = |name: &str, tid: u64| {
        let v: Vec<_> = all.iter().filter(|n| n.0 == name && n.1 == tid).collect();
        assert_eq!(v.len(), 1, "{name}@{tid}: {v:?}");
        v[0].clone()
    };
    // The first 256 threads that end keep a block of their own: the
    // plain ones their root region alone, the hooked ones their call
    // under it.
    for tid in 2..=257u64 {
        if tid % 2 == 0 {
            let t = find("thread:plain_worker", tid);
            assert_eq!((t.2.as_deref(), t.3), (None, 1), "{t:?}");
            assert!(t.5 > 0.0 && t.4 == t.5, "{t:?}");
        } else {
            let t = find("thread:hooked_worker", tid);
            assert_eq!((t.2.as_deref(), t.3), (None, 1), "{t:?}");
            assert!(t.5 > 0.0, "{t:?}");
            let w = find("LAZY:WORK", tid);
            assert_eq!((w.2.as_deref(), w.3), (Some("thread:hooked_worker"), 1));
        }
    }
    // The later ones are summed per start routine, under the number of
    // the first summed: 12 threads each.
    let plain = find("thread:plain_worker", 258);
    assert_eq!(plain.3, 12, "{plain:?}");
    assert!(plain.5 > 0.0, "{plain:?}");
    let hooked = find("thread:hooked_worker", 259);
    assert_eq!(hooked.3, 12, "{hooked:?}");
    assert_eq!(find("LAZY:WORK", 259).3, 12);
    assert_eq!(
        all.iter().filter(|n| n.0 == "thread:plain_worker").count(),
        129
    );
    assert_eq!(
        all.iter()
            .filter(|n| n.0.starts_with("thread:") || n.0 == "main")
            .count(),
        1 + 256 + 2 + 2,
        "{all:#?}"
    );
    // Plain code before the first instrumented call counts in the root
    // region: its tree was made as of the thread's start (the plain part
    // is three times as long as the call; without the back-dating the
    // root's self time would be microseconds: a quarter of the call's
    // time leaves room for a preempted call on a loaded machine).
    let late = find("thread:late_hooked", 282);
    let call = find("LAZY:LATE", 282);
    assert_eq!((late.3, call.3), (1, 1));
    assert_eq!(call.2.as_deref(), Some("thread:late_hooked"));
    assert!(late.4 > call.5 / 4.0, "{late:?} {call:?}");
    // A pool thread still running plain code when the profile is written.
    let pool = find("thread:pool", 283);
    assert_eq!(pool.3, 1);
    assert!(pool.5 > 0.0, "{pool:?}");
    assert_eq!(find("main", 1).3, 1);
    assert_eq!(find("LAZY:WORK", 1).3, 1);
    // The text profile: the same threads.
    let p = parse(d.path(), "drhook.prof.1");
    assert_eq!(p.threads, 261, "{:?}", p.header);
    assert_eq!(p.rows_of("thread:plain_worker").len(), 129);
    assert_eq!(p.row("thread:plain_worker", 258).calls, 12);
    assert_eq!(p.row("thread:hooked_worker", 259).calls, 12);
    assert_eq!(p.row("thread:pool", 283).calls, 1);
    assert!(
        p.header
            .iter()
            .any(|l| l.contains("summed : 12 in Thread#258 (thread:plain_worker)")),
        "{:#?}",
        p.header
    );
}

#[test]
fn a_fatal_signal_shows_the_root_region_of_a_thread_without_a_tree() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let r = run_ending(d.path(), "term");
    let err = r.stderr();
    // The pool thread (number 7) runs plain code: its calling tree is its
    // root region, open since its start.
    let line = err
        .lines()
        .find(|l| l.contains("[DrHookCallTree] :  thread:pool "))
        .unwrap_or_else(|| panic!("no root region of the pool thread:\n{err}"));
    assert!(line.contains(":1:7:"), "{line}");
    assert!(line.contains(" ,#1,st=1,wall="), "{line}");
    let p = parse(d.path(), "drhook.prof.1");
    assert_eq!(p.row("thread:pool", 7).calls, 1);
}

#[test]
fn a_stack_overflow_in_a_thread_without_a_tree_is_reported_and_profiled() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let r = run_ending(d.path(), "overflow");
    // The thread calls nothing instrumented: its alternate signal stack
    // was set up at its start all the same, so Dr.Hook's handler runs,
    // reports and writes the profile, and the process still ends by the
    // signal.
    let err = r.stderr();
    assert!(err.contains("Received signal#11 (SIGSEGV)"), "{err}");
    assert_eq!(signal(&r), Some(libc::SIGSEGV), "{err}");
    let p = parse(d.path(), "drhook.prof.1");
    assert_eq!(p.row("thread:pool", 7).calls, 1);
    assert_eq!(p.row("thread:overflow_worker", 8).calls, 1);
}

/// `lazy_threads 2 ENDING` under `drhook run --opt prof` in `dir`.
fn run_ending(dir: &Path, ending: &str) -> Run {
    let exe = lazy_threads_exe(dir);
    drhook_run(
        dir,
        &["--opt", "prof"],
        &exe.display().to_string(),
        &["2", ending],
        &[],
    )
}

/// `progs/attach/lazy_threads.c`, built in `dir`.
fn lazy_threads_exe(dir: &Path) -> PathBuf {
    c_exe(
        dir,
        "lazy_threads",
        &[&attach_prog("lazy_threads.c")],
        &["-pthread"],
        Link::Shared,
    )
}
