//! The I/O report's counters by Darshan's definitions (issue 23), on a C
//! program whose accesses are known (`progs/attach/darshan.c`): every
//! expected value below follows from what the program did, by Darshan
//! 3.5's rules (darshan-posix's `POSIX_RECORD_READ`/`WRITE` and
//! `DARSHAN_BUCKET_INC`: per file, the last bytes read and written start
//! at 0 at every open; sequential = offset above the last byte,
//! consecutive = offset right after it; size bins include their upper
//! edge).

mod common;

use std::process::Command;

use common::{drhook_exe, have_gcc, prog, tempdir, tool};

fn report(dir: &std::path::Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("drhook.io.1")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// `darshan.c` built in a new directory and run there under `drhook run
/// --opt io` with `env`; its report.
fn run_darshan(env: &[(&str, &str)]) -> Option<(tempfile::TempDir, serde_json::Value)> {
    if !have_gcc() {
        return None;
    }
    let d = tempdir();
    let src = prog("attach").join("darshan.c");
    let src = src.display().to_string();
    tool(
        d.path(),
        "gcc",
        &["-std=gnu11", "-O1", "-o", "darshan", &src],
    );
    let out = Command::new(drhook_exe())
        .args(["run", "--no-out-dir", "--opt", "io", "--", "./darshan"])
        .current_dir(d.path())
        .env_remove("DR_HOOK")
        .env_remove("DR_HOOK_OPT")
        .env_remove("DRHOOK_IO_EXCLUDE")
        .env_remove("DRHOOK_IO_INCLUDE")
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "darshan done\n");
    let rep = report(d.path());
    Some((d, rep))
}

fn paths(rep: &serde_json::Value) -> Vec<String> {
    rep["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap().to_string())
        .collect()
}

/// Darshan's default exclusions (and `/run/`): system files are one
/// record, `<system files>`, unless `DRHOOK_IO_EXCLUDE=none`;
/// `DRHOOK_IO_INCLUDE` keeps some of them apart. The patterns are POSIX
/// extended regular expressions, as `DRHOOK_IO_TRACE` and `DRHOOK_FOLLOW`.
#[test]
fn system_files_are_one_record_unless_asked() {
    let Some((_d, rep)) = run_darshan(&[]) else {
        return;
    };
    let p = paths(&rep);
    assert!(
        !p.iter()
            .any(|p| p.starts_with("/proc/") || p.starts_with("/etc/")),
        "{p:?}"
    );
    let sys = rep["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == "<system files>")
        .unwrap_or_else(|| panic!("no <system files> in {p:?}"));
    assert_eq!(sys["opens"], 2, "{sys:#}");
    assert_eq!(sys["reads"], 2, "{sys:#}");

    let (_d, rep) = run_darshan(&[("DRHOOK_IO_EXCLUDE", "none")]).unwrap();
    let p = paths(&rep);
    assert!(p.iter().any(|p| p == "/etc/passwd"), "{p:?}");
    assert!(
        p.iter()
            .any(|p| p.starts_with("/proc/") && p.ends_with("/status")),
        "{p:?}"
    );
    assert!(!p.iter().any(|p| p == "<system files>"), "{p:?}");

    let (_d, rep) = run_darshan(&[("DRHOOK_IO_INCLUDE", "^/etc/(passwd|group)$")]).unwrap();
    let p = paths(&rep);
    assert!(p.iter().any(|p| p == "/etc/passwd"), "{p:?}");
    assert!(!p.iter().any(|p| p.starts_with("/proc/")), "{p:?}");
}

#[test]
fn darshan_counters_of_known_accesses() {
    let Some((d, rep)) = run_darshan(&[]) else {
        return;
    };
    let files = rep["files"].as_array().unwrap();
    let file = |name: &str| {
        let want = format!("/{name}");
        let all: Vec<&serde_json::Value> = files
            .iter()
            .filter(|f| f["path"].as_str().unwrap().ends_with(&want))
            .collect();
        assert_eq!(all.len(), 1, "{name}: {all:#?}");
        all[0].clone()
    };
    let n = |f: &serde_json::Value, k: &str| {
        f[k].as_u64()
            .unwrap_or_else(|| panic!("{k} missing in {f:#}"))
    };

    // Sizes E-1, E, E+1 for the edges 100, 1K, 10K, 100K, 1M, 4M, written
    // then read back in order: E-1 and E fall in the bin that E closes,
    // E+1 in the next.
    let b = file("bins.dat");
    let hist = serde_json::json!([2, 3, 3, 3, 3, 3, 1, 0, 0, 0]);
    assert_eq!(b["write_hist"], hist, "{b:#}");
    assert_eq!(b["read_hist"], hist, "{b:#}");
    // 18 back-to-back writes from 0: the first neither, 17 both; the reads
    // after the seek to 0 the same.
    for k in ["seq_writes", "consec_writes", "seq_reads", "consec_reads"] {
        assert_eq!(n(&b, k), 17, "{k}");
    }
    let total: u64 = [100u64, 1024, 10240, 102400, 1048576, 4194304]
        .iter()
        .map(|e| 3 * e)
        .sum();
    assert_eq!(n(&b, "max_byte_written"), total - 1);
    assert_eq!(n(&b, "max_byte_read"), total - 1);
    assert_eq!(n(&b, "rw_switches"), 1);

    // Two opens: 10 writes of 100 B from 0 (9 both), then 5 from 0 again
    // (the open starts the last byte at 0 again: 4 both); a pwrite at
    // 10000 (sequential: above 499), one at 50 (backward: neither), a
    // write at the descriptor's 500 (sequential: above 149).
    let s = file("seq.dat");
    assert_eq!(n(&s, "opens"), 2);
    assert_eq!(n(&s, "writes"), 18);
    assert_eq!(n(&s, "consec_writes"), 13, "{s:#}");
    assert_eq!(n(&s, "seq_writes"), 15, "{s:#}");
    assert_eq!(n(&s, "max_byte_written"), 10099);

    // write@0, pread@0, pwrite@100, pread 50@150: three switches; the
    // pwrite is both (right after 99), the last pread sequential only.
    let rw = file("rw.dat");
    assert_eq!(n(&rw, "rw_switches"), 3, "{rw:#}");
    assert_eq!((n(&rw, "seq_writes"), n(&rw, "consec_writes")), (1, 1));
    assert_eq!((n(&rw, "seq_reads"), n(&rw, "consec_reads")), (1, 0));
    assert_eq!(
        (n(&rw, "max_byte_read"), n(&rw, "max_byte_written")),
        (199, 199)
    );

    // O_APPEND: offsets counted from 0 at the open, as Darshan does.
    let a = file("append.dat");
    assert_eq!(
        (n(&a, "seq_writes"), n(&a, "consec_writes")),
        (2, 2),
        "{a:#}"
    );
    assert_eq!(n(&a, "max_byte_written"), 29);

    // The four most common access sizes and strides, as Darshan reports
    // them (most first, ties with the larger value first, a zero never;
    // Darshan's stride: the gap after the last byte in the same direction,
    // 0 for a first access or one that is not forward): seq.dat's 18
    // writes are all of 100 B; its strides are 0 sixteen times (not
    // listed), 9500 (the pwrite at 10000 after byte 499) and 350 (the
    // write at the descriptor's 500 after byte 149 — Darshan's runtime,
    // which takes a pwrite as moving the descriptor, sees 0 there and one
    // more consecutive write: benches/darshan/side_by_side.py).
    assert_eq!(s["common_access_sizes"], serde_json::json!([[100, 18]]));
    assert_eq!(
        s["common_strides"],
        serde_json::json!([[9500, 1], [350, 1]]),
        "{s:#}"
    );
    // bins.dat: 18 distinct sizes twice each (written, read): the four
    // largest.
    assert_eq!(
        b["common_access_sizes"],
        serde_json::json!([[4194305, 2], [4194304, 2], [4194303, 2], [1048577, 2]])
    );
    // File alignment (the file's st_blksize) and the accesses whose offset
    // is not a multiple of it: bins.dat's 18 writes, then 18 reads, at the
    // running sum of the sizes.
    use std::os::unix::fs::MetadataExt as _;
    let blk = std::fs::metadata(d.path().join("bins.dat"))
        .unwrap()
        .blksize();
    assert_eq!(n(&b, "file_alignment"), blk);
    let mut at = 0u64;
    let mut unaligned = 0;
    for e in [100u64, 1024, 10240, 102400, 1048576, 4194304] {
        for size in [e - 1, e, e + 1] {
            unaligned += u64::from(at % blk != 0);
            at += size;
        }
    }
    assert_eq!(n(&b, "file_not_aligned"), 2 * unaligned, "{b:#}");
    assert_eq!(n(&b, "mem_not_aligned"), 0);
    // The slowest read and write, with their sizes (one of the sizes).
    let sizes: Vec<u64> = [100u64, 1024, 10240, 102400, 1048576, 4194304]
        .iter()
        .flat_map(|e| [e - 1, *e, e + 1])
        .collect();
    assert!(b["max_read_time"].as_f64().unwrap() > 0.0, "{b:#}");
    assert!(sizes.contains(&n(&b, "max_read_time_size")), "{b:#}");
    assert!(sizes.contains(&n(&b, "max_write_time_size")), "{b:#}");

    // A dup (and a write through it), a write from an unaligned buffer.
    // The duplicate shares the original's position (one open file
    // description): the second write, through the original, is at 10,
    // right after the first (consecutive); Darshan counts a dup among the
    // opens.
    let dup = file("dup.dat");
    assert_eq!((n(&dup, "dups"), n(&dup, "writes")), (1, 2), "{dup:#}");
    assert_eq!(n(&dup, "opens"), 2);
    assert_eq!((n(&dup, "seq_writes"), n(&dup, "consec_writes")), (1, 1));
    assert_eq!(n(&dup, "max_byte_written"), 19);
    assert_eq!(n(&dup, "mem_not_aligned"), 1);
    // old.dat renamed onto tgt.dat: a source and a target.
    assert_eq!(n(&file("old.dat"), "renames_from"), 1);
    let tgt = file("tgt.dat");
    assert_eq!((n(&tgt, "renames_to"), n(&tgt, "renames_from")), (1, 0));

    // One file reached as same.dat, sub/../same.dat and through the link
    // lnk.dat: one record, under its own path.
    let same = file("same.dat");
    assert_eq!((n(&same, "opens"), n(&same, "reads")), (3, 2), "{same:#}");
    for f in files {
        let p = f["path"].as_str().unwrap();
        assert!(!p.contains("/../") && !p.ends_with("lnk.dat"), "{p}");
    }
}

/// The I/O reports are named as the profiles are (issue 23): under
/// `mpirun`, rank N's report is `drhook.io.N` (it was
/// `drhook.io.1.<command>.<pid>`, and the launcher took `drhook.io.1`), the
/// launcher's a child's name; with `--prefix`, the report goes where the
/// profile goes.
#[test]
fn io_reports_are_named_as_the_profiles() {
    if !(common::have_tool("mpirun") && common::have_tool("mpicc")) {
        return;
    }
    let d = tempdir();
    let src = prog("attach").join("mpi_plain.c");
    let src = src.display().to_string();
    tool(d.path(), "mpicc", &["-O1", "-o", "mpi_plain", &src]);
    let out = Command::new(drhook_exe())
        .args(["run", "--no-out-dir", "--opt", "prof,io", "--", "mpirun"])
        .args(["--allow-run-as-root", "--oversubscribe", "-n", "2"])
        .arg("./mpi_plain")
        .current_dir(d.path())
        .env_remove("DR_HOOK")
        .env_remove("DR_HOOK_OPT")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let names: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("drhook.io."))
        .collect();
    for n in 1..=2 {
        let text = std::fs::read_to_string(d.path().join(format!("drhook.io.{n}")))
            .unwrap_or_else(|e| panic!("drhook.io.{n}: {e}; {names:?}"));
        let rep: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(rep["command"], "mpi_plain", "drhook.io.{n}: {names:?}");
        assert_eq!(rep["task"], n, "drhook.io.{n}");
    }
    assert!(
        names.iter().any(|n| n.starts_with("drhook.io.1.mpirun.")),
        "the launcher's report under a child's name: {names:?}"
    );

    // --prefix: the report beside the profile, named the same way.
    let d = tempdir();
    let out = Command::new(drhook_exe())
        .args(["run", "--opt", "prof,io", "--prefix", "out/", "--", "true"])
        .current_dir(d.path())
        .env_remove("DR_HOOK")
        .env_remove("DR_HOOK_OPT")
        .output()
        .unwrap();
    assert!(out.status.success());
    let names: Vec<String> = std::fs::read_dir(d.path().join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let prof = names
        .iter()
        .find(|n| n.ends_with(".drhook.prof.1"))
        .unwrap_or_else(|| panic!("{names:?}"));
    let io = prof.replace(".drhook.prof.1", ".drhook.io.1");
    assert!(names.contains(&io), "{io} in {names:?}");
}
