//! Locks, descriptors and `fork` (issue 22, items 8-9): a child forked
//! while other threads are inside Dr.Hook inherits no lock it cannot take,
//! and Dr.Hook's own descriptors never meet the program's.

use super::harness::{c_prog, same_everywhere};

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
