//! What the I/O profile costs (issue 12), in one run on this machine:
//! small `write`s (16 bytes, to a regular file) and `fwrite`s (16 bytes,
//! a buffered stream) and `fprintf`s (a short line, a buffered stream) of
//! `progs/bench_io.c`, plain; under the preload
//! library with Dr.Hook on and no `io` token (the wrappers pass through);
//! with `DR_HOOK_OPT=io`; with every call traced (`DRHOOK_IO_TRACE`);
//! under `strace -c -f` and `ltrace -c` (Debian
//! packages; skipped with a message when absent; fewer calls, they are
//! slow). Instructions per call under callgrind (difference of two run
//! lengths) are the repeatable figure.
//!
//! `cargo bench -p drhook-ffi --bench io_overhead`

mod common;
use common::{Config, build, have, table};

fn main() {
    let work = tempfile::tempdir().unwrap();
    let (exe, preload) = build(work.path(), &["drhook-preload"], "bench_io", false);
    let pre = preload.display().to_string();
    let on = |opt: &str| {
        vec![
            ("LD_PRELOAD", pre.clone()),
            ("DR_HOOK", "1".to_string()),
            ("DR_HOOK_OPT", opt.to_string()),
        ]
    };
    let mut cfgs = vec![
        Config::new("plain", vec![]),
        Config::new("preload, DR_HOOK_OPT=prof (io off)", on("prof")),
        Config::new("preload, DR_HOOK_OPT=io", on("io")),
    ];
    let tracer = |name, under| Config {
        under,
        n: "100000",
        batches: "1",
        ..Config::new(name, vec![])
    };
    // Every call traced (DRHOOK_IO_TRACE matching the file): a line per
    // call written to the trace; fewer calls (10^5, one batch), so that
    // the trace stays a few MB.
    let mut traced = on("io");
    traced.push(("DRHOOK_IO_TRACE", ".".to_string()));
    cfgs.push(Config {
        n: "100000",
        batches: "1",
        ..Config::new(
            "preload, DR_HOOK_OPT=io, DRHOOK_IO_TRACE=. (10^5 calls)",
            traced,
        )
    });
    if have("strace") {
        cfgs.push(tracer(
            "strace -c -f (10^5 calls)",
            vec!["strace", "-c", "-f", "-o", "/dev/null"],
        ));
    } else {
        println!("strace not found: its row is skipped");
    }
    if have("ltrace") {
        cfgs.push(tracer(
            "ltrace -c (10^5 calls)",
            vec!["ltrace", "-c", "-o", "/dev/null"],
        ));
    } else {
        println!("ltrace not found: its row is skipped");
    }
    for mode in ["write", "fwrite", "fprintf"] {
        let what = if mode == "fprintf" {
            "of a short line"
        } else {
            "of 16 bytes"
        };
        println!("\n{mode}() {what}, median of the batches, one run:\n");
        table(work.path(), &exe, &cfgs, mode, "over plain", |t, b| {
            format!("{:+.1} ns ({:.2}x)", t - b, t / b)
        });
    }
}
