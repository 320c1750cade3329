//! The memory profile's `malloc` family (issue 22, item 15): the C
//! library's rules for aligned and edge-case allocations, allocators whose
//! own functions take `malloc`'s blocks (jemalloc), and AddressSanitizer
//! programs.

use super::common;
use super::harness::{c_prog, same_everywhere};

/// Item 15a: the running C library decides. Every `posix_memalign`,
/// `aligned_alloc`, `memalign`, `valloc`, `pvalloc`, `malloc`, `calloc`,
/// `realloc` and `reallocarray` of a table of sizes (0, small, near and
/// past `PTRDIFF_MAX`, `SIZE_MAX`) and alignments (0, below
/// `sizeof(void *)`, not powers of two, huge) gives the same block or
/// error, status and errno under `drhook run --opt prof,memprof,io` as
/// plainly (`aligned_alloc(48, 96)` was NULL/EINVAL there and a block with
/// glibc 2.36; the blocks are written whole and freed).
#[test]
fn aligned_and_edge_case_allocations_follow_the_c_library() {
    if !common::have_gcc() {
        return;
    }
    let (outs, _d) = same_everywhere(
        |d| {
            c_prog(d, "alloc_edges", &[]);
        },
        &["./alloc_edges"],
        &[],
    );
    let plain = &outs[0];
    assert_eq!(plain.how(), "exit 0", "{}", plain.stderr);
    assert!(plain.stdout.ends_with("done\n"), "{}", plain.stdout);
    assert!(
        plain.stdout.lines().count() > 400,
        "the whole table: {}",
        plain.stdout
    );
    for o in &outs[1..] {
        assert!(o.has_profile(), "{}: {:?}", o.config, o.drhook_files);
    }
}
