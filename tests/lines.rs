//! The reference's per-call printing: `DR_HOOK_FUNCENTER`,
//! `DR_HOOK_FUNCEXIT`, `DR_HOOK_CALLTRACE` and `DR_HOOK_TIMELINE`, on the
//! test program's real calls (cross-checked with its profile).

use drhook_tests::run_in;

const PROG: &str = env!("CARGO_BIN_EXE_drhook-test-prog");

/// `(kind, task, thread, name, heap, stack)` of each `<e>`/`<x>` line.
fn func_lines(stdout: &str) -> Vec<(char, u32, u32, String, u64, u64)> {
    stdout
        .lines()
        .filter(|l| l.starts_with("<e> ") || l.starts_with("<x> "))
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            assert_eq!(f.len(), 6, "{l}");
            (
                f[0].chars().nth(1).unwrap(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
                f[3].to_string(),
                f[4].parse().unwrap(),
                f[5].parse().unwrap(),
            )
        })
        .collect()
}

#[test]
fn funcenter_and_funcexit_print_every_call_of_their_thread() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_in(
        dir.path(),
        PROG,
        &["basic"],
        &[
            ("DR_HOOK", "1"),
            ("DR_HOOK_OPT", "prof"),
            ("DR_HOOK_FUNCENTER", "1"),
            ("DR_HOOK_FUNCEXIT", "1"),
        ],
    );
    assert_eq!(r.code(), 0);
    let out = r.stdout();
    assert!(out.contains("basic done"), "{out}");
    let lines = func_lines(&out);
    assert!(!lines.is_empty(), "{out}");
    // Enters and exits nest: a stack replayed from the lines ends empty.
    let mut stack: Vec<String> = Vec::new();
    for (kind, task, tid, name, _heap, st) in &lines {
        assert_eq!((*task, *tid), (1, 1));
        assert!(*st > 0, "stack depth of {name}");
        if *kind == 'e' {
            stack.push(name.clone());
        } else {
            assert_eq!(stack.pop().as_deref(), Some(name.as_str()), "{out}");
        }
    }
    assert!(stack.is_empty(), "{stack:?}");
    assert_eq!(lines[0].3, "BASIC:MAIN");
    // One `<e>` line per call of each routine in the profile.
    let p = r.profile("drhook.prof.1");
    for name in ["BASIC:MAIN", "BASIC:MIDDLE", "BASIC:LEAF", "BASIC:BLOCK"] {
        let n = lines.iter().filter(|l| l.0 == 'e' && l.3 == name).count() as u64;
        assert_eq!(n, p.row(name, 1).calls, "{name}");
    }
    // Only enters with FUNCENTER alone; nothing for a thread that does
    // not exist.
    let r = run_in(
        dir.path(),
        PROG,
        &["basic"],
        &[("DR_HOOK", "1"), ("DR_HOOK_FUNCENTER", "1")],
    );
    let only = func_lines(&r.stdout());
    assert!(!only.is_empty() && only.iter().all(|l| l.0 == 'e'));
    let r = run_in(
        dir.path(),
        PROG,
        &["basic"],
        &[("DR_HOOK", "1"), ("DR_HOOK_FUNCENTER", "2")],
    );
    assert!(func_lines(&r.stdout()).is_empty(), "{}", r.stdout());
    assert!(!r.stderr().contains("not supported"), "{}", r.stderr());
}

#[test]
fn funcenter_selects_one_thread() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_in(
        dir.path(),
        PROG,
        &["threads"],
        &[("DR_HOOK", "1"), ("DR_HOOK_FUNCEXIT", "3")],
    );
    assert_eq!(r.code(), 0);
    let lines = func_lines(&r.stdout());
    assert!(!lines.is_empty(), "{}", r.stdout());
    assert!(lines.iter().all(|l| l.0 == 'x' && l.2 == 3), "{lines:?}");
    assert!(lines.iter().any(|l| l.3 == "THR:THREAD_MAIN"), "{lines:?}");
}

#[test]
fn calltrace_prints_the_calling_tree_at_every_enter() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_in(
        dir.path(),
        PROG,
        &["basic"],
        &[
            ("DR_HOOK", "1"),
            ("DR_HOOK_OPT", "prof,callpath"),
            ("DR_HOOK_CALLTRACE", "1"),
        ],
    );
    assert_eq!(r.code(), 0);
    let err = r.stderr();
    // Blocks: a header, then one line per active routine, outermost first.
    let mut blocks: Vec<Vec<String>> = Vec::new();
    for l in err.lines() {
        let Some(rest) = l.split_once("] [DrHookCallTree] ").map(|x| x.1) else {
            continue;
        };
        if rest.starts_with("DR_HOOK call tree : ") {
            blocks.push(Vec::new());
        } else {
            let frame = rest.strip_prefix(':').expect(l);
            // `NAME ,#calls,st=n,wall=total/self`: every routine has run
            // for well under a minute (the one being entered, 0 s).
            let (name, fields) = frame.split_once(" ,").expect(l);
            let wall: f64 = fields
                .split_once("wall=")
                .and_then(|(_, w)| w.split_once('s'))
                .and_then(|(w, _)| w.parse().ok())
                .expect(l);
            assert!(wall < 60.0, "{l}");
            blocks.last_mut().expect(l).push(name.to_string());
        }
    }
    let p = r.profile("drhook.prof.1");
    let calls: u64 = ["BASIC:MAIN", "BASIC:MIDDLE", "BASIC:LEAF"]
        .iter()
        .map(|n| p.row(n, 1).calls)
        .sum();
    assert!(
        blocks.len() as u64 >= calls,
        "{} < {calls}\n{err}",
        blocks.len()
    );
    assert_eq!(blocks[0], ["  BASIC:MAIN"]);
    assert_eq!(
        blocks[2],
        ["  BASIC:MAIN", "   BASIC:MIDDLE", "    BASIC:LEAF"]
    );
    // Without CALLPATH the reference does not read it: a warning, no tree.
    let r = run_in(
        dir.path(),
        PROG,
        &["basic"],
        &[("DR_HOOK", "1"), ("DR_HOOK_CALLTRACE", "1")],
    );
    assert_eq!(r.code(), 0);
    assert!(!r.stderr().contains("[DrHookCallTree]"), "{}", r.stderr());
    assert!(
        r.stderr()
            .contains("DR_HOOK_CALLTRACE acts only with DR_HOOK_OPT=callpath"),
        "{}",
        r.stderr()
    );
}

/// The timeline lines of `text`: `(kind, fields after it)`.
fn tl_lines(text: &str) -> Vec<(char, String)> {
    text.lines()
        .filter_map(|l| {
            let rest = l.split_once(" tl:")?.1;
            let kind = rest.chars().next()?;
            Some((kind, rest[1..].trim_start().to_string()))
        })
        .collect()
}

#[test]
fn timeline_prints_each_enter_and_exit_with_memory() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_in(
        dir.path(),
        PROG,
        &["basic"],
        &[
            ("DR_HOOK", "1"),
            ("DR_HOOK_OPT", "prof"),
            ("DR_HOOK_TIMELINE", "1"),
            ("DR_HOOK_TIMELINE_FREQ", "1"),
        ],
    );
    assert_eq!(r.code(), 0);
    let tl = tl_lines(&r.stdout());
    assert!(tl_lines(&r.stderr()).is_empty());
    assert_eq!(tl.first().map(|t| t.0), Some('B'), "{}", r.stdout());
    assert_eq!(tl.last().map(|t| t.0), Some('E'), "{}", r.stdout());
    assert!(tl[0].1.ends_with("'#PROGRAM BEGIN'[#1]"), "{:?}", tl[0]);
    let p = r.profile("drhook.prof.1");
    let leaf = p.row("BASIC:LEAF", 1).calls as usize;
    let n = |k: char| {
        tl.iter()
            .filter(|t| t.0 == k && t.1.contains("'BASIC:LEAF'"))
            .count()
    };
    assert_eq!((n('>'), n('<')), (leaf, leaf));
    // Format 1: wall, rss, heap, stack, peak heap, in MB; wall grows.
    let mut last = -1.0;
    for (_, f) in &tl {
        let nums: Vec<f64> = f
            .split(' ')
            .take(5)
            .map(|x| x.parse().unwrap_or_else(|_| panic!("{f}")))
            .collect();
        assert!(nums[0] >= last, "{f}");
        last = nums[0];
        assert!(nums[1] > 0.0 && nums[3] >= 0.0, "{f}");
    }
    // Every n-th call only, on stderr, as name=value pairs.
    let r = run_in(
        dir.path(),
        PROG,
        &["basic"],
        &[
            ("DR_HOOK", "1"),
            ("DR_HOOK_OPT", "prof"),
            ("DR_HOOK_TIMELINE", "-1"),
            ("DR_HOOK_TIMELINE_FREQ", "4"),
            ("DR_HOOK_TIMELINE_MB", "1000"),
            ("DR_HOOK_TIMELINE_FORMAT", "2"),
            ("DR_HOOK_TIMELINE_UNITNO", "0"),
        ],
    );
    assert_eq!(r.code(), 0);
    assert!(tl_lines(&r.stdout()).is_empty());
    let tl = tl_lines(&r.stderr());
    let calls: usize = r
        .profile("drhook.prof.1")
        .rows
        .iter()
        .map(|row| row.calls as usize)
        .sum();
    let enters = tl.iter().filter(|t| t.0 == '>').count();
    assert_eq!(enters, calls.div_ceil(4), "{}", r.stderr());
    assert!(
        tl.iter().all(|t| t.1.starts_with("wall=")
            && t.1.contains(" cpu=")
            && t.1.contains(" curheap=")
            && t.1.contains(" vmpeak=")
            && t.1.contains(" pag=")),
        "{tl:?}"
    );
    // A task other than this one prints nothing.
    let r = run_in(
        dir.path(),
        PROG,
        &["basic"],
        &[("DR_HOOK", "1"), ("DR_HOOK_TIMELINE", "2")],
    );
    assert!(tl_lines(&r.stdout()).is_empty() && tl_lines(&r.stderr()).is_empty());
}

#[test]
fn timeline_thread_selects_threads() {
    let dir = tempfile::tempdir().unwrap();
    let tids = |thread: &str| {
        let r = run_in(
            dir.path(),
            PROG,
            &["threads"],
            &[
                ("DR_HOOK", "1"),
                ("DR_HOOK_TIMELINE", "1"),
                ("DR_HOOK_TIMELINE_FREQ", "1"),
                ("DR_HOOK_TIMELINE_THREAD", thread),
            ],
        );
        assert_eq!(r.code(), 0);
        let mut t: Vec<u32> = r
            .stdout()
            .lines()
            .filter(|l| l.contains(" tl:>"))
            .map(|l| {
                // [EC_DRHOOK:host:myproc:tid:...]
                l.split(':').nth(3).unwrap().parse().unwrap()
            })
            .collect();
        t.sort();
        t.dedup();
        t
    };
    assert_eq!(tids("1"), [1]);
    assert_eq!(tids("3"), [1, 2, 3]);
    assert!(tids("0").len() >= 8);
}

#[test]
fn gencore_signal_writes_a_core_file() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    // `usr1` raises SIGUSR1 inside USR1:MAIN.
    let r = run_in(
        dir.path(),
        PROG,
        &["usr1"],
        &[
            ("DR_HOOK", "1"),
            ("DR_HOOK_GENCORE", "1"),
            ("DR_HOOK_GENCORE_SIGNAL", "10"),
        ],
    );
    let err = r.stderr();
    assert_eq!(r.output.status.signal(), Some(libc::SIGABRT), "{err}");
    assert!(!r.stdout().contains("survived"), "{}", r.stdout());
    assert!(
        err.contains("[signal_gencore@signals.rs] Received signal#10 and now calling abort() ..."),
        "{err}"
    );
    assert!(err.contains("[DrHookCallTree] :  USR1:MAIN"), "{err}");
    assert!(
        err.contains("DR_HOOK_GENCORE=1: signal#10 (SIGUSR1)"),
        "{err}"
    );
    // The handler raised the core limit to the hard limit.
    // SAFETY: plain data written by the call.
    let mut lim: libc::rlimit = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer.
    unsafe { libc::getrlimit(libc::RLIMIT_CORE, &mut lim) };
    if lim.rlim_max != 0 {
        assert!(r.output.status.core_dumped(), "{:?}", r.output.status);
    } else {
        eprintln!("hard core limit 0: the core file itself is not checked");
    }
    // Without DR_HOOK_GENCORE the signal is handled as before.
    let r = run_in(
        dir.path(),
        PROG,
        &["usr1"],
        &[("DR_HOOK", "1"), ("DR_HOOK_GENCORE_SIGNAL", "10")],
    );
    assert_ne!(r.output.status.signal(), Some(libc::SIGABRT));
    assert!(!r.stderr().contains("signal_gencore"), "{}", r.stderr());
}

#[test]
fn timed_kill_sends_the_signal_after_the_time() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    // `crash_at T` spins in AT:MAIN until T (ms since the epoch): 20 s
    // from now, so only the timer ends it.
    let at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis()
        + 20_000;
    let start = std::time::Instant::now();
    let r = run_in(
        dir.path(),
        PROG,
        &["crash_at", &at.to_string()],
        &[
            ("DR_HOOK", "1"),
            ("DR_HOOK_TIMED_KILL", "2:1:9:0.1, 1:1:15:0.3 1:7:15:0.1"),
        ],
    );
    let took = start.elapsed();
    let err = r.stderr();
    assert_eq!(r.output.status.signal(), Some(libc::SIGTERM), "{err}");
    assert!(took.as_secs() < 15, "{took:?}");
    assert!(
        err.contains("[set_killer_timer@timed_kill.rs:")
            && err.contains(
                "] Developer timer (1:1:15:0.3) expires after 0.300s through signal#15 (ntids=1)"
            ),
        "{err}"
    );
    // Items for another task or a thread that never runs arm nothing.
    assert_eq!(err.matches("Developer timer").count(), 1, "{err}");
    // Dr.Hook's traceback of the signal, inside the spinning routine.
    assert!(err.contains("Received signal#15"), "{err}");
    assert!(err.contains("AT:MAIN"), "{err}");
}

#[test]
fn timed_kill_arms_a_thread_at_its_first_call() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_in(
        dir.path(),
        PROG,
        &["threads"],
        &[("DR_HOOK", "1"), ("DR_HOOK_TIMED_KILL", "-1:3:15:100")],
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let err = r.stderr();
    let armed: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("Developer timer (-1:3:15:100)"))
        .map(|l| l.split(':').nth(3).unwrap())
        .collect();
    // [EC_DRHOOK:host:myproc:tid:...]: armed once, by thread 3.
    assert_eq!(armed, ["3"], "{err}");
}

#[test]
fn dump_files_are_copied_into_the_traceback() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_in(
        dir.path(),
        PROG,
        &["segv"],
        &[
            ("DR_HOOK", "1"),
            ("DR_HOOK_DUMP_MAPS", "1"),
            ("DR_HOOK_DUMP_MEMINFO", "1"),
            ("DR_HOOK_DUMP_BUDDYINFO", "0"),
        ],
    );
    let err = r.stderr();
    let dumped: Vec<&str> = err
        .lines()
        .filter_map(|l| l.split_once("[dump_file@signals.rs] ").map(|x| x.1))
        .collect();
    let maps = dumped
        .iter()
        .position(|l| {
            l.starts_with("Content of the file '/proc/")
                && l.contains("/maps', signal#11, nsigs = 1")
        })
        .unwrap_or_else(|| panic!("{err}"));
    let meminfo = dumped
        .iter()
        .position(|l| *l == "Content of the file '/proc/meminfo', signal#11, nsigs = 1")
        .unwrap_or_else(|| panic!("{err}"));
    // The signalled thread's maps: the program's own mapping is there.
    assert!(
        dumped[maps + 1..meminfo]
            .iter()
            .any(|l| l.ends_with("drhook-test-prog")),
        "{err}"
    );
    assert!(
        dumped[meminfo + 1..]
            .iter()
            .any(|l| l.starts_with("MemTotal:")),
        "{err}"
    );
    assert!(!err.contains("buddyinfo"), "{err}");
    // Before the calling tree, after the backtrace's start.
    let pos = |s: &str| err.find(s).unwrap_or_else(|| panic!("{s}: {err}"));
    assert!(pos("Starting DrHook backtrace") < pos("[dump_file@"));
    assert!(pos("[dump_file@") < pos("[DrHookCallTree]"));
}

#[test]
fn trace_stack_aborts_when_thread_1_passes_the_limit() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    // Recursion 200 deep takes far more than 1 KiB of stack.
    let r = run_in(
        dir.path(),
        PROG,
        &["recursion"],
        &[
            ("DR_HOOK", "1"),
            ("DR_HOOK_TRACE_STACK", "1"),
            ("OMP_STACKSIZE", "1K"),
        ],
    );
    let err = r.stderr();
    assert_eq!(r.output.status.signal(), Some(libc::SIGABRT), "{err}");
    assert!(
        err.contains("[random_memstat@lines.rs:")
            && err
                .contains("] Stack usage [MB] very high : 0 > 0 (= 1 x OMP_STACKSIZE=0 ; maxhwm="),
        "{err}"
    );
    // A limit the program stays under: it runs as usual.
    let r = run_in(
        dir.path(),
        PROG,
        &["recursion"],
        &[
            ("DR_HOOK", "1"),
            ("DR_HOOK_TRACE_STACK", "1"),
            ("OMP_STACKSIZE", "1G"),
        ],
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(!r.stderr().contains("Stack usage"), "{}", r.stderr());
}

#[test]
fn dr_hack_appends_a_pseudo_xml_trace() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("drhack.txt"), " <EARLIER_RUN>\n").unwrap();
    let r = run_in(
        dir.path(),
        PROG,
        &["basic"],
        &[
            ("DR_HOOK", "1"),
            ("DR_HOOK_OPT", "prof"),
            ("DR_HACK", "yes"),
        ],
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let text = std::fs::read_to_string(dir.path().join("drhack.txt")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], " <EARLIER_RUN>");
    assert_eq!(lines[1], " <BASIC_MAIN>");
    assert_eq!(*lines.last().unwrap(), " </BASIC_MAIN>");
    let p = r.profile("drhook.prof.1");
    let opens = lines.iter().filter(|l| **l == " <BASIC_LEAF>").count() as u64;
    let closes = lines.iter().filter(|l| **l == " </BASIC_LEAF>").count() as u64;
    assert_eq!(
        (opens, closes),
        (p.row("BASIC:LEAF", 1).calls, p.row("BASIC:LEAF", 1).calls)
    );
    // No temporary file is left behind.
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
    // Another task writes nothing.
    let dir = tempfile::tempdir().unwrap();
    let r = run_in(
        dir.path(),
        PROG,
        &["basic"],
        &[
            ("DR_HOOK", "1"),
            ("DR_HACK", "1"),
            ("OMPI_COMM_WORLD_RANK", "1"),
            ("OMPI_COMM_WORLD_SIZE", "2"),
        ],
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    assert!(!dir.path().join("drhack.txt").exists());
}

#[test]
fn show_lock_prints_the_lock_line_once() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_in(
        dir.path(),
        PROG,
        &["threads"],
        &[("DR_HOOK", "1"), ("DR_HOOK_SHOW_LOCK", "1")],
    );
    assert_eq!(r.code(), 0);
    let err = r.stderr();
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with(" oml_init_lockid_with_name \""))
        .collect();
    assert_eq!(lines.len(), 1, "{err}");
    // `(1x,a,2i20)`: two integers right-aligned in 20 columns.
    let nums = lines[0].split_once("\" :").unwrap().1;
    assert_eq!(nums.len(), 40, "{nums:?}");
    assert_eq!(nums[..20].trim(), "1");
    assert!(nums[20..].trim().parse::<u64>().unwrap() > 0);
    // Only the value 1, as the reference.
    let r = run_in(
        dir.path(),
        PROG,
        &["basic"],
        &[("DR_HOOK", "1"), ("DR_HOOK_SHOW_LOCK", "2")],
    );
    assert!(!r.stderr().contains("oml_init_lockid"), "{}", r.stderr());
}

#[test]
fn dr_hack_file_belongs_to_the_process_that_made_it() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_in(
        dir.path(),
        PROG,
        &["fork"],
        &[("DR_HOOK", "1"), ("DR_HACK", "on")],
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let text = std::fs::read_to_string(dir.path().join("drhack.txt")).unwrap();
    assert!(text.contains(" </FORK_PARENT>\n"), "{text}");
    assert!(text.ends_with(" </FORK_OUTER>\n"), "{text}");
    // The child inherited the open file but wrote nothing to it.
    assert!(!text.contains("FORK_CHILD"), "{text}");
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
}

/// The `## EC_MEMINFO` lines of `DR_HOOK_DUMP_HUGEPAGES` in `err`, from
/// `## EC_MEMINFO` on.
fn meminfo_lines(err: &str) -> Vec<&str> {
    err.lines()
        .filter_map(|l| l.find("## EC_MEMINFO ").map(|i| &l[i..]))
        .collect()
}

/// A `/proc/meminfo` field (kB or a count).
fn proc_meminfo(key: &str) -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|r| r.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

#[test]
fn dump_hugepages_prints_the_nodes_memory_report() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_in(
        dir.path(),
        PROG,
        &["basic"],
        &[("DR_HOOK", "1"), ("DR_HOOK_DUMP_HUGEPAGES", "1,1000")],
    );
    assert_eq!(r.code(), 0, "{}", r.stderr());
    let err = r.stderr();
    // Once (the next is due in 1000 s): the header and this node's line.
    let lines = meminfo_lines(&err);
    assert_eq!(lines.len(), 5, "{err}");
    let first = err.lines().find(|l| l.contains("## EC_MEMINFO ")).unwrap();
    assert!(first.starts_with("[EC_DRHOOK:"), "{first}");
    assert!(first.contains(":1:1:"), "task 1, thread 1: {first}");
    assert!(first.contains("]## EC_MEMINFO "), "{first}");
    // One column pair per NUMA node with a Normal zone in buddyinfo.
    let buddy = std::fs::read_to_string("/proc/buddyinfo").unwrap_or_default();
    let numa = buddy
        .lines()
        .skip(2)
        .take_while(|l| l.contains(" Normal "))
        .count();
    assert_eq!(lines[1].matches(" Numa region ").count(), numa, "{err}");
    assert_eq!(
        lines[2],
        format!(
            "## EC_MEMINFO Node Name                 | Heap  | RSS(tsk)        |{} Total          |",
            " Small  Huge or |".repeat(numa)
        )
    );
    // The node's line: its name, heap, RSS and huge pages, then per NUMA
    // node two figures, free and cached memory, the percentages, energy,
    // power, load, page kind.
    let f: Vec<&str> = lines[4]["## EC_MEMINFO ".len()..]
        .split_whitespace()
        .collect();
    assert_eq!(f.len(), 5 + 2 * numa + 8, "{}", lines[4]);
    assert_eq!(f[0], "0");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let host: String = host.trim().chars().take(20).collect();
    assert_eq!(f[1], host);
    let rss: u64 = f[3].parse().unwrap();
    assert!(rss > 0 && rss < 1 << 20, "{}", lines[4]);
    let huge = proc_meminfo("HugePages_Total:") * proc_meminfo("Hugepagesize:") / 1024;
    assert_eq!(f[4].parse::<u64>().unwrap(), huge, "{}", lines[4]);
    let rest = &f[5 + 2 * numa..];
    let memfree: u64 = rest[0].parse().unwrap();
    assert!(memfree > 0, "{}", lines[4]);
    let used: f64 = rest[2].parse().unwrap();
    assert!((0.0..=100.0).contains(&used), "{}", lines[4]);
    assert_eq!((rest[4], rest[5]), ("0", "0"));
    assert!(["Sm/p", "Hg/p"].contains(&rest[7]), "{}", lines[4]);
    // Another task, no period, or no value: nothing.
    for v in ["2,1", "1,0", "1", ""] {
        let r = run_in(
            dir.path(),
            PROG,
            &["basic"],
            &[("DR_HOOK", "1"), ("DR_HOOK_DUMP_HUGEPAGES", v)],
        );
        assert_eq!(r.code(), 0);
        assert!(meminfo_lines(&r.stderr()).is_empty(), "{v}: {}", r.stderr());
        assert!(!r.stderr().contains("not supported"), "{}", r.stderr());
    }
}

#[test]
fn dump_hugepages_reports_in_the_traceback_when_due() {
    let dir = tempfile::tempdir().unwrap();
    let r = run_in(
        dir.path(),
        PROG,
        &["segv"],
        &[("DR_HOOK", "1"), ("DR_HOOK_DUMP_HUGEPAGES", "1,0.000001")],
    );
    let err = r.stderr();
    let start = err
        .find("Starting DrHook backtrace for signal#11")
        .unwrap_or_else(|| panic!("{err}"));
    // The report right after the line that starts the backtrace.
    let after = meminfo_lines(&err[start..]);
    assert!(after.len() >= 5, "{err}");
    assert!(after[0].contains("| TC    | MEMORY USED(MB)"), "{err}");
}
