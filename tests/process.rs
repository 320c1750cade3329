//! The processes of a run: a `fork` child writes its own profile and never
//! touches the parent's (no preload needed), `DRHOOK_FOLLOW`,
//! `DRHOOK_PROFILE_ON_FAILURE`, `DRHOOK_PROFILE_PREFIX`.

use drhook_tests::{Run, run_in};

const PROG: &str = env!("CARGO_BIN_EXE_drhook-test-prog");

fn run(scenario: &str, env: &[(&str, &str)]) -> (Run, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let r = run_in(dir.path(), PROG, &[scenario], env);
    (r, dir)
}

const PROF: &[(&str, &str)] = &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof")];

/// The child's pid, printed by the `fork` scenario.
fn child_pid(r: &Run) -> u32 {
    r.stdout()
        .lines()
        .find_map(|l| l.strip_prefix("child "))
        .unwrap_or_else(|| panic!("no child line:\n{}", r.stdout()))
        .trim()
        .parse()
        .unwrap()
}

fn files(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn a_fork_child_writes_its_own_profile_from_the_fork_on() {
    let (r, d) = run("fork", PROF);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let pid = child_pid(&r);
    let child_file = format!("drhook.prof.1.drhook-test-prog.{pid}");
    assert_eq!(
        files(d.path()),
        vec!["drhook.prof.1".to_string(), child_file.clone()],
        "one file per process, the child's named after it"
    );

    // The parent: everything before the fork, its own part after, nothing
    // of the child's.
    let p = r.profile("drhook.prof.1");
    assert_eq!(p.row("FORK:BEFORE", 1).calls, 2);
    assert_eq!(p.row("FORK:PARENT", 1).calls, 1);
    assert_eq!(p.row("FORK:OUTER", 1).calls, 1);
    assert_eq!(p.rows_of("FORK:THREAD").len(), 1);
    assert!(p.rows_of("FORK:CHILD").is_empty(), "{:#?}", p.rows);

    // The child: its counts start at the fork; the routine it was inside
    // stays open (one call); the parent's other thread is not its.
    let c = r.profile(&child_file);
    assert_eq!(c.row("FORK:CHILD", 1).calls, 3);
    assert_eq!(c.row("FORK:OUTER", 1).calls, 1);
    assert!(
        c.rows_of("FORK:BEFORE").is_empty(),
        "pre-fork calls are the parent's"
    );
    assert!(c.rows_of("FORK:PARENT").is_empty());
    assert!(c.rows_of("FORK:THREAD").is_empty(), "{:#?}", c.rows);
    assert_eq!(c.threads, 1);
    let outer = c.row("FORK:OUTER", 1);
    assert!(outer.total_s >= c.row("FORK:CHILD", 1).total_s);
    // The child's run is the time since the fork, well below the parent's.
    assert!(c.total <= p.total + 1e-6, "{} vs {}", c.total, p.total);
}

#[test]
fn follow_none_leaves_children_unmeasured() {
    let mut env = PROF.to_vec();
    env.push(("DRHOOK_FOLLOW", "none"));
    let (r, d) = run("fork", &env);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(files(d.path()), vec!["drhook.prof.1".to_string()]);
    // A regular expression matching the command: followed.
    let mut env = PROF.to_vec();
    env.push(("DRHOOK_FOLLOW", "^drhook-test-(prog|x)$"));
    let (r, d) = run("fork", &env);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(files(d.path()).len(), 2, "{:?}", files(d.path()));
}

#[test]
fn profile_on_failure_0_writes_nothing_for_a_failing_exit() {
    let mut env = PROF.to_vec();
    env.push(("DRHOOK_PROFILE_ON_FAILURE", "0"));
    let (r, d) = run("exit3", &env);
    assert_eq!(r.code(), 3);
    assert!(files(d.path()).is_empty(), "{:?}", files(d.path()));
    // The default writes it (see tests/profile.rs), and a successful run
    // writes it with the option too.
    let (r, d) = run("basic", &env);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert_eq!(files(d.path()), vec!["drhook.prof.1".to_string()]);
}

#[test]
fn a_prefix_names_every_process_of_the_run() {
    let mut env = PROF.to_vec();
    env.push(("DRHOOK_PROFILE_PREFIX", "run1/"));
    let (r, d) = run("fork", &env);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let pid = child_pid(&r);
    let mut got = files(&d.path().join("run1"));
    got.retain(|f| f.ends_with(".drhook.prof.1"));
    assert_eq!(got.len(), 2, "{got:?}");
    assert!(got.contains(&format!("drhook-test-prog.{pid}.drhook.prof.1")));
    r.profile(&format!("run1/{}", got[0]));
}
