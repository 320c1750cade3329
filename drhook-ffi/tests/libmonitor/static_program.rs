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
        let names = "main exit _exit dlopen dlclose fork vfork system execl execlp execle \
                     execv execvp execve pthread_create pthread_exit sigwait sigwaitinfo \
                     sigtimedwait signal sigaction sigprocmask pthread_sigmask";
        let wraps: Vec<String> = names
            .split_whitespace()
            .flat_map(|n| {
                [
                    format!("-Wl,--wrap={n}"),
                    format!("-Wl,--undefined=__wrap_{n}"),
                ]
            })
            .collect();
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
