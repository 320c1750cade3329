//! Cost per process (issue 22, item 17): what a process's end costs under
//! `drhook run`. The measured targets are in BENCHMARKS.md; the tests
//! check what makes them: no disk flush unless asked.

use super::common;
use super::harness::run;

/// The system calls `fsync`/`fdatasync` a run makes (strace), or None
/// without strace.
fn syncs(env: &[(&str, &str)]) -> Option<usize> {
    if !common::have_tool("strace") {
        return None;
    }
    let d = common::tempdir();
    let log = d.path().join("strace.log");
    let log_s = log.display().to_string();
    let drhook = common::drhook_exe().display().to_string();
    let o = run(
        d.path(),
        None,
        &[
            "strace",
            "-f",
            "-e",
            "trace=fsync,fdatasync,syncfs",
            "-o",
            &log_s,
            &drhook,
            "run",
            "--no-out-dir",
            "--opt",
            "prof,memprof,io",
            "--",
            "/bin/true",
        ],
        env,
    );
    assert_eq!(o.how(), "exit 0", "{}", o.stderr_all);
    assert!(o.has_profile(), "{:?}", o.drhook_files);
    let text = std::fs::read_to_string(&log).unwrap();
    Some(
        text.lines()
            .filter(|l| l.contains("fsync(") || l.contains("fdatasync(") || l.contains("syncfs("))
            .count(),
    )
}

/// Item 17: the profile and its side files are renamed into place without
/// a flush to disk (each `fsync` cost a process's end ~6 ms here);
/// `DRHOOK_FSYNC=1` asks for it.
#[test]
fn a_process_end_flushes_nothing_to_disk_unless_asked() {
    common::ensure_attach_built();
    let Some(n) = syncs(&[]) else {
        eprintln!("strace not found: skipped");
        assert!(
            std::env::var_os("DRHOOK_REQUIRE_FORTRAN").is_none(),
            "strace is required"
        );
        return;
    };
    assert_eq!(n, 0, "no fsync by default");
    let asked = syncs(&[("DRHOOK_FSYNC", "1")]).unwrap();
    assert!(asked >= 2, "DRHOOK_FSYNC=1: {asked} fsync");
}
