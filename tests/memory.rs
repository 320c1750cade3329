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
    for opt in ["", "prof", "cpuprof"] {
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
