//! Hardware (or software) counters per routine: `DR_HOOK_OPT=hpmprof`
//! (synonyms `hpm`, `mflops`, `counters`).
//!
//! One counter group per instrumented thread, opened with the `hpm` crate
//! from a plan built once per process (probing and fallback: hardware
//! events, else software events, else getrusage — with one notice naming the
//! reason and the remedy). A routine costs exactly one group read at enter
//! and one at exit; the values are stored per calling-tree node, so
//! exclusive values are derived at report time exactly like self times.
//!
//! Events: `DR_HOOK_PAPI_COUNTERS` (perf event names, `hpm` group names, or
//! the PAPI presets `PAPI_TOT_CYC`, `PAPI_TOT_INS`, `PAPI_BR_INS`,
//! `PAPI_BR_MSP`, `PAPI_REF_CYC`); default `cycles,instructions,branches,branch-misses`.

use std::cell::UnsafeCell;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use hpm::{CountingPlan, EventSpec, GroupTimes, ThreadCounterGroup};

use super::{Agg, Metric, Stamper, Word};

/// Most events per routine.
pub(crate) const MAXC: usize = 8;

/// The `hpmprof` metric. A node's words: the `n` inclusive counts, then the
/// `n` values at the current activation's entry and the group's enabled
/// and running times at entry (scratch).
pub(crate) struct Counters {
    plan: CountingPlan,
    events: Vec<EventSpec>,
    words: Vec<Word>,
}

impl Metric for Counters {
    fn name(&self) -> &'static str {
        "counters"
    }

    fn words(&self) -> &[Word] {
        &self.words
    }

    fn stamped(&self) -> bool {
        true
    }

    fn stamper(&self, _tid: u32) -> Option<Box<dyn Stamper>> {
        ThreadCounterGroup::from_plan(&self.plan)
            .ok()
            .map(|g| Box::new(ThreadCounters::new(g)) as Box<dyn Stamper>)
    }
}

fn words_for(events: &[EventSpec]) -> Vec<Word> {
    let scratch = |name: String| Word {
        name,
        agg: Agg::Scratch,
    };
    let mut w: Vec<Word> = events
        .iter()
        .map(|e| Word {
            name: e.name.clone(),
            agg: Agg::Inclusive,
        })
        .collect();
    w.extend(events.iter().map(|e| scratch(format!("{}@enter", e.name))));
    w.push(scratch("enabled@enter".into()));
    w.push(scratch("running@enter".into()));
    w
}

/// A thread's counter group and its read buffer (owner thread only).
pub(crate) struct ThreadCounters {
    group: ThreadCounterGroup,
    n: usize,
    buf: UnsafeCell<[u64; MAXC]>,
}

// SAFETY: the buffer is only touched by the thread that owns the tree this
// stamper belongs to (stampers are called on the owner thread only).
unsafe impl Sync for ThreadCounters {}

impl ThreadCounters {
    /// Wraps an opened group (at most [`MAXC`] events are used).
    pub(crate) fn new(group: ThreadCounterGroup) -> ThreadCounters {
        let n = group.len().min(MAXC);
        ThreadCounters {
            group,
            n,
            buf: UnsafeCell::new([0; MAXC]),
        }
    }

    /// Reads the group (one `read(2)` or `rdpmc`) into the buffer.
    ///
    /// # Safety
    /// Owner thread only.
    #[inline]
    unsafe fn read(&self) -> Option<(&[u64], GroupTimes)> {
        // SAFETY: the buffer is only used by the owner thread (caller contract).
        let buf = unsafe { &mut *self.buf.get() };
        let full = self.group.len();
        if full > MAXC {
            // Read everything into a larger stack buffer, keep the first MAXC.
            let mut big = [0u64; 64];
            let t = self.group.read(&mut big[..full.min(64)]).ok()?;
            buf.copy_from_slice(&big[..MAXC]);
            return Some((&buf[..self.n], t));
        }
        let t = self.group.read(&mut buf[..full]).ok()?;
        Some((&buf[..self.n], t))
    }
}

impl Stamper for ThreadCounters {
    /// Records the counters at a routine's entry.
    fn enter(&self, _node: u32, row: &[AtomicU64]) {
        let n = self.n;
        // SAFETY: stampers run on the owner thread.
        if let Some((vals, t)) = unsafe { self.read() } {
            for (e, &v) in row[n..2 * n].iter().zip(vals) {
                e.store(v, Ordering::Relaxed);
            }
            row[2 * n].store(t.enabled_ns, Ordering::Relaxed);
            row[2 * n + 1].store(t.running_ns, Ordering::Relaxed);
        }
    }

    /// Adds the counters since the entry to the node's inclusive values.
    fn exit(&self, _node: u32, row: &[AtomicU64], _wall: u64) {
        let n = self.n;
        // SAFETY: stampers run on the owner thread.
        if let Some((vals, t)) = unsafe { self.read() } {
            let before = GroupTimes {
                enabled_ns: row[2 * n].load(Ordering::Relaxed),
                running_ns: row[2 * n + 1].load(Ordering::Relaxed),
            };
            for (k, &v) in vals.iter().enumerate() {
                let raw = v.saturating_sub(row[n + k].load(Ordering::Relaxed));
                let d = if t.enabled_ns == t.running_ns && before.enabled_ns == before.running_ns {
                    raw
                } else {
                    ThreadCounterGroup::scale_delta(raw, before, t)
                };
                row[k].store(
                    row[k].load(Ordering::Relaxed).saturating_add(d),
                    Ordering::Relaxed,
                );
            }
        }
    }
}

static METRIC: OnceLock<Option<Counters>> = OnceLock::new();

/// Nanoseconds per group read, once measured (`f64` bits; 0: not yet).
static READ_COST: AtomicU64 = AtomicU64::new(0);

/// What one read of this process's counter group costs, in nanoseconds,
/// measured on the calling thread at the first call (best of 5 batches of
/// 64 reads of a group opened for it; about 0.3 ms with getrusage or
/// software events, microseconds with hardware counters) and kept; 0
/// without `hpmprof`. Every instrumented call pays two reads outside the
/// region's own time (before the entry stamp, after the exit stamp), which
/// the engine's time compensation then removes from the callers
/// ([`crate::tree::overhead`]).
pub(crate) fn read_cost_ns() -> f64 {
    let known = READ_COST.load(Ordering::Relaxed);
    if known != 0 {
        return f64::from_bits(known);
    }
    let Some(m) = metric() else { return 0.0 };
    let Ok(g) = ThreadCounterGroup::from_plan(&m.plan) else {
        return 0.0;
    };
    let tc = ThreadCounters::new(g);
    let mut each = [0.0f64; 5];
    for slot in &mut each {
        let t0 = crate::sys::clock::monotonic_ns();
        for _ in 0..64 {
            // SAFETY: `tc` was opened on this thread and is used only here.
            std::hint::black_box(unsafe { tc.read() });
        }
        let dt = crate::sys::clock::monotonic_ns().saturating_sub(t0);
        *slot = dt as f64 / 64.0;
    }
    each.sort_by(f64::total_cmp);
    let best = each[2].max(f64::MIN_POSITIVE);
    READ_COST.store(best.to_bits(), Ordering::Relaxed);
    best
}

/// Builds the metric once (probing the events, with fallback); returns the
/// notices to print.
pub(crate) fn init(spec: Option<&str>) -> Vec<String> {
    let mut notices = Vec::new();
    METRIC.get_or_init(|| {
        let (plan, n) = ThreadCounterGroup::plan(spec);
        notices = n;
        // Open once on this thread to learn the events actually counted.
        match ThreadCounterGroup::from_plan(&plan) {
            Ok(g) => {
                if g.len() > MAXC {
                    notices.push(format!(
                        "per-routine counters keep the first {MAXC} of {} events: {}",
                        g.len(),
                        g.event_names()[..MAXC].join(",")
                    ));
                }
                let events: Vec<EventSpec> = g.events().iter().take(MAXC).cloned().collect();
                Some(Counters {
                    plan,
                    words: words_for(&events),
                    events,
                })
            }
            Err(e) => {
                notices.push(format!("per-routine counters are off: {e:?}"));
                None
            }
        }
    });
    notices
}

/// The metric, when [`init`] could open counters.
pub(crate) fn metric() -> Option<&'static Counters> {
    METRIC.get().and_then(|m| m.as_ref())
}

/// The events counted per routine, in value order (empty when off).
pub(crate) fn events() -> &'static [EventSpec] {
    metric().map_or(&[], |m| &m.events)
}

/// MIPS and MFlop/s of `excl` counter deltas over `seconds` (NaN where the
/// events needed are not counted).
pub(crate) fn mips_mflops(events: &[EventSpec], excl: &[u64], seconds: f64) -> (f64, f64) {
    if events.is_empty() || seconds <= 0.0 {
        return (f64::NAN, f64::NAN);
    }
    let counters: Vec<hpm::derived_metric::MetricCounter<'_>> = events
        .iter()
        .zip(excl)
        .map(|(e, &v)| hpm::derived_metric::MetricCounter {
            name: &e.name,
            role: e.role,
            value: v as f64,
        })
        .collect();
    let m = hpm::compute_metrics(
        &hpm::derived_metric::MetricInput {
            counters,
            wall_s: seconds,
            user_s: None,
        },
        &hpm::MetricContext::default(),
    );
    let get = |name: &str| {
        m.iter()
            .find(|x| x.name == name)
            .map_or(f64::NAN, |x| x.value)
    };
    (get("MIPS"), get("Flop rate (flops / WCT)"))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use hpm::{EventKind, EventRole, FakeBackend};

    pub(crate) fn fake_group(fake: &FakeBackend, names: &[&str]) -> ThreadCounterGroup {
        let specs: Vec<EventSpec> = names
            .iter()
            .map(|n| EventSpec {
                name: n.to_string(),
                kind: EventKind::Software(0),
                role: if n.starts_with("fp") {
                    EventRole::Flops(1.0)
                } else {
                    EventRole::Plain
                },
                description: String::new(),
            })
            .collect();
        ThreadCounterGroup::open_with(fake, &specs).expect("fake open")
    }

    fn row(n: usize) -> Vec<AtomicU64> {
        (0..2 * n + 2).map(|_| AtomicU64::new(0)).collect()
    }

    #[test]
    fn stamps_accumulate_deltas() {
        let fake = FakeBackend::new();
        fake.set_rate("instructions", 2.0);
        let c = ThreadCounters::new(fake_group(&fake, &["instructions"]));
        let slot = row(1);
        fake.set_now_ns(100);
        c.enter(1, &slot);
        fake.set_now_ns(600);
        c.exit(1, &slot, 0);
        fake.set_now_ns(1000);
        c.enter(1, &slot);
        fake.set_now_ns(1100);
        c.exit(1, &slot, 0);
        assert_eq!(slot[0].load(Ordering::Relaxed), 2 * (500 + 100));
    }

    #[test]
    fn multiplexed_deltas_are_scaled() {
        let fake = FakeBackend::new();
        fake.set_running_fraction(0.5);
        let c = ThreadCounters::new(fake_group(&fake, &["instructions"]));
        let slot = row(1);
        fake.set_now_ns(0);
        c.enter(1, &slot);
        fake.set_now_ns(1000);
        c.exit(1, &slot, 0);
        let v = slot[0].load(Ordering::Relaxed);
        assert!((990..=1010).contains(&v), "{v}");
    }

    #[test]
    fn mips_and_mflops() {
        let specs = vec![
            EventSpec {
                name: "instructions".into(),
                kind: EventKind::Software(0),
                role: EventRole::Plain,
                description: String::new(),
            },
            EventSpec {
                name: "fp_ops".into(),
                kind: EventKind::Software(0),
                role: EventRole::Flops(1.0),
                description: String::new(),
            },
        ];
        let (mips, mflops) = mips_mflops(&specs, &[3_000_000, 500_000], 0.5);
        assert!((mips - 6.0).abs() < 1e-9, "{mips}");
        assert!((mflops - 1.0).abs() < 1e-9, "{mflops}");
        let soft = vec![EventSpec {
            name: "task-clock".into(),
            kind: EventKind::Software(0),
            role: EventRole::Plain,
            description: String::new(),
        }];
        let (m, f) = mips_mflops(&soft, &[5], 1.0);
        assert!(m.is_nan() && f.is_nan());
    }
}
