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
//! Readers (`profile::trace`, on any thread, while the owner runs) read the
//! events below the published length, which never change once published.

use std::alloc::Layout;
use std::cell::UnsafeCell;
use std::ptr;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};

use super::{Agg, Metric, Stamper, Word};
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

/// One thread's events (leaked: it lives as long as the process, like the
/// thread's tree, and sits in a lock-free list).
pub(crate) struct Buffer {
    /// Dr.Hook thread number.
    pub tid: u32,
    /// The OS thread name at the first call (`pthread_getname_np`, at most
    /// 15 bytes), NUL-padded.
    name: [u8; 16],
    events: *mut UnsafeCell<Event>,
    capacity: usize,
    /// Events published (written by the owner, release).
    len: AtomicUsize,
    /// Begins recorded whose end is not recorded yet (owner only).
    open: UnsafeCell<usize>,
    /// Activations not recorded because the buffer was full.
    dropped: AtomicU64,
    /// Timestamp of the first activation not recorded (0: none).
    full_at: AtomicU64,
    next: AtomicPtr<Buffer>,
}

// SAFETY: events below `len` are immutable once published (release/acquire
// on `len`); `open` and the slots above `len` are touched by the owner
// thread only (stampers run on the owner thread).
unsafe impl Sync for Buffer {}
// SAFETY: as above.
unsafe impl Send for Buffer {}

impl Buffer {
    fn new(tid: u32, capacity: usize) -> Buffer {
        let events = Layout::array::<UnsafeCell<Event>>(capacity)
            .ok()
            .filter(|l| l.size() > 0)
            // SAFETY: a non-zero size; an all-zero `Event` is a valid value.
            .map(|l| unsafe { std::alloc::alloc_zeroed(l) } as *mut UnsafeCell<Event>)
            .unwrap_or(ptr::null_mut());
        Buffer {
            tid,
            name: thread_name(),
            events,
            // A failed allocation leaves a buffer with no room: everything
            // is counted as dropped.
            capacity: if events.is_null() { 0 } else { capacity },
            len: AtomicUsize::new(0),
            open: UnsafeCell::new(0),
            dropped: AtomicU64::new(0),
            full_at: AtomicU64::new(0),
            next: AtomicPtr::new(ptr::null_mut()),
        }
    }

    /// The events published so far (a consistent prefix, readable from
    /// any thread while the owner appends).
    pub fn events(&self) -> &[Event] {
        let n = self.len.load(Ordering::Acquire);
        if n == 0 {
            return &[];
        }
        // SAFETY: the first `n` slots were written before `len` was
        // released and are never written again; `UnsafeCell<Event>` has the
        // layout of `Event`.
        unsafe { std::slice::from_raw_parts(self.events as *const Event, n) }
    }

    /// The number of events the buffer holds at most.
    pub fn capacity(&self) -> usize {
        self.capacity
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

    /// Appends an event (owner thread only; the caller checked the room).
    #[inline]
    fn push(&self, len: usize, node: u32, kind: u32, ts: u64) {
        // SAFETY: `len < capacity` (checked by the caller); only the owner
        // writes slots at or above the published length.
        unsafe { *(*self.events.add(len)).get() = Event { ts, node, kind } };
        self.len.store(len + 1, Ordering::Release);
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

/// The `trace` metric.
pub(crate) struct Trace {
    words: Vec<Word>,
    capacity: usize,
    monotonic: bool,
}

static TRACE: OnceLock<Trace> = OnceLock::new();

/// Sets the timeline up (once, at start-up): `capacity` events per thread,
/// timestamps from `CLOCK_MONOTONIC` when `monotonic`, else the TSC.
pub(crate) fn init(capacity: u64, monotonic: bool) {
    TRACE.get_or_init(|| Trace {
        words: vec![Word {
            name: "trace@begin".into(),
            agg: Agg::Scratch,
        }],
        capacity: usize::try_from(capacity).unwrap_or(usize::MAX),
        monotonic,
    });
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
        let b: &'static Buffer = Box::leak(Box::new(Buffer::new(tid, self.capacity)));
        register(b);
        Some(Box::new(ThreadTrace {
            buf: b,
            monotonic: self.monotonic,
        }))
    }
}

/// A thread's recorder.
pub(crate) struct ThreadTrace {
    buf: &'static Buffer,
    monotonic: bool,
}

impl Stamper for ThreadTrace {
    #[inline]
    fn enter(&self, node: u32, row: &[AtomicU64]) {
        let b = self.buf;
        let len = b.len.load(Ordering::Relaxed);
        // SAFETY: `open` is the owner's (stampers run on the owner thread).
        let open = unsafe { &mut *b.open.get() };
        // Room for this begin, its end and the ends still owed.
        if b.capacity < 2 || len + *open > b.capacity - 2 {
            row[0].store(0, Ordering::Relaxed);
            b.dropped
                .store(b.dropped.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
            if b.full_at.load(Ordering::Relaxed) == 0 {
                let ts = clock::wall(self.monotonic);
                b.full_at.store(ts.max(1), Ordering::Relaxed);
            }
            return;
        }
        b.push(len, node, 0, clock::wall(self.monotonic));
        *open += 1;
        row[0].store(1, Ordering::Relaxed);
    }

    /// The end's timestamp is the exit's wall stamp when the tree took one
    /// (a profile is on: one clock read saved), else read here.
    #[inline]
    fn exit(&self, node: u32, row: &[AtomicU64], wall: u64) {
        if row[0].load(Ordering::Relaxed) == 0 {
            return;
        }
        row[0].store(0, Ordering::Relaxed);
        let b = self.buf;
        // SAFETY: as in `enter`.
        let open = unsafe { &mut *b.open.get() };
        *open = open.saturating_sub(1);
        let ts = if wall != 0 {
            wall
        } else {
            clock::wall(self.monotonic)
        };
        let len = b.len.load(Ordering::Relaxed);
        // Always true: the begin reserved this slot.
        if len < b.capacity {
            b.push(len, node, 1, ts);
        }
    }
}

/// A recorder of thread `tid` with the monotonic clock, outside the
/// metric and its list (tests of the writer).
#[cfg(test)]
pub(crate) fn test_recorder(tid: u32, capacity: usize) -> (Box<dyn Stamper>, &'static Buffer) {
    let b: &'static Buffer = Box::leak(Box::new(Buffer::new(tid, capacity)));
    (
        Box::new(ThreadTrace {
            buf: b,
            monotonic: true,
        }),
        b,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorder(capacity: usize) -> (ThreadTrace, &'static Buffer) {
        let b: &'static Buffer = Box::leak(Box::new(Buffer::new(u32::MAX - 7, capacity)));
        (
            ThreadTrace {
                buf: b,
                monotonic: true,
            },
            b,
        )
    }

    fn rows(n: usize) -> Vec<[AtomicU64; 1]> {
        (0..n).map(|_| [AtomicU64::new(0)]).collect()
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
