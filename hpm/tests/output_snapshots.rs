//! Snapshot tests of the three output formats, on a deterministic report
//! produced by a libhpm session on the fake backend (fake clock, fixed event
//! rates), and a round trip of the CSV format.

use std::sync::Arc;

use hpm::report::{LocalDateTime, Report, Tool};
use hpm::{
    AsciiWriter, CountingPlan, CpuInfo, CpuVendor, CsvCodec, EventSelection, FakeBackend,
    HPM_NO_PARENT, MetricContext, RenderOptions, Rusage, Scope, Session, VizWriter,
};

fn intel() -> CpuInfo {
    let mut c = CpuInfo::parse_cpuinfo("");
    c.vendor = CpuVendor::Intel;
    c.family = 6;
    c.model = 106; // Ice Lake SP
    c
}

/// Sections 1 (outer), 2 (inner, child of 1), 3 (repeated, no parent);
/// event sets default + fp, the fp set multiplexed at 50%.
fn report() -> Report {
    let cpu = intel();
    let fake = FakeBackend::new();
    for (e, r) in [
        ("task-clock", 0.9),
        ("cycles", 2.5),
        ("instructions", 4.0),
        ("branches", 0.5),
        ("branch-misses", 0.01),
        ("L1-dcache-loads", 1.2),
        ("L1-dcache-load-misses", 0.06),
        ("cache-references", 0.02),
        ("cache-misses", 0.005),
        ("fp_arith_inst_retired.scalar", 0.1),
        ("fp_arith_inst_retired.128b_packed_double", 0.2),
        ("fp_arith_inst_retired.4_flops", 0.3),
        ("fp_arith_inst_retired.8_flops", 0.05),
    ] {
        fake.set_rate(e, r);
    }
    let (selection, warnings) = EventSelection::parse("default,fp", &cpu);
    assert!(warnings.is_empty());
    let plan = CountingPlan::unprobed(
        &selection.sets,
        Arc::new(fake.clone()),
        Scope::CallingThread,
    );
    let session = Session::with_backend(plan, fake.clock(), 10, true);
    fake.advance_ns(1_000_000);
    session.start(1, "outer call").unwrap();
    fake.advance_ns(2_000_000);
    session.start(2, "computing, \"meaning\" of life").unwrap();
    fake.advance_ns(6_000_000);
    session.stop(2).unwrap();
    fake.advance_ns(2_000_000);
    session.stop(1).unwrap();
    for _ in 0..3 {
        session.startx(3, HPM_NO_PARENT, "loop body").unwrap();
        fake.advance_ns(1_000_000);
        session.stop(3).unwrap();
    }
    fake.advance_ns(500_000);
    let mut result = session.terminate().unwrap();
    for s in &mut result.sections {
        s.tid = 4242; // the real thread id is not reproducible
        // the fp set counts half of the time in this report
        for m in std::iter::once(&mut s.inclusive).chain(s.exclusive.as_mut()) {
            for g in &mut m.sets[1].groups {
                g.running_ns /= 2;
                for c in &mut g.counters {
                    c.raw /= 2;
                }
            }
        }
    }
    Report {
        tool: Tool::Libhpm,
        program: "swim".into(),
        host: "node1".into(),
        pid: 4242,
        rank: Some(3),
        task_id: Some(0),
        started: LocalDateTime {
            year: 2026,
            month: 3,
            day: 7,
            hour: 9,
            minute: 5,
            second: 1,
        },
        wall_s: result.wall_s,
        rusage: Some(Rusage {
            user_time_s: 0.0125,
            system_time_s: 0.002,
            max_rss_kb: 5120,
            minor_faults: 321,
            major_faults: 1,
            voluntary_switches: 4,
            involuntary_switches: 2,
            ..Rusage::default()
        }),
        backend: "fake".into(),
        user_space_only: true,
        notices: vec!["this is a fake backend".into()],
        sections: result.sections,
        exit: None,
        error_count: 0,
        aggregate: None,
    }
}

fn options(print_formula: bool) -> RenderOptions {
    let (cfg, _) = hpm::EnvConfig::from_lookup(&|k| match k {
        "HPM_L2_LATENCY" => Some("12".into()),
        "HPM_MEM_LATENCY" => Some("400".into()),
        "HPM_DIV_WEIGHT" => Some("5".into()),
        _ => None,
    });
    RenderOptions {
        print_formula,
        metrics: MetricContext::from_config(&cfg, Some(2000.0)),
    }
}

#[test]
fn ascii_report() {
    insta::assert_snapshot!(
        "libhpm_ascii",
        AsciiWriter::new(options(true)).render(&report())
    );
}

#[test]
fn xml_report() {
    insta::assert_snapshot!(
        "libhpm_viz",
        VizWriter::new(options(false)).render(&report())
    );
}

#[test]
fn csv_report() {
    insta::assert_snapshot!(
        "libhpm_csv",
        CsvCodec::new(options(false)).write(&[report()])
    );
}

#[test]
fn csv_round_trip() {
    let r = report();
    let text = CsvCodec::new(options(false)).write(std::slice::from_ref(&r));
    let back = CsvCodec::read(&text).expect("read back");
    assert_eq!(back, vec![r]);
}

#[test]
fn hpmcount_style_report() {
    let mut r = report();
    r.tool = Tool::Hpmcount;
    r.program = "./a.out -n 3".into();
    r.exit = Some(hpm::ExitInfo::Signal(11));
    r.sections.truncate(1);
    r.sections[0].exclusive = None;
    let text = AsciiWriter::new(options(false)).render(&r);
    assert!(text.starts_with("hpmcount (hpm-rs"));
    assert!(text.contains(" Command: ./a.out -n 3\n"));
    assert!(text.contains(" Exit status: killed by signal 11 (status 139)\n"));
    assert!(text.contains(" Execution time (wall clock time): "));
    assert!(!text.contains("Instrumented section"));
    assert!(!text.contains("Exclusive"));
}
