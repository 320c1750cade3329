//! Dr.Hook's data out of the program's heap (issue 22, items 12 and 16):
//! the preload library's own allocations come from memory mapped for it
//! alone (`drhook_attach::sys::heap`), so they are neither in the
//! program's `malloc` heap — where an overflow of the program's lands —
//! nor among the allocations the memory profile counts.

use super::harness::{Outcome, c_prog, run};

fn heap_change(o: &Outcome) -> i64 {
    o.stdout
        .trim()
        .strip_prefix("heap in use changed by ")
        .and_then(|s| s.strip_suffix(" bytes"))
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("{}: {:?} {}", o.config, o.stdout, o.stderr_all))
}

/// Item 12: eight threads (one after the other) that open files leave the
/// C library's heap in use as plainly (it grew by 56 KB with `prof` and
/// 97 KB with `io`: the threads' trees and the I/O layer's tables). A
/// kilobyte is allowed for the C library's own bookkeeping of our calls.
#[test]
fn dr_hooks_data_is_not_in_the_programs_heap() {
    super::common::ensure_attach_built();
    let d = super::common::tempdir();
    if c_prog(d.path(), "heapuse", &["-pthread"]).is_none() {
        return;
    }
    let plain = heap_change(&run(d.path(), None, &["./heapuse"], &[]));
    for config in ["prof", "prof,io"] {
        let o = run(d.path(), Some(config), &["./heapuse"], &[]);
        assert_eq!(o.how(), "exit 0", "{}", o.stderr_all);
        let measured = heap_change(&o);
        assert!(
            measured <= plain + 1024,
            "{config}: the heap in use grew by {measured} bytes, {plain} plainly"
        );
    }
}

/// Item 16: the memory profile counts the program's allocations in `main`
/// — three, one of them left — not Dr.Hook's (the I/O layer's path table
/// added dozens and a false leak).
#[test]
fn the_memory_profile_counts_only_the_programs_allocations() {
    super::common::ensure_attach_built();
    let d = super::common::tempdir();
    if c_prog(d.path(), "mallocs", &[]).is_none() {
        return;
    }
    let o = run(d.path(), Some("prof,memprof,io"), &["./mallocs"], &[]);
    assert_eq!(o.how(), "exit 0", "{}", o.stderr_all);
    let text = std::fs::read_to_string(d.path().join("drhook.prof.1-mem")).unwrap();
    let rows = drhook_tests::mem_rows(&text);
    let main = rows
        .iter()
        .find(|r| r.name.starts_with("main@1"))
        .unwrap_or_else(|| panic!("no main row:\n{text}"));
    assert_eq!((main.allocs, main.frees), (3, 2), "{text}");
    assert_eq!(main.self_alloc, 6000, "{text}");
    assert_eq!(main.leaked, 3000, "{text}");
    // The constructor's two allocations, before Dr.Hook started, are in
    // the header (and nothing of Dr.Hook's own start-up with them).
    let outside = text
        .lines()
        .find(|l| l.starts_with("\tOutside any routine : "))
        .unwrap_or_else(|| panic!("no line for allocations outside routines:\n{text}"));
    assert!(
        outside.contains("(2 of 1332 bytes before Dr.Hook started)"),
        "{outside}"
    );
}
