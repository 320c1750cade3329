//! The hot paths do not allocate in steady state: section start/stop (libhpm
//! API and Session, with parents and exclusive values) and group reads, on
//! the real perf_event backend (software events work everywhere).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;

use hpm::{
    CountingPlan, CpuInfo, EventSelection, MonotonicClock, PerfBackend, Scope, Session,
    ThreadCounterGroup,
};

struct Counting;

thread_local! {
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; only counts calls per thread
// (a const thread-local without destructor never allocates itself).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations(f: impl FnOnce()) -> u64 {
    let before = ALLOCS.with(Cell::get);
    f();
    ALLOCS.with(Cell::get) - before
}

#[test]
fn steady_state_hot_paths_do_not_allocate() {
    let cpu = CpuInfo::detect();
    let (sel, _) = EventSelection::parse("sw", &cpu);
    let plan = CountingPlan::build(
        &sel,
        Arc::new(PerfBackend::new()),
        Scope::CallingThread,
        &cpu,
    );
    assert!(
        plan.notice.is_none(),
        "software events must work: {:?}",
        plan.notice
    );

    let session = Session::with_backend(plan.clone(), Arc::new(MonotonicClock), 100, true);
    let pairs = |n| {
        for _ in 0..n {
            session.start(1, "parent").unwrap();
            session.start(2, "child").unwrap();
            session.startx(3, 1, "explicit child").unwrap();
            session.stop(2).unwrap();
            session.stop(3).unwrap();
            session.stop(1).unwrap();
        }
    };
    pairs(1); // first use: thread counters, slot buffers, labels
    assert_eq!(
        allocations(|| pairs(1000)),
        0,
        "Session start/stop allocated"
    );

    let group = ThreadCounterGroup::from_plan(&plan).unwrap();
    let mut buf = vec![0u64; group.len()];
    assert_eq!(
        allocations(|| {
            for _ in 0..1000 {
                group.read(&mut buf).unwrap();
            }
        }),
        0,
        "group read allocated"
    );

    // The process-wide API on top (its hpmInit allocates, of course).
    hpm::libhpm::init(0, "no_alloc");
    hpm::libhpm::start(7, "api");
    hpm::libhpm::tstart(8, "api child"); // first use of a slot allocates its buffers
    hpm::libhpm::tstop(8);
    hpm::libhpm::stop(7);
    assert_eq!(
        allocations(|| {
            for _ in 0..1000 {
                hpm::libhpm::start(7, "api");
                hpm::libhpm::tstart(8, "api child");
                hpm::libhpm::tstop(8);
                hpm::libhpm::stop(7);
            }
        }),
        0,
        "libhpm start/stop allocated"
    );
    assert_eq!(hpm::libhpm::error_count(), 0);
}
