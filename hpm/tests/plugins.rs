//! Aggregator plug-ins as shared objects (seed §2.7.4-2.7.7): the shipped
//! C plug-ins (`hpm/plugins`) and one written here are compiled with `cc`
//! and loaded by `-a name.so` / `HPM_AGGREGATE`. Skips when no C compiler.

use std::path::{Path, PathBuf};
use std::process::Command;

fn build(src: &Path, out: &Path) -> bool {
    let inc = Path::new(env!("CARGO_MANIFEST_DIR")).join("plugins");
    Command::new("cc")
        .args(["-shared", "-fPIC", "-I"])
        .arg(&inc)
        .arg("-o")
        .arg(out)
        .arg(src)
        .status()
        .is_ok_and(|s| s.success())
}

fn dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("hpm_plugins_{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(bin: &str, args: &[&str], env: &[(&str, &str)]) -> String {
    let o = Command::new(bin)
        .args(args)
        .env_remove("HPM_AGGREGATE")
        .env_remove("HPM_EVENT_SET")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).into_owned() + &String::from_utf8_lossy(&o.stderr)
}

fn task_clock(out: &str) -> Vec<f64> {
    out.lines()
        .filter(|l| l.trim_start().starts_with("task-clock"))
        .filter_map(|l| l.rsplit(':').next()?.trim().parse().ok())
        .collect()
}

const DOUBLE: &str = r#"
#include "hpm_agg.h"
int distributor(void) { return 0; }
int aggregator(int n, hpm_event_vector in, int *no, hpm_event_vector *out, int *p) {
  int i, k;
  for (i = 0; i < n; i++) {
    if (in[i].is_rusage) continue;
    for (k = 0; k < in[i].num_data; k++) in[i].data[k].raw *= 1000, in[i].data[k].value = 42;
    in[i].description = "answer from the plug-in";
  }
  *no = n; *out = in; *p = 1; return 0;
}
"#;

#[test]
fn plugins_load_and_change_the_output() {
    let d = dir();
    let src = d.join("answer.c");
    std::fs::write(&src, DOUBLE).unwrap();
    let so = d.join("answer.so");
    if !build(&src, &so) {
        eprintln!("skipped: no C compiler");
        return;
    }
    let hpmcount = env!("CARGO_BIN_EXE_hpmcount");
    let out = run(
        hpmcount,
        &["-g", "sw", "-a", so.to_str().unwrap(), "true"],
        &[],
    );
    assert!(out.contains(" Set: answer from the plug-in"), "{out}");
    assert_eq!(task_clock(&out), vec![42.0], "{out}");
    assert!(
        out.contains(&format!(" Aggregate: {}", so.display())),
        "{out}"
    );
    // Found through HPM_AGGREGATE and dlopen's search (LD_LIBRARY_PATH).
    let out = run(
        hpmcount,
        &["-g", "sw", "true"],
        &[
            ("HPM_AGGREGATE", "answer.so"),
            ("LD_LIBRARY_PATH", d.to_str().unwrap()),
        ],
    );
    assert_eq!(task_clock(&out), vec![42.0], "{out}");

    // The shipped plug-ins.
    let plugins = Path::new(env!("CARGO_MANIFEST_DIR")).join("plugins");
    for p in ["mirror", "loc_merge", "single", "average"] {
        assert!(
            build(&plugins.join(format!("{p}.c")), &d.join(format!("{p}.so"))),
            "{p}"
        );
    }
    let so = |p: &str| d.join(format!("{p}.so")).to_str().unwrap().to_string();
    // mirror: the sets unchanged; loc_merge: all groups of all sets in one.
    let out = run(
        hpmcount,
        &["-g", "sw,default", "-a", &so("mirror"), "true"],
        &[],
    );
    assert!(out.contains(" Set: sw"), "{out}");
    let out = run(
        hpmcount,
        &["-g", "sw,sw", "-a", &so("loc_merge"), "true"],
        &[],
    );
    assert!(out.contains(" Set: loc_merge"), "{out}");
    assert_eq!(out.matches(" Set: ").count(), 1, "{out}");
    // single: only task 0 prints.
    let out = run(
        hpmcount,
        &["-g", "sw", "-a", &so("single"), "true"],
        &[("PMI_RANK", "1")],
    );
    assert!(!out.contains(" Set: "), "{out}");
    let out = run(
        hpmcount,
        &["-g", "sw", "-a", &so("single"), "true"],
        &[("PMI_RANK", "0")],
    );
    assert!(out.contains(" Set: sw"), "{out}");
    // average's distributor: HPM_EVENT_SET round robin over the tasks.
    let out = run(
        hpmcount,
        &["-g", "default,sw", "-a", &so("average"), "true"],
        &[("PMI_RANK", "1")],
    );
    assert!(
        out.contains(" Set: sw") && !out.contains(" Set: default"),
        "{out}"
    );
    // hpmstat loads them the same way.
    let out = run(
        env!("CARGO_BIN_EXE_hpmstat"),
        &["-g", "sw", "-a", &so("loc_merge"), "0.01"],
        &[],
    );
    assert!(
        out.contains(" Set: loc_merge") || out.contains("refused"),
        "{out}"
    );
    // A missing .so: one notice, the built-in of that name.
    let out = run(
        hpmcount,
        &["-g", "sw", "-a", "/nonexistent/mirror.so", "true"],
        &[],
    );
    assert!(out.contains("cannot load plug-in"), "{out}");
    assert!(out.contains(" Set: sw"), "{out}");
    std::fs::remove_dir_all(&d).unwrap();
}
