//! libmonitor's C interface: a C tool written only against `monitor.h`
//! (`tests/progs/libmonitor/tool.c`, which logs each callback with its
//! pid, thread number and arguments) preloaded beside drhook's library
//! under `drhook run`, on a C program with threads, a `fork` whose child
//! starts a thread and exits, a `dlopen`, and each way of ending. The
//! sequence is checked against libmonitor's (HPCToolkit/libmonitor's
//! `fork.c`, `pthread.c`, `main.c`); with `LIBMONITOR_SO` set to a built
//! `libmonitor.so`, the same tool and program run under it too and both
//! logs must be the same (pids aside).

mod common;
use common::*;

#[path = "libmonitor/early.rs"]
mod early;
#[path = "libmonitor/signals.rs"]
mod signals;
#[path = "libmonitor/static_program.rs"]
mod static_program;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The tool and the program, built once per test in `dir`.
fn build(dir: &Path) -> (PathBuf, PathBuf) {
    let src = prog("libmonitor");
    let inc = format!("-I{}", include_dir().display());
    let tool_c = src.join("tool.c").display().to_string();
    let prog_c = src.join("prog.c").display().to_string();
    tool(
        dir,
        "gcc",
        &[
            "-Wall",
            "-shared",
            "-fPIC",
            &inc,
            "-o",
            "libtool.so",
            &tool_c,
        ],
    );
    tool(
        dir,
        "gcc",
        &["-Wall", "-o", "prog", &prog_c, "-pthread", "-ldl"],
    );
    (dir.join("libtool.so"), dir.join("prog"))
}

/// The log's lines, each pid replaced by its order of appearance (`P0`,
/// `P1`, ...), grouped by process.
fn by_process(log: &str) -> Vec<Vec<String>> {
    let mut order: BTreeMap<String, usize> = BTreeMap::new();
    let mut groups: Vec<Vec<String>> = Vec::new();
    for line in log.lines() {
        let (pid, rest) = line.split_once(' ').unwrap();
        let n = order.len();
        let i = *order.entry(pid.to_string()).or_insert(n);
        if i == groups.len() {
            groups.push(Vec::new());
        }
        groups[i].push(rest.to_string());
    }
    groups
}

/// Runs `prog ending` with the tool: under `drhook run`, or with
/// `LD_PRELOAD="tool monitor"` when `monitor` is given.
fn run_tool(dir: &Path, ending: &str, monitor: Option<&Path>) -> (Run, String) {
    let (libtool, program) = build(dir);
    let log = dir.join(format!("log.{ending}"));
    let _ = std::fs::remove_file(&log);
    let log_s = log.display().to_string();
    let tool_s = libtool.display().to_string();
    let prog_s = program.display().to_string();
    let r = match monitor {
        None => {
            let exe = drhook_exe().display().to_string();
            run_in(
                dir,
                &exe,
                &["run", "--no-out-dir", "--", &prog_s, ending],
                &[("LD_PRELOAD", &tool_s), ("MONITOR_TOOL_LOG", &log_s)],
            )
        }
        Some(m) => {
            let pre = format!("{tool_s} {}", m.display());
            run_in(
                dir,
                &prog_s,
                &[ending],
                &[("LD_PRELOAD", &pre), ("MONITOR_TOOL_LOG", &log_s)],
            )
        }
    };
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    (r, text)
}

fn lines(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// The callbacks libmonitor makes for `prog ending`, `how` the ending's
/// `MONITOR_EXIT_*`.
fn expected(how: i32) -> Vec<Vec<String>> {
    let mut parent = lines(&[
        "init_library",
        "start_main_init",
        "init_process argc=2 argv0=prog data=null tid=0",
        "at_main main=ok bottom=ok",
        "init_thread_support",
    ]);
    // The second thread is ignored (MONITOR_IGNORE_NEW_THREAD): no
    // callbacks, no number.
    for (n, t) in [(1, Some(1)), (2, None), (3, Some(2))] {
        if let Some(t) = t {
            parent.push("thread_pre_create info=ok".into());
            parent.push("reset_stacksize ok".into());
            parent.push(format!(
                "init_thread tid={t} num={t} threaded=1 data=ok start=ok"
            ));
            parent.push(format!("fini_thread data={} num={t}", 1000 + t));
        } else {
            assert_eq!(n, 2);
            parent.push("thread_pre_create info=ok ignore".into());
        }
    }
    parent.extend(lines(&[
        "pre_fork",
        "post_fork child=pid data=ok",
        "pre_dlopen libm.so.6 flags=2",
        "dlopen libm.so.6 handle=ok",
        "dlclose handle=ok",
        "post_dlclose handle=ok ret=0",
    ]));
    parent.push(format!("begin_process_exit how={how} post_creates=2"));
    parent.push(format!("fini_process how={how} data=ok user=ok"));
    parent.push("fini_library".into());
    if how == 3 {
        // The exec'd program is the same process, monitored again.
        parent.extend(lines(&[
            "init_library",
            "start_main_init",
            "init_process argc=1 argv0=true data=null tid=0",
            "at_main main=ok bottom=ok",
            "begin_process_exit how=1 post_creates=0",
            "fini_process how=1 data=ok user=ok",
            "fini_library",
        ]));
    }
    // The child: init_process with pre_fork's data, no post_fork, no
    // at_main; its thread goes on from the parent's count.
    let child = lines(&[
        "init_process argc=2 argv0=prog data=fork tid=0",
        "thread_pre_create info=ok",
        "reset_stacksize ok",
        "init_thread tid=3 num=3 threaded=1 data=ok start=ok",
        "fini_thread data=1003 num=3",
        "begin_process_exit how=1 post_creates=3",
        "fini_process how=1 data=ok user=ok",
        "fini_library",
    ]);
    vec![parent, child]
}

/// Groups in a fixed order: the first process first, then the others
/// (the child's lines interleave with the parent's).
fn check(ending: &str, how: i32, status: Option<i32>) {
    if !have_gcc() {
        return;
    }
    let dir = tempdir();
    let (r, log) = run_tool(dir.path(), ending, None);
    assert_eq!(
        r.output.status.code(),
        status,
        "{ending}: {:?}\n{}",
        r.output.status,
        r.stderr()
    );
    let got = by_process(&log);
    assert_eq!(got, expected(how), "{ending}: the log was\n{log}");
}

#[test]
fn return_from_main() {
    check("return", 1, Some(0));
}

#[test]
fn exit() {
    check("exit", 1, Some(5));
}

#[test]
fn underscore_exit() {
    check("_exit", 1, Some(6));
}

#[test]
fn abort_is_a_signal() {
    check("abort", 2, None);
}

#[test]
fn exec_ends_and_restarts() {
    check("exec", 3, Some(0));
}

/// `drhook run --monitor libtool.so`: the tool is preloaded before
/// drhook's library, with the same callbacks.
#[test]
fn drhook_run_monitor() {
    if !have_gcc() {
        return;
    }
    let dir = tempdir();
    let (libtool, program) = build(dir.path());
    let log = dir.path().join("log.monitor");
    let exe = drhook_exe().display().to_string();
    let r = run_in(
        dir.path(),
        &exe,
        &[
            "run",
            "--no-out-dir",
            "--monitor",
            &libtool.display().to_string(),
            "--",
            &program.display().to_string(),
            "return",
        ],
        &[("MONITOR_TOOL_LOG", &log.display().to_string())],
    );
    assert_eq!(r.output.status.code(), Some(0), "{}", r.stderr());
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(by_process(&text), expected(1), "the log was\n{text}");
}

/// `MONITOR_OPTIONS=MONITOR_DEBUG` prints the debug lines, as
/// `MONITOR_DEBUG` does; `MONITOR_NONZERO_EXIT` and `MONITOR_SIGINT` are
/// accepted without a word (those endings are always reported); an
/// unknown word is said and ignored.
#[test]
fn monitor_options() {
    if !have_gcc() {
        return;
    }
    let dir = tempdir();
    let (libtool, program) = build(dir.path());
    let exe = drhook_exe().display().to_string();
    let tool_s = libtool.display().to_string();
    let r = run_in(
        dir.path(),
        &exe,
        &[
            "run",
            "--no-out-dir",
            "--",
            &program.display().to_string(),
            "return",
        ],
        &[
            ("LD_PRELOAD", &tool_s),
            (
                "MONITOR_OPTIONS",
                "MONITOR_DEBUG,MONITOR_NONZERO_EXIT MONITOR_SIGINT MONITOR_BOGUS",
            ),
        ],
    );
    assert_eq!(r.output.status.code(), Some(0), "{}", r.stderr());
    let err = r.stderr();
    assert!(err.contains("calling monitor_at_main"), "{err}");
    assert!(err.contains("\"MONITOR_BOGUS\" is not one of"), "{err}");
    assert!(!err.contains("MONITOR_NONZERO_EXIT\" is not"), "{err}");
    // SIGINT's end is reported (`signal_endings`): accepted silently.
    assert!(!err.contains("\"MONITOR_SIGINT\""), "{err}");
    assert!(!err.contains("MONITOR_SIGINT accepted"), "{err}");
}

/// With `LIBMONITOR_SO` (a built libmonitor.so), the same log under
/// libmonitor as under drhook, for every ending.
#[test]
fn same_as_libmonitor() {
    let Some(so) = std::env::var_os("LIBMONITOR_SO") else {
        eprintln!("LIBMONITOR_SO not set: no comparison with libmonitor");
        return;
    };
    if !have_gcc() {
        return;
    }
    for ending in ["return", "exit", "_exit", "abort", "exec"] {
        let dir = tempdir();
        let (_, ours) = run_tool(dir.path(), ending, None);
        let (_, theirs) = run_tool(dir.path(), ending, Some(Path::new(&so)));
        assert_eq!(
            by_process(&ours),
            by_process(&theirs),
            "{ending}: ours\n{ours}\nlibmonitor's\n{theirs}"
        );
    }
}

/// The support functions a sampling tool relies on
/// (`tests/progs/libmonitor/signals_tool.c` and `signals_prog.c`):
/// `monitor_sigaction` puts the tool's handler in front of SIGUSR1 and of
/// SIGTERM (which Dr.Hook also catches) — the first signal handled by the
/// tool, the next passed on to the program's handler, an ignored signal
/// stays ignored, and the program still sees its own handler;
/// `monitor_broadcast_signal` reaches the three other threads and not the
/// caller; the return address of `main` and of each start routine lies in
/// the bottom frame `monitor_unwind_*_bottom_frame` and
/// `monitor_in_start_func_*` name, and `main` itself does not. With
/// `LIBMONITOR_SO`, libmonitor prints the same.
#[test]
fn support_functions() {
    if !have_gcc() {
        return;
    }
    let dir = tempdir();
    let src = prog("libmonitor");
    let inc = format!("-I{}", include_dir().display());
    let tool_c = src.join("signals_tool.c").display().to_string();
    let prog_c = src.join("signals_prog.c").display().to_string();
    tool(
        dir.path(),
        "gcc",
        &[
            "-Wall",
            "-shared",
            "-fPIC",
            &inc,
            "-o",
            "libstool.so",
            &tool_c,
        ],
    );
    tool(
        dir.path(),
        "gcc",
        &["-Wall", "-o", "sprog", &prog_c, "-pthread", "-ldl"],
    );
    let tool_s = dir.path().join("libstool.so").display().to_string();
    let prog_s = dir.path().join("sprog").display().to_string();
    let expected = "main bottom: process=1 thread=0 wide=1 narrow=1\n\
                    main itself: wide=0\n\
                    view: own handler\n\
                    tool 2 program 1\n\
                    ignored: survived, tool 3 program 1\n\
                    SIGTERM: tool 2 program 1\n\
                    broadcast: 0\n\
                    thread 0 bottom: thread=1 process=0\n\
                    thread 1 bottom: thread=1 process=0\n\
                    thread 2 bottom: thread=1 process=0\n\
                    SIGUSR2: threads 3, main 0\n";
    let exe = drhook_exe().display().to_string();
    let r = run_in(
        dir.path(),
        &exe,
        &["run", "--no-out-dir", "--", &prog_s],
        &[("LD_PRELOAD", &tool_s)],
    );
    assert_eq!(r.output.status.code(), Some(0), "{}", r.stderr());
    assert_eq!(r.stdout(), expected, "{}", r.stderr());
    if let Some(so) = std::env::var_os("LIBMONITOR_SO") {
        let pre = format!("{tool_s} {}", Path::new(&so).display());
        let r = run_in(dir.path(), &prog_s, &[], &[("LD_PRELOAD", &pre)]);
        assert_eq!(r.stdout(), expected, "under libmonitor: {}", r.stderr());
    } else {
        eprintln!("LIBMONITOR_SO not set: no comparison with libmonitor");
    }
}

/// Installed the libmonitor way: `make install` puts `libmonitor.so` (the
/// preload library under libmonitor's name), `monitor.h` and `monitor.pc`
/// in the prefix; a tool built with `pkg-config --cflags --libs monitor`
/// (linked with `-lmonitor`, as a tool may be) runs with
/// `LD_PRELOAD="libtool.so libmonitor.so"` and gets the callbacks
/// libmonitor gives.
#[test]
fn installed_as_libmonitor() {
    if !have_gcc() || !have_gfortran() || !have_tool("make") || !have_tool("pkg-config") {
        return;
    }
    built("libdrhook_preload.so");
    shared_lib();
    let d = tempdir();
    let prefix = make_install(d.path());
    for f in [
        "lib/libmonitor.so",
        "include/monitor.h",
        "lib/pkgconfig/monitor.pc",
    ] {
        assert!(prefix.join(f).exists(), "{f} not installed");
    }
    let flags = installed_pkg_config(&prefix, "monitor");
    assert!(flags.contains("-lmonitor"), "{flags}");
    let src = prog("libmonitor");
    let mut args: Vec<String> = ["-Wall", "-shared", "-fPIC", "-o", "libtool.so"]
        .map(String::from)
        .to_vec();
    args.push(src.join("tool.c").display().to_string());
    args.extend(flags.split_whitespace().map(String::from));
    let a: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    tool(d.path(), "gcc", &a);
    tool(
        d.path(),
        "gcc",
        &[
            "-Wall",
            "-o",
            "prog",
            &src.join("prog.c").display().to_string(),
            "-pthread",
            "-ldl",
        ],
    );
    let log = d.path().join("log");
    let pre = format!(
        "{} {}",
        d.path().join("libtool.so").display(),
        prefix.join("lib/libmonitor.so").display()
    );
    let lib = prefix.join("lib").display().to_string();
    let r = run_in(
        d.path(),
        &d.path().join("prog").display().to_string(),
        &["return"],
        &[
            ("LD_PRELOAD", pre.as_str()),
            ("LD_LIBRARY_PATH", lib.as_str()),
            ("MONITOR_TOOL_LOG", &log.display().to_string()),
        ],
    );
    assert_eq!(r.output.status.code(), Some(0), "{}", r.stderr());
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert_eq!(by_process(&text), expected(1), "the log was\n{text}");
}

/// The process's end gives every thread still running its
/// `monitor_fini_thread`, on that thread, between
/// `monitor_begin_process_exit` and `monitor_fini_process`
/// (`tests/progs/libmonitor/shootdown_prog.c`: two threads blocked in a
/// read, the second ignored by the tool; the end from `main`, or from a
/// third thread, which then gets its own last). With `LIBMONITOR_SO`, libmonitor gives the same threads
/// theirs (it also gives the main thread one, with the process's data,
/// when another thread ends the process: left out of the comparison).
#[test]
fn fini_thread_for_every_running_thread() {
    if !have_gcc() {
        return;
    }
    let dir = tempdir();
    let (libtool, _) = build(dir.path());
    let src = prog("libmonitor").join("shootdown_prog.c");
    tool(
        dir.path(),
        "gcc",
        &["-Wall", "-o", "sd", &src.display().to_string(), "-pthread"],
    );
    let prog_s = dir.path().join("sd").display().to_string();
    let tool_s = libtool.display().to_string();
    let exe = drhook_exe().display().to_string();
    for mode in ["main", "side"] {
        let mut runs = vec![("drhook", None)];
        if let Some(so) = std::env::var_os("LIBMONITOR_SO") {
            runs.push(("libmonitor", Some(PathBuf::from(so))));
        }
        for (who, so) in runs {
            let log = dir.path().join(format!("log.{mode}.{who}"));
            let log_s = log.display().to_string();
            let r = match &so {
                None => run_in(
                    dir.path(),
                    &exe,
                    &["run", "--no-out-dir", "--", &prog_s, mode],
                    &[("LD_PRELOAD", &tool_s), ("MONITOR_TOOL_LOG", &log_s)],
                ),
                Some(m) => {
                    let pre = format!("{tool_s} {}", m.display());
                    run_in(
                        dir.path(),
                        &prog_s,
                        &[mode],
                        &[("LD_PRELOAD", &pre), ("MONITOR_TOOL_LOG", &log_s)],
                    )
                }
            };
            assert_eq!(
                r.output.status.code(),
                Some(0),
                "{who} {mode}: {}",
                r.stderr()
            );
            let text = std::fs::read_to_string(&log).unwrap();
            let lines: Vec<&str> = text.lines().map(|l| l.split_once(' ').unwrap().1).collect();
            let at = |p: &str| lines.iter().position(|l| l.starts_with(p));
            let begin = at("begin_process_exit").expect(&text);
            let fini = at("fini_process").expect(&text);
            let mut inits: Vec<String> = lines
                .iter()
                .filter_map(|l| l.strip_prefix("init_thread tid="))
                .map(|l| l.split(' ').next().unwrap().to_string())
                .collect();
            let mut finis: Vec<String> = lines[begin..fini]
                .iter()
                .filter_map(|l| l.strip_prefix("fini_thread data="))
                .filter(|l| !l.ends_with("num=0"))
                .map(|l| {
                    let (data, num) = l.split_once(" num=").unwrap();
                    assert_eq!(
                        data,
                        format!("{}", 1000 + num.parse::<i64>().unwrap()),
                        "{text}"
                    );
                    num.to_string()
                })
                .collect();
            inits.sort();
            finis.sort();
            // tool.c ignores the second thread created.
            assert_eq!(
                inits.len(),
                if mode == "side" { 2 } else { 1 },
                "{who} {mode}:\n{text}"
            );
            assert_eq!(
                finis, inits,
                "{who} {mode}: every thread's fini before fini_process:\n{text}"
            );
            assert_eq!(
                lines
                    .iter()
                    .filter(|l| l.starts_with("fini_thread") && !l.ends_with("num=0"))
                    .count(),
                inits.len(),
                "{who} {mode}: one fini_thread each:\n{text}"
            );
        }
    }
}

/// Runs `program args` with the tool `libtool`: under `drhook run
/// --monitor` (`monitor` None: Dr.Hook's engine on, which catches some
/// signals too), with `LD_PRELOAD="tool libdrhook_preload.so"` (the
/// engine off), or with `LD_PRELOAD="tool monitor"` (libmonitor). The
/// exit status or signal, stdout and the log.
fn run_with(
    dir: &Path,
    libtool: &Path,
    program: &Path,
    args: &[&str],
    how: &str,
) -> (Option<i32>, Option<i32>, String, String) {
    let log = dir.join(format!("log.{how}.{}", args.join("_")));
    let _ = std::fs::remove_file(&log);
    let log_s = log.display().to_string();
    let tool_s = libtool.display().to_string();
    let prog_s = program.display().to_string();
    let r = match how {
        "drhook" => {
            let mut a = vec!["run", "--monitor", &tool_s, "--", &prog_s];
            a.extend_from_slice(args);
            run_in(
                dir,
                &drhook_exe().display().to_string(),
                &a,
                &[("MONITOR_TOOL_LOG", &log_s)],
            )
        }
        _ => {
            let lib = if how == "preload" {
                built("libdrhook_preload.so").display().to_string()
            } else {
                std::env::var("LIBMONITOR_SO").unwrap()
            };
            let pre = format!("{tool_s} {lib}");
            run_in(
                dir,
                &prog_s,
                args,
                &[("LD_PRELOAD", &pre), ("MONITOR_TOOL_LOG", &log_s)],
            )
        }
    };
    (
        r.output.status.code(),
        signal(&r),
        r.stdout(),
        std::fs::read_to_string(&log).unwrap_or_default(),
    )
}

/// The ways of running a tool: drhook's two, and libmonitor when
/// `LIBMONITOR_SO` names it.
fn ways() -> Vec<&'static str> {
    let mut w = vec!["drhook", "preload"];
    if std::env::var_os("LIBMONITOR_SO").is_some() {
        w.push("libmonitor");
    } else {
        eprintln!("LIBMONITOR_SO not set: no comparison with libmonitor");
    }
    w
}
