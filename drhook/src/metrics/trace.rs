//! The timeline (`DR_HOOK_OPT=trace`): every enter and exit of every
//! thread, with a timestamp, for a Chrome/Perfetto trace.
//!
//! A stamped metric: each thread's [`Stamper`] appends `(timestamp, node,
//! begin|end)` events to a buffer of its own, allocated once at the
//! thread's first instrumented call (`DR_HOOK_TRACE_EVENTS` events of 16
//! bytes; zeroed memory, so the pages are only touched as events are
//! written). Recording an event is one clock read, one 16-byte store and
//! one release store of the length: no lock, no allocation, no system call
//! (with the TSC clock).
//!
//! Bounded: a begin event is recorded only if the buffer keeps room for
//! it, for its end and for the ends of every activation recorded and still
//! open — so once the buffer is full, recording stops cleanly (every
//! recorded begin can still get its end), later activations are counted as
//! dropped and the moment the buffer filled is kept: the writer says so in
//! the trace and on stderr. Whether a node's begin was recorded is the
//! metric's one word per node (a node is active at most once at a time).
//!
//! Filters (`DR_HOOK_TRACE_*`): a name pattern and a maximum depth are
//! decided once per calling-tree node, at its first activation, and kept
//! in the metric's second word of the node (only when one is set: the
//! word is not there otherwise); with a minimum duration, an activation
//! whose begin is still the last event at its exit and that lasted less
//! is taken back (the length goes back by one). Ring mode
//! (`DR_HOOK_TRACE_RING`) never stops: the write position wraps and the
//! last `capacity` events are kept.
//!
//! Readers (`profile::trace`, on any thread, while the owner runs) copy
//! the events of the window below the published length; the slots are
//! atomic words (plain stores and loads on x86-64), so a slot the owner
//! rewrites meanwhile (a taken-back begin, a wrapped ring) reads as
//! another event, never as undefined behaviour: the writer copes with
//! any sequence.

use std::alloc::Layout;
use std::cell::Cell;
use std::ptr;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};

use super::{Agg, Metric, Seen, Stamper, Word};
use crate::config::trace::TraceFilter;
use crate::sys::clock;

/// What an event records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// The node became the top of its thread's stack.
    Begin,
    /// The node was left.
    End,
}

/// One recorded event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct Event {
    /// Wall-clock ticks (the engine's wall source).
    pub ts: u64,
    /// Index of the node in its thread's tree.
    pub node: u32,
    /// 0 = begin, 1 = end.
    kind: u32,
}

impl Event {
    /// Begin or end.
    pub fn phase(&self) -> Phase {
        if self.kind == 0 {
            Phase::Begin
        } else {
            Phase::End
        }
    }
}

/// One slot: the timestamp, and the node with the kind in bit 32.
struct Slot {
    ts: AtomicU64,
    tag: AtomicU64,
}

/// One thread's events (leaked: it lives as long as the process, like the
/// thread's tree, and sits in a lock-free list).
pub(crate) struct Buffer {
    /// Dr.Hook thread number.
    pub tid: u32,
    /// The OS thread name at the first call (`pthread_getname_np`, at most
    /// 15 bytes), NUL-padded.
    name: [u8; 16],
    slots: *const Slot,
    capacity: usize,
    /// The last `capacity` events are kept (else the first).
    ring: bool,
    /// Events written (ring: since the start, the slot is this modulo the
    /// capacity), published by the owner with release.
    len: AtomicUsize,
    /// Begins recorded whose end is not recorded yet (owner only).
    open: Cell<usize>,
    /// Activations not recorded because the buffer was full.
    dropped: AtomicU64,
    /// Timestamp of the first activation not recorded (0: none).
    full_at: AtomicU64,
    next: AtomicPtr<Buffer>,
}

// SAFETY: the slots are atomics; `open` is touched by the owner
// thread only (stampers run on the owner thread).
unsafe impl Sync for Buffer {}
// SAFETY: as above.
unsafe impl Send for Buffer {}

impl Buffer {
    fn new(tid: u32, capacity: usize, ring: bool) -> Buffer {
        let slots = Layout::array::<Slot>(capacity)
            .ok()
            .filter(|l| l.size() > 0)
            // SAFETY: a non-zero size; all-zero atomics are valid values.
            .map(|l| unsafe { std::alloc::alloc_zeroed(l) } as *const Slot)
            .unwrap_or(ptr::null());
        Buffer {
            tid,
            name: thread_name(),
            slots,
            // A failed allocation leaves a buffer with no room: everything
            // is counted as dropped.
            capacity: if slots.is_null() { 0 } else { capacity },
            ring,
            len: AtomicUsize::new(0),
            open: Cell::new(0),
            dropped: AtomicU64::new(0),
            full_at: AtomicU64::new(0),
            next: AtomicPtr::new(ptr::null_mut()),
        }
    }

    #[inline(always)]
    fn slot(&self, i: usize) -> &Slot {
        debug_assert!(i < self.capacity);
        // SAFETY: `i < capacity`, the number of slots allocated (callers
        // reduce indices modulo the capacity).
        unsafe { &*self.slots.add(i) }
    }

    /// A copy of the events kept so far, oldest first (from any thread
    /// while the owner appends).
    pub fn events(&self) -> Vec<Event> {
        let n = self.len.load(Ordering::Acquire);
        if self.capacity == 0 {
            return Vec::new();
        }
        let first = n.saturating_sub(self.capacity);
        (first..n)
            .map(|i| {
                let s = self.slot(i % self.capacity);
                let tag = s.tag.load(Ordering::Relaxed);
                Event {
                    ts: s.ts.load(Ordering::Relaxed),
                    node: tag as u32,
                    kind: (tag >> 32) as u32,
                }
            })
            .collect()
    }

    /// The number of events the buffer holds at most.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Events written over in a ring.
    pub fn overwritten(&self) -> u64 {
        self.len
            .load(Ordering::Acquire)
            .saturating_sub(self.capacity) as u64
    }

    /// Whether it keeps the last events.
    pub fn ring(&self) -> bool {
        self.ring
    }

    /// Activations not recorded (the buffer was full), and the timestamp
    /// of the first of them.
    pub fn dropped(&self) -> (u64, Option<u64>) {
        let at = self.full_at.load(Ordering::Relaxed);
        (
            self.dropped.load(Ordering::Relaxed),
            (at != 0).then_some(at),
        )
    }

    /// The OS thread name seen at the thread's first call.
    pub fn thread_name(&self) -> &str {
        let end = self.name.iter().position(|&b| b == 0).unwrap_or(16);
        std::str::from_utf8(&self.name[..end]).unwrap_or("")
    }

    /// The slot of event number `i` (a ring wraps; else `i` is below the
    /// capacity).
    #[inline(always)]
    fn slot_of(&self, i: usize) -> &Slot {
        self.slot(if self.ring { i % self.capacity } else { i })
    }

    /// Appends an event (owner thread only; the caller checked the room).
    #[inline]
    fn push(&self, len: usize, node: u32, kind: u32, ts: u64) {
        let s = self.slot_of(len);
        s.ts.store(ts, Ordering::Relaxed);
        s.tag
            .store(u64::from(node) | (u64::from(kind) << 32), Ordering::Relaxed);
        self.len.store(len + 1, Ordering::Release);
    }

    /// The timestamp of the last event if it is the begin of `node`
    /// (owner thread only).
    #[inline]
    fn last_begin_of(&self, len: usize, node: u32) -> Option<u64> {
        if len == 0 {
            return None;
        }
        let s = self.slot_of(len - 1);
        (s.tag.load(Ordering::Relaxed) == u64::from(node)).then(|| s.ts.load(Ordering::Relaxed))
    }

    /// Takes the last event back (owner thread only).
    #[inline]
    fn retract(&self, len: usize) {
        self.len.store(len - 1, Ordering::Release);
    }
}

fn thread_name() -> [u8; 16] {
    let mut buf = [0u8; 16];
    // SAFETY: a 16-byte buffer, the size Linux requires; the calling thread.
    unsafe {
        libc::pthread_getname_np(
            libc::pthread_self(),
            buf.as_mut_ptr() as *mut libc::c_char,
            buf.len(),
        )
    };
    buf[15] = 0;
    buf
}

static BUFFERS: AtomicPtr<Buffer> = AtomicPtr::new(ptr::null_mut());

/// Every thread's buffer, in no particular order (lock-free).
pub(crate) fn for_each_buffer(mut f: impl FnMut(&'static Buffer)) {
    let mut p = BUFFERS.load(Ordering::Acquire);
    while !p.is_null() {
        // SAFETY: buffers are leaked, never freed.
        let b = unsafe { &*p };
        f(b);
        p = b.next.load(Ordering::Acquire);
    }
}

/// The buffer of thread `tid`, if it recorded anything.
pub(crate) fn buffer_of(tid: u32) -> Option<&'static Buffer> {
    let mut found = None;
    for_each_buffer(|b| {
        if b.tid == tid {
            found = Some(b);
        }
    });
    found
}

fn register(b: &'static Buffer) {
    let mut head = BUFFERS.load(Ordering::Acquire);
    loop {
        b.next.store(head, Ordering::Relaxed);
        match BUFFERS.compare_exchange_weak(
            head,
            b as *const Buffer as *mut Buffer,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => return,
            Err(h) => head = h,
        }
    }
}

/// Word: whether the node's current activation recorded its begin.
const BEGUN: usize = 0;
/// Word (with a name pattern or a depth): the node's filter decision.
const CHOSEN: usize = 1;
/// [`CHOSEN`] values (0: not decided yet).
const KEEP: u64 = 1;
const SKIP: u64 = 2;

/// The choice of routines: per node, once.
struct Select {
    pattern: Option<regex_lite::Regex>,
    depth: u32,
}

impl Select {
    #[cold]
    fn decide(&self, seen: &Seen) -> u64 {
        let deep = self.depth != 0 && seen.depth > self.depth;
        let unmatched = self
            .pattern
            .as_ref()
            .is_some_and(|p| !p.is_match(seen.name));
        if deep || unmatched { SKIP } else { KEEP }
    }
}

/// The `trace` metric.
pub(crate) struct Trace {
    words: Vec<Word>,
    capacity: usize,
    monotonic: bool,
    ring: bool,
    /// Shortest activation kept, in wall ticks (0: all).
    min_ticks: u64,
    /// Leaked with the metric (set up once per process).
    select: Option<&'static Select>,
}

static TRACE: OnceLock<Trace> = OnceLock::new();

/// Sets the timeline up (once, at start-up): `capacity` events per thread,
/// timestamps from `CLOCK_MONOTONIC` when `monotonic`, else the TSC
/// (`ticks_per_sec` of them), with the filters of `filter`.
pub(crate) fn init(capacity: u64, monotonic: bool, ticks_per_sec: f64, filter: &TraceFilter) {
    TRACE.get_or_init(|| Trace::new(capacity, monotonic, ticks_per_sec, filter));
}

impl Trace {
    fn new(capacity: u64, monotonic: bool, ticks_per_sec: f64, filter: &TraceFilter) -> Trace {
        let pattern = filter
            .pattern
            .as_deref()
            .and_then(|p| regex_lite::Regex::new(p).ok());
        let select = (pattern.is_some() || filter.depth != 0).then(|| {
            &*Box::leak(Box::new(Select {
                pattern,
                depth: filter.depth,
            }))
        });
        let mut words = vec![Word {
            name: "trace@begin".into(),
            agg: Agg::Scratch,
        }];
        if select.is_some() {
            words.push(Word {
                name: "trace@chosen".into(),
                agg: Agg::Scratch,
            });
        }
        Trace {
            words,
            capacity: usize::try_from(capacity).unwrap_or(usize::MAX),
            monotonic,
            ring: filter.ring,
            min_ticks: (filter.min_us * 1e-6 * ticks_per_sec).ceil() as u64,
            select,
        }
    }
}

/// The metric, once [`init`] has run.
pub(crate) fn metric() -> Option<&'static dyn Metric> {
    TRACE.get().map(|t| t as &dyn Metric)
}

/// Whether the timeline is being recorded.
pub(crate) fn active() -> bool {
    TRACE.get().is_some()
}

impl Metric for Trace {
    fn name(&self) -> &'static str {
        "trace"
    }

    fn words(&self) -> &[Word] {
        &self.words
    }

    fn stamped(&self) -> bool {
        true
    }

    fn stamper(&self, tid: u32) -> Option<Box<dyn Stamper>> {
        let b: &'static Buffer = Box::leak(Box::new(Buffer::new(tid, self.capacity, self.ring)));
        register(b);
        Some(Box::new(ThreadTrace {
            buf: b,
            monotonic: self.monotonic,
            min_ticks: self.min_ticks,
            select: self.select,
        }))
    }
}

/// A thread's recorder.
pub(crate) struct ThreadTrace {
    buf: &'static Buffer,
    monotonic: bool,
    min_ticks: u64,
    select: Option<&'static Select>,
}

impl Stamper for ThreadTrace {
    #[inline]
    fn enter(&self, node: u32, row: &[AtomicU64]) {
        let b = self.buf;
        let len = b.len.load(Ordering::Relaxed);
        let open = b.open.get();
        // Room for this begin, its end and the ends still owed (a ring
        // always has room).
        if b.capacity < 2 || (!b.ring && len + open > b.capacity - 2) {
            row[BEGUN].store(0, Ordering::Relaxed);
            b.dropped
                .store(b.dropped.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
            if b.full_at.load(Ordering::Relaxed) == 0 {
                let ts = clock::wall(self.monotonic);
                b.full_at.store(ts.max(1), Ordering::Relaxed);
            }
            return;
        }
        b.push(len, node, 0, clock::wall(self.monotonic));
        b.open.set(open + 1);
        row[BEGUN].store(1, Ordering::Relaxed);
    }

    /// With a name pattern or a depth, the node's decision (made at its
    /// first activation) comes first.
    #[inline]
    fn enter_seen(&self, node: u32, row: &[AtomicU64], seen: &Seen) {
        if let Some(sel) = self.select {
            let mut chosen = row[CHOSEN].load(Ordering::Relaxed);
            if chosen == 0 {
                chosen = sel.decide(seen);
                row[CHOSEN].store(chosen, Ordering::Relaxed);
            }
            if chosen == SKIP {
                row[BEGUN].store(0, Ordering::Relaxed);
                return;
            }
        }
        self.enter(node, row);
    }

    /// The end's timestamp is the exit's wall stamp when the tree took one
    /// (a profile is on: one clock read saved), else read here.
    #[inline]
    fn exit(&self, node: u32, row: &[AtomicU64], wall: u64) {
        if row[BEGUN].load(Ordering::Relaxed) == 0 {
            return;
        }
        row[BEGUN].store(0, Ordering::Relaxed);
        let b = self.buf;
        b.open.set(b.open.get().saturating_sub(1));
        let ts = if wall != 0 {
            wall
        } else {
            clock::wall(self.monotonic)
        };
        let len = b.len.load(Ordering::Relaxed);
        if self.min_ticks != 0
            && let Some(begin) = b.last_begin_of(len, node)
            && ts.saturating_sub(begin) < self.min_ticks
        {
            b.retract(len);
            return;
        }
        // Always true: the begin reserved this slot (a ring wraps).
        if b.ring || len < b.capacity {
            b.push(len, node, 1, ts);
        }
    }
}

/// A recorder of thread `tid` with the monotonic clock (a ring when
/// `ring`), outside the
/// metric and its list (tests of the writer).
#[cfg(test)]
pub(crate) fn test_recorder(
    tid: u32,
    capacity: usize,
    ring: bool,
) -> (Box<dyn Stamper>, &'static Buffer) {
    let b: &'static Buffer = Box::leak(Box::new(Buffer::new(tid, capacity, ring)));
    (
        Box::new(ThreadTrace {
            buf: b,
            monotonic: true,
            min_ticks: 0,
            select: None,
        }),
        b,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorder(capacity: usize) -> (ThreadTrace, &'static Buffer) {
        recorder_with(capacity, &TraceFilter::default())
    }

    /// A recorder with filters, on the monotonic clock (ticks are ns).
    fn recorder_with(capacity: usize, f: &TraceFilter) -> (ThreadTrace, &'static Buffer) {
        let t: &'static Trace = Box::leak(Box::new(Trace::new(capacity as u64, true, 1e9, f)));
        let b: &'static Buffer = Box::leak(Box::new(Buffer::new(u32::MAX - 7, capacity, f.ring)));
        (
            ThreadTrace {
                buf: b,
                monotonic: true,
                min_ticks: t.min_ticks,
                select: t.select,
            },
            b,
        )
    }

    fn rows(n: usize) -> Vec<[AtomicU64; 2]> {
        (0..n)
            .map(|_| [AtomicU64::new(0), AtomicU64::new(0)])
            .collect()
    }

    fn seen(name: &'static str, depth: u32) -> Seen {
        Seen {
            calls: 1,
            wall_incl: 0,
            name,
            depth,
        }
    }

    fn shape(b: &Buffer) -> Vec<(u32, Phase)> {
        b.events().iter().map(|e| (e.node, e.phase())).collect()
    }

    #[test]
    fn short_activations_are_taken_back_long_ones_kept() {
        let f = TraceFilter {
            min_us: 2000.0,
            ..TraceFilter::default()
        };
        let (t, b) = recorder_with(16, &f);
        let r = rows(4);
        t.enter(1, &r[1]);
        t.enter(2, &r[2]);
        t.exit(2, &r[2], 0);
        t.enter(3, &r[3]);
        std::thread::sleep(std::time::Duration::from_millis(3));
        t.exit(3, &r[3], 0);
        t.exit(1, &r[1], 0);
        assert_eq!(
            shape(b),
            [
                (1, Phase::Begin),
                (3, Phase::Begin),
                (3, Phase::End),
                (1, Phase::End)
            ]
        );
        // A short one with nothing inside, alone: gone, and its room too.
        t.enter(2, &r[2]);
        t.exit(2, &r[2], 0);
        assert_eq!(b.events().len(), 4);
        assert_eq!(b.open.get(), 0);
    }

    #[test]
    fn name_and_depth_are_decided_once_per_node() {
        let f = TraceFilter {
            pattern: Some("^PHYS:".into()),
            depth: 2,
            ..TraceFilter::default()
        };
        let (t, b) = recorder_with(64, &f);
        let r = rows(4);
        for _ in 0..2 {
            t.enter_seen(1, &r[1], &seen("PHYS:OUTER", 1));
            t.enter_seen(2, &r[2], &seen("DYN:STEP", 2));
            t.exit(2, &r[2], 0);
            t.enter_seen(3, &r[3], &seen("PHYS:DEEP", 3));
            t.exit(3, &r[3], 0);
            t.exit(1, &r[1], 0);
        }
        assert_eq!(
            shape(b),
            [
                (1, Phase::Begin),
                (1, Phase::End),
                (1, Phase::Begin),
                (1, Phase::End)
            ]
        );
        assert_eq!(r[2][CHOSEN].load(Ordering::Relaxed), SKIP);
        assert_eq!(r[1][CHOSEN].load(Ordering::Relaxed), KEEP);
    }

    #[test]
    fn a_ring_keeps_the_last_events() {
        let f = TraceFilter {
            ring: true,
            ..TraceFilter::default()
        };
        let (t, b) = recorder_with(4, &f);
        let r = rows(8);
        t.enter(1, &r[1]);
        for n in 2..6 {
            t.enter(n, &r[n as usize]);
            t.exit(n, &r[n as usize], 0);
        }
        t.exit(1, &r[1], 0);
        assert_eq!(
            shape(b),
            [
                (4, Phase::End),
                (5, Phase::Begin),
                (5, Phase::End),
                (1, Phase::End)
            ]
        );
        assert_eq!(b.overwritten(), 6);
        assert_eq!(b.dropped(), (0, None));
        assert!(b.events().windows(2).all(|w| w[0].ts <= w[1].ts));
    }

    #[test]
    fn events_nest_and_are_published_in_order() {
        let (t, b) = recorder(16);
        let r = rows(3);
        t.enter(1, &r[1]);
        t.enter(2, &r[2]);
        t.exit(2, &r[2], 0);
        t.exit(1, &r[1], 0);
        let ev = b.events();
        let shape: Vec<(u32, Phase)> = ev.iter().map(|e| (e.node, e.phase())).collect();
        assert_eq!(
            shape,
            [
                (1, Phase::Begin),
                (2, Phase::Begin),
                (2, Phase::End),
                (1, Phase::End)
            ]
        );
        assert!(ev.windows(2).all(|w| w[0].ts <= w[1].ts));
        assert_eq!(b.dropped(), (0, None));
    }

    #[test]
    fn a_full_buffer_stops_cleanly_and_counts_what_it_dropped() {
        // Room for 6 events: three nested begins fit with their ends.
        let (t, b) = recorder(6);
        let r = rows(8);
        t.enter(1, &r[1]);
        t.enter(2, &r[2]);
        t.enter(3, &r[3]);
        // No room for a fourth begin and its end beside the three owed ends.
        t.enter(4, &r[4]);
        t.exit(4, &r[4], 0);
        t.exit(3, &r[3], 0);
        t.enter(5, &r[5]);
        t.exit(5, &r[5], 0);
        t.exit(2, &r[2], 0);
        t.exit(1, &r[1], 0);
        let ev = b.events();
        assert_eq!(ev.len(), 6, "{ev:?}");
        let begins = ev.iter().filter(|e| e.phase() == Phase::Begin).count();
        assert_eq!(begins, 3, "every recorded begin has its end");
        let (dropped, at) = b.dropped();
        assert_eq!(dropped, 2);
        assert!(at.is_some());
        // Nothing is ever written past the capacity.
        t.enter(6, &r[6]);
        t.exit(6, &r[6], 0);
        assert_eq!(b.events().len(), 6);
        assert_eq!(b.dropped().0, 3);
    }

    #[test]
    fn an_end_without_a_recorded_begin_is_not_recorded() {
        let (t, b) = recorder(4);
        let r = rows(2);
        t.exit(1, &r[1], 0);
        assert!(b.events().is_empty());
        let (t0, b0) = recorder(0);
        t0.enter(1, &r[1]);
        t0.exit(1, &r[1], 0);
        assert!(b0.events().is_empty());
        assert_eq!(b0.dropped().0, 1);
    }
}
