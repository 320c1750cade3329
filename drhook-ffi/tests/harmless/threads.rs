//! Threads (issue 22, items 13 and 14): threads with the smallest stacks
//! the C library allows start and run as they do plainly, and what Dr.Hook
//! keeps of threads that ended stays small.

use std::collections::BTreeMap;

use super::harness::{CONFIGS, c_prog, run, same_everywhere};

/// `measure` lines of `small_stacks` (`<what> <kind> <bytes>`), by
/// `<what> <kind>`: the most of the repeated threads.
fn stack_use(stdout: &str) -> BTreeMap<String, u64> {
    let mut m = BTreeMap::new();
    for line in stdout.lines() {
        let Some((key, n)) = line.rsplit_once(' ') else {
            continue;
        };
        if let Ok(n) = n.parse::<u64>() {
            let e = m.entry(key.to_string()).or_insert(0);
            *e = (*e).max(n);
        }
    }
    m
}

/// Item 14: threads with 16 KiB stacks (`PTHREAD_STACK_MIN`, sysconf's
/// minimum, and a stack of the program's own) start, work on 4 KiB of
/// their stack with 8 KiB left, and print as they do plainly (Dr.Hook
/// named the thread's root region on the thread's stack, reading symbol
/// tables, and the thread died of SIGSEGV).
#[test]
fn threads_with_the_smallest_stacks_run_as_plainly() {
    let (outs, _d) = same_everywhere(
        |d| {
            c_prog(d, "small_stacks", &["-pthread"]);
        },
        &["./small_stacks"],
        &[],
    );
    if !super::common::have_gcc() {
        return;
    }
    assert_eq!(outs[0].how(), "exit 0");
    assert_eq!(outs[0].stdout.matches(", 8 KiB left\n").count(), 9);
    for o in &outs[1..] {
        assert!(o.has_profile(), "{}: {:?}", o.config, o.drhook_files);
    }
}

/// Item 14: starting and ending a thread under `drhook run` takes at most
/// 2 KiB more of the thread's own stack than plainly (the preload's TLS
/// included), for the first thread of a start routine (whose name is
/// looked up) as for the next, with and without the memory and I/O
/// profiles: measured on painted stacks by `small_stacks measure`.
#[test]
fn thread_start_and_end_take_at_most_2_kib_of_the_threads_stack() {
    let d = super::common::tempdir();
    if c_prog(d.path(), "small_stacks", &["-pthread"]).is_none() {
        return;
    }
    super::common::ensure_attach_built();
    let plain = run(d.path(), None, &["./small_stacks", "measure"], &[]);
    assert_eq!(plain.how(), "exit 0", "{}", plain.stderr_all);
    let base = stack_use(&plain.stdout);
    for key in ["start own 1 MiB", "start own 16 KiB", "end own 16 KiB"] {
        assert!(base.contains_key(key), "{key}: {}", plain.stdout);
    }
    for config in &CONFIGS[1..] {
        let o = run(d.path(), *config, &["./small_stacks", "measure"], &[]);
        assert_eq!(o.how(), "exit 0", "{}: {}", o.config, o.stderr_all);
        let used = stack_use(&o.stdout);
        assert_eq!(
            used.keys().collect::<Vec<_>>(),
            base.keys().collect::<Vec<_>>(),
            "{}: {}",
            o.config,
            o.stdout
        );
        for (key, &n) in &used {
            let more = n.saturating_sub(base[key]);
            assert!(
                more <= 2048,
                "{}: {key}: {n} bytes, {more} more than plainly ({})",
                o.config,
                base[key]
            );
        }
    }
}
