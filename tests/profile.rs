//! The Dr.Hook profile written by real programs under `DR_HOOK_OPT=prof`
//! and friends: call counts, exact recursion, threads, exit paths.

use drhook_tests::{Profile, Run, run_in};

const PROG: &str = env!("CARGO_BIN_EXE_drhook-test-prog");

fn run(scenario: &str, env: &[(&str, &str)]) -> (Run, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let r = run_in(dir.path(), PROG, &[scenario], env);
    (r, dir)
}

const PROF: &[(&str, &str)] = &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof")];

/// Invariants every profile must satisfy.
fn check_invariants(p: &Profile) {
    assert!(!p.rows.is_empty());
    let mut prev_pct = f64::INFINITY;
    let mut prev_cumul = 0.0;
    for (i, r) in p.rows.iter().enumerate() {
        assert_eq!(r.rank as usize, i + 1);
        assert!(r.pct <= prev_pct + 1e-9, "rows sorted by % self: {r:?}");
        assert!(r.cumul + 1e-9 >= prev_cumul, "cumul never decreases: {r:?}");
        assert!(r.self_s <= r.total_s + 0.0015, "self <= total: {r:?}");
        assert!(r.calls > 0);
        prev_pct = r.pct;
        prev_cumul = r.cumul;
    }
    assert!(
        (prev_cumul - p.total).abs() <= 0.006 + 0.01 * p.total,
        "last cumul {prev_cumul} vs total {}",
        p.total
    );
}

#[test]
fn wall_profile_of_nested_routines() {
    let (r, _d) = run("basic", PROF);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let p = r.profile("drhook.prof.1");
    check_invariants(&p);
    assert_eq!(p.row("BASIC:LEAF", 1).calls, 6);
    assert_eq!(p.row("BASIC:MIDDLE", 1).calls, 3);
    assert_eq!(p.row("BASIC:MAIN", 1).calls, 1);
    assert_eq!(
        p.row("drhook_test_prog::method", 1).calls,
        1,
        "methods are named module::method"
    );
    assert_eq!(
        p.row("drhook_test_prog::generic", 1).calls,
        2,
        "two instantiations share one site"
    );
    assert_eq!(
        p.row("drhook_test_prog::early", 1).calls,
        2,
        "early return leaves the region"
    );
    assert_eq!(
        p.row("drhook_test_prog::fallible", 1).calls,
        2,
        "`?` leaves the region"
    );
    let block = p.row("BASIC:BLOCK", 1);
    assert_eq!(block.calls, 4);
    let s = block.sizes.expect("size line");
    assert_eq!((s[0], s[2], s[3], s[4]), (1000, 250, 100, 400));
    let (leaf, middle, main) = (
        p.row("BASIC:LEAF", 1),
        p.row("BASIC:MIDDLE", 1),
        p.row("BASIC:MAIN", 1),
    );
    assert!(middle.total_s + 0.0015 >= leaf.total_s);
    assert!(main.total_s + 0.0015 >= middle.total_s + block.total_s);
    assert!(
        p.header
            .iter()
            .any(|h| h == "\tNo. of instrumented routines called : 8"),
        "{:?}",
        p.header
    );
    assert!(
        r.stderr().contains("DR_HOOK_OPT=\"WALLPROF\""),
        "{}",
        r.stderr()
    );
    assert!(
        r.stderr()
            .contains("Writing profiling information of proc#1 into file 'drhook.prof.1'")
    );
}

#[test]
fn off_and_tree_only_write_no_profile() {
    for env in [
        vec![],
        vec![("DR_HOOK", "0")],
        vec![("DR_HOOK", "no")],
        vec![("DR_HOOK", "OFF")],
        vec![("DR_HOOK", "")],
    ] {
        let mut env = env.clone();
        env.push(("DR_HOOK_OPT", "prof"));
        let (r, d) = run("basic", &env);
        assert_eq!(r.code(), 0);
        assert!(!d.path().join("drhook.prof.1").exists(), "{env:?}");
        assert_eq!(r.stderr(), "", "Dr.Hook off prints nothing ({env:?})");
    }
    let (r, d) = run("basic", &[("DR_HOOK", "1")]);
    assert_eq!(r.code(), 0);
    assert!(
        !d.path().join("drhook.prof.1").exists(),
        "call tree only: no profile"
    );
}

#[test]
fn cpu_profile_is_per_thread_and_fine_grained() {
    let (r, _d) = run("basic", &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "cpuprof")]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let p = r.profile("drhook.prof.1");
    check_invariants(&p);
    assert!(
        p.header
            .iter()
            .any(|h| h.starts_with("\tTotal CPU-time is "))
    );
    let leaf = p.row("BASIC:LEAF", 1);
    assert_eq!(leaf.calls, 6);
    // The reference quantises CPU time to 10 ms; ours resolves the ~1 ms of LEAF.
    assert!(leaf.self_s > 0.0, "{leaf:?}");
    assert!(
        p.rows
            .iter()
            .any(|r| r.total_s > 0.0 && (r.total_s * 100.0).fract().abs() > 1e-6),
        "{:#?}",
        p.rows
    );
    // cpuprof: cumul adds every row.
    let sum: f64 = p.rows.iter().map(|r| r.self_s).sum();
    assert!((p.rows.last().unwrap().cumul - sum).abs() < 0.002 * p.rows.len() as f64);
}

#[test]
fn recursion_depth_10000_is_exact() {
    let (r, _d) = run("recursion", PROF);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let p = r.profile("drhook.prof.1");
    check_invariants(&p);
    let direct = p.row("REC:DIRECT", 1);
    let (a, b) = (p.row("REC:MUTUAL_A", 1), p.row("REC:MUTUAL_B", 1));
    let driver = p.row("REC:DRIVER", 1);
    assert_eq!(
        (direct.calls, a.calls, b.calls, driver.calls),
        (10_000, 5_000, 5_000, 1)
    );
    // Direct recursion: the total is the outermost activation, which is all
    // of the routine's self time.
    assert!(
        (direct.total_s - direct.self_s).abs() <= 0.002,
        "{direct:?}"
    );
    // Mutual recursion: A's outermost activation contains all of A and B.
    assert!(
        (a.total_s - (a.self_s + b.self_s)).abs() <= 0.003,
        "{a:?} {b:?}"
    );
    assert!(b.total_s <= a.total_s + 0.001);
    assert!(
        b.total_s >= a.total_s - a.self_s / 100.0 - 0.002,
        "B's outermost starts right under A's: {a:?} {b:?}"
    );
    // The driver contains both recursions and nothing else of note.
    assert!(
        (driver.total_s - (direct.total_s + a.total_s + driver.self_s)).abs() <= 0.003,
        "{driver:?}"
    );
    assert!(
        direct.total_s > 0.01 && a.total_s > 0.01,
        "enough work to be meaningful"
    );
}

#[test]
fn threads_numbered_from_main_and_kept_after_exit() {
    let (r, _d) = run("threads", PROF);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let p = r.profile("drhook.prof.1");
    check_invariants(&p);
    assert_eq!(p.threads, 9);
    assert_eq!(
        p.row("THR:MAIN", 1).calls,
        1,
        "the main thread is thread 1 even if a worker called first"
    );
    let mut work: Vec<u64> = p.rows_of("THR:WORK").iter().map(|r| r.calls).collect();
    work.sort_unstable();
    assert_eq!(
        work,
        (1..=8).collect::<Vec<u64>>(),
        "every worker thread, including those that exited early"
    );
    let tids: Vec<u32> = p.rows_of("THR:THREAD_MAIN").iter().map(|r| r.tid).collect();
    let mut sorted = tids.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (2..=9).collect::<Vec<u32>>());
    let stars = p.rows_of("THR:WORK").iter().filter(|r| r.star).count();
    assert_eq!(stars, 1, "one busiest thread per routine");
}

#[test]
fn exit_status_is_kept_and_profile_written_by_process_exit() {
    let (r, _d) = run("exit3", PROF);
    assert_eq!(r.code(), 3);
    let p = r.profile("drhook.prof.1");
    assert_eq!(p.row("EXIT:WORKER", 1).calls, 1);
    let main = p.row("EXIT:MAIN", 1);
    assert_eq!(main.calls, 1, "routines still active at exit are included");
    assert!(main.total_s >= p.row("EXIT:WORKER", 1).total_s);
}

#[test]
fn panic_unwinding_keeps_the_tree_consistent() {
    let env = [("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof,callpath")];
    let (r, _d) = run("panic", &env);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let p = r.profile("drhook.prof.1");
    assert_eq!(
        p.row("PANIC:INNER", 1).path,
        vec!["PANIC:MIDDLE", "PANIC:OUTER"]
    );
    let after = p.row("PANIC:AFTER", 1);
    assert_eq!(after.calls, 2);
    assert_eq!(
        after.path,
        vec!["PANIC:OUTER"],
        "after the panic the stack is back at OUTER"
    );
}

#[test]
fn a_custom_mismatch_handler_lets_the_engine_repair_the_tree() {
    let env = [("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof,callpath")];
    let (r, _d) = run("forget_custom", &env);
    let err = r.stderr();
    assert!(
        err.contains("custom mismatch handler: leaving Some(\"FORGET:OUTER\"), top Some(\"FORGET:FORGOTTEN\")"),
        "{err}"
    );
    assert_eq!(r.code(), 0, "{err}");
    let p = r.profile("drhook.prof.1");
    assert!(
        p.row("FORGET:NEXT", 1).path.is_empty(),
        "NEXT runs at top level after the repair"
    );
}

#[test]
fn write_profile_on_demand_then_final_numbers_at_exit() {
    let (r, d) = run("ondemand", PROF);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(
        r.stdout().contains("written drhook.prof.1"),
        "{}",
        r.stdout()
    );
    let early = Profile::parse(&std::fs::read_to_string(d.path().join("ondemand.copy")).unwrap());
    assert_eq!(early.row("BASIC:LEAF", 1).calls, 10);
    let last = r.profile("drhook.prof.1");
    assert_eq!(last.row("BASIC:LEAF", 1).calls, 25);
    assert_eq!(
        r.stderr().matches("Writing profiling information").count(),
        2
    );
}

#[test]
fn profile_name_template_and_mpi_task() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("out")).unwrap();
    let env = [
        ("DR_HOOK", "1"),
        ("DR_HOOK_OPT", "prof"),
        ("DR_HOOK_PROFILE", "out/myprof"),
        ("PMI_RANK", "2"),
        ("PMI_SIZE", "4"),
    ];
    let r = run_in(dir.path(), PROG, &["basic"], &env);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let p = r.profile("out/myprof.3");
    assert!(p.header[0].ends_with(", proc#3:"), "{}", p.header[0]);
    assert!(
        p.header
            .iter()
            .any(|h| h.contains("on proc#3 (4 procs, 1 threads)")),
        "{:?}",
        p.header
    );
}

#[test]
fn profile_proc_selects_the_writing_task() {
    let env = [
        ("DR_HOOK", "1"),
        ("DR_HOOK_OPT", "prof"),
        ("DR_HOOK_PROFILE_PROC", "2"),
        ("OMPI_COMM_WORLD_RANK", "0"),
    ];
    let (r, d) = run("basic", &env);
    assert_eq!(r.code(), 0);
    let files: Vec<_> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        files.is_empty(),
        "a task that is not selected writes nothing (the reference writes drhook.prof.0): {files:?}"
    );
}

#[test]
fn unwritable_profile_path_is_reported_at_start_and_the_profile_is_kept() {
    for scenario in ["basic", "exit3"] {
        let env = [
            ("DR_HOOK", "1"),
            ("DR_HOOK_OPT", "prof"),
            ("DR_HOOK_PROFILE", "/nonexistent/dir/prof"),
        ];
        let (r, d) = run(scenario, &env);
        assert_eq!(r.code(), if scenario == "exit3" { 3 } else { 0 });
        let err = r.stderr();
        let errors: Vec<&str> = err.lines().filter(|l| l.contains("Error")).collect();
        assert_eq!(errors.len(), 2, "{err}");
        // At start-up, before any work, naming the path ...
        assert!(errors[0].contains("[drhook_init@"), "{err}");
        assert!(
            errors[0].contains("cannot be written to '/nonexistent/dir/prof.1'"),
            "{err}"
        );
        // ... and at exit, saying where the profile went instead.
        let cwd_copy = d.path().join("prof.1");
        assert!(
            errors[1].contains(&format!(
                "the profile was written to '{}' instead",
                cwd_copy.display()
            )),
            "{err}"
        );
        if scenario == "basic" {
            r.profile("prof.1").row("BASIC:LEAF", 1);
        } else {
            assert!(cwd_copy.exists(), "{err}");
        }
    }
}

#[test]
fn profile_falls_back_to_tmpdir_when_the_working_directory_is_not_writable() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path().display().to_string();
    // /proc is not writable, even by root.
    let r = run_in(
        std::path::Path::new("/proc"),
        PROG,
        &["basic"],
        &[
            ("DR_HOOK", "1"),
            ("DR_HOOK_OPT", "prof"),
            ("DR_HOOK_PROFILE", "/nonexistent/dir/prof"),
            ("TMPDIR", &t),
        ],
    );
    assert_eq!(r.code(), 0);
    let err = r.stderr();
    let went = tmp.path().join("prof.1");
    assert!(
        err.contains(&format!("written to '{}' instead", went.display())),
        "{err}"
    );
    let text = std::fs::read_to_string(&went).unwrap();
    Profile::parse(&text).row("BASIC:LEAF", 1);
}

#[test]
fn profile_limit_cuts_rows() {
    let env = [
        ("DR_HOOK", "1"),
        ("DR_HOOK_OPT", "prof"),
        ("DR_HOOK_PROFILE_LIMIT", "5"),
    ];
    let (r, _d) = run("basic", &env);
    let p = r.profile("drhook.prof.1");
    assert!(!p.rows.is_empty());
    assert!(p.rows.iter().all(|r| r.pct >= 5.0), "{:#?}", p.rows);
    assert!(p.rows.len() < 8);
}

#[test]
fn callpath_clusterinfo_and_self_rows() {
    let env = [
        ("DR_HOOK", "1"),
        ("DR_HOOK_OPT", "prof,callpath,clusterinfo,self"),
    ];
    let (r, d) = run("basic", &env);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let text = std::fs::read_to_string(d.path().join("drhook.prof.1")).unwrap();
    assert!(text.contains("Routine@<thread-id> [Cluster:(id,size)]"));
    let p = Profile::parse(&text);
    let leaf = p.row("BASIC:LEAF", 1);
    assert_eq!(leaf.path, vec!["BASIC:MIDDLE", "BASIC:MAIN"]);
    assert!(leaf.suffix.starts_with(" ["), "{leaf:?}");
    let drhook = p.row("$drhook", 1);
    assert!(drhook.suffix.starts_with(" [0,"), "{drhook:?}");
    let pairs: u64 = p
        .rows
        .iter()
        .filter(|r| r.name != "$drhook")
        .map(|r| r.calls)
        .sum();
    assert_eq!(drhook.calls, 2 * pairs, "one enter and one exit per call");
    assert!(
        p.header
            .iter()
            .any(|h| h == "\tNo. of instrumented routines called : 9")
    );
}

#[test]
fn trim_makes_names_case_insensitive() {
    let (r, _d) = run("trim", &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof,trim")]);
    let p = r.profile("drhook.prof.1");
    assert_eq!(p.row("MIXED:CASE", 1).calls, 3);
    let (r, _d) = run("trim", PROF);
    let p = r.profile("drhook.prof.1");
    assert_eq!(p.row("Mixed:Case", 1).calls, 2);
    assert_eq!(
        p.row("MIXED:CASE", 1).calls,
        1,
        "trailing blanks are always trimmed"
    );
}

#[test]
fn every_instrumented_routine_is_registered() {
    let (r, _d) = run("sites", &[]);
    let names: Vec<String> = r.stdout().lines().map(str::to_string).collect();
    for n in [
        "REC:MUTUAL_B",
        "PANIC:AFTER",
        "drhook_test_prog::method",
        "BASIC:BLOCK",
    ] {
        assert!(names.iter().any(|x| x == n), "{n} missing from {names:?}");
    }
}

#[test]
fn hpmprof_counts_per_routine_with_the_fallback_explained() {
    let (r, d) = run("basic", &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "hpmprof")]);
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let err = r.stderr();
    assert!(err.contains("hpmprof: counting per routine: "), "{err}");
    let text = std::fs::read_to_string(d.path().join("drhook.prof.1")).unwrap();
    assert!(
        text.contains("# of calls        MIPS      MFlops    Routine@<thread-id>"),
        "{text}"
    );
    let p = Profile::parse(&text);
    assert_eq!(p.row("BASIC:LEAF", 1).calls, 6);
    // The counters CSV of the reference (compat §5.1).
    let csv = std::fs::read_to_string(d.path().join("drhook.prof.1.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(
        &header[..9],
        [
            "Routine",
            "MPI Rank",
            "ThreadId",
            "SelfRank",
            "% Self Time",
            "Cumul",
            "Excl Time",
            "Incl. Time",
            "#Calls"
        ]
    );
    let n = (header.len() - 9) / 2;
    assert!(n >= 1, "{csv}");
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    let leaf = rows.iter().find(|r| r[0] == "BASIC:LEAF").expect(&csv);
    let middle = rows.iter().find(|r| r[0] == "BASIC:MIDDLE").expect(&csv);
    assert_eq!((leaf[1], leaf[2], leaf[8]), ("0", "0", "6"));
    if header.contains(&"instructions(excl)") {
        assert!(
            text.lines()
                .any(|l| l.contains("BASIC:LEAF@1") && !l.contains(" - ")),
            "MIPS computed with hardware counters"
        );
    } else {
        // This machine: no hardware PMU, so software events with one notice.
        assert!(
            err.contains("Remedy"),
            "the fallback names the reason and the remedy: {err}"
        );
        let tc = header
            .iter()
            .position(|h| *h == "task-clock(excl)")
            .expect(&csv);
        let tc_incl = tc + n;
        let v = |r: &Vec<&str>, i: usize| r[i].parse::<u64>().unwrap();
        assert!(v(leaf, tc) > 0, "LEAF spins: it has CPU time: {csv}");
        // MIDDLE only calls LEAF twice: its inclusive time contains LEAF's.
        assert!(v(middle, tc_incl) >= v(leaf, tc_incl), "{csv}");
        assert!(v(middle, tc) < v(middle, tc_incl), "{csv}");
    }
}

#[test]
fn tracing_spans_join_the_same_tree() {
    let (r, _d) = run(
        "tracing",
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof,callpath")],
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let p = r.profile("drhook.prof.1");
    let leaf = p.row("drhook_test_prog::traced_leaf", 1);
    assert_eq!(leaf.calls, 6);
    assert_eq!(
        leaf.path,
        vec!["drhook_test_prog::manual", "TRACING:OUTER"],
        "spans nest under #[drhook] functions"
    );
    assert_eq!(p.row("TRACING:OUTER", 1).calls, 3);
    assert_eq!(p.row("drhook_test_prog::out_of_order_a", 1).calls, 1);
    let b = p.row("drhook_test_prog::out_of_order_b", 1);
    assert_eq!(b.path, vec!["drhook_test_prog::out_of_order_a"]);
    assert!(
        !r.stderr().contains("invalid key-pointer"),
        "no mismatch: {}",
        r.stderr()
    );
}
