//! The memory profile's `malloc` family (issue 22, item 15): the C
//! library's rules for aligned and edge-case allocations, allocators whose
//! own functions take `malloc`'s blocks (jemalloc), and AddressSanitizer
//! programs.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::common;
use super::harness::{Outcome, c_prog, same_everywhere, same_everywhere_but};

/// `tests/progs/harmless/<name>.c` built in `dir` with `extra` (libraries,
/// a sanitizer) if gcc can; otherwise `None`, and the test is skipped
/// (`what` names what is missing) or fails under
/// `DRHOOK_REQUIRE_FORTRAN=1`.
fn built_with(dir: &Path, name: &str, extra: &[&str], what: &str) -> Option<PathBuf> {
    if !common::have_gcc() {
        return None;
    }
    let src = common::prog("harmless").join(format!("{name}.c"));
    let ok = Command::new("gcc")
        .args(["-std=gnu11", "-Wall", "-O1", "-g", "-o", name])
        .arg(&src)
        .args(extra)
        .current_dir(dir)
        .output()
        .is_ok_and(|o| o.status.success());
    common::have(what, ok).then(|| dir.join(name))
}

/// The lines of Dr.Hook's stderr in `o` that contain `text`.
fn lines_with<'a>(o: &'a Outcome, text: &str) -> Vec<&'a str> {
    o.stderr_all.lines().filter(|l| l.contains(text)).collect()
}

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

/// Item 15b: a program linked with jemalloc calls jemalloc's own functions
/// (`sallocx`, `rallocx`, `xallocx`, `dallocx`, `sdallocx`) on the blocks
/// `malloc`, `calloc`, `realloc` and `aligned_alloc` gave: under `drhook
/// run --opt prof,memprof,io` they see jemalloc's blocks as plainly (they
/// got addresses 16 bytes into them: every size differed). The preload
/// says once that malloc is jemalloc's and what the memory profile loses;
/// the allocations are still counted in `main`'s row, no free and no leak.
#[test]
fn jemallocs_own_functions_get_jemallocs_blocks() {
    let build = common::tempdir();
    let Some(exe) = built_with(
        build.path(),
        "jemalloc",
        &["-ljemalloc"],
        "jemalloc (Debian: libjemalloc-dev)",
    ) else {
        return;
    };
    let (outs, _d) = same_everywhere(
        |d| {
            std::fs::copy(&exe, d.join("jemalloc")).unwrap();
        },
        &["./jemalloc"],
        &[],
    );
    assert_eq!(outs[0].how(), "exit 0", "{}", outs[0].stderr);
    assert!(outs[0].stdout.ends_with("done\n"), "{}", outs[0].stdout);
    assert!(
        lines_with(&outs[1], "malloc is jemalloc's").is_empty(),
        "prof: no message"
    );
    let mem = &outs[2];
    let said = lines_with(mem, "malloc is jemalloc's");
    assert_eq!(said.len(), 1, "one message: {}", mem.stderr_all);
    assert!(
        said[0].contains("mallocx")
            && said[0].contains("counted per routine")
            && said[0].contains("frees, leaked bytes and heap high-water marks are not"),
        "{}",
        said[0]
    );
    let text = std::fs::read_to_string(mem.dir.join("drhook.prof.1-mem")).unwrap();
    let rows = drhook_tests::mem_rows(&text);
    let main = rows.iter().find(|r| r.name == "main@1").expect(&text);
    // 11 mallocs (1 B .. 1 MiB), calloc(10, 10), realloc to 5000,
    // aligned_alloc(256, 512); stdio's buffer besides.
    assert!(main.allocs >= 14, "{text}");
    assert!(main.self_alloc >= 1_398_101 + 100 + 5000 + 512, "{text}");
    assert_eq!((main.frees, main.leaked), (0, 0), "{text}");
}

/// ASan's reports carry process ids and addresses: the comparison keeps
/// their `SUMMARY:` lines (the error, the file and line, or the leaked
/// bytes), which say whether ASan saw the same thing.
fn asan_summary(stderr: &str) -> String {
    stderr
        .lines()
        .filter(|l| l.starts_with("SUMMARY:"))
        .map(|l| format!("{l}\n"))
        .collect()
}

/// Item 15c: an AddressSanitizer program (`gcc -fsanitize=address`) runs
/// under `drhook run` as plainly: it starts (ASan ended it with "ASan
/// runtime does not come first in initial library list", status 1), a
/// clean run exits 0 with no leak of Dr.Hook's own reported (the overhead
/// calibration's tree was one), an underflow of a block is reported at the
/// same line (a header in front of the block would hide it), a leak is
/// reported with the same bytes, each with the same status. `drhook run`
/// says what it does with `ASAN_OPTIONS`, and with memprof the preload
/// says once that the `malloc` family passes ASan's blocks through.
#[test]
fn address_sanitizer_programs_run_as_plainly() {
    let build = common::tempdir();
    let Some(exe) = built_with(
        build.path(),
        "asan",
        &["-fsanitize=address", "-pthread"],
        "gcc -fsanitize=address (libasan)",
    ) else {
        return;
    };
    for (what, status, summary) in [
        ("clean", "exit 0", ""),
        ("underflow", "exit 1", "heap-buffer-overflow"),
        ("leak", "exit 1", "123 byte(s) leaked in 1 allocation(s)"),
    ] {
        let (outs, _d) = same_everywhere_but(
            |d| {
                std::fs::copy(&exe, d.join("asan")).unwrap();
            },
            &["./asan", what],
            &[],
            asan_summary,
        );
        let plain = &outs[0];
        assert_eq!(plain.how(), status, "{what}: {}", plain.stderr);
        assert!(
            asan_summary(&plain.stderr).contains(summary),
            "{what}: {}",
            plain.stderr
        );
        for o in &outs[1..] {
            let said = lines_with(o, "drhook run: ./asan uses AddressSanitizer");
            assert_eq!(said.len(), 1, "{what} {}: {}", o.config, o.stderr_all);
            assert!(said[0].contains("verify_asan_link_order=0"), "{}", said[0]);
            let passes = lines_with(o, "AddressSanitizer serves malloc");
            let memprof = o.config.contains("memprof");
            assert_eq!(
                passes.len(),
                usize::from(memprof),
                "{what} {}: {}",
                o.config,
                o.stderr_all
            );
            if memprof {
                assert!(
                    passes[0].contains("passes through untracked"),
                    "{}",
                    passes[0]
                );
            }
            if what == "clean" {
                assert!(o.has_profile(), "{}: {:?}", o.config, o.drhook_files);
            }
        }
    }
}
