//! A static program linked with its tool and `libdrhook_wrap.a`.

use super::*;

/// A static program linked with its tool, `libdrhook_wrap.a` and the
/// `--wrap` list (`share/drhook-wrap.list`): the callbacks are the tool's
/// own definitions (weak references: no `dlsym` in a static program), in
/// libmonitor's static order — `monitor_start_main_init` then
/// `monitor_init_library` just before `main`, no `monitor_fini_library`
/// (no library destructor) — and otherwise as preloaded, for each ending.
/// With `LIBMONITOR_SO` set, libmonitor's static library beside it
/// (`libmonitor_wrap.a`, linked libmonitor's way: `--wrap=main` ...) gives
/// the same logs. Before this change the program did not link (the
/// support functions were missing from `libdrhook_wrap.a`).
#[test]
fn static_program_with_its_tool() {
    if !have_gcc() {
        return;
    }
    let src = prog("libmonitor");
    let inc = format!("-I{}", include_dir().display());
    let sources = [
        src.join("prog.c").display().to_string(),
        src.join("tool.c").display().to_string(),
    ];
    let ours = tempdir();
    let list = format!(
        "-Wl,@{}",
        crate_dir().join("share").join("drhook-wrap.list").display()
    );
    let wrap = built("libdrhook_wrap.a").display().to_string();
    let mut args = vec!["-static", "-o", "prog", &inc];
    args.extend(sources.iter().map(|s| s.as_str()));
    args.extend([list.as_str(), wrap.as_str(), "-lpthread", "-ldl", "-lm"]);
    // glibc warns that `dlopen` in a static program needs the shared
    // libraries at run time: expected.
    tool_warning(ours.path(), "gcc", &args);
    let mut builds = vec![("drhook", ours)];
    let theirs = std::env::var_os("LIBMONITOR_SO")
        .map(|so| {
            Path::new(&so)
                .parent()
                .unwrap()
                .join("../libmonitor_wrap.a")
        })
        .filter(|a| a.exists());
    if let Some(a) = theirs {
        let d = tempdir();
        let wraps = libmonitor_wraps();
        let a = a.display().to_string();
        let mut args = vec!["-static", "-o", "prog", &inc];
        args.extend(sources.iter().map(|s| s.as_str()));
        args.extend(wraps.iter().map(|s| s.as_str()));
        args.extend([a.as_str(), "-lpthread", "-ldl"]);
        tool_warning(d.path(), "gcc", &args);
        builds.push(("libmonitor", d));
    } else {
        eprintln!(
            "libmonitor_wrap.a not found beside LIBMONITOR_SO: no comparison with libmonitor"
        );
    }
    for (ending, how, code) in [
        ("return", 1, Some(0)),
        ("exit", 1, Some(5)),
        ("_exit", 1, Some(6)),
        ("abort", 2, None),
    ] {
        let mut want = expected(how);
        for g in want.iter_mut() {
            g.retain(|l| l != "fini_library");
        }
        want[0].swap(0, 1);
        for (who, d) in &builds {
            let log = d.path().join(format!("log.{ending}"));
            let program = d.path().join("prog").display().to_string();
            let r = run_in(
                d.path(),
                &program,
                &[ending],
                &[("MONITOR_TOOL_LOG", &log.display().to_string())],
            );
            assert_eq!(
                r.output.status.code(),
                code,
                "{who} {ending}: {}",
                r.stderr()
            );
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            assert_eq!(
                by_process(&text),
                want,
                "{who} {ending}: the log was\n{text}"
            );
        }
    }
}

/// A tool written for libmonitor's static mode, whose `monitor_wrap_main`
/// calls `__real_main` and exits, links with `libdrhook_wrap.a` and the
/// `--wrap` list (`__real_main` is the archive's), and also linked
/// libmonitor's way with `-Wl,--wrap=main` added (`__wrap_main` is the
/// archive's too); both runs print the callbacks and `main`'s line in
/// libmonitor's order, and with `LIBMONITOR_SO` set, the same as
/// libmonitor's `libmonitor_wrap.a`. Before this change neither linked
/// (`__real_main` and `__wrap_main` undefined).
#[test]
fn static_tool_that_wraps_main() {
    if !have_gcc() {
        return;
    }
    let src = prog("libmonitor");
    let sources = [
        src.join("wrap_main_prog.c").display().to_string(),
        src.join("wrap_main_tool.c").display().to_string(),
    ];
    let list = format!(
        "-Wl,@{}",
        crate_dir().join("share").join("drhook-wrap.list").display()
    );
    let wrap = built("libdrhook_wrap.a").display().to_string();
    let mut builds = Vec::new();
    for extra in [None, Some("-Wl,--wrap=main")] {
        let d = tempdir();
        let mut args = vec!["-static", "-o", "prog"];
        args.extend(sources.iter().map(|s| s.as_str()));
        args.push(list.as_str());
        args.extend(extra);
        args.extend([wrap.as_str(), "-lpthread", "-ldl", "-lm"]);
        tool_warning(d.path(), "gcc", &args);
        builds.push((
            if extra.is_some() {
                "drhook --wrap=main"
            } else {
                "drhook"
            },
            d,
        ));
    }
    let theirs = std::env::var_os("LIBMONITOR_SO")
        .map(|so| {
            Path::new(&so)
                .parent()
                .unwrap()
                .join("../libmonitor_wrap.a")
        })
        .filter(|a| a.exists());
    if let Some(a) = theirs {
        let d = tempdir();
        let a = a.display().to_string();
        let mut args = vec!["-static", "-o", "prog"];
        args.extend(sources.iter().map(|s| s.as_str()));
        let wraps = libmonitor_wraps();
        args.extend(wraps.iter().map(|s| s.as_str()));
        args.extend([a.as_str(), "-lpthread", "-ldl"]);
        tool_warning(d.path(), "gcc", &args);
        builds.push(("libmonitor", d));
    } else {
        eprintln!(
            "libmonitor_wrap.a not found beside LIBMONITOR_SO: no comparison with libmonitor"
        );
    }
    let want = [
        "tool: init_process",
        "tool: at_main",
        "tool: wrap_main argc=2 argv[1]=arg",
        "main argc=2 argv[1]=arg",
        "tool: main returned 7",
        "tool: fini_process how=1",
    ];
    for (who, d) in &builds {
        let program = d.path().join("prog").display().to_string();
        let r = run_in(d.path(), &program, &["arg"], &[]);
        assert_eq!(r.output.status.code(), Some(7), "{who}: {}", r.stderr());
        let out = r.stdout();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines, want, "{who}: stderr\n{}", r.stderr());
    }
}

/// The link options of libmonitor's static mode: `--wrap` and
/// `--undefined=__wrap_` of each function it wraps.
fn libmonitor_wraps() -> Vec<String> {
    let names = "main exit _exit dlopen dlclose fork vfork system execl execlp execle \
                 execv execvp execve pthread_create pthread_exit sigwait sigwaitinfo \
                 sigtimedwait signal sigaction sigprocmask pthread_sigmask";
    names
        .split_whitespace()
        .flat_map(|n| {
            [
                format!("-Wl,--wrap={n}"),
                format!("-Wl,--undefined=__wrap_{n}"),
            ]
        })
        .collect()
}

/// A preloaded tool that calls `monitor_wrap_main` instead of defining it
/// (bound at load: `-z now`) loads under `drhook run` and gets 0, as with
/// libmonitor's `libmonitor.so` (whose default returns 0). Before this
/// change the preload library did not define it: the tool did not load.
#[test]
fn preloaded_tool_calling_monitor_wrap_main() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let src = prog("libmonitor");
    let tool_c = src.join("wrap_main_preload_tool.c").display().to_string();
    let prog_c = src.join("wrap_main_prog.c").display().to_string();
    tool(
        d.path(),
        "gcc",
        &[
            "-shared",
            "-fPIC",
            "-Wl,-z,now",
            "-o",
            "libtool.so",
            &tool_c,
        ],
    );
    tool(d.path(), "gcc", &["-o", "prog", &prog_c]);
    let libtool = d.path().join("libtool.so").display().to_string();
    let want = [
        "tool: monitor_wrap_main returned 0",
        "main argc=2 argv[1]=arg",
    ];
    let exe = drhook_exe().display().to_string();
    let r = run_in(
        d.path(),
        &exe,
        &["run", "--monitor", &libtool, "--", "./prog", "arg"],
        &[],
    );
    assert_eq!(r.output.status.code(), Some(7), "{}", r.stderr());
    assert_eq!(
        r.stdout().lines().collect::<Vec<_>>(),
        want,
        "{}",
        r.stderr()
    );
    if let Some(so) = std::env::var_os("LIBMONITOR_SO") {
        let pre = format!("{libtool} {}", Path::new(&so).display());
        let r = run_in(d.path(), "./prog", &["arg"], &[("LD_PRELOAD", &pre)]);
        assert_eq!(r.output.status.code(), Some(7), "{}", r.stderr());
        assert_eq!(r.stdout().lines().collect::<Vec<_>>(), want, "libmonitor");
    }
}
