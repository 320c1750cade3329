//! Threads (issue 22, items 13 and 14): threads with the smallest stacks
//! the C library allows start and run as they do plainly, and what Dr.Hook
//! keeps of threads that ended stays small.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use super::common;
use super::harness::{CONFIGS, c_prog, command, run, same_everywhere};

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

/// `many_threads.c` built in `dir` against `libdrhook.so` (its calls are
/// the preload's under `drhook run`); `None` without gcc.
fn many_threads(dir: &Path) -> Option<PathBuf> {
    let lib = common::shared_lib();
    let libdir = lib.parent().unwrap().display().to_string();
    c_prog(
        dir,
        "many_threads",
        &[
            &format!("-I{}", common::include_dir().display()),
            "-pthread",
            &format!("-L{libdir}"),
            &format!("-Wl,-rpath,{libdir}"),
            "-ldrhook",
        ],
    )
}

/// Runs `argv` in `dir` under `config`; returns its wait status and peak
/// resident memory in KiB (`wait4`: `drhook run` execs the program in
/// its own process, so this is the program's, the profile's write
/// included).
#[allow(
    clippy::zombie_processes,
    reason = "the child is reaped by wait4, which gives its resource use"
)]
fn peak_rss_kib(dir: &Path, config: Option<&str>, argv: &[&str]) -> (i32, u64) {
    let mut cmd = command(config, argv);
    cmd.current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let child = cmd.spawn().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: plain data filled in by wait4.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child, with valid out-pointers.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    assert_eq!(r, pid, "wait4: {}", std::io::Error::last_os_error());
    (status, ru.ru_maxrss as u64)
}

/// Item 13: threads that ended cost (almost) nothing. 5 000 threads made
/// one after the other, each making 7 instrumented calls, fit under
/// `drhook run` (both configurations) within the goal's share of memory
/// over plainly: +32 MiB for 20 000 threads, here 5 000 × 32 MiB /
/// 20 000 = 8 MiB, the engine's own start-up included (each thread kept
/// its tree, 7-15 KB, for ever: +35 MB with `prof`). Their rows are in
/// the profile: the first 256 threads that end as their own blocks, the
/// others summed in one.
#[test]
fn threads_that_ended_cost_little_memory() {
    const N: u64 = 5_000;
    let d = common::tempdir();
    let Some(_) = many_threads(d.path()) else {
        return;
    };
    common::ensure_attach_built();
    let argv = ["./many_threads", "5000"];
    let (status, plain) = peak_rss_kib(d.path(), None, &argv);
    assert_eq!(status, 0);
    let budget = N * 32 * 1024 / 20_000;
    for config in &CONFIGS[1..] {
        let w = common::tempdir();
        std::fs::copy(d.path().join("many_threads"), w.path().join("many_threads")).unwrap();
        let (status, rss) = peak_rss_kib(w.path(), *config, &argv);
        assert_eq!(status, 0, "{config:?}");
        assert!(
            rss <= plain + budget,
            "{config:?}: {rss} KiB at peak, {} KiB more than plainly ({plain} KiB): over {budget} KiB",
            rss.saturating_sub(plain)
        );
        let text = std::fs::read_to_string(w.path().join("drhook.prof.1")).unwrap();
        let p = drhook_tests::Profile::parse(&text);
        let roots = p.rows_of("thread:worker");
        assert_eq!(roots.len(), 257, "{config:?}");
        let calls: u64 = roots.iter().map(|r| r.calls).sum();
        assert_eq!(calls, N, "{config:?}: one call per thread");
        let leaves: u64 = p.rows_of("leaf").iter().map(|r| r.calls).sum();
        assert_eq!(leaves, 4 * N, "{config:?}");
        assert_eq!(p.threads, 1 + 257, "{config:?}");
        assert!(
            text.contains(&format!(
                "\tThreads that ended, summed : {} in Thread#258 (thread:worker)\n",
                N - 256
            )),
            "{config:?}: {}",
            p.header.join("\n")
        );
    }
}

/// Item 13: `DRHOOK_THREAD_BLOCKS` threads that ended keep their own
/// block (numbered as they were); later ones of the same first routine are
/// summed into one block under the number of the first of them: the same
/// routines under the same callers, their calls and times added, the root
/// region called once per thread, one header line saying so.
#[test]
fn threads_that_ended_beyond_the_blocks_are_summed() {
    let d = common::tempdir();
    let Some(_) = many_threads(d.path()) else {
        return;
    };
    common::ensure_attach_built();
    let o = run(
        d.path(),
        Some("prof"),
        &["./many_threads", "10"],
        &[("DRHOOK_THREAD_BLOCKS", "3")],
    );
    assert_eq!(o.how(), "exit 0", "{}", o.stderr_all);
    let text = std::fs::read_to_string(d.path().join("drhook.prof.1")).unwrap();
    let p = drhook_tests::Profile::parse(&text);
    for tid in 2..=4 {
        assert_eq!(p.row("thread:worker", tid).calls, 1);
        assert_eq!(p.row("step", tid).calls, 2);
        assert_eq!(p.row("leaf", tid).calls, 4);
    }
    assert_eq!(p.row("thread:worker", 5).calls, 7);
    assert_eq!(p.row("step", 5).calls, 14);
    assert_eq!(p.row("leaf", 5).calls, 28);
    assert_eq!(p.rows.iter().filter(|r| r.tid > 5).count(), 0, "{text}");
    assert_eq!(p.threads, 5);
    assert!(
        text.contains("\tThreads that ended, summed : 7 in Thread#5 (thread:worker)\n"),
        "{text}"
    );
    // The command's reader takes the line as a header line it does not
    // know.
    let merged = std::process::Command::new(common::drhook_exe())
        .args(["merge", "drhook.prof.1"])
        .current_dir(d.path())
        .output()
        .unwrap();
    assert!(
        merged.status.success(),
        "{}",
        String::from_utf8_lossy(&merged.stderr)
    );
}
