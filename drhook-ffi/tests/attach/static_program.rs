//! The static program linked with the --wrap list.

use super::*;

#[test]
fn a_static_program_linked_with_the_wrap_list() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let list = crate_dir().join("share").join("drhook-wrap.list");
    let wrap = built("libdrhook_wrap.a");
    let src = attach_prog("life.c");
    // glibc warns that dlopen in a static program needs the shared
    // libraries at run time: expected here.
    let out = Command::new("gcc")
        .current_dir(d.path())
        .args(["-static", "-O1", "-o", "life_static"])
        .arg(&src)
        .arg(format!("-Wl,@{}", list.display()))
        .arg(&wrap)
        .args(["-lpthread", "-ldl", "-lm"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "static link failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let exe = d.path().join("life_static").display().to_string();
    let prof = [("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof")];
    let w = tempdir();
    let r = run_in(w.path(), &exe, &["threads"], &prof);
    ok(&r);
    let p = parse(w.path(), "drhook.prof.1");
    assert_eq!(p.row("main", 1).calls, 1);
    // Four threads' roots (unnamed: a static program has no dladdr).
    let roots: Vec<_> = p
        .rows
        .iter()
        .filter(|r| r.name.starts_with("thread"))
        .collect();
    assert_eq!(roots.len(), 4, "{:#?}", p.rows);
    assert!(roots.iter().all(|r| r.calls == 1 && r.tid >= 2));
    let w = tempdir();
    let r = run_in(w.path(), &exe, &["_exit5"], &prof);
    assert_eq!(r.output.status.code(), Some(5));
    assert_eq!(profiles(w.path()), vec!["drhook.prof.1".to_string()]);
    let w = tempdir();
    let r = run_in(w.path(), &exe, &["fork"], &prof);
    ok(&r);
    assert_eq!(profiles(w.path()).len(), 2, "{:?}", profiles(w.path()));
}
