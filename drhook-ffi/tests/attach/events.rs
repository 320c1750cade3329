//! The events a tool on the layer receives.

use super::*;

fn events(dir: &Path, exe: &Path, scenario: &str) -> (Run, Vec<(u32, u32, String)>) {
    let log = dir.join(format!("{scenario}.log"));
    let lib = target_dir().join("examples").join("libevent_log.so");
    built("drhook");
    let r = run_in(
        dir,
        &exe.display().to_string(),
        &[scenario],
        &[
            ("LD_PRELOAD", &lib.display().to_string()),
            ("EVENT_LOG", &log.display().to_string()),
        ],
    );
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    let ev = text
        .lines()
        .map(|l| {
            let mut it = l.splitn(3, ' ');
            (
                it.next().unwrap().parse().unwrap(),
                it.next().unwrap().parse().unwrap(),
                it.next().unwrap().to_string(),
            )
        })
        .collect();
    (r, ev)
}

#[test]
fn a_tool_gets_each_event_once() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = life(d.path());
    let (r, ev) = events(d.path(), &exe, "fork");
    ok(&r);
    let names: Vec<&str> = ev.iter().map(|e| e.2.as_str()).collect();
    let parent = ev[0].0;
    let child = ev.iter().find(|e| e.0 != parent).unwrap().0;
    let of = |pid: u32| -> Vec<&str> {
        ev.iter()
            .filter(|e| e.0 == pid)
            .map(|e| e.2.as_str())
            .collect()
    };
    assert_eq!(
        of(parent),
        vec![
            "init_process life forked=false argc=2",
            "pre_fork",
            &format!("post_fork Parent({child})"),
            "fini_process Return(0)",
        ],
        "{names:?}"
    );
    assert_eq!(
        of(child),
        vec![
            "post_fork Child",
            "init_process life forked=true argc=0",
            "fini_process Return(0)",
        ]
    );

    let (r, ev) = events(d.path(), &exe, "threads");
    ok(&r);
    let main_tid = ev[0].1;
    let inits: Vec<u32> = ev
        .iter()
        .filter(|e| e.2.starts_with("init_thread"))
        .map(|e| e.1)
        .collect();
    let finis: Vec<u32> = ev
        .iter()
        .filter(|e| e.2 == "fini_thread")
        .map(|e| e.1)
        .collect();
    assert_eq!(inits.len(), 4, "{ev:?}");
    assert_eq!(finis.len(), 3, "the detached thread never ends: {ev:?}");
    assert!(finis.iter().all(|t| inits.contains(t) && *t != main_tid));
    assert_eq!(ev.last().unwrap().2, "fini_process Return(0)");
    assert_eq!(
        ev.iter()
            .filter(|e| e.2.starts_with("fini_process"))
            .count(),
        1
    );

    let (r, ev) = events(d.path(), &exe, "dlopen");
    ok(&r);
    let names: Vec<&str> = ev.iter().map(|e| e.2.as_str()).collect();
    assert_eq!(
        names,
        vec![
            "init_process life forked=false argc=2",
            "dlopen Some(\"libm.so.6\")",
            "dlclose",
            "fini_process Return(0)",
        ]
    );

    let (r, ev) = events(d.path(), &exe, "exit3");
    assert_eq!(r.output.status.code(), Some(3));
    assert_eq!(ev.last().unwrap().2, "fini_process Exit(3)");
    let (r, ev) = events(d.path(), &exe, "abort");
    assert_eq!(signal(&r), Some(libc::SIGABRT));
    assert_eq!(ev.last().unwrap().2, "fini_process Abort");
}
