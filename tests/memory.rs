//! Memory: nothing is allocated per call in steady state, and a thread's
//! tree starts small (the reference allocates ~20 MB per thread).

use drhook_tests::run_in;

const PROG: &str = env!("CARGO_BIN_EXE_drhook-test-prog");

fn field(out: &str, key: &str) -> u64 {
    out.split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
        .unwrap_or_else(|| panic!("{key} not in {out}"))
}

#[test]
fn no_allocation_per_call_and_small_threads() {
    // With the timeline too: its events go to a buffer reserved at the
    // thread's first call.
    for opt in ["", "prof", "cpuprof", "trace", "prof,json,trace"] {
        let dir = tempfile::tempdir().unwrap();
        let r = run_in(
            dir.path(),
            PROG,
            &["alloc"],
            &[
                ("DR_HOOK", "1"),
                ("DR_HOOK_OPT", opt),
                ("DR_HOOK_PROFILE", "/dev/null/x"),
            ],
        );
        let out = r.stdout();
        assert_eq!(field(&out, "steady_allocs"), 0, "DR_HOOK_OPT={opt}: {out}");
        let tree = field(&out, "tree_bytes");
        assert!(
            tree > 0 && tree <= 256 * 1024,
            "DR_HOOK_OPT={opt}: a new thread's tree is {tree} bytes"
        );
    }
}

#[test]
fn writing_a_big_profile_streams_its_rows() {
    // 256 threads x 1000 routines: the write may add at most twice the
    // trees' own size to the live heap at its peak (it used to build every
    // thread's copy and the whole text in memory: 2.7x).
    let dir = tempfile::tempdir().unwrap();
    let r = run_in(
        dir.path(),
        PROG,
        &["bigprof", "256", "1000"],
        &[
            ("DR_HOOK", "1"),
            ("DR_HOOK_OPT", "prof"),
            ("DR_HOOK_SILENT", "1"),
        ],
    );
    let out = r.stdout();
    assert!(out.contains("written=true"), "{out}\n{}", r.stderr());
    let tree = field(&out, "tree_bytes");
    let peak = field(&out, "write_heap_peak");
    assert!(
        tree > 256 * 1000 * 64,
        "at least one 64-byte node per routine and thread: {out}"
    );
    assert!(
        peak <= 2 * tree,
        "the write added {peak} bytes at its peak to trees of {tree} bytes"
    );
    // And the profile is whole: one row per routine and thread, plus the
    // thread's own routine.
    let p = r.profile("drhook.prof.1");
    assert_eq!(p.rows.len(), 256 * 1001);
    assert_eq!(p.threads, 256);
    assert_eq!(p.rows_of("BIG:ROUTINE_00999").len(), 256);
    assert!(p.rows.iter().all(|r| r.calls == 1));
}

#[test]
fn writing_a_big_json_profile_streams_its_tree() {
    // The JSON companion of the same 256 x 1000 profile: its tree is
    // written thread by thread while the rows are built, so the bound of
    // the text profile holds with it.
    let dir = tempfile::tempdir().unwrap();
    let r = run_in(
        dir.path(),
        PROG,
        &["bigprof", "256", "1000"],
        &[
            ("DR_HOOK", "1"),
            ("DR_HOOK_OPT", "prof,json"),
            ("DR_HOOK_SILENT", "1"),
        ],
    );
    let out = r.stdout();
    assert!(out.contains("written=true"), "{out}\n{}", r.stderr());
    let tree = field(&out, "tree_bytes");
    let peak = field(&out, "write_heap_peak");
    assert!(
        peak <= 2 * tree,
        "the write with JSON added {peak} bytes at its peak to trees of {tree} bytes"
    );
    let json = std::fs::read_to_string(dir.path().join("drhook.prof.1.json")).unwrap();
    assert!(json.starts_with("{\"format\":\"drhook-profile\""));
    // Every node of every thread: the thread's routine and its 1000 callees.
    assert_eq!(json.matches(",\"parent\":").count(), 256 * 1001);
    assert_eq!(
        json.matches("\"routine\":\"BIG:ROUTINE_00999\"").count(),
        256
    );
}
