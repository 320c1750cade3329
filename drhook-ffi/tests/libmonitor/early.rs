//! A process started before `main`: a tool's own constructor
//! (`monitor_initialize`), a library's constructor's thread or fork.

use super::*;

/// A tool whose own constructor calls `monitor_initialize` (before the
/// layer's start) gets `monitor_init_process` there, with no arguments
/// (`*argc` 0, `argv` null), once (it calls it twice), and at `main` only
/// `monitor_at_main`; the rest is as ever, the fork child starting with
/// the arguments `main` got. Before this, the tool failed to load
/// (`monitor_initialize` undefined). Same log under libmonitor.
#[test]
fn monitor_initialize_from_a_constructor() {
    if !have_gcc() {
        return;
    }
    let dir = tempdir();
    let (_, program) = build(dir.path());
    let inc = format!("-I{}", include_dir().display());
    let tool_c = prog("libmonitor").join("tool.c").display().to_string();
    tool(
        dir.path(),
        "gcc",
        &[
            "-Wall",
            "-DTOOL_EARLY",
            "-shared",
            "-fPIC",
            &inc,
            "-o",
            "libearly.so",
            &tool_c,
        ],
    );
    let libtool = dir.path().join("libearly.so");
    // The constructor runs after the monitoring library's (which made
    // `monitor_init_library`), before `__libc_start_main`.
    let mut want = expected(1);
    let init = want[0]
        .iter()
        .position(|l| l.starts_with("init_process"))
        .unwrap();
    want[0].remove(init);
    for (i, l) in [
        "constructor",
        "init_process argc=0 argv0=- data=null tid=0",
        "constructor done",
    ]
    .into_iter()
    .enumerate()
    {
        want[0].insert(1 + i, l.into());
    }
    for how in ways() {
        let (code, _, _, text) = run_with(dir.path(), &libtool, &program, &["return"], how);
        assert_eq!(code, Some(0), "{how}");
        assert_eq!(by_process(&text), want, "{how}: the log was\n{text}");
    }
}

/// Events before `main` (libmonitor's `tests/early.c`, made
/// deterministic: `tests/progs/libmonitor/early_lib.c`, a library the
/// program needs, whose constructor starts and joins a thread, `T`, or
/// forks, `F`, both processes going on to `main`, or opens and closes a
/// library, `O`): a `pthread_create`
/// there starts the process (`monitor_init_library`, then
/// `monitor_init_process` with no arguments) and the thread gets its
/// callbacks; a `fork` there gives the parent `monitor_pre_fork` /
/// `monitor_post_fork` (its process starts at `main`) and the child
/// `monitor_init_process` with the fork's data; a `dlopen` there its
/// callbacks (the process starts at `main`); at `main` a process
/// started early gets `monitor_at_main` only. Before this change nothing
/// was reported before `main`. Same logs under libmonitor.
#[test]
fn events_before_main() {
    if !have_gcc() {
        return;
    }
    let dir = tempdir();
    let (libtool, _) = build(dir.path());
    let src = prog("libmonitor");
    tool(
        dir.path(),
        "gcc",
        &[
            "-Wall",
            "-shared",
            "-fPIC",
            "-o",
            "libelib.so",
            &src.join("early_lib.c").display().to_string(),
            "-pthread",
            "-ldl",
        ],
    );
    let rpath = format!("-Wl,-rpath,{}", dir.path().display());
    tool(
        dir.path(),
        "gcc",
        &[
            "-Wall",
            "-o",
            "early_main",
            &src.join("early_main.c").display().to_string(),
            "-L.",
            "-lelib",
            &rpath,
        ],
    );
    let program = dir.path().join("early_main");
    let thread = [
        "init_thread_support",
        "thread_pre_create info=ok",
        "reset_stacksize ok",
        "init_thread tid=1 num=1 threaded=1 data=ok start=ok",
        "fini_thread data=1001 num=1",
    ];
    let end = |creates: i32| {
        vec![
            format!("begin_process_exit how=1 post_creates={creates}"),
            "fini_process how=1 data=ok user=ok".to_string(),
            "fini_library".to_string(),
        ]
    };
    let at_main = ["start_main_init", "at_main main=ok bottom=ok"];
    let early_start = [
        "init_library",
        "init_process argc=0 argv0=- data=null tid=0",
    ];
    let mut t = lines(&early_start);
    t.extend(lines(&thread));
    t.extend(lines(&at_main));
    t.extend(end(1));
    let mut f_parent = lines(&[
        "pre_fork",
        "post_fork child=pid data=ok",
        "init_library",
        "start_main_init",
        "init_process argc=1 argv0=early_main data=null tid=0",
        "at_main main=ok bottom=ok",
    ]);
    f_parent.extend(end(0));
    let mut f_child = lines(&[
        "init_library",
        "init_process argc=0 argv0=- data=fork tid=0",
    ]);
    f_child.extend(lines(&at_main));
    f_child.extend(end(0));
    let mut tf_parent = lines(&early_start);
    tf_parent.extend(lines(&thread));
    tf_parent.extend(lines(&["pre_fork", "post_fork child=pid data=ok"]));
    tf_parent.extend(lines(&at_main));
    tf_parent.extend(end(1));
    let mut tf_child = lines(&["init_process argc=0 argv0=- data=fork tid=0"]);
    tf_child.extend(lines(&at_main));
    tf_child.extend(end(1));
    // A library opened and closed: its callbacks, before even
    // `monitor_init_library` (as libmonitor); the process starts at `main`.
    let mut o = lines(&[
        "pre_dlopen libm.so.6 flags=2",
        "dlopen libm.so.6 handle=ok",
        "dlclose handle=ok",
        "post_dlclose handle=ok ret=0",
        "init_library",
        "start_main_init",
        "init_process argc=1 argv0=early_main data=null tid=0",
        "at_main main=ok bottom=ok",
    ]);
    o.extend(end(0));
    let cases = [
        ("O", vec![o]),
        ("T", vec![t]),
        ("F", vec![f_parent, f_child]),
        ("TF", vec![tf_parent, tf_child]),
    ];
    for (early, want) in cases {
        for how in ways() {
            let log = dir.path().join(format!("log.early.{how}.{early}"));
            let log_s = log.display().to_string();
            let tool_s = libtool.display().to_string();
            let prog_s = program.display().to_string();
            let env = [("EARLY", early), ("MONITOR_TOOL_LOG", log_s.as_str())];
            let r = match how {
                "drhook" => run_in(
                    dir.path(),
                    &drhook_exe().display().to_string(),
                    &["run", "--monitor", &tool_s, "--", &prog_s],
                    &env,
                ),
                _ => {
                    let lib = if how == "preload" {
                        built("libdrhook_preload.so").display().to_string()
                    } else {
                        std::env::var("LIBMONITOR_SO").unwrap()
                    };
                    let pre = format!("{tool_s} {lib}");
                    let mut env = env.to_vec();
                    env.push(("LD_PRELOAD", &pre));
                    run_in(dir.path(), &prog_s, &[], &env)
                }
            };
            assert_eq!(
                r.output.status.code(),
                Some(0),
                "{early} {how}: {}",
                r.stderr()
            );
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            // The parent logs first (before it forks).
            assert_eq!(
                by_process(&text),
                want,
                "{early} {how}: the log was\n{text}"
            );
        }
    }
}
