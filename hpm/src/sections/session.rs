//! The libhpm engine (seed §3): instrumented sections with inclusive and
//! exclusive values, per-thread counters, overhead accounting.
//!
//! # Design
//!
//! * Every thread that starts a section opens the plan's counter groups for
//!   itself once; a start or stop reads them (one `read(2)` per group) into a
//!   preallocated per-thread scratch snapshot.
//! * Section `id` lives in slot `id - 1` of a fixed array sized by
//!   `HPM_NUM_INST_PTS`. A slot is owned by the first thread that starts it;
//!   use on another thread is the error "Instance ID on wrong thread". Each
//!   slot has its own mutex, which in a correct program is only ever taken by
//!   its owner (uncontended) and by `terminate`; no lock is held while
//!   another is taken, and there is no global lock on start/stop.
//! * Steady state allocates nothing: a slot's buffers are allocated at its
//!   first start, the thread's section stack is preallocated.
//! * Exclusive values (§3.6.3) are the parent's set of time intervals minus
//!   the union of its children's intervals. They are computed online: a
//!   section is "exclusive-active" while it runs and none of its children
//!   runs; at every transition the parent's own thread counters are read (the
//!   child's snapshot when both run on the same thread), and the counter
//!   deltas over exclusive-active periods are summed. This is the same set
//!   arithmetic as [`crate::IntervalSet`] (tested against it) without storing
//!   intervals. A child interval is attributed to the parent given at that
//!   start; overlapping children, children that outlive the parent and
//!   children still running when the parent restarts are all handled.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::backend::clock::Clock;
use crate::backend::{OpenError, thread_serial};
use crate::counting::plan::{CounterLayout, CountingPlan};
use crate::counting::thread::{Accumulator, Snapshot, ThreadCounters};
use crate::report::{Measurement, SectionReport};
use crate::sections::error::HpmError;

/// Parent id for `hpmStartx`: find the parent automatically (seed §3.6.2).
pub const HPM_AUTO_PARENT: i32 = 0;
/// Parent id for `hpmStartx`: automatic parent, and compute exclusive values
/// for this section.
pub const HPM_ONLY_EXCLUSIVE: i32 = -1;
/// Parent id for `hpmStartx`: no parent.
pub const HPM_NO_PARENT: i32 = -2;

/// Initial capacity of a thread's stack of running sections.
const STACK_CAPACITY: usize = 64;

struct SectionState {
    label: String,
    owner: u64,
    counters: Arc<ThreadCounters>,
    /// Parent used at the last start (for the report).
    parent: Option<u32>,
    /// Parent of the running interval.
    current_parent: Option<u32>,
    exclusive: bool,
    active: bool,
    calls: u64,
    start: Snapshot,
    incl: Accumulator,
    active_children: u32,
    excl_open: bool,
    excl_since: Snapshot,
    excl: Accumulator,
}

struct Slot {
    state: Mutex<Option<Box<SectionState>>>,
    overhead_ns: AtomicU64,
}

struct ThreadState {
    session: u64,
    serial: u64,
    counters: Arc<ThreadCounters>,
    scratch: Snapshot,
    other: Snapshot,
    stack: Vec<u32>,
}

thread_local! {
    static THREAD: RefCell<Option<ThreadState>> = const { RefCell::new(None) };
}

static NEXT_SESSION: AtomicU64 = AtomicU64::new(1);

/// One libhpm measurement, from `hpmInit` to `hpmTerminate`.
///
/// All methods take `&self`, never panic and return errors instead of
/// stopping the program; the global functions in [`crate::libhpm`] count
/// and print them.
pub struct Session {
    id: u64,
    plan: CountingPlan,
    clock: Arc<dyn Clock>,
    slots: Box<[Slot]>,
    exclusive_all: bool,
    started_ns: u64,
    terminated: AtomicBool,
    notices: Mutex<Vec<String>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A session's locks held across a `fork` ([`Session::lock_for_fork`]).
pub struct SessionForkLock<'a> {
    _slots: Vec<MutexGuard<'a, Option<Box<SectionState>>>>,
    _notices: MutexGuard<'a, Vec<String>>,
}

/// Result of [`Session::terminate`].
#[derive(Clone, Debug, PartialEq)]
pub struct SessionResult {
    /// Sections ordered by id.
    pub sections: Vec<SectionReport>,
    /// Wall time from session start to terminate, s.
    pub wall_s: f64,
    /// Notices collected while running (counter open/read failures).
    pub notices: Vec<String>,
}

impl Session {
    /// A session counting `plan` with `clock`; section ids are
    /// `1..=num_inst_pts`; `exclusive_all` is `HPM_EXCLUSIVE_VALUES`.
    pub fn with_backend(
        plan: CountingPlan,
        clock: Arc<dyn Clock>,
        num_inst_pts: u32,
        exclusive_all: bool,
    ) -> Session {
        let slots = (0..num_inst_pts.max(1))
            .map(|_| Slot {
                state: Mutex::new(None),
                overhead_ns: AtomicU64::new(0),
            })
            .collect();
        let started_ns = clock.now_ns();
        Session {
            id: NEXT_SESSION.fetch_add(1, Ordering::Relaxed),
            plan,
            clock,
            slots,
            exclusive_all,
            started_ns,
            terminated: AtomicBool::new(false),
            notices: Mutex::new(Vec::new()),
        }
    }

    /// Every lock of the session (its sections', then its notices'), for
    /// the forking thread to hold across a `fork` so that a child never
    /// inherits one held; none is held while another is taken, so the
    /// order is free.
    pub fn lock_for_fork(&self) -> SessionForkLock<'_> {
        SessionForkLock {
            _slots: self.slots.iter().map(|s| lock(&s.state)).collect(),
            _notices: lock(&self.notices),
        }
    }

    /// The counting plan.
    pub fn plan(&self) -> &CountingPlan {
        &self.plan
    }

    /// Largest valid section id.
    pub fn num_inst_pts(&self) -> u32 {
        self.slots.len() as u32
    }

    fn layout(&self) -> &CounterLayout {
        &self.plan.layout
    }

    fn check_id(&self, id: i32) -> Result<usize, HpmError> {
        if id <= 0 || id as u32 > self.num_inst_pts() {
            return Err(HpmError::IdOutOfRange {
                id,
                max: self.num_inst_pts(),
            });
        }
        Ok(id as usize - 1)
    }

    fn with_thread<R>(
        &self,
        f: impl FnOnce(&mut ThreadState) -> Result<R, HpmError>,
    ) -> Result<R, HpmError> {
        let r = THREAD.try_with(|cell| {
            let Ok(mut guard) = cell.try_borrow_mut() else {
                return Err(HpmError::Internal(
                    "re-entrant libhpm call on this thread".into(),
                ));
            };
            if guard.as_ref().is_none_or(|t| t.session != self.id) {
                let (counters, errors) = ThreadCounters::open(&self.plan);
                self.note_open_errors(&errors);
                *guard = Some(ThreadState {
                    session: self.id,
                    serial: thread_serial(),
                    counters: Arc::new(counters),
                    scratch: Snapshot::new(self.layout()),
                    other: Snapshot::new(self.layout()),
                    stack: Vec::with_capacity(STACK_CAPACITY),
                });
            }
            match guard.as_mut() {
                Some(ts) => f(ts),
                None => Err(HpmError::Internal("thread state missing".into())),
            }
        });
        r.unwrap_or_else(|_| Err(HpmError::Internal("libhpm call during thread exit".into())))
    }

    fn note_open_errors(&self, errors: &[OpenError]) {
        if errors.is_empty() {
            return;
        }
        let list: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        lock(&self.notices).push(format!(
            "thread {}: could not open counters ({}); its sections show them as not counted",
            crate::counting::thread::gettid(),
            list.join("; ")
        ));
    }

    fn new_state(&self, label: &str, ts: &ThreadState) -> Box<SectionState> {
        let layout = self.layout();
        Box::new(SectionState {
            label: label.to_string(),
            owner: ts.serial,
            counters: ts.counters.clone(),
            parent: None,
            current_parent: None,
            exclusive: false,
            active: false,
            calls: 0,
            start: Snapshot::new(layout),
            incl: Accumulator::new(layout),
            active_children: 0,
            excl_open: false,
            excl_since: Snapshot::new(layout),
            excl: Accumulator::new(layout),
        })
    }

    /// Opens the calling thread's counters now, so that its first start
    /// does not pay for `perf_event_open` (`hpmInit` does this for its thread;
    /// other threads open theirs at their first start).
    pub fn attach_thread(&self) -> Result<(), HpmError> {
        self.with_thread(|_| Ok(()))
    }

    /// `hpmStart`: on Linux identical to [`Session::tstart`] (seed §3.5).
    pub fn start(&self, id: i32, label: &str) -> Result<(), HpmError> {
        self.tstartx(id, HPM_AUTO_PARENT, label)
    }

    /// `hpmStartx`: on Linux identical to [`Session::tstartx`] (seed §3.5).
    pub fn startx(&self, id: i32, parent: i32, label: &str) -> Result<(), HpmError> {
        self.tstartx(id, parent, label)
    }

    /// `hpmStop`: on Linux identical to [`Session::tstop`].
    pub fn stop(&self, id: i32) -> Result<(), HpmError> {
        self.tstop(id)
    }

    /// `hpmTstart`: starts section `id` on the calling thread, parent found
    /// automatically.
    pub fn tstart(&self, id: i32, label: &str) -> Result<(), HpmError> {
        self.tstartx(id, HPM_AUTO_PARENT, label)
    }

    /// `hpmTstartx`: starts section `id` with parent `parent` — a section id,
    /// [`HPM_AUTO_PARENT`], [`HPM_ONLY_EXCLUSIVE`] or [`HPM_NO_PARENT`].
    pub fn tstartx(&self, id: i32, parent: i32, label: &str) -> Result<(), HpmError> {
        let t0 = self.clock.now_ns();
        if self.terminated.load(Ordering::Acquire) {
            return Err(HpmError::Terminated);
        }
        let idx = self.check_id(id)?;
        let uid = id as u32;
        // An explicit parent must exist (have been started) and not be the section itself.
        if parent > 0 {
            let ok = parent != id
                && self
                    .check_id(parent)
                    .is_ok_and(|p| lock(&self.slots[p].state).is_some());
            if !ok {
                return Err(HpmError::IllegalParent { id: uid, parent });
            }
        } else if ![HPM_AUTO_PARENT, HPM_ONLY_EXCLUSIVE, HPM_NO_PARENT].contains(&parent) {
            return Err(HpmError::IllegalParent { id: uid, parent });
        }
        self.with_thread(|ts| {
            let parent_id = match parent {
                HPM_AUTO_PARENT | HPM_ONLY_EXCLUSIVE => ts.stack.last().copied(),
                HPM_NO_PARENT => None,
                p => Some(p as u32),
            };
            ts.counters.read(&mut ts.scratch, self.clock.as_ref());
            {
                let mut guard = lock(&self.slots[idx].state);
                let st = match guard.as_mut() {
                    Some(st) => {
                        if st.owner != ts.serial {
                            return Err(HpmError::WrongThread { id: uid });
                        }
                        if st.active {
                            return Err(HpmError::AlreadyStarted { id: uid });
                        }
                        st
                    }
                    None => guard.insert(self.new_state(label, ts)),
                };
                st.active = true;
                st.parent = parent_id;
                st.current_parent = parent_id;
                st.exclusive |= parent == HPM_ONLY_EXCLUSIVE;
                st.start.copy_from(&ts.scratch);
                st.excl_open = st.active_children == 0;
                if st.excl_open {
                    st.excl_since.copy_from(&ts.scratch);
                }
            }
            if let Some(p) = parent_id {
                self.child_transition(p, ts, true);
            }
            ts.stack.push(uid);
            Ok(())
        })?;
        let t1 = self.clock.now_ns();
        self.slots[idx]
            .overhead_ns
            .fetch_add(t1.saturating_sub(t0), Ordering::Relaxed);
        Ok(())
    }

    /// `hpmTstop`: stops section `id` on the calling thread.
    pub fn tstop(&self, id: i32) -> Result<(), HpmError> {
        let t0 = self.clock.now_ns();
        if self.terminated.load(Ordering::Acquire) {
            return Err(HpmError::Terminated);
        }
        let idx = self.check_id(id)?;
        let uid = id as u32;
        self.with_thread(|ts| {
            ts.counters.read(&mut ts.scratch, self.clock.as_ref());
            let parent = {
                let mut guard = lock(&self.slots[idx].state);
                let Some(st) = guard.as_mut() else {
                    return Err(HpmError::NotStarted { id: uid });
                };
                if st.owner != ts.serial {
                    return Err(HpmError::WrongThread { id: uid });
                }
                if !st.active {
                    return Err(HpmError::NotStarted { id: uid });
                }
                let layout = &self.plan.layout;
                st.incl.add(layout, &st.start, &ts.scratch);
                if st.excl_open {
                    st.excl.add(layout, &st.excl_since, &ts.scratch);
                    st.excl_open = false;
                }
                st.active = false;
                st.calls += 1;
                st.current_parent.take()
            };
            if let Some(p) = parent {
                self.child_transition(p, ts, false);
            }
            if let Some(pos) = ts.stack.iter().rposition(|&s| s == uid) {
                ts.stack.remove(pos);
            }
            Ok(())
        })?;
        let t1 = self.clock.now_ns();
        self.slots[idx]
            .overhead_ns
            .fetch_add(t1.saturating_sub(t0), Ordering::Relaxed);
        Ok(())
    }

    /// A child of `parent` started (`started`) or stopped; updates the
    /// parent's exclusive-active state with a snapshot of the parent's thread.
    fn child_transition(&self, parent: u32, ts: &mut ThreadState, started: bool) {
        let Some(slot) = self.slots.get(parent as usize - 1) else {
            return;
        };
        let mut guard = lock(&slot.state);
        let Some(p) = guard.as_mut() else { return };
        let was_open = p.active && p.active_children == 0;
        if started {
            p.active_children += 1;
        } else {
            p.active_children = p.active_children.saturating_sub(1);
        }
        let now_open = p.active && p.active_children == 0;
        if was_open == now_open {
            return;
        }
        let snap: &Snapshot = if p.owner == ts.serial {
            &ts.scratch
        } else {
            p.counters.read(&mut ts.other, self.clock.as_ref());
            &ts.other
        };
        let layout = &self.plan.layout;
        if now_open {
            p.excl_since.copy_from(snap);
            p.excl_open = true;
        } else if p.excl_open {
            p.excl.add(layout, &p.excl_since, snap);
            p.excl_open = false;
        }
    }

    /// `hpmTerminate`: stops every running section (reading the owning
    /// thread's counters from here) and returns the results. Later calls
    /// on this session return [`HpmError::Terminated`].
    pub fn terminate(&self) -> Result<SessionResult, HpmError> {
        if self.terminated.swap(true, Ordering::AcqRel) {
            return Err(HpmError::Terminated);
        }
        let layout = self.layout();
        let mut end = Snapshot::new(layout);
        let mut sections = Vec::new();
        let mut read_errors = 0;
        for (i, slot) in self.slots.iter().enumerate() {
            let mut guard = lock(&slot.state);
            let Some(st) = guard.as_mut() else { continue };
            if st.active {
                st.counters.read(&mut end, self.clock.as_ref());
                st.incl.add(layout, &st.start, &end);
                if st.excl_open {
                    st.excl.add(layout, &st.excl_since, &end);
                    st.excl_open = false;
                }
                st.active = false;
                st.calls += 1;
            }
            read_errors += st.incl.missed;
            sections.push(SectionReport {
                id: i as u32 + 1,
                label: st.label.clone(),
                parent: st.parent,
                tid: st.counters.tid(),
                calls: st.calls,
                inclusive: Measurement::from_accumulator(layout, &st.incl),
                exclusive: (st.exclusive || self.exclusive_all)
                    .then(|| Measurement::from_accumulator(layout, &st.excl)),
                overhead_s: slot.overhead_ns.load(Ordering::Relaxed) as f64 * 1e-9,
            });
        }
        let mut notices = std::mem::take(&mut *lock(&self.notices));
        if read_errors > 0 {
            notices.push(format!(
                "{read_errors} section intervals had counter groups that could not be read; those counts are missing"
            ));
        }
        Ok(SessionResult {
            sections,
            wall_s: self.clock.now_ns().saturating_sub(self.started_ns) as f64 * 1e-9,
            notices,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::Scope;
    use crate::backend::fake::FakeBackend;
    use crate::events::cpu::CpuInfo;
    use crate::events::set::EventSet;
    use crate::sections::intervals::IntervalSet;

    /// A session on the fake backend counting the sw set; `instructions`
    /// (in a user set) counts 3 per ns, everything else 1 per ns.
    fn session(exclusive_all: bool) -> (Session, FakeBackend) {
        let fake = FakeBackend::new();
        fake.set_rate("instructions", 3.0)
            .set_rate("task-clock", 0.5);
        let cpu = CpuInfo::parse_cpuinfo("");
        let set = EventSet::from_events(
            "user",
            vec![
                crate::events::spec::EventSpec::parse("task-clock", &cpu).unwrap(),
                crate::events::spec::EventSpec::parse("instructions", &cpu).unwrap(),
            ],
        );
        let plan = CountingPlan::unprobed(&[set], Arc::new(fake.clone()), Scope::CallingThread);
        (
            Session::with_backend(plan, fake.clock(), 100, exclusive_all),
            fake,
        )
    }

    fn sec(r: &SessionResult, id: u32) -> &SectionReport {
        r.sections.iter().find(|s| s.id == id).unwrap()
    }

    fn instr(m: &Measurement) -> f64 {
        m.find("instructions").unwrap()
    }

    #[test]
    fn nested_sections_inclusive_and_exclusive() {
        let (s, f) = session(true);
        f.advance_ns(1000);
        s.start(1, "outer").unwrap();
        f.advance_ns(100);
        s.start(2, "inner").unwrap();
        f.advance_ns(300);
        s.stop(2).unwrap();
        f.advance_ns(50);
        s.stop(1).unwrap();
        let r = s.terminate().unwrap();
        let (o, i) = (sec(&r, 1), sec(&r, 2));
        assert_eq!(o.label, "outer");
        assert_eq!(i.parent, Some(1));
        assert_eq!(o.parent, None);
        assert!((o.inclusive.wall_s - 450e-9).abs() < 1e-15);
        assert!((i.inclusive.wall_s - 300e-9).abs() < 1e-15);
        assert_eq!(instr(&o.inclusive), 1350.0);
        let ex = o.exclusive.as_ref().unwrap();
        assert!((ex.wall_s - 150e-9).abs() < 1e-15);
        assert_eq!(instr(ex), 450.0);
        // the inner section has no children: exclusive == inclusive
        assert_eq!(
            i.exclusive.as_ref().unwrap().find("instructions"),
            Some(900.0)
        );
        // user time comes from task-clock (0.5 per ns)
        assert!((o.inclusive.user_s.unwrap() - 225e-9).abs() < 1e-15);
        assert_eq!(o.calls, 1);
    }

    #[test]
    fn exclusive_values_only_when_requested() {
        let (s, f) = session(false);
        s.tstart(1, "a").unwrap();
        s.tstartx(2, HPM_ONLY_EXCLUSIVE, "b").unwrap();
        f.advance_ns(10);
        s.tstop(2).unwrap();
        s.tstop(1).unwrap();
        let r = s.terminate().unwrap();
        assert!(sec(&r, 1).exclusive.is_none());
        assert!(sec(&r, 2).exclusive.is_some());
        assert_eq!(sec(&r, 2).parent, Some(1));
    }

    #[test]
    fn repeated_sections_accumulate() {
        let (s, f) = session(true);
        for k in 1..=5u64 {
            s.start(7, "loop").unwrap();
            f.advance_ns(10 * k);
            s.stop(7).unwrap();
            f.advance_ns(1000);
        }
        let r = s.terminate().unwrap();
        let l = sec(&r, 7);
        assert_eq!(l.calls, 5);
        assert_eq!(instr(&l.inclusive), 3.0 * 150.0);
    }

    #[test]
    fn no_parent_and_explicit_parent() {
        let (s, f) = session(true);
        s.start(1, "a").unwrap();
        s.startx(2, HPM_NO_PARENT, "b").unwrap();
        f.advance_ns(10);
        s.stop(2).unwrap();
        s.stop(1).unwrap();
        // explicit parent 1, although nothing is running
        s.startx(3, 1, "c").unwrap();
        f.advance_ns(5);
        s.stop(3).unwrap();
        let r = s.terminate().unwrap();
        assert_eq!(sec(&r, 2).parent, None);
        assert_eq!(sec(&r, 3).parent, Some(1));
        // 2 is no child of 1: 1's exclusive time is its whole time
        assert_eq!(instr(sec(&r, 1).exclusive.as_ref().unwrap()), 30.0);
    }

    #[test]
    fn errors_are_reported_not_fatal() {
        let (s, f) = session(true);
        assert_eq!(
            s.start(0, "x"),
            Err(HpmError::IdOutOfRange { id: 0, max: 100 })
        );
        assert_eq!(
            s.start(101, "x"),
            Err(HpmError::IdOutOfRange { id: 101, max: 100 })
        );
        assert_eq!(s.stop(5), Err(HpmError::NotStarted { id: 5 }));
        s.start(5, "x").unwrap();
        assert_eq!(s.start(5, "x"), Err(HpmError::AlreadyStarted { id: 5 }));
        assert_eq!(
            s.startx(6, 42, "y"),
            Err(HpmError::IllegalParent { id: 6, parent: 42 })
        );
        assert_eq!(
            s.startx(6, 6, "y"),
            Err(HpmError::IllegalParent { id: 6, parent: 6 })
        );
        assert_eq!(
            s.startx(6, -7, "y"),
            Err(HpmError::IllegalParent { id: 6, parent: -7 })
        );
        assert_eq!(
            s.startx(6, 500, "y"),
            Err(HpmError::IllegalParent { id: 6, parent: 500 })
        );
        // the same id on another thread
        std::thread::scope(|sc| {
            sc.spawn(|| {
                assert_eq!(s.start(5, "x"), Err(HpmError::WrongThread { id: 5 }));
                assert_eq!(s.stop(5), Err(HpmError::WrongThread { id: 5 }));
                s.start(9, "other thread").unwrap();
                f.advance_ns(7);
                s.stop(9).unwrap();
            });
        });
        f.advance_ns(3);
        s.stop(5).unwrap();
        let r = s.terminate().unwrap();
        assert_eq!(sec(&r, 5).calls, 1);
        assert_eq!(instr(&sec(&r, 9).inclusive), 21.0);
        assert_ne!(sec(&r, 9).tid, sec(&r, 5).tid);
        assert_eq!(s.start(1, "late"), Err(HpmError::Terminated));
        assert_eq!(s.terminate(), Err(HpmError::Terminated));
    }

    #[test]
    fn terminate_stops_running_sections() {
        let (s, f) = session(true);
        s.start(1, "never stopped").unwrap();
        f.advance_ns(40);
        let r = s.terminate().unwrap();
        assert_eq!(sec(&r, 1).calls, 1);
        assert_eq!(instr(&sec(&r, 1).inclusive), 120.0);
    }

    #[test]
    fn automatic_parents_stay_on_the_calling_thread() {
        let (s, f) = session(true);
        s.start(1, "main").unwrap();
        std::thread::scope(|sc| {
            sc.spawn(|| {
                s.tstart(2, "worker").unwrap();
                f.advance_ns(10);
                s.tstop(2).unwrap();
            });
        });
        s.stop(1).unwrap();
        let r = s.terminate().unwrap();
        assert_eq!(sec(&r, 2).parent, None);
        assert_eq!(instr(sec(&r, 1).exclusive.as_ref().unwrap()), 30.0);
    }

    #[test]
    fn explicit_parent_on_another_thread() {
        let (s, f) = session(true);
        s.start(1, "main").unwrap();
        f.advance_ns(10);
        std::thread::scope(|sc| {
            sc.spawn(|| {
                s.tstartx(2, 1, "worker").unwrap();
                f.advance_ns(20);
                s.tstop(2).unwrap();
            });
        });
        f.advance_ns(5);
        s.stop(1).unwrap();
        let r = s.terminate().unwrap();
        assert_eq!(sec(&r, 2).parent, Some(1));
        let ex = sec(&r, 1).exclusive.as_ref().unwrap();
        assert!((ex.wall_s - 15e-9).abs() < 1e-15);
        assert_eq!(instr(ex), 45.0);
    }

    #[test]
    fn multiplexed_values_are_scaled() {
        let (s, f) = session(false);
        f.set_running_fraction(0.25);
        f.advance_ns(100);
        s.start(1, "a").unwrap();
        f.advance_ns(400);
        s.stop(1).unwrap();
        let r = s.terminate().unwrap();
        let m = &sec(&r, 1).inclusive;
        assert_eq!(instr(m), 1200.0);
        let g = &m.sets[0].groups[0];
        assert_eq!(g.running_fraction(), Some(0.25));
        assert_eq!(g.counters[1].raw, 300);
    }

    #[test]
    fn overhead_is_measured() {
        let (s, f) = session(false);
        s.start(1, "a").unwrap();
        f.advance_ns(100);
        s.stop(1).unwrap();
        let r = s.terminate().unwrap();
        // the fake clock does not move inside start/stop
        assert_eq!(sec(&r, 1).overhead_s, 0.0);
        assert!(!sec(&r, 1).overhead_warning());
    }

    /// Replays a script of start/stop events (time, id, parent, start?) and
    /// checks the online exclusive values against the interval definition.
    fn check_against_interval_sets(script: &[(u64, u32, Option<u32>, bool)]) {
        let (s, f) = session(true);
        let mut intervals: std::collections::HashMap<u32, Vec<(u64, u64, Option<u32>)>> =
            Default::default();
        let mut open: std::collections::HashMap<u32, (u64, Option<u32>)> = Default::default();
        for &(t, id, parent, start) in script {
            f.set_now_ns(t);
            if start {
                let p = parent.map_or(HPM_NO_PARENT, |p| p as i32);
                s.tstartx(id as i32, p, "s").unwrap();
                open.insert(id, (t, parent));
            } else {
                s.tstop(id as i32).unwrap();
                let (t0, p) = open.remove(&id).unwrap();
                intervals.entry(id).or_default().push((t0, t, p));
            }
        }
        let r = s.terminate().unwrap();
        for (id, ivs) in &intervals {
            let mut own = IntervalSet::new();
            for &(a, b, _) in ivs {
                own.add(a, b);
            }
            let mut children = IntervalSet::new();
            for ivs2 in intervals.values() {
                for &(a, b, p) in ivs2 {
                    if p == Some(*id) {
                        children.add(a, b);
                    }
                }
            }
            let expected = own.difference(&children).measure();
            let ex = sec(&r, *id).exclusive.as_ref().unwrap();
            assert!(
                (ex.wall_s - expected as f64 * 1e-9).abs() < 1e-15,
                "section {id}: exclusive {} ns, expected {expected} ns",
                ex.wall_s * 1e9
            );
            assert_eq!(instr(ex), 3.0 * expected as f64, "section {id}");
        }
    }

    #[test]
    fn overlapping_children_union_is_subtracted_once() {
        // parent 1 [0,100); children 2 [10,50) and 3 [30,70) overlap
        check_against_interval_sets(&[
            (0, 1, None, true),
            (10, 2, Some(1), true),
            (30, 3, Some(1), true),
            (50, 2, None, false),
            (70, 3, None, false),
            (100, 1, None, false),
        ]);
    }

    #[test]
    fn child_outliving_parent_and_parent_restarting_inside_child() {
        // child 2 [20,150) sticks out of parent's [0,100) and covers the
        // start of the parent's second interval [120,200)
        check_against_interval_sets(&[
            (0, 1, None, true),
            (20, 2, Some(1), true),
            (100, 1, None, false),
            (120, 1, None, true),
            (150, 2, None, false),
            (200, 1, None, false),
        ]);
    }

    #[test]
    fn child_started_before_parent_interval() {
        // parent exists (first interval [0,10)), child 2 [20,60) with
        // explicit parent 1 while 1 is not running; 1 runs again [40,90)
        check_against_interval_sets(&[
            (0, 1, None, true),
            (10, 1, None, false),
            (20, 2, Some(1), true),
            (40, 1, None, true),
            (60, 2, None, false),
            (90, 1, None, false),
        ]);
    }

    #[test]
    fn grandchildren_do_not_count_for_the_grandparent_twice() {
        check_against_interval_sets(&[
            (0, 1, None, true),
            (10, 2, Some(1), true),
            (20, 3, Some(2), true),
            (60, 2, None, false), // 2 stops before its child 3
            (80, 3, None, false),
            (100, 1, None, false),
        ]);
    }

    #[test]
    fn pseudo_random_scripts_match_the_definition() {
        // deterministic LCG; sections 1..=5 on one thread, random parents
        let mut x: u64 = 0x2545F4914F6CDD1D;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        for _ in 0..200 {
            let mut script = Vec::new();
            let mut running = [false; 6];
            let mut started = [false; 6];
            let mut t = 0;
            for _ in 0..30 {
                t += 1 + next(10);
                let id = 1 + next(5) as u32;
                if running[id as usize] {
                    script.push((t, id, None, false));
                    running[id as usize] = false;
                } else {
                    let cand: Vec<u32> = (1..=5)
                        .filter(|&p| p != id && started[p as usize])
                        .collect();
                    let parent = if cand.is_empty() || next(3) == 0 {
                        None
                    } else {
                        Some(cand[next(cand.len() as u64) as usize])
                    };
                    script.push((t, id, parent, true));
                    running[id as usize] = true;
                    started[id as usize] = true;
                }
            }
            for id in 1..=5u32 {
                if running[id as usize] {
                    t += 1;
                    script.push((t, id, None, false));
                }
            }
            check_against_interval_sets(&script);
        }
    }
}
