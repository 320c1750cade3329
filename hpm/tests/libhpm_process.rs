//! The process-wide libhpm API on real counters, end to end: the test
//! re-runs this test binary as a child (so that the child's environment
//! configures libhpm) and checks the files the child writes.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use hpm::{CsvCodec, Report, SectionReport};

/// This thread's CPU time, exact (getrusage is updated at scheduler ticks
/// only and can run ahead of the wall clock over short intervals).
fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0);
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Burns `d` of this thread's CPU time (not wall time: robust when other
/// tests keep the CPUs busy).
fn spin(d: Duration) {
    let start = thread_cpu();
    let mut x = 1u64;
    while thread_cpu() - start < d {
        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
    }
}

static HOOK_TOTAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn hook(total: u64, _: &hpm::HpmError) {
    HOOK_TOTAL.store(total, std::sync::atomic::Ordering::SeqCst);
}

/// The instrumented program (run only as the child of the test below).
#[test]
#[ignore = "child process of libhpm_writes_reports_on_real_counters"]
fn instrumented_child() {
    use hpm::libhpm::*;
    assert!(set_error_hook(hook));
    assert!(!set_error_hook(hook), "only once");
    init(0, "ignored: HPM_OUTPUT_NAME is set");
    start(1, "outer");
    spin(Duration::from_millis(30));
    start(2, "inner");
    spin(Duration::from_millis(20));
    stop(2);
    spin(Duration::from_millis(10));
    stop(1);
    std::thread::spawn(|| {
        tstart(5, "worker");
        spin(Duration::from_millis(10));
        tstop(5);
    })
    .join()
    .unwrap();
    tstart(5, "same id on the main thread"); // error: wrong thread
    stop(99); // error: never started
    start(3, "left running");
    terminate(0);
    assert_eq!(error_count(), 2);
    start(1, "after terminate"); // error: not initialized
    assert_eq!(error_count(), 3);
    assert_eq!(
        HOOK_TOTAL.load(std::sync::atomic::Ordering::SeqCst),
        3,
        "hook saw every error"
    );
}

fn section(r: &Report, id: u32) -> &SectionReport {
    r.sections
        .iter()
        .find(|s| s.id == id)
        .unwrap_or_else(|| panic!("section {id}"))
}

#[test]
fn libhpm_writes_reports_on_real_counters() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("libhpm-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let base = dir.join("prog");
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    for (k, _) in std::env::vars() {
        if k.starts_with("HPM_") {
            cmd.env_remove(k);
        }
    }
    let out = cmd
        .args([
            "--exact",
            "instrumented_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("HPM_OUTPUT_NAME", &base)
        .env("HPM_EXCLUSIVE_VALUES", "yes")
        .env("HPM_ASC_OUTPUT", "1")
        .env("HPM_VIZ_OUTPUT", "1")
        .env("HPM_CSV_OUTPUT", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "child failed:\n{err}\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        err.contains("hpm ERROR - Instance ID on wrong thread (id 5)"),
        "{err}"
    );
    assert!(
        err.contains("hpm ERROR - Instance ID 99 stopped but not started"),
        "{err}"
    );
    assert!(
        err.contains("hpm ERROR - hpmInit has not been called"),
        "{err}"
    );

    let ascii = std::fs::read_to_string(base.with_extension("hpm")).unwrap();
    assert!(ascii.starts_with("libhpm (hpm-rs"));
    assert!(ascii.contains("Instrumented section: 2 - Label: inner"));
    assert!(ascii.contains(" Error count: 2\n"), "{ascii}");
    let viz = std::fs::read_to_string(base.with_extension("viz")).unwrap();
    assert!(viz.contains("<Section id=\"1\" label=\"outer\""));
    let csv = std::fs::read_to_string(base.with_extension("csv")).unwrap();
    let r = CsvCodec::read(&csv).unwrap().remove(0);

    let (outer, inner, left, worker) = (
        section(&r, 1),
        section(&r, 2),
        section(&r, 3),
        section(&r, 5),
    );
    assert_eq!(inner.parent, Some(1));
    assert_eq!(outer.parent, None);
    assert_eq!(worker.parent, None);
    assert_ne!(worker.tid, outer.tid, "section 5 ran on its own thread");
    assert_eq!(left.calls, 1, "terminate stopped the running section");
    assert!(
        outer.inclusive.wall_s >= 0.060,
        "{}",
        outer.inclusive.wall_s
    );
    assert!(inner.inclusive.wall_s >= 0.020);

    // Same thread, properly nested: exclusive(outer) + inclusive(inner) is
    // exactly inclusive(outer), for the time and for every counter.
    let ex = outer.exclusive.as_ref().expect("HPM_EXCLUSIVE_VALUES");
    assert!((ex.wall_s + inner.inclusive.wall_s - outer.inclusive.wall_s).abs() < 1e-9);
    let mut compared = 0;
    for c in outer.inclusive.sets.iter().flat_map(|s| s.counters()) {
        let (Some(i_out), Some(e_out), Some(i_in)) =
            (c.value, ex.find(&c.name), inner.inclusive.find(&c.name))
        else {
            continue;
        };
        assert!(
            (e_out + i_in - i_out).abs() <= 1e-6 * i_out.max(1.0),
            "{}: {e_out} + {i_in} != {i_out}",
            c.name
        );
        compared += 1;
    }
    assert!(compared > 0, "no counter to compare");

    // The outer section burned 60 ms of CPU time (30 + 20 + 10), the inner 20 ms.
    let cpu = outer.inclusive.user_s.expect("CPU time");
    assert!(cpu >= 0.055, "CPU {cpu} s");
    let wall = outer.inclusive.wall_s;
    assert!(cpu <= wall * 1.05 + 0.002, "CPU {cpu} s > wall {wall} s");
    let inner_cpu = inner.inclusive.user_s.unwrap();
    assert!(
        (0.018..0.040).contains(&inner_cpu),
        "inner CPU {inner_cpu} s"
    );
    println!(
        "backend {} with sets {:?}",
        r.backend,
        outer
            .inclusive
            .sets
            .iter()
            .map(|s| &s.name)
            .collect::<Vec<_>>()
    );
}
