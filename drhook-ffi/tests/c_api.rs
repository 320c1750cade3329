//! drhook.h from C and C++: the macros and functions with the reference's
//! semantics, the profile they produce, static and shared linking.

mod common;
use common::*;

#[test]
fn header_compiles_warning_free_as_c99_and_cpp() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let inc = format!("-I{}", include_dir().display());
    for h in ["drhook.h", "libhpm.h"] {
        let src = d.path().join(format!("{h}.c"));
        // Twice: the include guards work.
        std::fs::write(
            &src,
            format!("#include \"{h}\"\n#include \"{h}\"\nint main(void) {{ return 0; }}\n"),
        )
        .unwrap();
        let s = src.display().to_string();
        tool(
            d.path(),
            "gcc",
            &[
                "-std=c99",
                "-Wall",
                "-Wextra",
                "-Wpedantic",
                "-Werror",
                &inc,
                "-c",
                &s,
                "-o",
                "h.o",
            ],
        );
    }
    // The test program, as C99 with -Werror, and the C++ program.
    let c = prog("c_macros.c").display().to_string();
    tool(
        d.path(),
        "gcc",
        &[
            "-std=c99",
            "-Wall",
            "-Wextra",
            "-Wpedantic",
            "-Werror",
            &inc,
            "-c",
            &c,
            "-o",
            "c.o",
        ],
    );
    if std::process::Command::new("g++")
        .arg("--version")
        .output()
        .is_ok()
    {
        let cpp = prog("cpp_header.cpp").display().to_string();
        let st = static_lib().display().to_string();
        for std in ["-std=c++11", "-std=c++17"] {
            tool(
                d.path(),
                "g++",
                &[
                    std,
                    "-Wall",
                    "-Wextra",
                    "-Wpedantic",
                    "-Werror",
                    &inc,
                    &cpp,
                    &st,
                    "-lpthread",
                    "-ldl",
                    "-lm",
                    "-o",
                    "cpp",
                ],
            );
        }
        let r = run(
            d.path(),
            &d.path().join("cpp"),
            &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof")],
        );
        ok(&r);
        assert_eq!(r.stdout().trim(), "45 1");
        let p = r.profile("drhook.prof.1");
        assert_eq!(p.row("work", 1).calls, 1);
        assert_eq!(p.row("work", 1).sizes.unwrap()[0], 10);
        assert_eq!(p.row("CPP:MAIN", 1).suffix, ":cpp_header.cpp");
    }
}

fn check_c_profile(r: &Run) {
    ok(r);
    assert_eq!(r.stdout().trim(), "x=31 active=1 lhook=1", "{}", r.stderr());
    let p = r.profile("drhook.prof.1");
    let row = |n: &str| p.row(n, 1);
    // Every row of a C routine shows its file, as the reference does.
    assert_eq!(row("main").suffix, ":c_macros.c");
    assert_eq!(row("leaf").calls, 10);
    assert_eq!(
        row("leaf").sizes,
        Some([160, row("leaf").sizes.unwrap()[1], 16, 16, 16])
    );
    assert_eq!(row("C:BY_STRING").calls, 10);
    assert_eq!(
        row("recursive").calls,
        3,
        "only the outermost of each recursion"
    );
    assert_eq!(row("C:EARLY").calls, 4);
    let early = row("C:EARLY").sizes.unwrap();
    assert_eq!(
        (early[0], early[3], early[4]),
        (6, 1, 3),
        "RETURN sizes 1+2+3"
    );
    assert_eq!(row("C:DIRECT").suffix, ":direct.c");
    assert_eq!(row("C:DIRECT_LEN").calls, 1);
    assert_eq!(row("C:DIRECT_LEN").sizes.unwrap()[0], 7);
    assert_eq!(row("<unnamed>").calls, 2, "null and empty names");
    assert!(p.rows_of("C:NULL_HANDLE").is_empty(), "no handle, no entry");
    // Nesting, from the call paths.
    assert_eq!(row("leaf").path, ["C:BY_STRING", "main"]);
    assert_eq!(
        row("C:DIRECT").path,
        ["main"],
        "direct() itself is not instrumented"
    );
    assert_eq!(row("C:DIRECT_LEN").path, ["C:DIRECT", "main"]);
    // Exits with a handle 0 (drhook_c_end, Dr_Hook) left
    // nothing: the next region is still under zero_handles.
    assert_eq!(row("zero_handles").calls, 1);
    assert_eq!(row("C:AFTER_ZERO").path, ["zero_handles", "main"]);
    // drhook_calltree() printed the tree at show_tree.
    let err = r.stderr();
    let tree: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("[DrHookCallTree] :"))
        .collect();
    assert_eq!(tree.len(), 2, "{err}");
    assert!(
        tree[0].contains("[DrHookCallTree] :  main ,#1,st=1")
            && tree[1].contains("[DrHookCallTree] :   show_tree ,#1,st=1"),
        "{tree:#?}"
    );
}

#[test]
fn c_macros_static() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = c_exe(
        d.path(),
        "c_macros",
        &[&prog("c_macros.c")],
        &[],
        Link::Static,
    );
    let r = run(
        d.path(),
        &exe,
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof,callpath")],
    );
    check_c_profile(&r);
}

#[test]
fn c_macros_shared() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = c_exe(
        d.path(),
        "c_macros",
        &[&prog("c_macros.c")],
        &[],
        Link::Shared,
    );
    let r = run(
        d.path(),
        &exe,
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof,callpath")],
    );
    check_c_profile(&r);
}

#[test]
fn c_macros_off() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = c_exe(
        d.path(),
        "c_macros",
        &[&prog("c_macros.c")],
        &[],
        Link::Static,
    );
    let r = run(d.path(), &exe, &[]);
    ok(&r);
    assert_eq!(r.stdout().trim(), "x=31 active=0 lhook=0");
    assert!(!d.path().join("drhook.prof.1").exists());
    assert_eq!(r.stderr(), "", "nothing printed when Dr.Hook is off");
}

#[test]
fn openmp_and_plain_pthreads_get_distinct_thread_numbers() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = c_exe(
        d.path(),
        "c_threads",
        &[&prog("c_threads.c")],
        &["-fopenmp", "-pthread"],
        Link::Static,
    );
    let r = run(
        d.path(),
        &exe,
        &[
            ("DR_HOOK", "1"),
            ("DR_HOOK_OPT", "prof"),
            ("OMP_DYNAMIC", "false"),
        ],
    );
    ok(&r);
    assert_eq!(r.stdout().trim(), "sink=64");
    let p = r.profile("drhook.prof.1");
    for t in 1..=4u32 {
        assert_eq!(p.row("c_work", t).calls, 5 * t as u64, "c_work@{t}");
    }
    let mut others: Vec<_> = p
        .rows_of("c_work")
        .into_iter()
        .filter(|r| r.tid > 4)
        .collect();
    others.sort_by_key(|r| r.tid);
    assert_eq!(others.len(), 2, "{:#?}", p.rows);
    assert!(others.iter().all(|r| r.calls == 7), "{others:#?}");
    assert_eq!(p.threads, 6);
}

/// The escaped forms of the names `c_names.c` uses (README, "Names").
const ESCAPED: [&str; 9] = [
    "CTRL:NEW\\x0aLINE",
    "CTRL:NUL\\x00BYTE",
    "CTRL:TAB\\x09X",
    "CTRL:BELL\\x07",
    "CTRL:CR\\x0dX",
    "CTRL:BAD\u{fffd}\u{fffd}UTF8",
    "CTRL:ESC\\x1b[31m",
    "CTRL:DEL\\x7f",
    "CTRL:FILE",
];

/// Whether `s` has a control character other than the header's tabs.
fn has_control(s: &str) -> bool {
    s.chars().any(|c| c.is_control() && c != '\t')
}

#[test]
fn control_bytes_in_names_are_escaped_in_every_output() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = c_exe(
        d.path(),
        "c_names",
        &[&prog("c_names.c")],
        &[],
        Link::Static,
    );
    let r = run(
        d.path(),
        &exe,
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof,callpath")],
    );
    ok(&r);
    let text = std::fs::read(d.path().join("drhook.prof.1")).unwrap();
    assert!(!text.contains(&0), "a NUL in the profile");
    let text = String::from_utf8(text).expect("the profile is UTF-8");
    for l in text.lines() {
        assert!(!has_control(l), "control character in profile line {l:?}");
    }
    let p = r.profile("drhook.prof.1");
    // One row per routine: nothing split over lines.
    assert_eq!(p.rows.len(), ESCAPED.len(), "{:#?}", p.rows);
    for (i, name) in ESCAPED.iter().enumerate() {
        let row = p.row(name, 1);
        assert_eq!(row.calls, 1, "{name}");
        // Call paths print the escaped names too.
        let expected: Vec<&str> = ESCAPED[..i.min(8)].iter().rev().copied().collect();
        assert_eq!(row.path, expected, "{name}");
    }
    assert_eq!(p.row("CTRL:FILE", 1).suffix, ":fi\\x0ale.c");
    // stderr: every line is a diagnostic, the header echo, or the call tree.
    let err = r.stderr();
    for l in err.lines() {
        assert!(!has_control(l), "control character in stderr line {l:?}");
        assert!(
            l.starts_with("[EC_DRHOOK:")
                || l.starts_with("Profiling information")
                || l.starts_with('\t'),
            "stray stderr line {l:?}\n{err}"
        );
    }
    let tree: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("[DrHookCallTree] :"))
        .collect();
    assert_eq!(tree.len(), ESCAPED.len(), "{err}");
    for (l, name) in tree.iter().zip(ESCAPED) {
        assert!(l.contains(&format!(" {name} ,#1")), "{l}");
    }
}

#[test]
fn control_bytes_in_mismatch_diagnostics_are_escaped() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = c_exe(
        d.path(),
        "c_names",
        &[&prog("c_names.c")],
        &[],
        Link::Static,
    );
    let r = run_in(
        d.path(),
        &exe.display().to_string(),
        &["mismatch"],
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof")],
    );
    assert_eq!(signal(&r), Some(libc::SIGABRT), "{}", r.stderr());
    let err = r.stderr();
    assert!(
        err.contains("while leaving the routine 'CTRL:NEW\\x0aLINE'"),
        "{err}"
    );
    for l in err.lines() {
        assert!(!has_control(l), "control character in stderr line {l:?}");
    }
}

/// Runs `exe args` in `dir` under a clean Dr.Hook environment plus `env`,
/// and returns its stdout and its peak resident set (bytes, from `wait4`'s
/// own resource usage of that child).
fn run_measured(
    dir: &std::path::Path,
    exe: &std::path::Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> (String, u64) {
    use std::io::Read;
    let mut cmd = std::process::Command::new(exe);
    cmd.args(args)
        .current_dir(dir)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null());
    for (k, _) in std::env::vars() {
        if k.starts_with("DR_HOOK") || k.starts_with("DRHOOK_") {
            cmd.env_remove(k);
        }
    }
    cmd.envs(env.iter().copied());
    // Reaped by wait4 below, which also gives this child's own rusage.
    #[allow(clippy::zombie_processes)]
    let mut child = cmd.spawn().unwrap();
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let mut status = 0;
    // SAFETY: plain data, filled by the kernel.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for our own child; valid pointers.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut ru) };
    assert_eq!(pid, child.id() as i32);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "status {status}"
    );
    (out, ru.ru_maxrss as u64 * 1024)
}

#[test]
fn a_million_distinct_names_through_c_drhook_start() {
    if !have_gcc() {
        return;
    }
    const N: u64 = 1_000_000;
    let d = tempdir();
    let exe = c_exe(
        d.path(),
        "c_many_names",
        &[&prog("c_many_names.c")],
        &[],
        Link::Static,
    );
    let (out, maxrss) = run_measured(
        d.path(),
        &exe,
        &["1000000"],
        &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof")],
    );
    assert_eq!(out.trim(), format!("called {N}"));
    // Memory in proportion to the names: the run and the profile write
    // together stay under 1 KiB per name (each name is ~12 bytes; a node,
    // the name tables and one profile row per routine make the rest).
    assert!(
        maxrss < N * 1024,
        "peak resident set {maxrss} bytes for {N} names: {} bytes per name",
        maxrss / N
    );
    // The profile is whole: every name is a routine of its own, the ten
    // called twice found theirs again. (Checked on the text: a million
    // rows are too many for the test parser's debug build.)
    let text = std::fs::read_to_string(d.path().join("drhook.prof.1")).unwrap();
    assert!(
        text.contains("\tNo. of instrumented routines called : 1000001\n"),
        "{}",
        &text[..text.len().min(2000)]
    );
    let rows: Vec<&str> = text.lines().filter(|l| l.contains(" MANY:R")).collect();
    assert_eq!(rows.len() as u64, N);
    let calls = |name: &str| -> u64 {
        let l = rows
            .iter()
            .find(|l| l.ends_with(&format!(" {name}@1")))
            .unwrap_or_else(|| panic!("no row {name}"));
        l.split_whitespace().nth(5).unwrap().parse().unwrap()
    };
    assert_eq!(calls("MANY:R0000000"), 2);
    assert_eq!(calls("MANY:R0000009"), 2);
    assert_eq!(calls("MANY:R0000010"), 1);
    assert_eq!(calls("MANY:R0999999"), 1);
}

#[test]
fn the_readme_c_example_compiles_and_profiles() {
    if !have_gcc() {
        return;
    }
    let readme = std::fs::read_to_string(crate_dir().join("../docs/guide/c-fortran.md")).unwrap();
    let start = readme
        .find("<!-- c-example:")
        .expect("the guide's C example");
    let code = &readme[start..];
    let code = &code[code.find("```c\n").unwrap() + 5..];
    let code = &code[..code.find("```").unwrap()];
    let d = tempdir();
    let src = d.path().join("example.c");
    std::fs::write(&src, code).unwrap();
    let exe = c_exe(d.path(), "example", &[&src], &["-Werror"], Link::Shared);
    let r = run(d.path(), &exe, &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof")]);
    ok(&r);
    assert_eq!(r.stdout().trim(), "499500");
    let p = r.profile("drhook.prof.1");
    assert_eq!(p.row("work", 1).calls, 1);
    assert_eq!(p.row("work", 1).sizes.unwrap()[0], 1000);
    assert_eq!(p.row("MAIN", 1).calls, 1);
}

/// Dr.Hook's own data (trees, nodes, names) is not in the program's
/// `malloc` heap in a program linked with `libdrhook.so`: four threads
/// entering 500 routines each leave the C library's heap in use as
/// plainly (a kilobyte allowed for the C library's own bookkeeping); with
/// the system allocator as `libdrhook`'s it grew by 1 824 bytes.
#[test]
fn libdrhook_keeps_its_data_out_of_the_programs_heap() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let src = prog("c_heap_use.c");
    let exe = c_exe(d.path(), "heapuse", &[&src], &["-pthread"], Link::Shared);
    let change = |env: &[(&str, &str)]| -> i64 {
        let r = run(d.path(), &exe, env);
        ok(&r);
        r.stdout()
            .trim()
            .strip_prefix("heap in use changed by ")
            .and_then(|s| s.strip_suffix(" bytes"))
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("{:?}", r.stdout()))
    };
    let plain = change(&[]);
    let on = change(&[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof")]);
    assert!(
        on <= plain + 1024,
        "the heap in use grew by {on} bytes with Dr.Hook on, {plain} plainly"
    );
}
