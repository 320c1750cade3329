//! `DR_HOOK_OPT=summary`: the tree printed at the end of a real C program
//! (self, total, calls per call path; at most `DR_HOOK_SUMMARY_LINES`
//! lines; on stderr or in `DR_HOOK_SUMMARY`).

mod common;
use common::*;

/// The summary's call-path lines: (indent, total, self, calls, name).
fn lines(text: &str) -> Vec<(usize, f64, f64, u64, String)> {
    text.lines()
        .skip_while(|l| !l.contains("total (s)"))
        .skip(1)
        .take_while(|l| !l.starts_with('('))
        .filter(|l| !l.starts_with('['))
        .map(|l| {
            let total: f64 = l[..12].trim().parse().unwrap();
            let own: f64 = l[13..25].trim().parse().unwrap();
            let calls: u64 = l[26..38].trim().parse().unwrap();
            let rest = &l[40..];
            let name = rest.trim_start();
            (
                (rest.len() - name.len()) / 2,
                total,
                own,
                calls,
                name.to_string(),
            )
        })
        .collect()
}

fn build(d: &std::path::Path) -> Option<std::path::PathBuf> {
    if !have_gcc() {
        return None;
    }
    Some(c_exe(
        d,
        "c_report",
        &[&prog("c_report.c")],
        &["-pthread"],
        Link::Static,
    ))
}

#[test]
fn summary_on_stderr_is_a_tree_of_the_top_call_paths() {
    let d = tempdir();
    let Some(exe) = build(d.path()) else { return };
    let r = run(
        d.path(),
        &exe,
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "summary")],
    );
    ok(&r);
    // The program's own output is unchanged; no profile file is written.
    assert_eq!(r.stdout(), "sink>0: 1\n");
    assert!(!d.path().join("drhook.prof.1").exists());
    let err = r.stderr();
    assert!(
        err.contains("Dr.Hook summary of proc#1 of 1 (c_report)"),
        "{err}"
    );
    assert!(err.contains("3 threads"), "{err}");
    let l = lines(&err);
    // At most 40 call paths by default; the rest is counted.
    assert_eq!(l.len(), 40, "{err}");
    assert!(
        err.contains("more call paths not shown: DR_HOOK_SUMMARY_LINES=40"),
        "{err}"
    );
    assert_eq!((l[0].0, l[0].4.as_str(), l[0].3), (0, "MAIN", 1), "{err}");
    let find = |name: &str, depth: usize| {
        l.iter()
            .find(|x| x.4 == name && x.0 == depth)
            .unwrap_or_else(|| panic!("no {name} at depth {depth} in\n{err}"))
    };
    // KERNEL under SOLVE under MAIN: 200 calls of >= 50 us.
    let kernel = find("KERNEL", 2);
    assert_eq!(kernel.3, 200);
    assert!(kernel.1 >= 0.0099 && kernel.2 >= 0.0099, "{kernel:?}");
    let solve = find("SOLVE", 1);
    assert!(solve.1 >= kernel.1 && solve.2 < solve.1, "{solve:?}");
    // The worker threads' trees: KERNEL under SOLVE under WORKER, summed.
    let w = find("WORKER", 0);
    assert_eq!(w.3, 2);
    // Callers come first, callees by decreasing total: MAIN's children
    // are the depth-1 lines before the next root.
    let main_children: Vec<f64> = l[1..]
        .iter()
        .take_while(|x| x.0 > 0)
        .filter(|x| x.0 == 1)
        .map(|x| x.1)
        .collect();
    assert!(main_children.len() > 30, "{err}");
    assert!(main_children.windows(2).all(|p| p[0] >= p[1]), "{err}");
    // The escaped name is shown as it is on a terminal.
    assert!(err.contains("<script>alert(1)</script>"), "{err}");
    // Total >= self everywhere.
    assert!(l.iter().all(|x| x.1 + 1e-9 >= x.2), "{err}");
}

#[test]
fn summary_goes_to_a_file_with_the_asked_number_of_lines() {
    let d = tempdir();
    let Some(exe) = build(d.path()) else { return };
    let r = run(
        d.path(),
        &exe,
        &[
            ("DR_HOOK", "1"),
            ("DR_HOOK_OPT", "prof,summary"),
            ("DR_HOOK_SUMMARY", "summary.txt"),
            ("DR_HOOK_SUMMARY_LINES", "3"),
        ],
    );
    ok(&r);
    assert!(!r.stderr().contains("Dr.Hook summary"), "{}", r.stderr());
    let text = std::fs::read_to_string(d.path().join("summary.txt")).unwrap();
    let l = lines(&text);
    assert_eq!(l.len(), 3, "{text}");
    // A tree: each line one level below a line above it at most.
    assert_eq!(l[0].0, 0, "{text}");
    assert!(l.windows(2).all(|p| p[1].0 <= p[0].0 + 1), "{text}");
    assert!(
        text.contains("not shown: DR_HOOK_SUMMARY_LINES=3"),
        "{text}"
    );
    // The largest total comes first, and agrees with the profile's
    // (the profile was asked for too).
    let p = r.profile("drhook.prof.1");
    let top = p.rows_of(&l[0].4);
    assert!(!top.is_empty(), "{text}");
    let calls: u64 = top.iter().map(|r| r.calls).sum();
    assert_eq!(calls, l[0].3, "{text}");
}
