//! Memory per routine (`DR_HOOK_OPT=memprof`, `mem`, `heap`, `stack`,
//! `rss`, `paging`, `all`).
//!
//! Allocation figures come from the allocator, never from `/proc`: an
//! allocator wrapper (`drhook::Alloc` for Rust, the preload library's
//! `malloc` family for C, C++ and Fortran) reports each allocation and
//! free as an *event* on the calling thread (`front::alloc`), which adds
//! to the words of the current routine's node — no lock, no allocation,
//! no system call. Every tracked block carries a 16-byte header holding
//! its size and the address of the `LIVE` word of the node that allocated
//! it, so a free (on any thread) takes the bytes back from the routine
//! that allocated them: `Self-Leaked` is exact, and cross-thread frees are
//! a single atomic subtraction on the owner's word.
//!
//! The stamper (enter and exit of every routine while the metric is
//! installed) records the process heap level and the stack depth into the
//! node's high-water words, and with `paging` the thread's page faults
//! (`getrusage(RUSAGE_THREAD)`, the one option that costs a system call
//! per enter and exit — asked for explicitly, never by `memprof`).

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, AtomicUsize, Ordering};

use super::{Agg, Metric, Stamper, Word};
use crate::sys::linebuf::LineBuf;

/// Bytes allocated while the routine was the top of the stack.
pub(crate) const ALLOC: usize = 0;
/// Allocations made there.
pub(crate) const NALLOC: usize = 1;
/// Bytes freed while the routine was the top of the stack (whoever
/// allocated them).
pub(crate) const FREE: usize = 2;
/// Frees made there.
pub(crate) const NFREE: usize = 3;
/// Bytes allocated there and not freed yet, by any thread (wrapping: a
/// routine's blocks are taken back where they are freed).
pub(crate) const LIVE: usize = 4;
/// The process heap (bytes live in tracked blocks) at its highest while
/// the routine was active.
pub(crate) const HEAP: usize = 5;
/// The deepest stack (bytes below the thread's stack top) while active.
pub(crate) const STACK: usize = 6;
/// Page faults (minor + major) of the thread while active (`paging`).
pub(crate) const PAGING: usize = 7;
/// Scratch: the thread's page faults at the routine's entry.
const PAGING_AT_ENTRY: usize = 8;
/// Words per node.
pub(crate) const WORDS: usize = 9;

/// The offset of the metric's first word in the rows, `usize::MAX` until
/// it is installed (event sources check it first).
pub(crate) static OFFSET: AtomicUsize = AtomicUsize::new(usize::MAX);

/// Process-wide figures, fed by every tracked allocation and free
/// (including those outside instrumented routines and before `main`).
pub(crate) struct Totals {
    /// Bytes in tracked blocks now.
    pub live: AtomicI64,
    /// Highest `live`.
    pub peak: AtomicU64,
}

/// The process's totals.
pub(crate) static TOTALS: Totals = Totals {
    live: AtomicI64::new(0),
    peak: AtomicU64::new(0),
};

/// The level of the process heap in the process-wide word: every tracked
/// block's bytes but those of the threads' shares not folded in yet (see
/// [`level_with`]). Exact at a stamp for the stamping thread (its share
/// is folded in first), and when no other thread has allocated or freed
/// since its own last enter or exit.
#[inline]
pub(crate) fn heap_now() -> u64 {
    TOTALS.live.load(Ordering::Relaxed).max(0) as u64
}

/// Raises the process peak to `live`.
#[inline(always)]
fn raise_peak(live: u64) {
    if live > TOTALS.peak.load(Ordering::Relaxed) {
        TOTALS.peak.fetch_max(live, Ordering::Relaxed);
    }
}

/// Adds a tracked allocation of `size` bytes, by a thread without a calling
/// tree, to the process-wide word; returns the level.
#[inline]
pub(crate) fn total_alloc(size: u64) -> u64 {
    let live = (TOTALS.live.fetch_add(size as i64, Ordering::Relaxed) + size as i64).max(0) as u64;
    raise_peak(live);
    live
}

/// Takes a tracked block of `size` bytes, freed by a thread without a
/// calling tree, off the process-wide word.
#[inline]
pub(crate) fn total_free(size: u64) {
    TOTALS.live.fetch_sub(size as i64, Ordering::Relaxed);
}

/// The process heap level seen by an allocation of a thread with a
/// calling tree whose unfolded share (its allocations minus its frees
/// since its last enter or exit, this allocation included) is `share`:
/// the process-wide word plus the share, which raises the process peak.
/// Other threads' shares not folded in yet are not in it.
#[inline(always)]
pub(crate) fn level_with(share: i64) -> u64 {
    let live = TOTALS
        .live
        .load(Ordering::Relaxed)
        .wrapping_add(share)
        .max(0) as u64;
    raise_peak(live);
    live
}

/// Folds a thread's share of the heap level into the process-wide word.
#[inline]
pub(crate) fn fold(share: i64) {
    TOTALS.live.fetch_add(share, Ordering::Relaxed);
}

/// Allocations and frees outside any instrumented routine — before
/// Dr.Hook started (constructors, C++ static initialisers, the runtime's
/// start-up before `main`), on a thread without a calling tree, after a
/// thread's tree ended — which no row can show: the memory profile's
/// header line "Outside any routine". Counted only once the memory metric
/// is wanted (placed, or announced by an allocator wrapper that decided to
/// track before Dr.Hook started): with Dr.Hook off this costs nothing.
pub(crate) struct Outside {
    pub allocs: AtomicU64,
    pub bytes: AtomicU64,
    pub frees: AtomicU64,
    pub freed: AtomicU64,
    /// `allocs` and `bytes` when Dr.Hook started (the metric was placed).
    pub allocs_at_start: AtomicU64,
    pub bytes_at_start: AtomicU64,
}

/// The process's allocations outside any routine.
pub(crate) static OUTSIDE: Outside = Outside {
    allocs: AtomicU64::new(0),
    bytes: AtomicU64::new(0),
    frees: AtomicU64::new(0),
    freed: AtomicU64::new(0),
    allocs_at_start: AtomicU64::new(0),
    bytes_at_start: AtomicU64::new(0),
};

/// Whether allocations outside routines are counted (see [`Outside`]).
static OUTSIDE_WANTED: AtomicBool = AtomicBool::new(false);

/// The allocator wrapper's test for its own (or Dr.Hook's) work on the
/// calling thread, where no calling tree can tell it (Dr.Hook's start-up,
/// a thread's tree being made): a `fn() -> bool`, 0 when none.
static OWN_WORK_PROBE: AtomicUsize = AtomicUsize::new(0);

/// An allocator wrapper tracks blocks for the memory profile from now on,
/// before Dr.Hook has started (the preload library's `malloc` family);
/// `own_work` tells the wrapper's and Dr.Hook's own work on the calling
/// thread, which is not counted.
pub(crate) fn expect_memory_profile(own_work: fn() -> bool) {
    OWN_WORK_PROBE.store(own_work as usize, Ordering::Relaxed);
    OUTSIDE_WANTED.store(true, Ordering::Release);
}

/// Counts an allocation (`free == false`) or a free of `size` bytes made
/// outside any routine, when wanted.
#[inline]
pub(crate) fn outside(free: bool, size: u64) {
    if OUTSIDE_WANTED.load(Ordering::Relaxed) {
        count_outside(free, size);
    }
}

#[cold]
#[inline(never)]
fn count_outside(free: bool, size: u64) {
    if crate::sys::own::in_own_work() {
        return;
    }
    let probe = OWN_WORK_PROBE.load(Ordering::Acquire);
    if probe != 0 {
        // SAFETY: only ever a `fn() -> bool` (`expect_memory_profile`).
        let own: fn() -> bool = unsafe { std::mem::transmute::<usize, fn() -> bool>(probe) };
        if own() {
            return;
        }
    }
    let (n, b) = if free {
        (&OUTSIDE.frees, &OUTSIDE.freed)
    } else {
        (&OUTSIDE.allocs, &OUTSIDE.bytes)
    };
    n.fetch_add(1, Ordering::Relaxed);
    b.fetch_add(size, Ordering::Relaxed);
}

/// With `paging`: page faults are read at every enter and exit.
static PAGING_ON: AtomicBool = AtomicBool::new(false);

/// The memory metric.
pub(crate) struct Memory {
    words: Vec<Word>,
}

static METRIC: OnceLock<Memory> = OnceLock::new();

/// Creates the metric (`runtime`, when a memory token is given).
pub(crate) fn init(paging: bool) -> &'static dyn Metric {
    PAGING_ON.store(paging, Ordering::Relaxed);
    METRIC.get_or_init(|| {
        let w = |name: &str, agg| Word {
            name: name.to_string(),
            agg,
        };
        Memory {
            words: vec![
                w("alloc_bytes", Agg::Event),
                w("allocs", Agg::Event),
                w("free_bytes", Agg::Event),
                w("frees", Agg::Event),
                w("leaked_bytes", Agg::Event),
                w("heap_hwm", Agg::Peak),
                w("stack_max", Agg::Peak),
                w("page_faults", Agg::Inclusive),
                w("page_faults_at_entry", Agg::Scratch),
            ],
        }
    })
}

/// Records the metric's place in the rows (`runtime`, after `install`).
pub(crate) fn placed(offset: usize) {
    OUTSIDE
        .allocs_at_start
        .store(OUTSIDE.allocs.load(Ordering::Relaxed), Ordering::Relaxed);
    OUTSIDE
        .bytes_at_start
        .store(OUTSIDE.bytes.load(Ordering::Relaxed), Ordering::Relaxed);
    OUTSIDE_WANTED.store(true, Ordering::Relaxed);
    OFFSET.store(offset, Ordering::Release);
}

/// Per-thread state: the bounds of the thread's own stack. A routine
/// entered on another stack (the engine's set-up of a thread runs on a
/// work stack, `sys::workstack`) is measured where it left the thread's
/// own, or not at all.
pub(crate) struct MemStamper {
    /// Lowest address of the stack (0: unknown).
    stack_lo: usize,
    /// Highest address (the depth is measured from there).
    stack_top: usize,
}

/// The bounds of the calling thread's stack, from its attributes; else
/// (0, just above the caller's frame).
pub(crate) fn stack_bounds(here: usize) -> (usize, usize) {
    // SAFETY: plain data filled in by the calls; destroyed after use.
    unsafe {
        let mut attr: libc::pthread_attr_t = std::mem::zeroed();
        if libc::pthread_getattr_np(libc::pthread_self(), &mut attr) == 0 {
            let mut addr: *mut libc::c_void = std::ptr::null_mut();
            let mut size: libc::size_t = 0;
            let ok = libc::pthread_attr_getstack(&attr, &mut addr, &mut size) == 0;
            libc::pthread_attr_destroy(&mut attr);
            if ok && size > 0 && size < (1 << 34) {
                return (addr as usize, addr as usize + size);
            }
        }
    }
    (0, here)
}

/// Page faults of the calling thread so far.
fn thread_faults() -> u64 {
    // SAFETY: plain data written by the call.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer.
    if unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut ru) } != 0 {
        return 0;
    }
    (ru.ru_minflt + ru.ru_majflt) as u64
}

#[inline]
fn raise(w: &AtomicU64, v: u64) {
    if v > w.load(Ordering::Relaxed) {
        w.store(v, Ordering::Relaxed);
    }
}

impl Stamper for MemStamper {
    /// The stack depth (the stack pointer at the routine's entry: its
    /// exit runs in the same frame, so it is sampled once) and the heap
    /// level.
    fn enter(&self, _node: u32, row: &[AtomicU64]) {
        let here = 0u8;
        let mut sp = std::hint::black_box(&here) as *const u8 as usize;
        let own = |sp: usize| sp > self.stack_lo && sp <= self.stack_top;
        if !own(sp) {
            sp = crate::sys::workstack::caller_sp();
        }
        if own(sp) {
            raise(&row[STACK], (self.stack_top - sp) as u64);
        }
        raise(&row[HEAP], heap_now());
        if PAGING_ON.load(Ordering::Relaxed) {
            row[PAGING_AT_ENTRY].store(thread_faults(), Ordering::Relaxed);
        }
    }

    /// The heap level again (other threads may have raised it meanwhile;
    /// this thread's allocations raise it as they happen).
    fn exit(&self, _node: u32, row: &[AtomicU64], _wall: u64) {
        raise(&row[HEAP], heap_now());
        if PAGING_ON.load(Ordering::Relaxed) {
            let d = thread_faults().saturating_sub(row[PAGING_AT_ENTRY].load(Ordering::Relaxed));
            row[PAGING].store(row[PAGING].load(Ordering::Relaxed) + d, Ordering::Relaxed);
        }
    }
}

impl Metric for Memory {
    fn name(&self) -> &'static str {
        "memory"
    }
    fn words(&self) -> &[Word] {
        &self.words
    }
    fn stamped(&self) -> bool {
        true
    }
    /// Loads, stores and comparisons on the row (plus `getrusage` with
    /// `paging`): nothing that can panic.
    fn stamps_on_fast_paths(&self) -> bool {
        true
    }
    fn stamper(&self, _tid: u32) -> Option<Box<dyn Stamper>> {
        let here = 0u8;
        let sp = std::hint::black_box(&here) as *const u8 as usize;
        let (stack_lo, stack_top) = stack_bounds(sp);
        Some(Box::new(MemStamper {
            stack_lo,
            stack_top,
        }))
    }
    fn calltree_before_times(&self) -> bool {
        true
    }
    /// `,hwm=<K>,stack=<K>` (and `,pag=<n>` with `paging`), as the
    /// reference's call-tree lines show them.
    fn calltree_fields(&self, words: &[AtomicU64], out: &mut LineBuf) {
        let k = |i: usize| words[i].load(Ordering::Relaxed) / 1024;
        out.str(",hwm=").u64(k(HEAP)).str("K,stack/max=");
        out.u64(k(STACK)).str("K/").u64(k(STACK)).str("K");
        out.str(",alloc=")
            .u64(words[ALLOC].load(Ordering::Relaxed))
            .str("B,leaked=")
            .u64(words[LIVE].load(Ordering::Relaxed))
            .str("B");
        if PAGING_ON.load(Ordering::Relaxed) {
            out.str(",pag=").u64(words[PAGING].load(Ordering::Relaxed));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stamper_records_stack_depth_and_heap_level() {
        let m = init(false);
        let s = m.stamper(1).expect("a stamper");
        let row: Vec<AtomicU64> = (0..WORDS).map(|_| AtomicU64::new(0)).collect();
        s.enter(0, &row);
        let d1 = row[STACK].load(Ordering::Relaxed);
        assert!(d1 > 0, "some stack is in use");
        #[inline(never)]
        fn deeper(s: &dyn Stamper, row: &[AtomicU64]) {
            let pad = [0u8; 4096];
            std::hint::black_box(&pad);
            s.enter(0, row);
        }
        deeper(s.as_ref(), &row);
        assert!(row[STACK].load(Ordering::Relaxed) >= d1 + 4096);
        total_alloc(1 << 20);
        s.exit(0, &row, 0);
        assert!(row[HEAP].load(Ordering::Relaxed) >= 1 << 20);
        total_free(1 << 20);
    }
}
