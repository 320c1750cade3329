//! All counter groups of a plan opened for one thread, snapshots of their
//! cumulative values, and accumulators of deltas between snapshots.
//!
//! Everything here is preallocated: reading into a [`Snapshot`] and adding a
//! delta to an [`Accumulator`] do not allocate.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::backend::clock::Clock;
use crate::backend::{CounterGroup, GroupTimes, OpenError};
use crate::counting::plan::{CounterLayout, CountingPlan};

/// Cumulative counter values of one thread at one instant.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    /// Clock time of the read, ns.
    pub t_ns: u64,
    /// Raw values, laid out as [`CounterLayout`].
    pub values: Box<[u64]>,
    /// Enabled/running times per group.
    pub times: Box<[GroupTimes]>,
    /// Whether each group's read succeeded.
    pub valid: Box<[bool]>,
}

impl Snapshot {
    /// A zeroed snapshot for `layout`.
    pub fn new(layout: &CounterLayout) -> Snapshot {
        Snapshot {
            t_ns: 0,
            values: vec![0; layout.n_values].into_boxed_slice(),
            times: vec![GroupTimes::default(); layout.groups.len()].into_boxed_slice(),
            valid: vec![false; layout.groups.len()].into_boxed_slice(),
        }
    }

    /// Reads each of `groups` (one read per group, laid out as `layout`)
    /// into its range of values and its times; a missing or failing group is
    /// marked invalid, and `on_error` is called for each failed read. Does
    /// not stamp the time and never allocates.
    #[inline]
    pub(crate) fn read_groups(
        &mut self,
        groups: &[Option<Box<dyn CounterGroup>>],
        layout: &CounterLayout,
        mut on_error: impl FnMut(),
    ) {
        for (g, (group, gl)) in groups.iter().zip(&layout.groups).enumerate() {
            let r = gl.offset..gl.offset + gl.events.len();
            self.valid[g] = match group {
                Some(group) => match group.read(&mut self.values[r]) {
                    Ok(t) => {
                        self.times[g] = t;
                        true
                    }
                    Err(_) => {
                        on_error();
                        false
                    }
                },
                None => false,
            };
        }
    }

    /// Copies `other` into `self` without allocating.
    #[inline]
    pub fn copy_from(&mut self, other: &Snapshot) {
        self.t_ns = other.t_ns;
        self.values.copy_from_slice(&other.values);
        self.times.copy_from_slice(&other.times);
        self.valid.copy_from_slice(&other.valid);
    }
}

/// Sums of deltas between snapshots (one per section and kind of value).
#[derive(Clone, Debug, PartialEq)]
pub struct Accumulator {
    /// Wall time, ns.
    pub wall_ns: u64,
    /// Raw value sums.
    pub values: Box<[u64]>,
    /// Enabled time sums per group.
    pub enabled_ns: Box<[u64]>,
    /// Running time sums per group.
    pub running_ns: Box<[u64]>,
    /// Intervals in which a group could not be read.
    pub missed: u64,
}

impl Accumulator {
    /// A zeroed accumulator for `layout`.
    pub fn new(layout: &CounterLayout) -> Accumulator {
        Accumulator {
            wall_ns: 0,
            values: vec![0; layout.n_values].into_boxed_slice(),
            enabled_ns: vec![0; layout.groups.len()].into_boxed_slice(),
            running_ns: vec![0; layout.groups.len()].into_boxed_slice(),
            missed: 0,
        }
    }

    /// Adds `to - from`.
    #[inline]
    pub fn add(&mut self, layout: &CounterLayout, from: &Snapshot, to: &Snapshot) {
        self.wall_ns += to.t_ns.saturating_sub(from.t_ns);
        for (g, gl) in layout.groups.iter().enumerate() {
            if !(from.valid[g] && to.valid[g]) {
                self.missed += 1;
                continue;
            }
            self.enabled_ns[g] += to.times[g]
                .enabled_ns
                .saturating_sub(from.times[g].enabled_ns);
            self.running_ns[g] += to.times[g]
                .running_ns
                .saturating_sub(from.times[g].running_ns);
            let r = gl.offset..gl.offset + gl.events.len();
            for ((acc, a), b) in self.values[r.clone()]
                .iter_mut()
                .zip(&from.values[r.clone()])
                .zip(&to.values[r])
            {
                *acc += b.wrapping_sub(*a);
            }
        }
    }
}

/// The groups of a plan, opened on one thread.
pub struct ThreadCounters {
    groups: Vec<Option<Box<dyn CounterGroup>>>,
    layout: Arc<CounterLayout>,
    read_errors: AtomicU64,
    tid: i32,
}

impl std::fmt::Debug for ThreadCounters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThreadCounters")
            .field("tid", &self.tid)
            .field("groups", &self.groups.len())
            .finish()
    }
}

/// Linux thread id of the caller.
pub fn gettid() -> i32 {
    // SAFETY: gettid has no preconditions and cannot fail.
    unsafe { libc::gettid() }
}

impl ThreadCounters {
    /// Opens the plan's groups on the calling thread.
    pub fn open(plan: &CountingPlan) -> (ThreadCounters, Vec<OpenError>) {
        let (groups, errors) = plan.open_groups();
        let tc = ThreadCounters {
            groups,
            layout: plan.layout.clone(),
            read_errors: AtomicU64::new(0),
            tid: gettid(),
        };
        (tc, errors)
    }

    /// Layout of the values.
    pub fn layout(&self) -> &Arc<CounterLayout> {
        &self.layout
    }

    /// Linux thread id of the thread the counters observe.
    pub fn tid(&self) -> i32 {
        self.tid
    }

    /// Number of failed group reads so far.
    pub fn read_errors(&self) -> u64 {
        self.read_errors.load(Ordering::Relaxed)
    }

    /// Reads every group (one read per group) into `snap`, then stamps it
    /// with `clock`. Failed groups are marked invalid; never allocates.
    #[inline]
    pub fn read(&self, snap: &mut Snapshot, clock: &dyn Clock) {
        snap.read_groups(&self.groups, &self.layout, || {
            self.read_errors.fetch_add(1, Ordering::Relaxed);
        });
        snap.t_ns = clock.now_ns();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Scope;
    use crate::backend::fake::FakeBackend;
    use crate::events::cpu::CpuInfo;
    use crate::events::set::EventSet;

    #[test]
    fn accumulates_scaled_deltas() {
        let fake = FakeBackend::new();
        fake.set_rate("instructions", 2.0).set_running_fraction(0.5);
        let set = EventSet::lookup("default", &CpuInfo::parse_cpuinfo("")).unwrap();
        let plan = CountingPlan::unprobed(&[set], Arc::new(fake.clone()), Scope::CallingThread);
        let (tc, errs) = ThreadCounters::open(&plan);
        assert!(errs.is_empty());
        let mut a = Snapshot::new(&plan.layout);
        let mut b = Snapshot::new(&plan.layout);
        fake.advance_ns(1000);
        tc.read(&mut a, &fake);
        fake.advance_ns(500);
        tc.read(&mut b, &fake);
        let mut acc = Accumulator::new(&plan.layout);
        acc.add(&plan.layout, &a, &b);
        assert_eq!(acc.wall_ns, 500);
        // instructions is value index 2 (task-clock, cycles, instructions, ...)
        assert_eq!(acc.values[2], 500); // raw = 2/ns * 500ns * 0.5 running
        assert_eq!((acc.enabled_ns[0], acc.running_ns[0]), (500, 250));
        assert_eq!(fake.reads(), 4);
    }
}
