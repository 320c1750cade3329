//! What the memory profile costs (issue 11), in one run on this machine:
//!
//! * `malloc(64)` + `free` pairs of a C program (`progs/bench_malloc.c`):
//!   plain; under the preload library with Dr.Hook on but no memory token
//!   (the malloc family untracked); with `DR_HOOK_OPT=prof,memprof`
//!   (tracked, per routine); under heaptrack (Debian package; skipped with
//!   a message when absent);
//! * Dr.Hook enter/exit pairs of a leaf routine (the program linked with
//!   `libdrhook.so`): `prof` vs `prof,memprof`;
//! * both in instructions per operation under callgrind (difference of
//!   two run lengths: start-up and the profile write cancel out).
//!
//! `cargo bench -p drhook-ffi --bench mem_overhead`

mod common;
use common::{Config, build, have, table};

fn main() {
    let work = tempfile::tempdir().unwrap();
    let (exe, preload) = build(
        work.path(),
        &["drhook-ffi", "drhook-preload"],
        "bench_malloc",
        true,
    );
    let pre = preload.display().to_string();
    let on = |opt: &str| {
        vec![
            ("LD_PRELOAD", pre.clone()),
            ("DR_HOOK", "1".to_string()),
            ("DR_HOOK_OPT", opt.to_string()),
        ]
    };
    let mut alloc = vec![
        Config::new("plain (glibc)", vec![]),
        Config::new("preload, DR_HOOK_OPT=prof (untracked)", on("prof")),
        Config::new("preload, DR_HOOK_OPT=prof,memprof", on("prof,memprof")),
    ];
    if have("heaptrack") {
        alloc.push(Config {
            under: vec!["heaptrack"],
            ..Config::new("heaptrack", vec![])
        });
    } else {
        println!("heaptrack not found: its row is skipped");
    }
    println!("\nmalloc(64) + free, 7 batches of 10^6 (median), one run:\n");
    table(work.path(), &exe, &alloc, "alloc", "vs plain", |t, b| {
        format!("{:.2}x", t / b)
    });
    let linked = |opt: &str| {
        vec![
            ("DR_HOOK", "1".to_string()),
            ("DR_HOOK_OPT", opt.to_string()),
        ]
    };
    let pair = [
        Config::new("DR_HOOK_OPT=prof", linked("prof")),
        Config::new("DR_HOOK_OPT=prof,memprof", linked("prof,memprof")),
    ];
    println!("\nDr.Hook enter/exit pair of a leaf (libdrhook.so), 7 batches of 10^6 (median):\n");
    table(work.path(), &exe, &pair, "pair", "vs prof", |t, b| {
        format!("{:+.2} ns", t - b)
    });
}
