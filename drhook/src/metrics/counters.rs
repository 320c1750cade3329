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

use crate::sys::segmented::Zeroable;

/// Most events per routine.
pub(crate) const MAXC: usize = 8;

/// Counter values of one node.
#[repr(C)]
pub(crate) struct CounterSlot {
    pub enter: [AtomicU64; MAXC],
    pub incl: [AtomicU64; MAXC],
    pub enabled: AtomicU64,
    pub running: AtomicU64,
}
// SAFETY: zero atomics are valid.
unsafe impl Zeroable for CounterSlot {}

/// A thread's counter group and its read buffer (owner thread only).
pub(crate) struct ThreadCounters {
    group: ThreadCounterGroup,
    n: usize,
    buf: UnsafeCell<[u64; MAXC]>,
}

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
    pub(crate) unsafe fn read(&self) -> Option<(&[u64], GroupTimes)> {
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

/// Records the counters at a routine's entry.
///
/// # Safety
/// Owner thread only.
#[inline]
pub(crate) unsafe fn stamp_enter(c: &ThreadCounters, slot: &CounterSlot) {
    // SAFETY: caller contract.
    if let Some((vals, t)) = unsafe { c.read() } {
        for (e, &v) in slot.enter.iter().zip(vals) {
            e.store(v, Ordering::Relaxed);
        }
        slot.enabled.store(t.enabled_ns, Ordering::Relaxed);
        slot.running.store(t.running_ns, Ordering::Relaxed);
    }
}

/// Adds the counters since the entry to the node's inclusive values.
///
/// # Safety
/// Owner thread only.
#[inline]
pub(crate) unsafe fn stamp_exit(c: &ThreadCounters, slot: &CounterSlot) {
    // SAFETY: caller contract.
    if let Some((vals, t)) = unsafe { c.read() } {
        let before = GroupTimes {
            enabled_ns: slot.enabled.load(Ordering::Relaxed),
            running_ns: slot.running.load(Ordering::Relaxed),
        };
        for (k, &v) in vals.iter().enumerate() {
            let raw = v.saturating_sub(slot.enter[k].load(Ordering::Relaxed));
            let d = if t.enabled_ns == t.running_ns && before.enabled_ns == before.running_ns {
                raw
            } else {
                ThreadCounterGroup::scale_delta(raw, before, t)
            };
            slot.incl[k].store(
                slot.incl[k].load(Ordering::Relaxed).saturating_add(d),
                Ordering::Relaxed,
            );
        }
    }
}

/// The process-wide plan: events and how to open them.
struct Plan {
    plan: CountingPlan,
    events: Vec<EventSpec>,
}

static PLAN: OnceLock<Option<Plan>> = OnceLock::new();

/// Builds the plan once; returns the notices to print.
pub(crate) fn init(spec: Option<&str>) -> Vec<String> {
    let mut notices = Vec::new();
    PLAN.get_or_init(|| {
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
                let events = g.events().iter().take(MAXC).cloned().collect();
                Some(Plan { plan, events })
            }
            Err(e) => {
                notices.push(format!("per-routine counters are off: {e:?}"));
                None
            }
        }
    });
    notices
}

/// Opens the counter group of the calling thread (None if counters are off
/// or the kernel refuses).
pub(crate) fn open_for_thread() -> Option<Box<ThreadCounters>> {
    let p = PLAN.get()?.as_ref()?;
    ThreadCounterGroup::from_plan(&p.plan)
        .ok()
        .map(|g| Box::new(ThreadCounters::new(g)))
}

/// The events counted per routine, in value order (empty when off).
pub(crate) fn events() -> &'static [EventSpec] {
    PLAN.get()
        .and_then(|p| p.as_ref())
        .map_or(&[], |p| &p.events)
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

    #[test]
    fn stamps_accumulate_deltas() {
        let fake = FakeBackend::new();
        fake.set_rate("instructions", 2.0);
        let c = ThreadCounters::new(fake_group(&fake, &["instructions"]));
        // SAFETY: all-zero atomics are valid (Zeroable).
        let slot: CounterSlot = unsafe { std::mem::zeroed() };
        // SAFETY: single-threaded test.
        unsafe {
            fake.set_now_ns(100);
            stamp_enter(&c, &slot);
            fake.set_now_ns(600);
            stamp_exit(&c, &slot);
            fake.set_now_ns(1000);
            stamp_enter(&c, &slot);
            fake.set_now_ns(1100);
            stamp_exit(&c, &slot);
        }
        assert_eq!(slot.incl[0].load(Ordering::Relaxed), 2 * (500 + 100));
    }

    #[test]
    fn multiplexed_deltas_are_scaled() {
        let fake = FakeBackend::new();
        fake.set_running_fraction(0.5);
        let c = ThreadCounters::new(fake_group(&fake, &["instructions"]));
        // SAFETY: all-zero atomics are valid (Zeroable).
        let slot: CounterSlot = unsafe { std::mem::zeroed() };
        // SAFETY: single-threaded test.
        unsafe {
            fake.set_now_ns(0);
            stamp_enter(&c, &slot);
            fake.set_now_ns(1000);
            stamp_exit(&c, &slot);
        }
        let v = slot.incl[0].load(Ordering::Relaxed);
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
