//! Per-routine counters for a profiler (the drhook engine): one counter group
//! on the calling thread, read with at most one `read(2)` (or `rdpmc`) into a
//! caller-provided slice, without allocating.
//!
//! Typical use: build a [`CountingPlan`] once (probing and fallback, one
//! notice), then on every thread call [`ThreadCounterGroup::from_plan`]; at
//! routine entry and exit call [`ThreadCounterGroup::read`] into preallocated
//! buffers, keep the deltas, and at report time turn accumulated deltas into
//! derived metrics with [`ThreadCounterGroup::derived`].

use std::io;
use std::sync::Arc;

use crate::backend::perf::PerfBackend;
use crate::backend::{
    CounterBackend, CounterGroup, GroupTimes, OpenError, OpenErrorKind, Scope, scale,
};
use crate::counting::plan::CountingPlan;
use crate::events::cpu::CpuInfo;
use crate::events::set::EventSelection;
use crate::events::spec::{EventSpec, names};
use crate::metrics::{DerivedMetric, MetricContext, MetricCounter, MetricInput, compute_metrics};

/// Default events of per-routine counters: one hardware-only group.
pub const DEFAULT_ROUTINE_EVENTS: &str = "cycles,instructions,branches,branch-misses";

/// One counter group on the thread that opened it.
pub struct ThreadCounterGroup {
    group: Box<dyn CounterGroup>,
    events: Vec<EventSpec>,
    names: Vec<String>,
    backend: &'static str,
}

impl std::fmt::Debug for ThreadCounterGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThreadCounterGroup")
            .field("events", &self.names)
            .field("backend", &self.backend)
            .finish()
    }
}

impl ThreadCounterGroup {
    /// Opens exactly `events` as one perf group on the calling thread.
    pub fn open(events: &[EventSpec]) -> Result<ThreadCounterGroup, OpenError> {
        ThreadCounterGroup::open_with(&PerfBackend::new(), events)
    }

    /// Opens exactly `events` with `backend` (e.g. a fake one in tests).
    pub fn open_with(
        backend: &dyn CounterBackend,
        events: &[EventSpec],
    ) -> Result<ThreadCounterGroup, OpenError> {
        let group = backend.open_group(events, Scope::CallingThread)?;
        Ok(ThreadCounterGroup {
            group,
            events: events.to_vec(),
            names: events.iter().map(|e| e.name.clone()).collect(),
            backend: backend.name(),
        })
    }

    /// Opens the first group of a probed plan (whatever the fallback chain
    /// left: hardware events, software events or getrusage fields).
    pub fn from_plan(plan: &CountingPlan) -> Result<ThreadCounterGroup, OpenError> {
        let Some(first) = plan.layout.groups.first() else {
            return Err(OpenError {
                kind: OpenErrorKind::Other,
                event: String::new(),
                message: "empty plan".into(),
            });
        };
        ThreadCounterGroup::open_with(plan.backend.as_ref(), &first.events)
    }

    /// The plan for per-routine counters. `spec` is parsed like
    /// `HPM_EVENT_SET`, except that event lists are taken as given (no
    /// `task-clock` is added, so hardware-only groups qualify for `rdpmc`);
    /// the default is [`DEFAULT_ROUTINE_EVENTS`]. Only one perf group is read
    /// per routine: further groups are dropped with a notice. Unusable
    /// events fall back as described in [`CountingPlan::build`] (software
    /// events, then getrusage). Returns the plan and the notices to print once.
    pub fn plan(spec: Option<&str>) -> (CountingPlan, Vec<String>) {
        let cpu = CpuInfo::detect();
        let (mut selection, mut notices) =
            EventSelection::parse_exact(spec.unwrap_or(DEFAULT_ROUTINE_EVENTS), &cpu);
        if selection.sets.iter().map(|s| s.groups.len()).sum::<usize>() > 1 {
            let dropped: Vec<String> = selection
                .sets
                .iter()
                .flat_map(|s| &s.groups)
                .skip(1)
                .flatten()
                .map(|e| e.name.clone())
                .collect();
            notices.push(format!(
                "per-routine counters read one group; not counted: {}",
                dropped.join(", ")
            ));
            selection.sets.truncate(1);
            selection.sets[0].groups.truncate(1);
        }
        let plan = CountingPlan::build(
            &selection,
            Arc::new(PerfBackend::new()),
            Scope::CallingThread,
            &cpu,
        );
        notices.extend(plan.notice.iter().cloned());
        (plan, notices)
    }

    /// Number of values [`ThreadCounterGroup::read`] writes.
    pub fn len(&self) -> usize {
        self.group.len()
    }

    /// True if the group has no events.
    pub fn is_empty(&self) -> bool {
        self.group.is_empty()
    }

    /// Event names, in value order.
    pub fn event_names(&self) -> &[String] {
        &self.names
    }

    /// The events, in value order.
    pub fn events(&self) -> &[EventSpec] {
        &self.events
    }

    /// Backend name (`perf_event`, `getrusage`, `fake`).
    pub fn backend(&self) -> &'static str {
        self.backend
    }

    /// Whether reads use `rdpmc` (no system call).
    pub fn uses_rdpmc(&self) -> bool {
        self.group.uses_rdpmc()
    }

    /// Reads the cumulative raw values into `out[..self.len()]` with one
    /// `read(2)` (or `rdpmc`); no allocation, no lock. Scale deltas with
    /// [`ThreadCounterGroup::scale_delta`] when the group is multiplexed.
    #[inline]
    pub fn read(&self, out: &mut [u64]) -> io::Result<GroupTimes> {
        self.group.read(out)
    }

    /// A raw delta scaled by the delta of enabled/running time (0 if the
    /// group did not run at all in between).
    #[inline]
    pub fn scale_delta(delta: u64, before: GroupTimes, after: GroupTimes) -> u64 {
        let t = GroupTimes {
            enabled_ns: after.enabled_ns.saturating_sub(before.enabled_ns),
            running_ns: after.running_ns.saturating_sub(before.running_ns),
        };
        scale(delta, t).map_or(0, |v| v.round() as u64)
    }

    /// Derived metrics (MIPS, IPC, MFlop/s, ...) of `deltas` (in value
    /// order) over `wall_seconds`; user time is the `task-clock` delta if
    /// the group has one.
    pub fn derived(
        &self,
        deltas: &[u64],
        wall_seconds: f64,
        ctx: &MetricContext,
    ) -> Vec<DerivedMetric> {
        let counters: Vec<MetricCounter<'_>> = self
            .events
            .iter()
            .zip(deltas)
            .map(|(e, &d)| MetricCounter {
                name: &e.name,
                role: e.role,
                value: d as f64,
            })
            .collect();
        let user_s = counters
            .iter()
            .find(|c| c.name == names::TASK_CLOCK || c.name == names::RU_UTIME)
            .map(|c| c.value * 1e-9);
        compute_metrics(
            &MetricInput {
                counters,
                wall_s: wall_seconds,
                user_s,
            },
            ctx,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::fake::FakeBackend;

    #[test]
    fn reads_and_derives_with_fake_backend() {
        let cpu = CpuInfo::parse_cpuinfo("");
        let fake = FakeBackend::new();
        fake.set_rate("instructions", 2.0)
            .set_rate("cycles", 1.0)
            .set_rate("task-clock", 1.0);
        let events: Vec<EventSpec> = ["task-clock", "cycles", "instructions"]
            .iter()
            .map(|n| EventSpec::parse(n, &cpu).unwrap())
            .collect();
        let g = ThreadCounterGroup::open_with(&fake, &events).unwrap();
        assert_eq!(g.event_names(), ["task-clock", "cycles", "instructions"]);
        let mut a = [0u64; 3];
        let mut b = [0u64; 3];
        let ta = g.read(&mut a).unwrap();
        fake.advance_ns(1_000_000);
        let tb = g.read(&mut b).unwrap();
        let deltas: Vec<u64> = a
            .iter()
            .zip(&b)
            .map(|(x, y)| ThreadCounterGroup::scale_delta(y - x, ta, tb))
            .collect();
        assert_eq!(deltas, [1_000_000, 1_000_000, 2_000_000]);
        let m = g.derived(&deltas, 0.001, &MetricContext::default());
        let get = |n: &str| m.iter().find(|d| d.name == n).unwrap().value;
        assert_eq!(get("MIPS"), 2000.0);
        assert_eq!(get("Instructions per cycle"), 2.0);
        assert_eq!(get("Utilization rate"), 100.0);
    }

    #[test]
    fn plan_on_this_machine_gives_one_group() {
        let (plan, notices) = ThreadCounterGroup::plan(None);
        assert_eq!(plan.layout.groups.len(), 1);
        let g = ThreadCounterGroup::from_plan(&plan).unwrap();
        if plan.has_hardware() {
            assert_eq!(
                g.event_names(),
                ["cycles", "instructions", "branches", "branch-misses"]
            );
            assert!(notices.is_empty(), "{notices:?}");
        } else {
            // no PMU here: the software set, with the one notice
            assert_eq!(g.event_names()[0], "task-clock");
            assert_eq!(notices.len(), 1, "{notices:?}");
        }
        let mut v = vec![0u64; g.len()];
        assert!(g.read(&mut v).is_ok());
        // a list spanning two groups is cut to the first, with a notice
        let (plan, notices) = ThreadCounterGroup::plan(Some("sw,default"));
        assert_eq!(plan.layout.groups.len(), 1);
        assert!(
            notices[0].starts_with("per-routine counters read one group; not counted:"),
            "{notices:?}"
        );
    }

    #[test]
    fn scaling_of_multiplexed_deltas() {
        let t = |e, r| GroupTimes {
            enabled_ns: e,
            running_ns: r,
        };
        assert_eq!(
            ThreadCounterGroup::scale_delta(50, t(100, 100), t(200, 150)),
            100
        );
        assert_eq!(
            ThreadCounterGroup::scale_delta(0, t(100, 100), t(200, 100)),
            0
        );
    }
}
