//! Tests that need hardware counters. Where the kernel denies them (VMs
//! without a PMU, perf_event_paranoid) they print "skipped: <reason>" on
//! stderr and pass — unless `HPM_REQUIRE_HW_COUNTERS=1`, which turns every
//! such skip into a failure.

use std::hint::black_box;
use std::io::Write;
use std::process::Command;

use hpm::{CpuInfo, EventSpec, MetricContext, ThreadCounterGroup};

fn skip(test: &str, reason: &str) {
    if std::env::var(hpm::env_config::vars::HPM_REQUIRE_HW_COUNTERS).as_deref() == Ok("1") {
        panic!(
            "{test}: hardware counters are required (HPM_REQUIRE_HW_COUNTERS=1) but unavailable: {reason}"
        );
    }
    // Not captured by the test harness: the skip is always visible.
    let _ = writeln!(std::io::stderr(), "skipped: {test}: {reason}");
}

fn open(names: &[&str]) -> Result<ThreadCounterGroup, String> {
    let cpu = CpuInfo::detect();
    let events: Vec<EventSpec> = names
        .iter()
        .map(|n| EventSpec::parse(n, &cpu))
        .collect::<Result<_, _>>()?;
    ThreadCounterGroup::open(&events).map_err(|e| e.to_string())
}

#[test]
fn instructions_and_cycles_of_a_known_loop() {
    let g = match open(&["cycles", "instructions", "branches"]) {
        Ok(g) => g,
        Err(e) => return skip("instructions_and_cycles_of_a_known_loop", &e),
    };
    let mut a = [0u64; 3];
    let mut b = [0u64; 3];
    let ta = g.read(&mut a).unwrap();
    let mut x = 0u64;
    for i in 0..10_000_000u64 {
        x = black_box(x.wrapping_add(i));
    }
    black_box(x);
    let tb = g.read(&mut b).unwrap();
    let d: Vec<u64> = (0..3)
        .map(|i| ThreadCounterGroup::scale_delta(b[i] - a[i], ta, tb))
        .collect();
    assert!(
        d[1] >= 10_000_000,
        "at least one instruction per iteration: {d:?}"
    );
    assert!(d[2] >= 10_000_000, "one loop branch per iteration: {d:?}");
    let m = g.derived(&d, 1.0, &MetricContext::default());
    let ipc = m
        .iter()
        .find(|m| m.name == "Instructions per cycle")
        .unwrap()
        .value;
    assert!(ipc > 0.05 && ipc < 10.0, "IPC {ipc}");
    // successive reads are monotonic, whether rdpmc or read(2) serves them
    let mut prev = [0u64; 3];
    for _ in 0..1000 {
        let mut cur = [0u64; 3];
        g.read(&mut cur).unwrap();
        assert!(cur.iter().zip(&prev).all(|(c, p)| c >= p));
        prev = cur;
    }
    let _ = writeln!(
        std::io::stderr(),
        "hardware group read via rdpmc: {}",
        g.uses_rdpmc()
    );
}

#[test]
fn floating_point_events_count_flops() {
    let cpu = CpuInfo::detect();
    let fp = EventSpec::vendor_fp_events(&cpu);
    if fp.is_empty() {
        return skip(
            "floating_point_events_count_flops",
            "no FP events are known for this CPU",
        );
    }
    let g = match ThreadCounterGroup::open(&fp) {
        Ok(g) => g,
        Err(e) => return skip("floating_point_events_count_flops", &e.to_string()),
    };
    let n = g.len();
    let mut a = vec![0u64; n];
    let mut b = vec![0u64; n];
    let ta = g.read(&mut a).unwrap();
    let mut x = 1.0f64;
    for _ in 0..1_000_000 {
        x = black_box(x) * 1.000_000_1 + 0.5; // 2 flops
    }
    black_box(x);
    let tb = g.read(&mut b).unwrap();
    let d: Vec<u64> = (0..n)
        .map(|i| ThreadCounterGroup::scale_delta(b[i] - a[i], ta, tb))
        .collect();
    let m = g.derived(&d, 1.0, &MetricContext::default());
    let mflop = m
        .iter()
        .find(|m| m.name == "Total floating point operations")
        .unwrap()
        .value;
    assert!(
        (1.9..20.0).contains(&mflop),
        "2 Mflop expected, counted {mflop} ({d:?})"
    );
}

#[test]
fn hpmcount_counts_hardware_events_of_the_program() {
    if let Err(e) = open(&["instructions"]) {
        return skip("hpmcount_counts_hardware_events_of_the_program", &e);
    }
    let o = Command::new(env!("CARGO_BIN_EXE_hpmcount"))
        .args([
            "-g",
            "default",
            "sh",
            "-c",
            "i=0; while [ $i -lt 10000 ]; do i=$((i+1)); done",
        ])
        .env_remove("HPM_EVENT_SET")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success());
    assert!(!err.contains("cannot count instructions"), "{err}");
    let ins: f64 = out
        .lines()
        .find(|l| l.trim_start().starts_with("instructions "))
        .and_then(|l| l.split(':').nth(1)?.split_whitespace().next()?.parse().ok())
        .expect("instructions line");
    assert!(ins > 1.0e6, "{out}");
}
