//! I/O profiling through the preload's interposers.

use super::*;
use crate::memory::{mem_exe, mem_rows};

fn io_report(dir: &Path, name: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join(name))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.join(name).display()));
    serde_json::from_str(&text).unwrap()
}

fn io_file<'a>(r: &'a serde_json::Value, suffix: &str) -> &'a serde_json::Value {
    r["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"].as_str().unwrap().ends_with(suffix))
        .unwrap_or_else(|| panic!("no {suffix} in {r:#}"))
}

fn io_exe(d: &Path) -> PathBuf {
    c_exe(
        d,
        "io",
        &[&attach_prog("io.c")],
        &["-pthread", "-std=gnu11", "-lrt"],
        Link::Shared,
    )
}

#[test]
fn io_profile_of_posix_stdio_aio_and_a_forked_child_is_exact() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = io_exe(d.path());
    let r = drhook_run(
        d.path(),
        &["--opt", "io"],
        &exe.display().to_string(),
        &[],
        &[],
    );
    ok(&r);
    assert_eq!(r.stdout(), "io done\n");
    let rep = io_report(d.path(), "drhook.io.1");
    assert_eq!(rep["command"], "io");
    let p = io_file(&rep, "/posix.dat");
    let n =
        |f: &serde_json::Value, k: &str| f[k].as_u64().unwrap_or_else(|| panic!("{k} in {f:#}"));
    assert_eq!(n(p, "opens"), 1, "{p:#}");
    assert_eq!(n(p, "closes"), 1);
    assert_eq!(n(p, "writes"), 101);
    assert_eq!(n(p, "write_bytes"), 100 * 1000 + 4096);
    assert_eq!(n(p, "reads"), 11);
    assert_eq!(n(p, "read_bytes"), 10 * 10000 + 4096);
    assert_eq!(n(p, "seeks"), 1);
    assert_eq!(n(p, "syncs"), 1);
    assert_eq!(n(p, "max_write"), 4096);
    assert_eq!(n(p, "min_write"), 1000);
    assert_eq!(
        p["write_hist"],
        serde_json::json!([0, 100, 1, 0, 0, 0, 0, 0, 0, 0])
    );
    assert_eq!(
        p["read_hist"],
        serde_json::json!([0, 0, 11, 0, 0, 0, 0, 0, 0, 0])
    );
    // Darshan's definitions: the file's last byte starts at 0 at the open,
    // so the first write (offset 0) is neither sequential nor consecutive,
    // the 99 after it are both; the pwrite at 200000 jumps forward
    // (sequential only). The reads after the seek likewise: the first at
    // 0 neither, 9 both, the pread at 200000 sequential.
    assert_eq!(n(p, "consec_writes"), 99, "{p:#}");
    assert_eq!(n(p, "seq_writes"), 100);
    assert_eq!(n(p, "consec_reads"), 9);
    assert_eq!(n(p, "seq_reads"), 10);
    // Highest byte: the pwrite's and pread's last, 200000 + 4096 - 1.
    assert_eq!(n(p, "max_byte_written"), 204_095);
    assert_eq!(n(p, "max_byte_read"), 204_095);
    // write* -> read* -> pwrite -> pread: three switches.
    assert_eq!(n(p, "rw_switches"), 3);
    assert_eq!(p["opened_by"], "IO:POSIX@1");
    // The routines that moved its bytes: all of them IO:POSIX's.
    assert_eq!(
        p["routines"],
        serde_json::json!([{"routine": "IO:POSIX", "bytes": 2 * (100 * 1000 + 4096)}])
    );
    assert_eq!(n(p, "other_routines_bytes"), 0);
    let s = io_file(&rep, "/stdio.txt");
    assert_eq!(n(s, "stdio_writes"), 1001, "{s:#}");
    assert_eq!(n(s, "stdio_write_bytes"), 10004);
    assert_eq!(n(s, "bufsize"), 65536);
    assert_eq!(s["bufmode"], "full");
    assert_eq!((n(s, "opens"), n(s, "closes")), (1, 1));
    assert_eq!(rep["aio"]["writes"], 4, "{rep:#}");
    assert_eq!(rep["aio"]["completed"], 4);
    assert_eq!(rep["aio"]["bytes"], 32768);
    assert!(rep["aio"]["max_queue_depth"].as_u64().unwrap() >= 1);
    assert_eq!(n(io_file(&rep, "/aio.dat"), "write_bytes"), 32768);
    // The child: its own file, named with command and pid, its ancestry.
    let child = drhook_tests::files_starting_with(d.path(), "drhook.io.1.io.");
    assert_eq!(child.len(), 1, "{child:?}");
    let c = io_report(d.path(), &child[0]);
    let anc = c["ancestry"].as_array().unwrap();
    assert_eq!(anc.len(), 1, "{c:#}");
    assert!(anc[0].as_str().unwrap().ends_with("-io"));
    let cf = io_file(&c, "/child.txt");
    assert_eq!((n(cf, "writes"), n(cf, "write_bytes")), (5, 30));
    assert!(
        c["files"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| !f["path"].as_str().unwrap().ends_with("/posix.dat")),
        "the child's report holds only its own I/O"
    );
    // Per routine: the -io profile.
    let prof = std::fs::read_to_string(d.path().join("drhook.prof.1-io")).unwrap();
    let row = prof
        .lines()
        .find(|l| l.ends_with(" IO:POSIX@1"))
        .unwrap_or_else(|| panic!("{prof}"));
    let f: Vec<&str> = row.split_whitespace().collect();
    // read bytes, written bytes, #reads (the failed read(-1) is an
    // operation too), #writes, #other (open, seek, fsync, close).
    assert_eq!(&f[5..10], ["104096", "104096", "12", "101", "4"], "{prof}");
    let row = prof.lines().find(|l| l.ends_with(" IO:STDIO@1")).unwrap();
    let f: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(&f[5..9], ["0", "10004", "0", "1001"], "{prof}");
    // The text report.
    let out = Command::new(drhook_exe())
        .args(["io", "drhook.io.1"])
        .current_dir(d.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains("/posix.dat (IO:POSIX@1)"), "{text}");
    assert!(text.contains("by routine  IO:POSIX 203.3 KiB"), "{text}");
    // glibc ignores the size given to setvbuf with no buffer: the stream's
    // buffer is the file system's block size.
    assert!(
        text.contains("(setvbuf asked for 65536, the buffer had "),
        "{text}"
    );
    assert!(
        text.contains("AIO: 0 reads, 4 writes, 4 completed"),
        "{text}"
    );
}

#[test]
fn io_counts_equal_what_strace_sees_for_the_same_run() {
    if !have_gcc() || !have_tool("strace") {
        return;
    }
    let d = tempdir();
    let exe = io_exe(d.path());
    let preload = built("libdrhook_preload.so");
    let out = Command::new("strace")
        .current_dir(d.path())
        .args([
            "-f",
            "-y",
            "-qq",
            "-e",
            "trace=read,write,pread64,pwrite64",
            "-e",
            "signal=none",
            "-o",
            "trace.log",
        ])
        // The environment of the traced program only (not strace's).
        .arg("-E")
        .arg(format!("LD_PRELOAD={}", preload.display()))
        .args([
            "-E",
            "DR_HOOK=1",
            "-E",
            "DR_HOOK_SILENT=1",
            "-E",
            "DR_HOOK_OPT=io",
        ])
        .arg(&exe)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let log = std::fs::read_to_string(d.path().join("trace.log")).unwrap();
    // System calls on a file, by call (strace -y names the file).
    let count = |file: &str, calls: &[&str]| -> (u64, u64) {
        let mut n = 0;
        let mut bytes = 0;
        for l in log.lines() {
            let l = l.split_once(' ').map_or(l, |x| x.1).trim_start();
            if calls.iter().any(|c| l.starts_with(&format!("{c}(")))
                && l.contains(&format!("/{file}>"))
            {
                n += 1;
                bytes += l
                    .rsplit("= ")
                    .next()
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .unwrap_or(0);
            }
        }
        (n, bytes)
    };
    let rep = io_report(d.path(), "drhook.io.1");
    let p = io_file(&rep, "/posix.dat");
    let ours =
        |f: &serde_json::Value, a: &str, b: &str| (f[a].as_u64().unwrap(), f[b].as_u64().unwrap());
    assert_eq!(
        count("posix.dat", &["write", "pwrite64"]),
        ours(p, "writes", "write_bytes"),
        "{log}"
    );
    assert_eq!(
        count("posix.dat", &["read", "pread64"]),
        ours(p, "reads", "read_bytes"),
        "{log}"
    );
    let child = drhook_tests::files_starting_with(d.path(), "drhook.io.1.io.");
    let c = io_report(d.path(), &child[0]);
    assert_eq!(
        count("child.txt", &["write"]),
        ours(io_file(&c, "/child.txt"), "writes", "write_bytes")
    );
    // stdio's own flushes of stdio.txt (a few large writes through the
    // 64 KiB buffer, the last at fclose), inferred from the stream's buffer.
    let st = io_file(&rep, "/stdio.txt");
    assert_eq!(
        count("stdio.txt", &["write"]),
        ours(st, "writes", "write_bytes")
    );
    assert_eq!(
        ours(st, "stdio_flushes", "stdio_flush_bytes"),
        ours(st, "writes", "write_bytes")
    );
    assert_eq!(ours(st, "stdio_writes", "stdio_write_bytes"), (1001, 10004));
}

#[test]
fn io_profile_of_a_rust_drhook_program_fills_its_routines() {
    let d = tempdir();
    let prog = built("drhook-test-prog");
    let r = drhook_run(
        d.path(),
        &["--opt", "io"],
        &prog.display().to_string(),
        &["io"],
        &[],
    );
    ok(&r);
    assert_eq!(r.stdout(), "read 1000\n");
    let prof = std::fs::read_to_string(d.path().join("drhook.prof.1-io")).unwrap();
    let cols = |name: &str| -> Vec<String> {
        let l = prof
            .lines()
            .find(|l| l.ends_with(name))
            .unwrap_or_else(|| panic!("{name}: {prof}"));
        l.split_whitespace().map(String::from).collect()
    };
    // read bytes, written bytes, #reads, #writes.
    assert_eq!(
        cols(" IO:WRITER@1")[5..9],
        ["0", "1000", "0", "10"],
        "{prof}"
    );
    // 300, 300, 300, 100, then 0 at the end of the file.
    assert_eq!(
        cols(" IO:READER@1")[5..9],
        ["1000", "0", "5", "0"],
        "{prof}"
    );
    let rep = io_report(d.path(), "drhook.io.1");
    let f = io_file(&rep, "/io_test.dat");
    assert_eq!(f["opened_by"], "IO:WRITER@1", "{f:#}");
    assert_eq!(
        (f["writes"].as_u64(), f["write_bytes"].as_u64()),
        (Some(10), Some(1000))
    );
    assert_eq!(
        (f["reads"].as_u64(), f["read_bytes"].as_u64()),
        (Some(5), Some(1000))
    );
}

#[test]
fn io_profile_of_tar_and_gzip() {
    if !have_tool("tar") || !have_tool("gzip") {
        return;
    }
    let d = tempdir();
    let src = d.path().join("src");
    std::fs::create_dir(&src).unwrap();
    for i in 0..20 {
        std::fs::write(
            src.join(format!("f{i:02}")),
            vec![b'a' + (i % 26) as u8; 10240],
        )
        .unwrap();
    }
    let r = drhook_run(
        d.path(),
        &["--opt", "io"],
        "tar",
        &["czf", "out.tgz", "src"],
        &[],
    );
    ok(&r);
    let tar = io_report(d.path(), "drhook.io.1");
    assert_eq!(tar["command"], "tar");
    for i in 0..20 {
        let f = io_file(&tar, &format!("/src/f{i:02}"));
        assert_eq!(f["read_bytes"].as_u64(), Some(10240), "{f:#}");
        assert_eq!(f["opens"].as_u64(), Some(1));
    }
    // gzip, started by tar, writes the archive: its bytes are the file's.
    let gz = drhook_tests::files_starting_with(d.path(), "drhook.io.1.gzip.");
    assert_eq!(gz.len(), 1, "{gz:?}");
    let g = io_report(d.path(), &gz[0]);
    assert!(
        g["ancestry"][0].as_str().unwrap().ends_with("-tar"),
        "{g:#}"
    );
    let size = std::fs::metadata(d.path().join("out.tgz")).unwrap().len();
    let out = io_file(&g, "/out.tgz");
    assert_eq!(out["write_bytes"].as_u64(), Some(size), "{out:#}");
}

#[test]
fn io_profile_of_fortran_formatted_and_unformatted_files() {
    if !have_gfortran() {
        return;
    }
    let d = tempdir();
    let exe = d.path().join("f_io");
    tool(
        d.path(),
        &fc(),
        &["-O1", "-o", "f_io", &prog("f_io.f90").display().to_string()],
    );
    let r = drhook_run(
        d.path(),
        &["--opt", "io"],
        &exe.display().to_string(),
        &[],
        &[],
    );
    ok(&r);
    assert_eq!(r.stdout(), "f_io done\n");
    let rep = io_report(d.path(), "drhook.io.1");
    for name in ["formatted.txt", "unformatted.bin"] {
        let f = io_file(&rep, &format!("/{name}"));
        let size = std::fs::metadata(d.path().join(name)).unwrap().len();
        assert_eq!(f["write_bytes"].as_u64(), Some(size), "{name}: {f:#}");
        assert_eq!(f["opens"].as_u64(), Some(1), "{name}: {f:#}");
    }
    // 10 records of 8000 bytes, each between two 4-byte markers.
    assert_eq!(
        std::fs::metadata(d.path().join("unformatted.bin"))
            .unwrap()
            .len(),
        80080
    );
}

#[test]
fn io_profile_with_100000_opens_and_64_writing_threads() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = c_exe(
        d.path(),
        "io_stress",
        &[&attach_prog("io_stress.c")],
        &["-pthread", "-std=gnu11"],
        Link::Shared,
    );
    let w = tempdir();
    let r = drhook_run(
        w.path(),
        &["--opt", "io"],
        &exe.display().to_string(),
        &["opens"],
        &[],
    );
    ok(&r);
    let rep = io_report(w.path(), "drhook.io.1");
    let files = rep["files"].as_array().unwrap();
    let same = io_file(&rep, "/same.dat");
    assert_eq!(same["opens"].as_u64(), Some(100_001));
    assert_eq!(same["closes"].as_u64(), Some(100_001));
    // 5000 distinct files: those beyond the table's room are counted
    // together, none lost.
    let opens: u64 = files
        .iter()
        .filter(|f| {
            let p = f["path"].as_str().unwrap();
            p.contains("/many/f") || p == "<other files>"
        })
        .map(|f| f["opens"].as_u64().unwrap())
        .sum();
    assert_eq!(opens, 5000, "{rep:#}");
    let w = tempdir();
    let r = drhook_run(
        w.path(),
        &["--opt", "io"],
        &exe.display().to_string(),
        &["threads"],
        &[],
    );
    ok(&r);
    let rep = io_report(w.path(), "drhook.io.1");
    for i in 0..64 {
        let f = io_file(&rep, &format!("/t{i:02}.dat"));
        assert_eq!(f["writes"].as_u64(), Some(1000), "{f:#}");
        assert_eq!(f["write_bytes"].as_u64(), Some(10000));
    }
}

/// The operation lines of a `drhook.iotrace.*` file, split at `!`.
fn trace_lines(dir: &Path, name: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let text = std::fs::read_to_string(dir.join(name))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.join(name).display()));
    let (head, ops): (Vec<&str>, Vec<&str>) = text.lines().partition(|l| l.starts_with('#'));
    let ops = ops
        .iter()
        .map(|l| l.split('!').map(String::from).collect::<Vec<_>>())
        .collect();
    (head.into_iter().map(String::from).collect(), ops)
}

#[test]
fn io_trace_of_the_matching_paths_operation_by_operation() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = io_exe(d.path());
    // (--io-trace sets DRHOOK_IO_TRACE and adds io to the options.)
    let r = drhook_run(
        d.path(),
        &["--opt", "prof", "--io-trace", "posix|child"],
        &exe.display().to_string(),
        &[],
        &[],
    );
    ok(&r);
    assert_eq!(r.stdout(), "io done\n");
    let (head, ops) = trace_lines(d.path(), "drhook.iotrace.1");
    assert!(head[0] == "#drhook-iotrace!1", "{head:?}");
    assert!(head.iter().any(|h| h.starts_with("#ancestry!")), "{head:?}");
    // t_us!dur_us!op!fd!bytes!offset!calling-tree!caller
    for o in &ops {
        assert_eq!(o.len(), 8, "{o:?}");
        assert!(
            o[0].parse::<f64>().is_ok() && o[1].parse::<f64>().is_ok(),
            "{o:?}"
        );
        // Only the matching file (not stdio.txt, aio.dat).
        assert!(o[6].starts_with("IO:POSIX@1<main"), "{o:?}");
        assert!(
            o[7].starts_with("io+0x"),
            "the caller is in the program: {o:?}"
        );
    }
    let of = |op: &str| -> Vec<&Vec<String>> { ops.iter().filter(|o| o[2] == op).collect() };
    let opens = of("o");
    assert_eq!(opens.len(), 1, "{ops:?}");
    assert!(opens[0][4].ends_with("/posix.dat"), "{:?}", opens[0]);
    let writes = of("w");
    assert_eq!(writes.len(), 101);
    let bytes =
        |v: &[&Vec<String>]| -> u64 { v.iter().map(|o| o[4].parse::<u64>().unwrap()).sum() };
    assert_eq!(bytes(&writes), 100 * 1000 + 4096);
    // The 100 writes one after the other, then the pwrite at its offset.
    let offsets: Vec<&str> = writes.iter().map(|o| o[5].as_str()).collect();
    assert_eq!(offsets[..3], ["0", "1000", "2000"]);
    assert_eq!(offsets[100], "200000");
    let reads = of("r");
    assert_eq!((reads.len(), bytes(&reads)), (11, 10 * 10000 + 4096));
    assert_eq!(of("c").len(), 1);
    // The open's native traceback starts at the open's caller.
    let tb = head
        .iter()
        .find(|h| h.starts_with("#trcbk_open!"))
        .unwrap_or_else(|| panic!("{head:?}"));
    assert!(tb.contains("/posix.dat!"), "{tb}");
    let frames: Vec<&str> = tb.rsplit('!').next().unwrap().split(':').collect();
    assert!(frames.len() >= 2, "{tb}");
    assert_eq!(frames[0], opens[0][7]);
    // The caller is the call's own line in io.c (addr2line, from binutils).
    if have_tool("addr2line") {
        let line = |caller: &str| {
            let off = u64::from_str_radix(caller.trim_start_matches("io+0x"), 16).unwrap();
            let out = Command::new("addr2line")
                .args(["-i", "-e"])
                .arg(&exe)
                .arg(format!("{:#x}", off - 1))
                .output()
                .unwrap();
            String::from_utf8_lossy(&out.stdout).into_owned()
        };
        let io_c = std::fs::read_to_string(attach_prog("io.c")).unwrap();
        let line_of = |needle: &str| io_c.lines().position(|l| l.contains(needle)).unwrap() + 1;
        let w = line(&writes[0][7]);
        assert!(
            w.contains(&format!("io.c:{}", line_of("write(fd, buf, 1000)"))),
            "{w}"
        );
        let o = line(&opens[0][7]);
        assert!(
            o.contains(&format!("io.c:{}", line_of("open(\"posix.dat\""))),
            "{o}"
        );
    }
    // The forked child: a trace of its own.
    let child = drhook_tests::files_starting_with(d.path(), "drhook.iotrace.1.io.");
    assert_eq!(child.len(), 1, "{child:?}");
    let (_, cops) = trace_lines(d.path(), &child[0]);
    let cw: Vec<_> = cops.iter().filter(|o| o[2] == "w").collect();
    assert_eq!(cw.len(), 5, "{cops:?}");
    assert!(
        cw.iter().all(|o| o[4] == "6" && o[6] == "main@1"),
        "{cops:?}"
    );

    // A pattern that does not compile: said once, nothing traced, the
    // program unchanged.
    let w = tempdir();
    let r = drhook_run(
        w.path(),
        &["--opt", "io"],
        &exe.display().to_string(),
        &[],
        &[("ECIOPROF_LLTRACE_PATHS", "posix(")],
    );
    ok(&r);
    assert_eq!(r.stdout(), "io done\n");
    assert_eq!(
        r.stderr()
            .matches("ECIOPROF_LLTRACE_PATHS=\"posix(\" is not a POSIX extended regular expression")
            .count(),
        1,
        "{}",
        r.stderr()
    );
    assert!(drhook_tests::files_starting_with(w.path(), "drhook.iotrace").is_empty());
}

#[test]
fn io_report_and_trace_names_follow_exec() {
    let d = tempdir();
    let input: String = (1..=1000).map(|i| format!("{i}\n")).collect();
    std::fs::write(d.path().join("in.txt"), &input).unwrap();
    // A shell that writes a file, then becomes `cat` by exec.
    let r = drhook_run(
        d.path(),
        &["--opt", "io", "--io-trace", "in\\.txt|/x$"],
        "sh",
        &["-c", "echo hi > x; exec cat in.txt"],
        &[],
    );
    ok(&r);
    assert_eq!(r.stdout(), input);
    // The program the process became has the plain names and no ancestry;
    // the shell before the exec a child's name.
    let top = io_report(d.path(), "drhook.io.1");
    assert_eq!(top["command"], "cat", "{top:#}");
    assert_eq!(top["ancestry"], serde_json::json!([]));
    assert_eq!(
        io_file(&top, "/in.txt")["read_bytes"].as_u64(),
        Some(input.len() as u64)
    );
    let sh = drhook_tests::files_starting_with(d.path(), "drhook.io.1.sh.");
    assert_eq!(sh.len(), 1, "{sh:?}");
    let sh = io_report(d.path(), &sh[0]);
    assert_eq!(sh["ending"], "exec", "{sh:#}");
    assert_eq!(sh["status"], serde_json::Value::Null, "{sh:#}");
    assert_eq!(io_file(&sh, "/x")["write_bytes"].as_u64(), Some(3));
    let (head, ops) = trace_lines(d.path(), "drhook.iotrace.1");
    assert!(head.contains(&"#program!cat".to_string()), "{head:?}");
    assert!(ops.iter().any(|o| o[2] == "r" && o[4] != "0"), "{ops:?}");
    let sh = drhook_tests::files_starting_with(d.path(), "drhook.iotrace.1.sh.");
    assert_eq!(sh.len(), 1, "{sh:?}");
    let (head, ops) = trace_lines(d.path(), &sh[0]);
    assert!(head.contains(&"#program!sh".to_string()), "{head:?}");
    assert!(ops.iter().any(|o| o[2] == "w" && o[4] == "3"), "{ops:?}");
}

fn io_cases_exe(d: &Path) -> PathBuf {
    c_exe(
        d,
        "io_cases",
        &[&attach_prog("io_cases.c")],
        &["-std=gnu11", "-fopenmp"],
        Link::Shared,
    )
}

/// `io_cases <case>` plain and under `drhook run --opt io` (each in its own
/// directory): the same output and status; the profiled run's directory.
fn io_case(exe: &Path, case: &str, expect: &str) -> tempfile::TempDir {
    let plain = tempdir();
    let r = run_in(plain.path(), &exe.display().to_string(), &[case], &[]);
    ok(&r);
    assert_eq!(r.stdout(), expect, "plain run");
    let w = tempdir();
    let r = drhook_run(
        w.path(),
        &["--opt", "io"],
        &exe.display().to_string(),
        &[case],
        &[("OMP_NUM_THREADS", "4")],
    );
    ok(&r);
    assert_eq!(r.stdout(), expect, "under the preload");
    w
}

#[test]
fn io_profile_passes_an_interrupted_read_through() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = io_cases_exe(d.path());
    // A read of a FIFO interrupted by SIGALRM (no SA_RESTART): the program
    // sees -1 and EINTR, as without the preload.
    let w = io_case(&exe, "eintr", "read -1 EINTR\nwrite 5 read 5 hello\n");
    let rep = io_report(w.path(), "drhook.io.1");
    let f = io_file(&rep, "/fifo");
    let n = |k: &str| f[k].as_u64().unwrap_or_else(|| panic!("{k} in {f:#}"));
    // The interrupted read is an operation of 0 bytes, not a size.
    assert_eq!((n("reads"), n("read_bytes")), (2, 5), "{f:#}");
    assert_eq!((n("writes"), n("write_bytes")), (1, 5));
    assert_eq!((n("min_read"), n("max_read")), (5, 5));
    assert_eq!(
        f["read_hist"],
        serde_json::json!([1, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    );
    // Its wait (until the next 20 ms tick) is I/O time.
    assert!(f["read_time"].as_f64().unwrap() > 0.0, "{f:#}");
}

#[test]
fn io_profile_of_one_file_appended_to_by_five_processes_at_once() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = io_cases_exe(d.path());
    let w = io_case(&exe, "procs", "procs ok size 9600\n");
    // Each process counts its own writes in its own report; together they
    // are the file.
    let rep = io_report(w.path(), "drhook.io.1");
    let mine = io_file(&rep, "/shared.dat");
    assert_eq!(mine["writes"].as_u64(), Some(100), "{mine:#}");
    assert_eq!(mine["write_bytes"].as_u64(), Some(5000));
    let children = drhook_tests::files_starting_with(w.path(), "drhook.io.1.io_cases.");
    assert_eq!(children.len(), 4, "{children:?}");
    let mut bytes: Vec<u64> = children
        .iter()
        .map(|c| {
            let r = io_report(w.path(), c);
            let f = io_file(&r, "/shared.dat");
            assert_eq!(f["writes"].as_u64(), Some(100), "{f:#}");
            assert_eq!(f["opens"].as_u64(), Some(1));
            f["write_bytes"].as_u64().unwrap()
        })
        .collect();
    bytes.sort();
    assert_eq!(bytes, [1000, 1100, 1200, 1300]);
    let size = std::fs::metadata(w.path().join("shared.dat"))
        .unwrap()
        .len();
    assert_eq!(5000 + bytes.iter().sum::<u64>(), size);
}

#[test]
fn io_profile_of_openmp_threads_with_a_file_each() {
    if !have_gcc() {
        return;
    }
    let d = tempdir();
    let exe = io_cases_exe(d.path());
    let w = io_case(&exe, "omp", "omp read 10000\n");
    let rep = io_report(w.path(), "drhook.io.1");
    // Only the program's files (its four, and its stdout, which its
    // printf's buffer went to at exit): Dr.Hook's own reads (a new
    // thread's name from the symbol tables: /proc/self/maps, the library)
    // are not its.
    let paths: Vec<&str> = rep["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(paths.len(), 5, "{paths:?}");
    assert!(paths.contains(&"<stdout>"), "{paths:?}");
    let mut openers = std::collections::BTreeSet::new();
    for t in 0..4u64 {
        let f = io_file(&rep, &format!("/thread{t}.dat"));
        let n = |k: &str| f[k].as_u64().unwrap_or_else(|| panic!("{k} in {f:#}"));
        let b = 1000 * (t + 1);
        assert_eq!(
            (n("stdio_writes"), n("stdio_write_bytes")),
            (100, b),
            "{f:#}"
        );
        assert_eq!(n("read_bytes"), b);
        assert_eq!((n("opens"), n("closes")), (2, 2));
        // Opened by the thread's root region: one thread each; its bytes
        // (written, read back) that root's.
        let opener = f["opened_by"].as_str().unwrap().to_string();
        let root = opener.rsplit_once('@').unwrap().0;
        assert_eq!(
            f["routines"],
            serde_json::json!([{"routine": root, "bytes": 2 * b}]),
            "{f:#}"
        );
        openers.insert(opener);
    }
    assert_eq!(openers.len(), 4, "{openers:?}");
    assert!(openers.contains("main@1"), "{openers:?}");
    // Per routine: each thread's root has its own file's bytes.
    let prof = std::fs::read_to_string(w.path().join("drhook.prof.1-io")).unwrap();
    let mut read: Vec<u64> = prof
        .lines()
        .filter(|l| l.contains('@') && !l.contains("Routine@"))
        .map(|l| l.split_whitespace().nth(5).unwrap().parse().unwrap())
        .collect();
    read.sort();
    assert_eq!(read, [1000, 2000, 3000, 4000], "{prof}");
}

#[test]
fn memprof_allocation_counts_agree_with_heaptrack() {
    if !have_gcc() || !have_tool("heaptrack") || !have_tool("heaptrack_print") {
        return;
    }
    let d = tempdir();
    let exe = mem_exe(d.path());
    // Ours.
    let r = drhook_run(
        d.path(),
        &["--opt", "memprof"],
        &exe.display().to_string(),
        &[],
        &[],
    );
    ok(&r);
    let text = std::fs::read_to_string(d.path().join("drhook.prof.1-mem")).unwrap();
    let m = mem_rows(&text);
    let ours = |routine: &str| -> u64 {
        m.iter()
            .filter(|(k, _)| k.starts_with(&format!("{routine}@")))
            .map(|(_, v)| v.1)
            .sum()
    };
    // heaptrack's, on the same program (Dr.Hook off): calls to allocation
    // functions per function, summed over its call sites.
    let h = tempdir();
    let out = Command::new("heaptrack")
        .arg("-o")
        .arg(h.path().join("ht"))
        .arg(&exe)
        .current_dir(h.path())
        .env_remove("LD_PRELOAD")
        .env_remove("DR_HOOK")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let data = std::fs::read_dir(h.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with("ht"))
        .expect("heaptrack data file");
    let out = Command::new("heaptrack_print")
        .arg("-f")
        .arg(&data)
        .args(["-p", "0", "-T", "0", "-a", "1", "-n", "1000", "-s", "0"])
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&out.stdout);
    let mut theirs: BTreeMap<String, u64> = BTreeMap::new();
    let lines: Vec<&str> = report.lines().collect();
    for w in lines.windows(2) {
        if let Some(n) = w[0].split(" calls to allocation functions").next()
            && w[0].contains(" calls to allocation functions")
            && let Ok(n) = n.trim().parse::<u64>()
        {
            *theirs.entry(w[1].trim().to_string()).or_default() += n;
        }
    }
    for (routine, function) in [
        ("MEM:PLAIN", "mem_plain"),
        ("MEM:CHAIN", "mem_chain"),
        ("MEM:ALIGNED", "mem_aligned"),
        ("MEM:WORKER", "mem_worker"),
    ] {
        assert_eq!(
            Some(&ours(routine)),
            theirs.get(function),
            "{routine} vs heaptrack's {function}:\n{report}\n{text}"
        );
    }
}
