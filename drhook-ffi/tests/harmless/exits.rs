//! Exit paths (issue 22, items 10 and 11): the reports are written once,
//! last — after the program's `atexit` handlers and destructors — and on
//! every way a process ends.

use super::harness::{Outcome, c_prog, same_everywhere};

/// The I/O report's entry for the file `name` (its JSON object as text),
/// if the report of `o`'s first process lists it.
fn io_entry(o: &Outcome, name: &str) -> Option<String> {
    let text = std::fs::read_to_string(o.dir.join("drhook.io.1")).ok()?;
    let needle = format!("/{name}\"");
    text.split("\n    {")
        .find(|e| e.contains(&needle))
        .map(str::to_string)
}

fn measured(outs: &[Outcome]) -> &Outcome {
    outs.iter().find(|o| o.config == "prof,memprof,io").unwrap()
}

/// Item 10: what the program does in its `atexit` handlers and destructors
/// is in the reports (a 1 MiB results file written by an `atexit` handler
/// was missing from the I/O report), whether `main` returns or calls
/// `exit`.
#[test]
fn work_at_exit_is_in_the_reports() {
    for mode in ["atexit", "exit_atexit"] {
        let (outs, _d) = same_everywhere(
            |d| {
                c_prog(d, "exits", &["-pthread"]);
            },
            &["./exits", mode],
            &[],
        );
        if !super::common::have_gcc() {
            return;
        }
        assert_eq!(outs[0].stdout, "main done\n");
        assert_eq!(outs[0].files["results.bin"].len(), 1 << 20);
        let o = measured(&outs);
        assert!(o.has_profile(), "{mode}: {:?}", o.drhook_files);
        let e = io_entry(o, "results.bin")
            .unwrap_or_else(|| panic!("{mode}: results.bin not in the I/O report"));
        assert!(e.contains("\"write_bytes\": 1048576"), "{mode}: {e}");
        assert!(
            io_entry(o, "dtor.txt").is_some(),
            "{mode}: the destructor's file"
        );
    }
}

/// Item 11: two threads calling `exit` at the same moment (the profile was
/// lost in 20 of 20 runs), `quick_exit`, and `main` calling `pthread_exit`
/// (the I/O report was lost) all end with the reports written.
#[test]
fn every_way_to_end_writes_the_reports() {
    for (mode, file) in [
        ("two_exits", None),
        ("quick", Some("quick.txt")),
        ("pthread_exit", Some("thread.txt")),
    ] {
        let runs = if mode == "two_exits" { 10 } else { 1 };
        for _ in 0..runs {
            let (outs, _d) = same_everywhere(
                |d| {
                    c_prog(d, "exits", &["-pthread"]);
                },
                &["./exits", mode],
                &[],
            );
            if !super::common::have_gcc() {
                return;
            }
            assert_eq!(outs[0].how(), "exit 0", "{mode}");
            for o in &outs[1..] {
                assert!(o.has_profile(), "{mode} {}: {:?}", o.config, o.drhook_files);
            }
            let o = measured(&outs);
            assert!(
                o.drhook_files.iter().any(|f| f == "drhook.io.1"),
                "{mode}: {:?}",
                o.drhook_files
            );
            if let Some(f) = file {
                assert!(
                    io_entry(o, f).is_some(),
                    "{mode}: {f} not in the I/O report"
                );
            }
        }
    }
}

/// Item 11: a SIGTERM that arrives while the profile is being written at
/// the process's end (a pool's workers are ended that way) left a `.tmp`
/// file and no profile. It now waits for the write's end, on the writing
/// thread and on a thread parked elsewhere, then takes effect: the
/// process ends by SIGTERM, with its profile in place. (A preloaded shim
/// sends the signal from inside the write of the temporary file.)
#[test]
fn a_signal_during_the_final_write_waits_for_it() {
    let d = super::common::tempdir();
    if c_prog(d.path(), "term_in_write", &["-shared", "-fPIC", "-ldl"]).is_none()
        || c_prog(d.path(), "parked", &["-pthread"]).is_none()
    {
        return;
    }
    let shim = d.path().join("term_in_write").display().to_string();
    for mode in ["alone", "thread"] {
        let w = super::common::tempdir();
        for f in ["parked", "term_in_write"] {
            std::fs::copy(d.path().join(f), w.path().join(f)).unwrap();
        }
        let o = super::harness::run(
            w.path(),
            Some("prof"),
            &["./parked", mode],
            &[("LD_PRELOAD", shim.as_str())],
        );
        assert_eq!(o.stdout, "main done\n", "{mode}");
        assert_eq!(o.how(), "signal 15", "{mode}: {}", o.stderr_all);
        let names: Vec<String> = std::fs::read_dir(w.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(
            names.iter().any(|n| n == "drhook.prof.1"),
            "{mode}: {names:?}\n{}",
            o.stderr_all
        );
        assert!(
            !names.iter().any(|n| n.ends_with(".tmp")),
            "{mode}: a temporary file left: {names:?}"
        );
        let text = std::fs::read_to_string(w.path().join("drhook.prof.1")).unwrap();
        assert!(text.contains("main@1"), "{mode}: {text}");
    }
}

/// Item 11: a program that ends with every descriptor it may have open
/// (`RLIMIT_NOFILE` reached) lost every report, with a message; the reports
/// now find a descriptor (the soft limit is raised for their write, when
/// the hard one allows), and the program's own limit is the same as
/// plainly (it reaches EMFILE as it would).
#[test]
fn a_program_that_used_every_descriptor_gets_its_reports() {
    let (outs, _d) = same_everywhere(
        |d| {
            c_prog(d, "all_fds", &[]);
        },
        &["sh", "-c", "ulimit -S -n 64; exec ./all_fds"],
        &[],
    );
    if !super::common::have_gcc() {
        return;
    }
    assert_eq!(outs[0].stdout, "full: EMFILE\n");
    for o in &outs[1..] {
        assert!(o.has_profile(), "{}: {:?}", o.config, o.drhook_files);
        assert!(
            !o.stderr_all.contains("unable to write"),
            "{}: {}",
            o.config,
            o.stderr_all
        );
    }
    let o = measured(&outs);
    assert!(
        o.drhook_files.iter().any(|f| f == "drhook.io.1"),
        "{:?}",
        o.drhook_files
    );
}

/// Item 11: a program whose address-space limit is just above its use
/// aborted at its end under Dr.Hook (134, stdout lost: the writer's
/// allocation failed). The end's writes may use the room up to the hard
/// limit; the program's own limit is the same as plainly.
#[test]
fn a_program_near_its_address_space_limit_gets_its_reports() {
    let (outs, _d) = same_everywhere(
        |d| {
            c_prog(d, "as_limit", &[]);
        },
        &["./as_limit"],
        &[],
    );
    if !super::common::have_gcc() {
        return;
    }
    assert_eq!(outs[0].stdout, "limited\n");
    for o in &outs[1..] {
        assert!(o.has_profile(), "{}: {:?}", o.config, o.drhook_files);
    }
}
