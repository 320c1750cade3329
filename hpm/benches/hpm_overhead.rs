//! Overhead of the hot paths: libhpm section start/stop pairs and counter
//! group reads, on this machine's real counters (whatever the fallback chain
//! leaves: hardware events where available, software events otherwise) and on
//! a null backend (the bookkeeping alone, without system calls).
//!
//! Run: `CARGO_TARGET_DIR=/work/target-hpm cargo bench -p hpm --bench hpm_overhead`

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use hpm::{
    CounterBackend, CounterGroup, CountingPlan, CpuInfo, EventSelection, EventSet, EventSpec,
    GroupTimes, MonotonicClock, OpenError, PerfBackend, RusageBackend, Scope, Session,
    ThreadCounterGroup,
};

const SAMPLES: usize = 15;

/// Counters that cost nothing to read: isolates the section bookkeeping
/// (clock reads, slot lock, snapshot copies, accumulation).
struct NullBackend;
struct NullGroup(usize);

impl CounterBackend for NullBackend {
    fn name(&self) -> &'static str {
        "null"
    }
    fn open_group(
        &self,
        events: &[EventSpec],
        _: Scope,
    ) -> Result<Box<dyn CounterGroup>, OpenError> {
        Ok(Box::new(NullGroup(events.len())))
    }
    fn knows(&self, _: &EventSpec) -> bool {
        true
    }
}

impl CounterGroup for NullGroup {
    fn len(&self) -> usize {
        self.0
    }
    fn read(&self, values: &mut [u64]) -> std::io::Result<GroupTimes> {
        for v in values.iter_mut().take(self.0) {
            *v = black_box(*v + 1);
        }
        Ok(GroupTimes {
            enabled_ns: 1,
            running_ns: 1,
        })
    }
    fn enable(&mut self) -> std::io::Result<()> {
        Ok(())
    }
    fn disable(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Median ns per call of `f`, each sample running `iters` calls.
fn measure(iters: u64, mut f: impl FnMut()) -> f64 {
    for _ in 0..iters / 10 + 1 {
        f();
    }
    let mut samples: Vec<f64> = (0..SAMPLES)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..iters {
                f();
            }
            t.elapsed().as_nanos() as f64 / iters as f64
        })
        .collect();
    samples.sort_by(f64::total_cmp);
    samples[SAMPLES / 2]
}

struct Row {
    what: String,
    setup: String,
    ns: f64,
}

fn plan_description(plan: &CountingPlan) -> String {
    let events: usize = plan.layout.groups.iter().map(|g| g.events.len()).sum();
    format!(
        "{} backend, set {}, {} events in {} group(s)",
        plan.backend.name(),
        plan.layout.set_names.join("+"),
        events,
        plan.layout.groups.len()
    )
}

fn main() {
    let cpu = CpuInfo::detect();
    let mut rows = Vec::new();

    // Real counters, as hpmInit would plan them (default set, fallback).
    let plan = CountingPlan::build(
        &EventSelection::default_for(&cpu),
        Arc::new(PerfBackend::new()),
        Scope::CallingThread,
        &cpu,
    );
    if let Some(n) = &plan.notice {
        eprintln!("notice: {n}\n");
    }
    let desc = plan_description(&plan);

    // libhpm API (process-wide functions), one section.
    hpm::libhpm::init(0, "hpm_overhead bench");
    // never terminated: no output files are written by the benchmark
    let ns = measure(20_000, || {
        hpm::libhpm::start(1, "bench");
        hpm::libhpm::stop(1);
    });
    rows.push(Row {
        what: "libhpm hpmStart+hpmStop pair".into(),
        setup: format!("{desc} (as hpmInit planned it)"),
        ns,
    });
    let ns = measure(10_000, || {
        hpm::libhpm::start(2, "parent");
        hpm::libhpm::start(3, "child");
        hpm::libhpm::stop(3);
        hpm::libhpm::stop(2);
    });
    rows.push(Row {
        what: "libhpm nested pair (parent+child), per pair".into(),
        setup: desc.clone(),
        ns: ns / 2.0,
    });
    assert_eq!(
        hpm::libhpm::error_count(),
        0,
        "benchmark calls must not error"
    );

    // Session engine on the same plan with exclusive values on.
    let session = Session::with_backend(plan.clone(), Arc::new(MonotonicClock), 100, true);
    let ns = measure(20_000, || {
        let _ = black_box(session.tstart(1, "bench"));
        let _ = black_box(session.tstop(1));
    });
    rows.push(Row {
        what: "Session tstart+tstop pair (exclusive on)".into(),
        setup: desc.clone(),
        ns,
    });

    // Group reads for a profiler.
    match ThreadCounterGroup::from_plan(&plan) {
        Ok(g) => {
            let mut buf = vec![0u64; g.len()];
            let ns = measure(50_000, || {
                let _ = black_box(g.read(black_box(&mut buf)));
            });
            rows.push(Row {
                what: "ThreadCounterGroup::read (first group of the plan)".into(),
                setup: format!(
                    "{} events [{}], rdpmc: {}",
                    g.len(),
                    g.event_names().join(","),
                    g.uses_rdpmc()
                ),
                ns,
            });
        }
        Err(e) => eprintln!("cannot open the plan's first group: {e}"),
    }
    let tc = [EventSpec::parse("task-clock", &cpu).expect("task-clock")];
    if let Ok(g) = ThreadCounterGroup::open(&tc) {
        let mut buf = [0u64; 1];
        let ns = measure(50_000, || {
            let _ = black_box(g.read(black_box(&mut buf)));
        });
        rows.push(Row {
            what: "ThreadCounterGroup::read".into(),
            setup: "perf_event, 1 event [task-clock]".into(),
            ns,
        });
    }
    let hw: Vec<EventSpec> = ["cycles", "instructions"]
        .iter()
        .filter_map(|n| EventSpec::parse(n, &cpu).ok())
        .collect();
    match ThreadCounterGroup::open(&hw) {
        Ok(g) => {
            let mut buf = [0u64; 2];
            let ns = measure(50_000, || {
                let _ = black_box(g.read(black_box(&mut buf)));
            });
            rows.push(Row {
                what: "ThreadCounterGroup::read".into(),
                setup: format!(
                    "perf_event, 2 events [cycles,instructions], rdpmc: {}",
                    g.uses_rdpmc()
                ),
                ns,
            });
        }
        Err(e) => eprintln!("skipped: hardware group read ({e})"),
    }
    if let Ok(g) = ThreadCounterGroup::open_with(&RusageBackend, &EventSpec::rusage_events()) {
        let mut buf = [0u64; 6];
        let ns = measure(50_000, || {
            let _ = black_box(g.read(black_box(&mut buf)));
        });
        rows.push(Row {
            what: "ThreadCounterGroup::read".into(),
            setup: "getrusage fallback, 6 fields".into(),
            ns,
        });
    }

    // Bookkeeping alone: a backend whose reads cost nothing.
    let set = EventSet::lookup("default", &cpu).expect("default set");
    let nplan = CountingPlan::unprobed(&[set], Arc::new(NullBackend), Scope::CallingThread);
    let fdesc = plan_description(&nplan);
    let nsession = Session::with_backend(nplan, Arc::new(MonotonicClock), 100, true);
    let ns = measure(50_000, || {
        let _ = black_box(nsession.tstart(1, "bench"));
        let _ = black_box(nsession.tstop(1));
    });
    rows.push(Row {
        what: "Session tstart+tstop pair, bookkeeping only".into(),
        setup: fdesc,
        ns,
    });

    println!();
    println!(
        "hpm overhead on {} ({} CPUs), median of {SAMPLES} samples",
        cpu.model_name,
        num_cpus()
    );
    println!();
    println!("| operation | setup | ns/op |");
    println!("|---|---|---:|");
    for r in rows {
        println!("| {} | {} | {:.0} |", r.what, r.setup, r.ns);
    }
}

fn num_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}
