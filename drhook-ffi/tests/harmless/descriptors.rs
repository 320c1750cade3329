//! Locks, descriptors and `fork` (issue 22, items 8-9): a child forked
//! while other threads are inside Dr.Hook inherits no lock it cannot take,
//! and Dr.Hook's own descriptors never meet the program's.

use super::harness::{Outcome, c_prog, run_with, same_everywhere};

/// Item 8: 1 000 children forked while 4 threads open and close files;
/// each child opens a file, writes a byte and ends with `how` (`exit` —
/// `exit(0)` — or `exec` — `execv("/bin/true")`). Under `prof,memprof,io`
/// a child forked while a thread held the I/O layer's path table's lock
/// hung in `exit` or `exec` (the parent's `alarm` names it); now every
/// child ends, as plainly.
fn forked_children_all_end(how: &str) {
    let (outs, _d) = same_everywhere(
        |d| {
            c_prog(d, "fork_opens", &["-pthread"]);
        },
        &["./fork_opens", how],
        &[],
    );
    if outs[0].stdout.is_empty() {
        return; // no gcc (c_prog said so)
    }
    assert_eq!(
        outs[0].stdout, "1000 of 1000 children started, 1000 exited 0\n",
        "{how}"
    );
    assert_eq!(outs[0].files["children.out"].len(), 1000, "{how}");
    for o in &outs[1..] {
        assert!(o.has_profile(), "{how} {}: {:?}", o.config, o.drhook_files);
    }
}

#[test]
fn children_forked_while_threads_open_files_all_exit() {
    forked_children_all_end("exit");
}

#[test]
fn children_forked_while_threads_open_files_all_exec() {
    forked_children_all_end("exec");
}

/// The operation lines of an I/O trace (split at `!`) and its `#` lines.
fn trace_of(o: &Outcome) -> (Vec<String>, Vec<Vec<String>>) {
    let path = o.dir.join("drhook.iotrace.1");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} ({:?})", path.display(), o.drhook_files));
    let (head, ops): (Vec<&str>, Vec<&str>) = text.lines().partition(|l| l.starts_with('#'));
    (
        head.into_iter().map(String::from).collect(),
        ops.iter()
            .map(|l| l.split('!').map(String::from).collect())
            .collect(),
    )
}

/// The trace of `close_all` is whole: every operation on the traced files
/// (`before.dat`, `new0..2.dat`), each line well formed; with `reopened`,
/// it says it was reopened after the program closed its descriptor.
fn assert_whole_trace(o: &Outcome, how: &str, reopened: bool) {
    let (head, ops) = trace_of(o);
    assert!(head[0] == "#drhook-iotrace!1", "{how}: {head:?}");
    if reopened {
        assert!(
            head.iter().any(|h| h.starts_with("#reopened!")),
            "{how}: {head:?}"
        );
    }
    for op in &ops {
        assert_eq!(op.len(), 8, "{how}: a line cut or mixed: {op:?}");
        assert!(op[0].parse::<f64>().is_ok(), "{how}: {op:?}");
    }
    let on = |kind: &str, file: &str| -> Vec<&Vec<String>> {
        // Operations other than opens name their descriptor: the file is
        // the last open's on that descriptor.
        let mut fd_file = std::collections::HashMap::new();
        let mut out = Vec::new();
        for op in &ops {
            if op[2] == "o" {
                fd_file.insert(op[3].clone(), op[4].clone());
            }
            let f = if op[2] == "o" {
                &op[4]
            } else {
                &fd_file[&op[3]]
            };
            if op[2] == kind && f.ends_with(file) {
                out.push(op);
            }
        }
        out
    };
    assert_eq!(on("o", "/before.dat").len(), 1, "{how}: {ops:?}");
    let w = on("w", "/before.dat");
    assert_eq!(w.len(), 10, "{how}: {ops:?}");
    assert!(w.iter().all(|op| op[4] == "10"), "{how}: {ops:?}");
    for k in 0..3 {
        let file = format!("/new{k}.dat");
        assert_eq!(on("o", &file).len(), 1, "{how} {file}: {ops:?}");
        let w = on("w", &file);
        assert_eq!(w.len(), 3, "{how} {file}: {ops:?}");
        assert!(w.iter().all(|op| op[4] == "35"), "{how} {file}: {ops:?}");
        let r = on("r", &file);
        assert_eq!(r.len(), 1, "{how} {file}: {ops:?}");
        assert_eq!(r[0][4], "105", "{how} {file}: {ops:?}");
        assert_eq!(on("c", &file).len(), 1, "{how} {file}: {ops:?}");
    }
}

/// Item 9: a program that writes a traced file, closes every descriptor
/// from 3 up (`close_range`, or a close loop up to 1024) and opens three
/// files of its own: under `--io-trace` its second file got the trace's
/// old descriptor and the trace's lines. Now the program's files hold
/// exactly what it wrote, and the trace still has every operation (the
/// trace's descriptor is high: the close loop leaves it alone, unless the
/// soft descriptor limit is low — 256 in the third case — and puts it
/// within the loop's reach; `close_range` closes it: the trace is then
/// reopened).
#[test]
fn the_io_trace_never_writes_into_the_programs_files() {
    let cases: [(&str, &[&str]); 3] = [
        ("range", &["./close_all", "range"]),
        ("loop", &["./close_all", "loop"]),
        (
            "loop, soft limit 256",
            &[
                "sh",
                "-c",
                "ulimit -Sn 256 2>/dev/null; exec ./close_all loop",
            ],
        ),
    ];
    for (how, argv) in cases {
        let setup = |d: &std::path::Path| {
            c_prog(d, "close_all", &[]);
        };
        // Under every configuration with the trace asked for by its
        // variable (the I/O one traces).
        let (outs, _d) = same_everywhere(setup, argv, &[("DRHOOK_IO_TRACE", "before|new")]);
        let plain = &outs[0];
        if plain.stdout.is_empty() {
            return; // no gcc (c_prog said so)
        }
        for k in 0..3 {
            let line = format!("the program's own line in new{k}.dat\n");
            assert_eq!(
                plain.files[&format!("new{k}.dat")],
                line.repeat(3).into_bytes(),
                "{how}"
            );
            assert!(
                plain
                    .stdout
                    .contains(&format!("new{k}.dat on descriptor {}, 105 bytes", k + 3)),
                "{how}: {}",
                plain.stdout
            );
        }
        // `close_range` closes the trace's descriptor, and so does the close
        // loop under a soft limit of 256; under a higher one, it depends.
        let reopened = how != "loop";
        assert_whole_trace(&outs[2], how, reopened);
        // And by `drhook run --io-trace`.
        let d = super::common::tempdir();
        setup(d.path());
        let o = run_with(
            d.path(),
            Some(&["--opt", "prof", "--io-trace", "before|new"]),
            argv,
            &[],
        );
        assert_eq!(
            (o.how(), &o.stdout, &o.stderr, &o.files),
            (plain.how(), &plain.stdout, &plain.stderr, &plain.files),
            "{how}: {}",
            o.stderr_all
        );
        assert_whole_trace(&o, how, reopened);
    }
}
