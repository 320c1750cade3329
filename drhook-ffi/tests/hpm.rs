//! The libhpm C and Fortran API: the guide's examples (§3.10, §3.11)
//! compiled with gcc/gfortran, run, and their .hpm/.csv files checked.
//! Software events only on machines without a PMU.

mod common;
use common::*;

const FILES: &[(&str, &str)] = &[("HPM_ASC_OUTPUT", "1"), ("HPM_CSV_OUTPUT", "1")];

/// `(section id, label, parent, calls)` of the CSV's section rows.
fn sections(csv: &str) -> Vec<(String, String, String, String)> {
    let mut v: Vec<_> = csv
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f.len() > 14 && f[14] == "section").then(|| {
                (
                    f[3].to_string(),
                    f[4].to_string(),
                    f[5].to_string(),
                    f[7].to_string(),
                )
            })
        })
        .collect();
    v.sort();
    v.dedup();
    v
}

fn read(d: &std::path::Path, name: &str) -> String {
    std::fs::read_to_string(d.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

#[test]
fn guide_c_example() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = c_exe(
        d.path(),
        "hpm_c",
        &[&prog("hpm_guide_c.c")],
        &[],
        Link::Static,
    );
    let r = run(d.path(), &exe, FILES);
    ok(&r);
    assert_eq!(r.stdout().trim(), "errors=1");
    assert!(r.stderr().contains("hpm ERROR - "), "{}", r.stderr());
    let csv = read(d.path(), "my program.csv");
    let s = |a: &str, b: &str, c: &str, n: &str| (a.into(), b.into(), c.into(), n.into());
    assert_eq!(
        sections(&csv),
        [
            s("1", "outer call", "", "1"),
            s("2", "computing meaning of life", "1", "1")
        ]
    );
    let hpm = read(d.path(), "my program.hpm");
    assert!(
        hpm.contains("Instrumented section: 1 - Label: outer call"),
        "{hpm}"
    );
    assert!(hpm.contains("Instrumented section: 2 - Label: computing meaning of life"));
    assert!(hpm.contains("task-clock"), "{hpm}");
}

#[test]
fn guide_fortran_example() {
    if !have_gfortran() {
        return;
    }
    let d = tempdir();
    let inc = format!("-I{}", include_dir().display());
    let src = prog("hpm_guide_f.F").display().to_string();
    let lib = static_lib().display().to_string();
    tool(
        d.path(),
        "gfortran",
        &[
            "-cpp",
            "-Wall",
            &inc,
            &src,
            &lib,
            "-lpthread",
            "-ldl",
            "-lm",
            "-o",
            "hpm_f",
        ],
    );
    let r = run(d.path(), &d.path().join("hpm_f"), FILES);
    ok(&r);
    assert_eq!(
        r.stdout().split_whitespace().collect::<Vec<_>>(),
        ["x=", "10.999999999851120", "error=", "F"]
    );
    let csv = read(d.path(), "my_program.csv");
    let s = |a: &str, b: &str, c: &str, n: &str| (a.into(), b.into(), c.into(), n.into());
    assert_eq!(
        sections(&csv),
        [
            s("1", "Do Loop", "", "1"),
            s("5", "computing meaning of life", "1", "10")
        ]
    );
    assert!(read(d.path(), "my_program.hpm").contains("Label: Do Loop"));
}

#[test]
fn fortran_threads_and_errors_shared_library() {
    if !have_gfortran() {
        return;
    }
    let d = tempdir();
    let inc = format!("-I{}", include_dir().display());
    let src = prog("hpm_threads.F90").display().to_string();
    let libdir = shared_lib().parent().unwrap().display().to_string();
    tool(
        d.path(),
        "gfortran",
        &[
            "-cpp",
            "-fopenmp",
            "-Wall",
            &inc,
            &src,
            &format!("-L{libdir}"),
            &format!("-Wl,-rpath,{libdir}"),
            "-ldrhook",
            "-o",
            "hpm_t",
        ],
    );
    let r = run(
        d.path(),
        &d.path().join("hpm_t"),
        &[("HPM_CSV_OUTPUT", "1")],
    );
    ok(&r);
    let out = r.stdout();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "errors=0 f_hpm_error=F", "{out}\n{}", r.stderr());
    // The second thread's start and stop of section 50 are both errors.
    assert_eq!(lines[1], "errors=2 f_hpm_error=T", "{out}\n{}", r.stderr());
    assert!(
        r.stderr().contains("Instance ID on wrong thread"),
        "{}",
        r.stderr()
    );
    let csv = read(d.path(), "threads.csv");
    let secs = sections(&csv);
    for t in 0..4 {
        let id = (30 + t).to_string();
        assert!(
            secs.iter()
                .any(|s| s.0 == id && s.1 == "computing meaning of life" && s.3 == "1"),
            "section {id}: {secs:#?}"
        );
    }
    assert!(secs.iter().any(|s| s.0 == "10" && s.1 == "outer"));
}
