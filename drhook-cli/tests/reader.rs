//! The profile reader on the reference's example files, on bad input, and
//! on random and mutated input (proptest): no panic ever, clear errors
//! naming file and line, and write → read round trips.

use std::path::{Path, PathBuf};

use drhook_cli::profile::text::{self, ReadOptions};
use drhook_cli::profile::write::to_text;
use drhook_cli::profile::{Cluster, Kind, PerCall, Profile, RowSizes, ThreadInfo};
use proptest::prelude::*;

/// The reference's example profiles, copied into the workspace's
/// `tests/fixtures`.
fn examples() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures")
}

/// Profile files among the fixtures, and among the reference examples in
/// `shared/reference/examples` when that directory is found beside the
/// checkout (the stderr captures there are not profiles).
fn example_profiles() -> Vec<PathBuf> {
    let mut dirs = vec![examples()];
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    match here
        .ancestors()
        .map(|a| a.join("shared/reference/examples"))
        .find(|d| d.is_dir())
    {
        Some(d) => dirs.push(d),
        None => eprintln!(
            "note: shared/reference/examples not found beside the checkout; checking the copies in tests/fixtures only"
        ),
    }
    let mut v = Vec::new();
    for dir in dirs {
        let mut found: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| !p.to_string_lossy().ends_with(".txt"))
            .collect();
        found.sort();
        assert!(found.len() >= 5, "{found:?}");
        v.extend(found);
    }
    v
}

#[test]
fn every_reference_example_parses_and_writes_back_byte_for_byte() {
    for p in example_profiles() {
        let prof = text::read(&p, ReadOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        let original = std::fs::read_to_string(&p).unwrap();
        assert_eq!(to_text(&prof), original, "{}", p.display());
    }
}

#[test]
fn reference_example_facts() {
    let read = |name: &str| text::read(&examples().join(name), ReadOptions::default()).unwrap();
    let w = read("prof_example.wallprof.drhook.prof.1");
    assert_eq!(w.header.kind, Kind::Wall);
    assert_eq!(w.header.program, "./prof_example");
    assert_eq!(
        (w.header.proc, w.header.nprocs, w.header.nthreads),
        (1, 1, 2)
    );
    assert_eq!(w.header.total_s, Some(0.20));
    assert_eq!(w.header.overhead_pct, Some(0.02));
    assert_eq!(
        w.header.threads[0],
        ThreadInfo {
            id: 1,
            time_s: 0.20,
            pct: 99.87,
            self_cycles: Some(517_988_601),
            cycles: Some(605_429_097)
        }
    );
    assert_eq!(w.rows.len(), 6);
    let k = &w.rows[0];
    assert_eq!(
        (k.routine.as_str(), k.thread, k.star, k.calls),
        ("PROF_EX_MOD:KERNEL", 1, true, 396)
    );
    assert_eq!(
        (k.pct, k.cumul_s, k.self_s, k.total_s),
        (76.84, 0.153, 0.153, 0.153)
    );
    assert_eq!(
        k.per_call,
        PerCall::Ms {
            self_ms: 0.39,
            total_ms: 0.39
        }
    );
    assert_eq!(
        k.sizes,
        Some(RowSizes {
            sum: 7_920_000,
            per_sec: 51_606_977,
            per_call: 20_000,
            min: 20_000,
            max: 20_000
        })
    );
    assert!(w.tree.is_none());

    let c = read("prof_example.cpuprof.drhook.prof.1");
    assert_eq!(c.header.kind, Kind::Cpu);
    assert_eq!(c.header.threads[0].self_cycles, None);
    assert_eq!(c.header.threads[0].cycles, Some(506_838_722));

    let b = read("bench_c.DR_HOOK_PROFILE_myprof.1");
    assert_eq!(b.rows[0].file.as_deref(), Some("bench_c_leaf.c"));
    assert_eq!(b.rows[0].routine, "leaf_hook_c");
    assert_eq!(b.rows[0].calls, 101_000);

    let cp = read("prof_example.prof_callpath_clusterinfo_self.drhook.prof.1");
    assert!(cp.header.clusterinfo && cp.header.sizeinfo);
    assert_eq!(cp.header.callpath_indent, Some(2));
    assert_eq!(cp.rows[0].cluster, Some(Cluster { id: 3, size: 2 }));
    assert_eq!(
        cp.rows[1].path,
        ["PROF_EX_MOD:WORKER", "PROF_EX_MOD:DRIVER", "PROF_EXAMPLE"]
    );
    assert_eq!(cp.rows[1].sizes.map(|s| s.sum), Some(8_080_000));
    assert_eq!(cp.rows[5].routine, "$drhook");
    let tree = cp.tree.as_ref().expect("callpath rows give a tree");
    let kernel1 = tree
        .iter()
        .find(|n| n.routine == "PROF_EX_MOD:KERNEL" && n.thread == 1)
        .unwrap();
    let worker1 = tree.iter().find(|n| Some(n.id) == kernel1.parent).unwrap();
    assert_eq!(worker1.routine, "PROF_EX_MOD:WORKER");
    assert_eq!(kernel1.calls, 404);

    let m = read("prof_example.memprof.drhook.prof.1-mem");
    assert_eq!(m.header.kind, Kind::Memory);
    assert_eq!((m.header.nprocs, m.header.nthreads), (1, 2));
    assert_eq!(m.rows.len(), 6);
    assert_eq!(m.rows[2].memory.unwrap().heap, 147_636_224);
    assert_eq!(m.rows[2].calls, 536);
    assert!(m.rows[2].star);
}

/// Runs the reader on `text` named `bad.prof` and returns the error text.
fn error_of(text: &str) -> String {
    match text::parse_str(text, Path::new("bad.prof"), ReadOptions::default()) {
        Ok(p) => panic!("accepted:\n{text}\n{p:?}"),
        Err(e) => e.to_string(),
    }
}

fn wallprof() -> String {
    std::fs::read_to_string(examples().join("prof_example.wallprof.drhook.prof.1")).unwrap()
}

#[test]
fn bad_input_gets_an_error_naming_file_and_line() {
    let good = wallprof();
    let lines: Vec<&str> = good.lines().collect();
    let join = |v: &[&str]| v.iter().map(|l| format!("{l}\n")).collect::<String>();

    assert_eq!(error_of(""), "bad.prof: empty file: not a Dr.Hook profile");
    let e = error_of("hello world\n");
    assert!(e.starts_with("bad.prof:1: not a Dr.Hook profile"), "{e}");
    let e = error_of("\u{7f}ELF\u{2}\u{1}\n");
    assert!(e.starts_with("bad.prof:1: not a Dr.Hook profile"), "{e}");
    // Not UTF-8 (from a file: text::parse_str takes &str).
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin.prof");
    std::fs::write(
        &bin,
        b"Profiling information for program='x', proc#1:\n\t\xff\xfe\n",
    )
    .unwrap();
    let e = text::read(&bin, ReadOptions::default())
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        format!("{}:2: not UTF-8 text: not a Dr.Hook profile", bin.display())
    );

    // A huge binary file without newlines is not read whole.
    let big = dir.path().join("big.bin");
    std::fs::write(&big, vec![b'x'; 3 << 20]).unwrap();
    let e = text::read(&big, ReadOptions::default())
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        format!(
            "{}:1: a line longer than 1048576 bytes: not a Dr.Hook profile",
            big.display()
        )
    );

    // Truncated inside the header, at a line boundary.
    let e = error_of(&join(&lines[..4]));
    assert!(
        e.starts_with("bad.prof:4: the file ends inside the header"),
        "{e}"
    );
    // Truncated in the middle of a row.
    let cut = good.find("PROF_EX_MOD:DRIVER@1").unwrap() + 8;
    let e = error_of(&good[..cut]);
    assert_eq!(
        e,
        "bad.prof:19: the file ends in the middle of a line: truncated profile (the last line has no newline)"
    );
    // A row missing in the middle.
    let mut v = lines.clone();
    v.remove(18);
    let e = error_of(&join(&v));
    assert!(
        e.starts_with("bad.prof:19: row #4 where row #3 was expected"),
        "{e}"
    );
    // A malformed number.
    let e = error_of(&good.replacen("0.153        0.153   ", "0.1x3        0.153   ", 1));
    assert_eq!(
        e,
        "bad.prof:15: malformed row: cumul \"0.1x3\" is not a number"
    );
    // No @thread.
    let e = error_of(&good.replace("PROF_EXAMPLE@1", "PROF_EXAMPLE"));
    assert!(
        e.starts_with("bad.prof:22: malformed row: no \"@THREAD\""),
        "{e}"
    );
    // Numbers missing.
    let e = error_of(&good.replace("    6     0.00        0.200", "    6     0.00"));
    assert!(e.starts_with("bad.prof:22: malformed row"), "{e}");
    // A stray line after a size line.
    let mut v = lines.clone();
    v.insert(16, "    stray text");
    let e = error_of(&join(&v));
    assert!(
        e.starts_with("bad.prof:17: unexpected line after the size line of row #1"),
        "{e}"
    );
    // Header without the time line.
    let v: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| !l.contains("Wall-time"))
        .collect();
    let e = error_of(&join(&v));
    assert!(e.contains("no \"Wall-time is\""), "{e}");
    // The column header replaced.
    let e = error_of(&good.replace("    #  % Time", "    #  % Tim"));
    assert!(
        e.starts_with("bad.prof:11: expected the column header"),
        "{e}"
    );
}

#[test]
fn errors_from_files_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("drhook.prof.7");
    let good = wallprof();
    std::fs::write(&p, &good[..good.len() - 30]).unwrap();
    let e = text::read(&p, ReadOptions::default())
        .unwrap_err()
        .to_string();
    assert!(e.starts_with(&format!("{}:22: ", p.display())), "{e}");
    let missing = dir.path().join("nope");
    let e = text::read(&missing, ReadOptions::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&missing.display().to_string()) && e.contains("No such file"),
        "{e}"
    );
}

#[test]
fn packed_call_paths_are_split_on_request() {
    let good = wallprof().replace(
        "PROF_EX_MOD:WORKER@1",
        "PROF_EXAMPLE/PROF_EX_MOD:DRIVER/PROF_EX_MOD:WORKER@1",
    );
    let plain = text::parse_str(&good, Path::new("x"), ReadOptions::default()).unwrap();
    assert_eq!(
        plain.rows[4].routine,
        "PROF_EXAMPLE/PROF_EX_MOD:DRIVER/PROF_EX_MOD:WORKER"
    );
    let packed = text::parse_str(
        &good,
        Path::new("x"),
        ReadOptions {
            packed_callpath: true,
        },
    )
    .unwrap();
    assert_eq!(packed.rows[4].routine, "PROF_EX_MOD:WORKER");
    assert_eq!(packed.rows[4].path, ["PROF_EX_MOD:DRIVER", "PROF_EXAMPLE"]);
    assert!(packed.tree.is_some());
}

mod common;
use common::profile;

fn read_back(t: &str) -> Result<Profile, drhook_cli::Error> {
    text::parse_str(t, Path::new("gen.prof"), ReadOptions::default())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn generated_profiles_round_trip(p in profile()) {
        let t = to_text(&p);
        let q = read_back(&t).map_err(|e| TestCaseError::fail(format!("{e}\n{t}")))?;
        prop_assert_eq!(&q.header, &p.header, "{}", t);
        prop_assert_eq!(&q.rows, &p.rows, "{}", t);
        prop_assert_eq!(q.tree.is_some(), p.rows.iter().any(|r| !r.path.is_empty()));
        prop_assert_eq!(to_text(&q), t);
    }

    #[test]
    fn random_text_never_panics(s in "\\PC{0,400}") {
        let _ = read_back(&s);
        let _ = read_back(&format!("Profiling information for program='x', proc#1:\n{s}\n"));
    }

    #[test]
    fn mutated_profiles_never_panic(
        p in profile(),
        edits in proptest::collection::vec((any::<proptest::sample::Index>(), 0u8..5, any::<char>()), 1..4),
    ) {
        let mut t = to_text(&p);
        for (at, op, c) in edits {
            if t.is_empty() {
                break;
            }
            let mut i = at.index(t.len());
            while !t.is_char_boundary(i) {
                i -= 1;
            }
            match op {
                0 => t.truncate(i),
                1 => t.insert(i, c),
                2 => {
                    if let Some(ch) = t[i..].chars().next() {
                        t.replace_range(i..i + ch.len_utf8(), "");
                    }
                }
                3 => {
                    // Duplicate the line containing i.
                    let start = t[..i].rfind('\n').map_or(0, |k| k + 1);
                    let end = t[i..].find('\n').map_or(t.len(), |k| i + k + 1);
                    let line = t[start..end].to_string();
                    t.insert_str(start, &line);
                }
                _ => {
                    if let Some(ch) = t[i..].chars().next()
                        && ch.is_ascii_digit()
                    {
                        t.replace_range(i..i + 1, &c.to_string());
                    }
                }
            }
        }
        // Whatever happens, no panic; what is accepted can be written and
        // read again with the same routines (numbers may be re-rounded:
        // a mutation can add decimals that the layout does not print).
        if let Ok(q) = read_back(&t) {
            let again = read_back(&to_text(&q)).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let key = |p: &Profile| -> Vec<(String, u32, u64, Vec<String>)> {
                p.rows.iter().map(|r| (r.routine.clone(), r.thread, r.calls, r.path.clone())).collect()
            };
            prop_assert_eq!(key(&again), key(&q));
        }
    }
}
