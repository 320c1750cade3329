//! The printf family and the writes stdio makes for a stream (its flushes,
//! the final one at `exit`), and the reads it makes (its refills), against
//! what strace sees of the same run.

use super::*;

fn report(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("drhook.io.1")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn file<'a>(r: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    r["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"].as_str().unwrap().ends_with(&format!("/{name}")))
        .unwrap_or_else(|| panic!("no {name} in {r:#}"))
}

/// `(calls, bytes)` of `call`s (`write`, `read`) on the file `name` in an
/// `strace -y` log.
fn strace_ops(log: &str, call: &str, name: &str) -> (u64, u64) {
    let mut n = 0;
    let mut bytes = 0;
    for l in log.lines() {
        let l = l.split_once(' ').map_or(l, |x| x.1).trim_start();
        if l.starts_with(&format!("{call}(")) && l.contains(&format!("/{name}>")) {
            n += 1;
            bytes += l
                .rsplit("= ")
                .next()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .unwrap_or(0);
        }
    }
    (n, bytes)
}

/// Runs `exe` (its stdout to out.txt) in a fresh directory under strace
/// (`-e trace=write`), preloaded with I/O profiling; the directory and the
/// strace log.
fn traced(exe: &Path) -> (tempfile::TempDir, String) {
    traced_calls(exe, "write")
}

/// [`traced`], strace tracing the system calls `calls`.
fn traced_calls(exe: &Path, calls: &str) -> (tempfile::TempDir, String) {
    let d = tempdir();
    let preload = built("libdrhook_preload.so");
    let out = std::fs::File::create(d.path().join("out.txt")).unwrap();
    let r = Command::new("strace")
        .current_dir(d.path())
        .args(["-f", "-y", "-qq", "-e", &format!("trace={calls}")])
        .args(["-e", "signal=none"])
        .args(["-o", "trace.log", "-E"])
        .arg(format!("LD_PRELOAD={}", preload.display()))
        .args([
            "-E",
            "DR_HOOK=1",
            "-E",
            "DR_HOOK_SILENT=1",
            "-E",
            "DR_HOOK_OPT=io",
        ])
        .arg(exe)
        .stdout(out)
        .output()
        .unwrap();
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let log = std::fs::read_to_string(d.path().join("trace.log")).unwrap();
    (d, log)
}

#[test]
fn stdio_flushes_and_printf_equal_what_strace_sees_plain_and_fortified() {
    if !have_gcc() || !have_tool("strace") || !have_tool("nm") {
        return;
    }
    let src = attach_prog("stdio_flush.c");
    let b = tempdir();
    let plain = c_exe(b.path(), "plain", &[&src], &["-std=gnu11"], Link::Shared);
    let fortified = c_exe(
        b.path(),
        "fortified",
        &[&src],
        &["-std=gnu11", "-O2", "-D_FORTIFY_SOURCE=2"],
        Link::Shared,
    );
    // The fortified build calls the __*_chk forms.
    let nm = Command::new("nm")
        .arg("-D")
        .arg(&fortified)
        .output()
        .unwrap();
    let syms = String::from_utf8_lossy(&nm.stdout);
    for s in ["__fprintf_chk", "__printf_chk", "__dprintf_chk"] {
        assert!(syms.contains(s), "{s} not in {syms}");
    }
    // What the program writes, not profiled (its stdout to a file).
    let expect = {
        let d = tempdir();
        let out = std::fs::File::create(d.path().join("out.txt")).unwrap();
        let s = Command::new(&plain)
            .current_dir(d.path())
            .stdout(out)
            .status()
            .unwrap();
        assert!(s.success());
        [
            "out.txt",
            "full.txt",
            "line.txt",
            "big.txt",
            "small.txt",
            "dprintf.txt",
        ]
        .map(|f| std::fs::read(d.path().join(f)).unwrap())
    };
    for exe in [&plain, &fortified] {
        let (d, log) = traced(exe);
        let rep = report(d.path());
        let n = |f: &serde_json::Value, k: &str| f[k].as_u64().unwrap_or_else(|| panic!("{k}"));
        // The files are the same as without the profile.
        for (k, f) in [
            "out.txt",
            "full.txt",
            "line.txt",
            "big.txt",
            "small.txt",
            "dprintf.txt",
        ]
        .iter()
        .enumerate()
        {
            assert_eq!(std::fs::read(d.path().join(f)).unwrap(), expect[k], "{f}");
        }
        for (name, calls, buffer, mode) in [
            ("full.txt", 1000, None, "full"),
            ("line.txt", 1000, None, "line"),
            ("big.txt", 1000, Some(1 << 20), "full"),
            ("small.txt", 1000, Some(512), "full"),
            // 1000 printf, a puts, two putchar.
            ("out.txt", 1003, None, "full"),
            ("dprintf.txt", 10, None, ""),
        ] {
            let f = file(&rep, name);
            let bytes = expect[[
                "out.txt",
                "full.txt",
                "line.txt",
                "big.txt",
                "small.txt",
                "dprintf.txt",
            ]
            .iter()
            .position(|x| *x == name)
            .unwrap()]
            .len() as u64;
            // Stdio level: the calls, and their bytes.
            assert_eq!(
                (n(f, "stdio_writes"), n(f, "stdio_write_bytes")),
                (calls, bytes),
                "{name}: {f:#}"
            );
            // System level: strace's writes on that file, one for one, the
            // final flush at exit included (full.txt, big.txt, out.txt).
            let st = strace_ops(&log, "write", name);
            assert_eq!(st.1, bytes, "{name}\n{log}");
            assert_eq!((n(f, "writes"), n(f, "write_bytes")), st, "{name}: {f:#}");
            assert_eq!(
                (n(f, "stdio_flushes"), n(f, "stdio_flush_bytes")),
                st,
                "{name}"
            );
            if !mode.is_empty() {
                let blk = n(f, "file_alignment");
                assert_eq!(n(f, "stdio_buffer"), buffer.unwrap_or(blk), "{name}: {f:#}");
                assert_eq!(f["stdio_buffer_mode"], mode, "{name}");
            }
        }
        // One write per line for the line-buffered file, one (at exit) for
        // the 1 MiB buffer.
        assert_eq!(n(file(&rep, "line.txt"), "writes"), 1000);
        assert_eq!(n(file(&rep, "big.txt"), "writes"), 1);
    }
}

#[test]
fn drhook_io_flags_streams_flushed_in_small_writes() {
    if !have_gcc() || !have_tool("strace") {
        return;
    }
    let b = tempdir();
    let exe = c_exe(
        b.path(),
        "stdio_flush",
        &[&attach_prog("stdio_flush.c")],
        &["-std=gnu11"],
        Link::Shared,
    );
    let (d, _) = traced(&exe);
    let drhook = drhook_exe();
    let io = |args: &[&str]| -> String {
        let r = run_in(d.path(), &drhook.display().to_string(), args, &[]);
        ok(&r);
        r.stdout()
    };
    // Flagged: the files whose flushes are far below the block size.
    let flagged = |text: &str| -> Vec<String> {
        let mut v: Vec<String> = text
            .lines()
            .skip_while(|l| !l.starts_with("Small stdio flushes"))
            .skip(2)
            .take_while(|l| !l.is_empty())
            .map(|l| l.rsplit('/').next().unwrap().to_string())
            .collect();
        v.sort();
        v
    };
    // Every file system here gives st_blksize = glibc's default buffer
    // (the stream's buffer is st_blksize): with the file's own block size,
    // the line-buffered, 512-byte and dprintf files are flagged, not the
    // default-buffered one nor the 1 MiB one.
    let own = io(&["io", "--summary", "drhook.io.1"]);
    assert_eq!(
        flagged(&own),
        ["dprintf.txt", "line.txt", "small.txt"],
        "{own}"
    );
    // Against a file system with 64 KiB blocks (the threshold given): the
    // default-buffered streams too, never the 1 MiB one.
    let big = io(&["io", "--summary", "--block-size", "65536", "drhook.io.1"]);
    assert_eq!(
        flagged(&big),
        [
            "dprintf.txt",
            "full.txt",
            "line.txt",
            "out.txt",
            "small.txt"
        ],
        "{big}"
    );
    // The per-process table says it under the file.
    let table = io(&["io", "drhook.io.1"]);
    let line = table
        .lines()
        .skip_while(|l| !l.ends_with("/line.txt (main@1)"))
        .take_while(|l| !l.contains("by routine"))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(line.contains("SMALL FLUSHES: 32 B per write"), "{table}");
    assert!(
        !table
            .lines()
            .skip_while(|l| !l.ends_with("/big.txt (main@1)"))
            .take_while(|l| !l.contains("by routine"))
            .any(|l| l.contains("SMALL FLUSHES"))
    );
}

#[test]
fn stdio_refills_equal_the_reads_strace_sees_plain_and_fortified() {
    if !have_gcc() || !have_tool("strace") || !have_tool("nm") {
        return;
    }
    let src = attach_prog("stdio_refill.c");
    let b = tempdir();
    let plain = c_exe(b.path(), "plain", &[&src], &["-std=gnu11"], Link::Shared);
    let fortified = c_exe(
        b.path(),
        "fortified",
        &[&src],
        &["-std=gnu11", "-O2", "-D_FORTIFY_SOURCE=2"],
        Link::Shared,
    );
    let nm = Command::new("nm")
        .arg("-D")
        .arg(&fortified)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&nm.stdout).contains("__fgets_chk"));
    // What the program prints, not profiled.
    let expect = {
        let d = tempdir();
        let r = Command::new(&plain).current_dir(d.path()).output().unwrap();
        assert!(r.status.success());
        r.stdout
    };
    for exe in [&plain, &fortified] {
        let (d, log) = traced_calls(exe, "read");
        assert_eq!(std::fs::read(d.path().join("out.txt")).unwrap(), expect);
        let rep = report(d.path());
        let n = |f: &serde_json::Value, k: &str| f[k].as_u64().unwrap_or_else(|| panic!("{k}"));
        for (name, buffer) in [
            ("small.txt", Some(64)),
            ("big.txt", Some(1 << 20)),
            ("default.txt", None),
        ] {
            let f = file(&rep, name);
            let size = std::fs::metadata(d.path().join(name)).unwrap().len();
            // Stdio level: every byte of the file, once.
            assert_eq!(n(f, "stdio_read_bytes"), size, "{name}: {f:#}");
            // System level: strace's reads on that file, one for one, the
            // one that found the end (0 bytes) included.
            let st = strace_ops(&log, "read", name);
            assert_eq!(st.1, size, "{name}\n{log}");
            assert_eq!((n(f, "reads"), n(f, "read_bytes")), st, "{name}: {f:#}");
            assert_eq!(
                (n(f, "stdio_refills"), n(f, "stdio_refill_bytes")),
                st,
                "{name}"
            );
            let blk = n(f, "file_alignment");
            assert_eq!(n(f, "stdio_buffer"), buffer.unwrap_or(blk), "{name}: {f:#}");
        }
        // A read per 64 bytes and the last one; the whole file and the
        // last one for the 1 MiB buffer.
        let size = std::fs::metadata(d.path().join("small.txt")).unwrap().len();
        assert_eq!(n(file(&rep, "small.txt"), "reads"), size.div_ceil(64) + 1);
        assert_eq!(n(file(&rep, "big.txt"), "reads"), 2);
    }
}
