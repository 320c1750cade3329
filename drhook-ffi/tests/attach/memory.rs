//! Memory per routine through the preload's malloc family.

use super::*;

/// `(self-alloc, #allocs, #frees, self-leaked)` of each row of a `-mem`
/// file, by `NAME@tid`.
pub(crate) fn mem_rows(text: &str) -> BTreeMap<String, (u64, u64, u64, i64)> {
    drhook_tests::mem_rows(text)
        .into_iter()
        .map(|r| (r.name, (r.self_alloc, r.allocs, r.frees, r.leaked)))
        .collect()
}

/// `progs/attach/mem.c` built in `d`, linked with libdrhook.so.
pub(crate) fn mem_exe(d: &Path) -> PathBuf {
    c_exe(
        d,
        "mem",
        &[&attach_prog("mem.c")],
        &["-pthread", "-std=gnu11"],
        Link::Shared,
    )
}

#[test]
fn memprof_of_a_c_program_gets_exact_bytes_and_counts_per_routine() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = mem_exe(d.path());
    let r = drhook_run(
        d.path(),
        &["--opt", "memprof"],
        &exe.display().to_string(),
        &[],
        &[],
    );
    ok(&r);
    assert_eq!(r.stdout(), "mem done\n");
    let text = std::fs::read_to_string(d.path().join("drhook.prof.1-mem")).unwrap();
    let m = mem_rows(&text);
    assert_eq!(m["MEM:PLAIN@1"], (1024, 2, 1, 1000), "{text}");
    // The chain's last block is freed by MEM:COLLECT.
    assert_eq!(m["MEM:CHAIN@1"], (1110, 3, 2, 0), "{text}");
    assert_eq!(m["MEM:ALIGNED@1"], (4708, 3, 1, 4196), "{text}");
    // Four worker rows on four threads, freed by the main thread.
    let mut w: Vec<(u64, u64, u64, i64)> = m
        .iter()
        .filter(|(k, _)| k.starts_with("MEM:WORKER@"))
        .map(|(_, v)| *v)
        .collect();
    w.sort();
    assert_eq!(
        w,
        [
            (4096, 1, 0, 0),
            (8192, 1, 0, 0),
            (12288, 1, 0, 0),
            (16384, 1, 0, 0)
        ],
        "{text}"
    );
    assert_eq!(m["MEM:COLLECT@1"], (0, 0, 5, 0), "{text}");
    // main (the root region of the unmodified part) holds its children.
    assert!(m.contains_key("main@1"), "{text}");
}

#[test]
fn memprof_off_leaves_the_malloc_family_untouched() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = mem_exe(d.path());
    let r = drhook_run(
        d.path(),
        &["--opt", "prof"],
        &exe.display().to_string(),
        &[],
        &[],
    );
    ok(&r);
    assert_eq!(r.stdout(), "mem done\n");
    assert!(!d.path().join("drhook.prof.1-mem").exists());
    let p = parse(d.path(), "drhook.prof.1");
    assert_eq!(
        p.row("MEM:WORKER", 2).calls + p.row("MEM:PLAIN", 1).calls,
        2
    );
}

#[test]
fn memprof_of_fortran_allocate_through_the_preload() {
    if !have_gfortran() {
        return;
    }
    let d = tempdir();
    yomhook(d.path(), false);
    let exe = fortran_exe(
        d.path(),
        "f_alloc",
        &[&prog("f_alloc.F90")],
        &[],
        Link::Shared,
    );
    let r = drhook_run(
        d.path(),
        &["--opt", "memprof"],
        &exe.display().to_string(),
        &[],
        &[],
    );
    ok(&r);
    assert_eq!(r.stdout(), "sum   3000.0\n");
    let text = std::fs::read_to_string(d.path().join("drhook.prof.1-mem")).unwrap();
    let m = mem_rows(&text);
    assert_eq!(m["ALLOCS:KEEP@1"], (12000, 2, 1, 0), "{text}");
    assert_eq!(m["ALLOCS:RELEASE@1"], (0, 0, 1, 0), "{text}");
}

#[test]
fn memprof_of_a_static_program_linked_with_the_malloc_wrap_list() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let share = crate_dir().join("share");
    let wrap = built("libdrhook_wrap.a");
    let out = Command::new("gcc")
        .current_dir(d.path())
        .args([
            "-static",
            "-O1",
            "-std=gnu11",
            "-pthread",
            "-o",
            "mem_static",
        ])
        .arg(format!("-I{}", include_dir().display()))
        .arg(attach_prog("mem.c"))
        .arg(format!("-Wl,@{}", share.join("drhook-wrap.list").display()))
        .arg(format!(
            "-Wl,@{}",
            share.join("drhook-wrap-malloc.list").display()
        ))
        .arg(&wrap)
        .args(["-lpthread", "-ldl", "-lm"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "static link failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let exe = d.path().join("mem_static").display().to_string();
    let r = run_in(
        d.path(),
        &exe,
        &[],
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "memprof")],
    );
    ok(&r);
    assert_eq!(r.stdout(), "mem done\n");
    let text = std::fs::read_to_string(d.path().join("drhook.prof.1-mem")).unwrap();
    let m = mem_rows(&text);
    assert_eq!(m["MEM:PLAIN@1"], (1024, 2, 1, 1000), "{text}");
    assert_eq!(m["MEM:CHAIN@1"], (1110, 3, 2, 0), "{text}");
    assert_eq!(m["MEM:ALIGNED@1"], (4708, 3, 1, 4196), "{text}");
    assert_eq!(m["MEM:COLLECT@1"], (0, 0, 5, 0), "{text}");
    // Untracked (no memory token): the same program runs as before.
    let w = tempdir();
    let r = run_in(
        w.path(),
        &exe,
        &[],
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof")],
    );
    ok(&r);
    assert_eq!(r.stdout(), "mem done\n");
}
