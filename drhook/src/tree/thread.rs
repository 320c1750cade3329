//! Per-thread calling trees, the thread registry and the thread-local
//! pointer that reaches them.
//!
//! Each instrumented thread owns one [`ThreadData`], allocated at its first
//! instrumented call and never freed, so its numbers survive the thread and
//! appear in the profile. The current position in the tree (`current`) is a
//! single atomic pointer: the chain of parents from it to the root is
//! immutable, so one load gives any other thread (a crash handler, the
//! report writer) a consistent snapshot of the call stack.

use std::cell::UnsafeCell;
use std::ptr;
use std::sync::atomic::{AtomicI32, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use super::bits;
use super::mismatch::{self, Mismatch};
use super::node::{Node, NodeArena, ResumeStats, Segmented, SizeStats};
use super::site::Site;
use super::spans::{self, Entered, SpanState, Spans};
use crate::metrics::PlacedStamper;
use crate::sys::clock;
use crate::sys::segmented::Rows;

/// Lookup miss sentinel: its parent never equals a real node.
static SENTINEL: Node = Node {
    parent: ptr::without_provenance(1),
    site: ptr::null(),
    calls: std::sync::atomic::AtomicU64::new(0),
    wall_incl: std::sync::atomic::AtomicU64::new(0),
    wall_enter: std::sync::atomic::AtomicU64::new(0),
    cpu_incl: std::sync::atomic::AtomicU64::new(0),
    cpu_enter: std::sync::atomic::AtomicU64::new(0),
    index: u32::MAX,
    tag: 0,
};

/// Open-addressing map (parent index, site id) -> node, used when the
/// per-site last-node cache misses (a routine called from several parents).
struct NodeMap {
    keys: Vec<u64>,
    vals: Vec<*const Node>,
    len: usize,
}

const EMPTY: u64 = u64::MAX;

impl NodeMap {
    fn new() -> Self {
        NodeMap {
            keys: vec![EMPTY; 16],
            vals: vec![ptr::null(); 16],
            len: 0,
        }
    }

    #[inline]
    fn slot(&self, key: u64) -> usize {
        let h = key.wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> (64 - self.keys.len().trailing_zeros())) as usize
    }

    fn get(&self, key: u64) -> Option<*const Node> {
        let mask = self.keys.len() - 1;
        let mut i = self.slot(key);
        loop {
            match self.keys[i] {
                k if k == key => return Some(self.vals[i]),
                EMPTY => return None,
                _ => i = (i + 1) & mask,
            }
        }
    }

    fn insert(&mut self, key: u64, val: *const Node) {
        if (self.len + 1) * 2 > self.keys.len() {
            let cap = self.keys.len() * 2;
            let old_k = std::mem::replace(&mut self.keys, vec![EMPTY; cap]);
            let old_v = std::mem::replace(&mut self.vals, vec![ptr::null(); cap]);
            self.len = 0;
            for (k, v) in old_k.into_iter().zip(old_v) {
                if k != EMPTY {
                    self.insert(k, v);
                }
            }
        }
        let mask = self.keys.len() - 1;
        let mut i = self.slot(key);
        while self.keys[i] != EMPTY {
            i = (i + 1) & mask;
        }
        self.keys[i] = key;
        self.vals[i] = val;
        self.len += 1;
    }

    fn bytes(&self) -> usize {
        self.keys.capacity() * 8 + self.vals.capacity() * 8
    }
}

/// State only the owning thread touches.
struct Local {
    /// Per site id: the node last entered for that site on this thread.
    by_site: Vec<*const Node>,
    map: NodeMap,
    /// Tracing spans entered on this thread.
    spans: Spans,
}

/// One thread's calling tree and statistics. The fields the enter and exit
/// fast paths read (`current`, `mode`, `local`'s per-site cache) come first,
/// in one cache line.
#[repr(C)]
pub(crate) struct ThreadData {
    /// Top of the call stack (the root when nothing is active).
    current: AtomicPtr<Node>,
    /// The mode word (`setup::MODE`) as this thread's tree knows it: the
    /// process's (0 for private trees, whose callers pass their mode). Read
    /// by the fast paths next to `current` instead of the global. It only
    /// ever gains bits after start-up (`add_mode_bits`: a watch point turns
    /// the metric stampers on).
    mode: AtomicU32,
    /// Dr.Hook thread number (1 = main thread).
    pub(crate) tid: u32,
    /// `by_site.len()` when this tree's mode lets the call-free foreign and
    /// span enters run (no clock read through a call), else 0: their one
    /// bounds check is also the mode check. Written by the owner when
    /// `by_site` grows, and set to 0 by `add_mode_bits` from any thread.
    fast_len: AtomicUsize,
    local: UnsafeCell<Local>,
    pub(crate) arena: NodeArena,
    pub(crate) sizes: Segmented<SizeStats>,
    /// Resumed activations and suspended time per node (futures, spans).
    pub(crate) resumed: Segmented<ResumeStats>,
    /// Per node, the words of the process's metrics (`crate::metrics`);
    /// width 0 when none is installed. Rows exist from the node's creation,
    /// so events never allocate.
    pub(crate) rows: Rows,
    /// Depth of the engine's own work on this thread that may allocate
    /// (a new node, a profile write): allocation events seen meanwhile
    /// are not the program's (`front::alloc`). Owner thread only.
    pub(crate) internal: AtomicU32,
    /// This thread's stampers of metrics read at enter and exit, with
    /// their place in the row (offset, length); those that may run outside
    /// the panic guard first.
    stampers: Box<[PlacedStamper]>,
    /// How many of `stampers` may run outside the panic guard: the only
    /// ones that run while the mode lacks `bits::SLOW_STAMPS` (the others
    /// are then idle: the watch-point checks before the first watch point).
    fast_stampers: usize,
    pub(crate) root: *const Node,
    /// Kernel thread id (changes in a `fork` child).
    unix_tid: AtomicI32,
    /// Wall ticks at the thread's first instrumented call (or at the `fork`
    /// that made this thread a child process's).
    start_wall: AtomicU64,
    next: AtomicPtr<ThreadData>,
}

// SAFETY: `local` is only accessed by the owning thread (every access goes
// through the thread-local pointer or a private instance); everything else is
// immutable after construction or atomic.
unsafe impl Sync for ThreadData {}
// SAFETY: as above.
unsafe impl Send for ThreadData {}

impl ThreadData {
    /// A fresh tree with only its root, without metrics (a private tree).
    pub(crate) fn new(tid: u32, unix_tid: i32, start_wall: u64) -> Box<ThreadData> {
        Self::with_metrics(tid, unix_tid, start_wall, 0, Vec::new())
    }

    /// A fresh tree with rows of `width` metric words and these stampers.
    pub(crate) fn with_metrics(
        tid: u32,
        unix_tid: i32,
        start_wall: u64,
        width: usize,
        stampers: Vec<PlacedStamper>,
    ) -> Box<ThreadData> {
        let mut stampers = stampers;
        // What lets the stampers be called without a bounds check.
        assert!(
            stampers.iter().all(|s| s.offset + s.len <= width),
            "a stamper's words lie outside the row"
        );
        stampers.sort_by_key(|s| !s.fast);
        let fast_stampers = stampers.iter().take_while(|s| s.fast).count();
        let mut td = Box::new(ThreadData {
            current: AtomicPtr::new(ptr::null_mut()),
            mode: AtomicU32::new(0),
            tid,
            fast_len: AtomicUsize::new(0),
            local: UnsafeCell::new(Local {
                by_site: Vec::new(),
                map: NodeMap::new(),
                spans: Spans::new(),
            }),
            arena: NodeArena::new(),
            sizes: Segmented::new(),
            resumed: Segmented::new(),
            rows: Rows::new(width),
            stampers: stampers.into_boxed_slice(),
            fast_stampers,
            root: ptr::null(),
            unix_tid: AtomicI32::new(unix_tid),
            start_wall: AtomicU64::new(start_wall),
            next: AtomicPtr::new(ptr::null_mut()),
            internal: AtomicU32::new(0),
        });
        let root = td.arena.push(ptr::null(), ptr::null(), 0);
        td.rows.ensure(0);
        td.root = root;
        td.current.store(root as *mut Node, Ordering::Relaxed);
        td
    }

    /// The mode word of this tree (see the field).
    #[inline(always)]
    pub(crate) fn mode(&self) -> u32 {
        self.mode.load(Ordering::Relaxed)
    }

    /// Adds `bits_added` to this tree's mode; a slow clock among them stops
    /// the call-free enters.
    fn gain_mode_bits(&self, bits_added: u32) {
        self.mode.fetch_or(bits_added, Ordering::SeqCst);
        if bits_added & bits::SYSCALL_CLOCKS != 0 {
            self.fast_len.store(0, Ordering::SeqCst);
        }
    }

    /// Kernel thread id.
    #[inline]
    pub(crate) fn unix_tid(&self) -> i32 {
        self.unix_tid.load(Ordering::Relaxed)
    }

    /// Wall ticks at the thread's first instrumented call (or at the `fork`
    /// that made it a child process's thread).
    #[inline]
    pub(crate) fn start_wall(&self) -> u64 {
        self.start_wall.load(Ordering::Relaxed)
    }

    /// In a `fork` child, on the thread that forked: every count starts
    /// again at the fork, while the routines the thread is inside stay open
    /// (each counted as one call, entered at the fork).
    ///
    /// # Safety
    /// Owner thread only, with no other thread running (a `fork` child).
    unsafe fn restart_counts(&self, wall: u64, cpu: u64) {
        let zero = |a: &AtomicU64| a.store(0, Ordering::Relaxed);
        for i in 0..self.arena.len() {
            if let Some(n) = self.arena.get(i) {
                zero(&n.calls);
                zero(&n.wall_incl);
                zero(&n.cpu_incl);
            }
            if let Some(s) = self.sizes.get(i) {
                zero(&s.count);
                zero(&s.sum);
                zero(&s.min);
                zero(&s.max);
            }
            if let Some(r) = self.resumed.get(i) {
                zero(&r.resumes);
                zero(&r.suspended);
            }
            if let Some(row) = self.rows.get(i) {
                row.iter().for_each(zero);
            }
        }
        let mut p = self.current.load(Ordering::Relaxed) as *const Node;
        while !p.is_null() && p != self.root {
            // SAFETY: nodes on this thread's stack belong to its arena.
            let n = unsafe { &*p };
            n.calls.store(1, Ordering::Relaxed);
            n.wall_enter.store(wall, Ordering::Relaxed);
            n.cpu_enter.store(cpu, Ordering::Relaxed);
            p = n.parent;
        }
        self.start_wall.store(wall, Ordering::Relaxed);
        self.unix_tid.store(gettid(), Ordering::Relaxed);
    }

    /// Whether every call counted is one of the activations still open
    /// with one call each: true right after [`restart_after_fork`], until
    /// the thread calls anything.
    pub(crate) fn calls_are_only_open_activations(&self) -> bool {
        let mut open = 0u64;
        let mut p = self.current();
        while !p.is_null() && p != self.root {
            // SAFETY: nodes on a thread's stack belong to its arena.
            let n = unsafe { &*p };
            if n.calls.load(Ordering::Relaxed) != 1 {
                return false;
            }
            open += 1;
            p = n.parent;
        }
        let total: u64 = (0..self.arena.len())
            .filter_map(|i| self.arena.get(i))
            .map(|n| n.calls.load(Ordering::Relaxed))
            .sum();
        total == open
    }

    /// The top of this thread's stack (for readers on any thread).
    #[inline]
    pub(crate) fn current(&self) -> *const Node {
        self.current.load(Ordering::Acquire)
    }

    /// Enters `site` (whose id is `id`, or 0 when the site has not been
    /// registered yet) under the current node.
    ///
    /// Every call on this path is a tail call, so the common cases (call
    /// tree only, TSC wall clock) compile without saved registers.
    ///
    /// # Safety
    /// Must be called on the thread that owns `self` (or on a private
    /// instance), with `id` either 0 or `site`'s id.
    #[inline(always)]
    pub(crate) unsafe fn enter(&self, site: &'static Site, id: u32, mode: u32) -> *const Node {
        // SAFETY: caller contract.
        unsafe { self.enter_counted::<true>(site, id, mode) }
    }

    /// As [`ThreadData::enter`], for an activation that resumes an earlier
    /// call (a later poll of a future, a re-entered span): not counted as a
    /// call; its resumption is recorded with the wall time the call spent
    /// suspended since `suspended_since` (a stamp from
    /// [`ThreadData::exit_stamped`]; 0 = unknown).
    ///
    /// # Safety
    /// As [`ThreadData::enter`].
    pub(crate) unsafe fn resume(
        &self,
        site: &'static Site,
        id: u32,
        mode: u32,
        suspended_since: u64,
    ) -> *const Node {
        // SAFETY: caller contract.
        let node = unsafe { self.enter_counted::<false>(site, id, mode) };
        // SAFETY: `node` was just entered on this thread.
        let n = unsafe { &*node };
        if let Some(slot) = self.resumed.slot(n.index) {
            // SAFETY: slots are never freed; only this thread writes them.
            let r = unsafe { &*slot };
            r.resumes
                .store(r.resumes.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
            if mode & bits::WALL != 0 && suspended_since != 0 {
                let gap = n
                    .wall_enter
                    .load(Ordering::Relaxed)
                    .saturating_sub(suspended_since);
                r.suspended.store(
                    r.suspended.load(Ordering::Relaxed).saturating_add(gap),
                    Ordering::Relaxed,
                );
            }
        }
        node
    }

    #[inline(always)]
    unsafe fn enter_counted<const COUNT: bool>(
        &self,
        site: &'static Site,
        id: u32,
        mode: u32,
    ) -> *const Node {
        let cur = self.current.load(Ordering::Relaxed) as *const Node;
        // SAFETY: owner-thread access to `local` (caller contract).
        let by_site = unsafe { &(*self.local.get()).by_site };
        // (A site this thread has not seen yet may be out of range: a miss.)
        let cand = match by_site.get(id as usize) {
            Some(&n) => n,
            // SAFETY: owner thread, and no reference into `local` is live.
            None => return unsafe { self.enter_miss::<COUNT>(site, id, cur, mode) },
        };
        // SAFETY: `cand` is the sentinel or a node of this arena; both live forever.
        if unsafe { (*cand).parent } != cur {
            // SAFETY: owner thread, and no reference into `local` is live.
            return unsafe { self.enter_miss::<COUNT>(site, id, cur, mode) };
        }
        // SAFETY: `cand` is a node of this arena.
        unsafe { self.activate::<COUNT>(cand, mode) }
    }

    /// Counts the activation (unless it resumes a call), makes `node` the
    /// top of the stack and stamps its entry time.
    #[inline(always)]
    unsafe fn activate<const COUNT: bool>(&self, node: *const Node, mode: u32) -> *const Node {
        // SAFETY: `node` points into this thread's arena (caller contract).
        let n = unsafe { &*node };
        if COUNT {
            n.calls
                .store(n.calls.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        }
        self.current.store(node as *mut Node, Ordering::Release);
        if mode & bits::TIMED != 0 {
            if mode & bits::SYSCALL_CLOCKS != 0 {
                return self.stamp_enter_slow(node, mode);
            }
            // Clock last, so the instrumentation's own work stays outside
            // the region's measured time as far as possible.
            n.wall_enter.store(clock::cycles(), Ordering::Relaxed);
        }
        node
    }

    /// Leaves the activation `token` (returned by the matching `enter`).
    ///
    /// # Safety
    /// Owner thread only. `token` is only compared, never dereferenced
    /// unless it is found on this thread's stack.
    #[inline(always)]
    pub(crate) unsafe fn exit(&self, token: *const Node, size: u64, mode: u32) {
        // SAFETY: caller contract.
        unsafe { self.exit_stamped(token, size, mode) };
    }

    /// Entry stamps that need a function call or system call (CPU time,
    /// monotonic wall clock, counters), out of line so the common paths need
    /// no saved registers. Order: CPU, counters, wall (the mirror of exit).
    #[inline(never)]
    fn stamp_enter_slow(&self, node: *const Node, mode: u32) -> *const Node {
        // SAFETY: called by `activate` with a node of this arena.
        let n = unsafe { &*node };
        if mode & bits::CPU != 0 {
            n.cpu_enter.store(clock::thread_cpu_ns(), Ordering::Relaxed);
        }
        if mode & bits::METRICS != 0 {
            self.stamp_enter(n.index, mode);
        }
        if mode & bits::WALL != 0 {
            n.wall_enter
                .store(clock::wall(mode & bits::WALL_MONO != 0), Ordering::Relaxed);
        }
        // Opaque, so that the optimiser does not "know" that this returns its
        // argument and keep `node` in a saved register across the call in
        // `activate` instead of tail-calling this function.
        std::hint::black_box(node)
    }

    /// As [`ThreadData::exit`], returning the wall-clock stamp of the exit
    /// (0 when wall time is not measured), for a later
    /// [`ThreadData::resume`].
    ///
    /// # Safety
    /// As [`ThreadData::exit`].
    #[inline(always)]
    pub(crate) unsafe fn exit_stamped(&self, token: *const Node, size: u64, mode: u32) -> u64 {
        if mode & bits::SYSCALL_CLOCKS != 0 {
            // SAFETY: caller contract.
            return unsafe { self.exit_slow_clocks(token, size, mode) };
        }
        // Clock first, before any bookkeeping.
        let wall = if mode & bits::WALL != 0 {
            clock::cycles()
        } else {
            0
        };
        // SAFETY: caller contract.
        unsafe { self.leave(token, size, mode, wall, 0) };
        wall
    }

    /// Leaves `token` if it is on this thread's stack, first closing
    /// whatever was entered after it, without reporting anything; does
    /// nothing if it is not on the stack. Returns the exit's wall stamp (0
    /// when wall time is not measured or nothing was left). For front doors
    /// whose regions are not strictly nested (tracing spans).
    ///
    /// # Safety
    /// Owner thread only; the token is only compared.
    #[inline(always)]
    pub(crate) unsafe fn exit_lenient(&self, token: *const Node, mode: u32) -> u64 {
        let top = self.current.load(Ordering::Relaxed) as *const Node;
        if top == token {
            // SAFETY: `token` is the top of this thread's stack.
            return unsafe { self.exit_stamped(token, 0, mode) };
        }
        // SAFETY: caller contract.
        unsafe { self.exit_lenient_below(top, token, mode) }
    }

    /// [`ThreadData::exit_lenient`] of a token that is not the top of the
    /// stack: closes down to it if it is on the stack.
    ///
    /// # Safety
    /// As [`ThreadData::exit_lenient`]; `top` is the top of the stack.
    #[cold]
    #[inline(never)]
    unsafe fn exit_lenient_below(&self, top: *const Node, token: *const Node, mode: u32) -> u64 {
        let mut p = top;
        while !p.is_null() && p != self.root && p != token {
            // SAFETY: `p` is on this thread's stack.
            p = unsafe { (*p).parent };
        }
        if p != token || p.is_null() {
            return 0;
        }
        let wall = if mode & bits::WALL != 0 {
            clock::wall(mode & bits::WALL_MONO != 0)
        } else {
            0
        };
        let cpu = if mode & bits::CPU != 0 {
            clock::thread_cpu_ns()
        } else {
            0
        };
        // SAFETY: `token` is on this thread's stack, below `top`.
        unsafe { self.close_down_to(top, token, 0, mode, wall, cpu) };
        wall
    }

    /// Enters an activation of tracing span `id` (state `state`, site
    /// `site`): a first activation counts a call, a later one (the span
    /// was exited before, on any thread) resumes it. The activation goes
    /// on this thread's span stack for [`ThreadData::exit_span`].
    ///
    /// The fast path (a first activation under the node's usual parent,
    /// TSC or no clock, room on the stack) makes no call; anything else is
    /// one tail call that does the whole operation.
    ///
    /// # Safety
    /// As [`ThreadData::enter`].
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
    #[inline(always)]
    pub(crate) unsafe fn enter_span(
        &self,
        site: &'static Site,
        id: u64,
        state: &'static SpanState,
        mode: u32,
    ) {
        // SAFETY: owner thread; no other reference into `local` is live.
        let local = unsafe { &mut *self.local.get() };
        let n = local.spans.len;
        if n >= spans::CAP || state.stamp.load(Ordering::Acquire) != 0 {
            // SAFETY: caller contract.
            return unsafe { self.enter_span_slow(site, id, state, mode) };
        }
        let cur = self.current.load(Ordering::Relaxed) as *const Node;
        let i = site.raw_id() as usize;
        // A mode that just gained a slow clock (`add_mode_bits`) may still
        // see the old length for a moment: those calls skip the new stamps.
        if i >= self.fast_len.load(Ordering::Relaxed) {
            // SAFETY: caller contract.
            return unsafe { self.enter_span_slow(site, id, state, mode) };
        }
        // SAFETY: `i < fast_len <= by_site.len()`.
        let cand = unsafe { *local.by_site.get_unchecked(i) };
        // SAFETY: `cand` is the sentinel or a node of this arena.
        if unsafe { (*cand).parent } != cur {
            // SAFETY: caller contract.
            return unsafe { self.enter_span_slow(site, id, state, mode) };
        }
        // SAFETY: `cand` is a node of this arena.
        let node = unsafe { &*cand };
        node.calls
            .store(node.calls.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        self.current.store(cand as *mut Node, Ordering::Release);
        let e = &mut local.spans.items[n];
        e.id = id;
        e.token = cand;
        e.state = state;
        local.spans.len = n + 1;
        if mode & bits::WALL != 0 {
            node.wall_enter.store(clock::cycles(), Ordering::Relaxed);
        }
    }

    /// [`ThreadData::enter_span`], every case.
    ///
    /// # Safety
    /// As [`ThreadData::enter`].
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
    #[inline(never)]
    unsafe fn enter_span_slow(
        &self,
        site: &'static Site,
        id: u64,
        state: &'static SpanState,
        mode: u32,
    ) {
        // SAFETY: caller contract.
        let node = unsafe {
            match state.last_exit() {
                None => self.enter(site, site.raw_id(), mode),
                Some(since) => self.resume(site, site.raw_id(), mode, since),
            }
        };
        // SAFETY: owner thread; no other reference into `local` is live.
        unsafe { &mut (*self.local.get()).spans }.push(Entered {
            id,
            token: node,
            state,
        });
    }

    /// Leaves the activation of tracing span `id` on this thread, as
    /// [`ThreadData::exit_lenient`] does (closing what was entered after
    /// it; nothing if it is not entered here), and stamps the span's state
    /// for a later resumption.
    ///
    /// The fast path (the span is the top entry and its activation the top
    /// of the stack, TSC or no clock) makes no call; anything else is one
    /// tail call.
    ///
    /// # Safety
    /// Owner thread only.
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
    #[inline(always)]
    pub(crate) unsafe fn exit_span(&self, id: u64, mode: u32) {
        // SAFETY: owner thread; no other reference into `local` is live.
        let spans = unsafe { &mut (*self.local.get()).spans };
        let i = spans.len.wrapping_sub(1);
        if i >= spans::CAP {
            // SAFETY: caller contract.
            return unsafe { self.exit_span_slow(id, mode) };
        }
        if mode & bits::SYSCALL_CLOCKS != 0 {
            // SAFETY: caller contract.
            return unsafe { self.exit_span_slow(id, mode) };
        }
        let e = &spans.items[i];
        let (token, state) = (e.token, e.state);
        if e.id != id || !std::ptr::eq(self.current.load(Ordering::Relaxed), token) {
            // SAFETY: caller contract.
            return unsafe { self.exit_span_slow(id, mode) };
        }
        let wall = if mode & bits::WALL != 0 {
            clock::cycles()
        } else {
            0
        };
        spans.len = i;
        // SAFETY: `token` is the top of this thread's stack.
        unsafe { self.close(token, 0, mode, wall, 0) };
        // SAFETY: span states are static (never freed).
        unsafe { (*state).record_exit(id, wall) };
    }

    /// [`ThreadData::exit_span`], every case.
    ///
    /// # Safety
    /// Owner thread only.
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
    #[inline(never)]
    unsafe fn exit_span_slow(&self, id: u64, mode: u32) {
        // SAFETY: owner thread; the reference ends before the exit.
        let top = unsafe { &mut (*self.local.get()).spans }.pop_if(id);
        match top {
            Some(e) => {
                // SAFETY: caller contract; the token is only compared.
                let stamp = unsafe { self.exit_lenient(e.token, mode) };
                // SAFETY: span states are static (never freed).
                unsafe { (*e.state).record_exit(id, stamp) };
            }
            // SAFETY: caller contract.
            None => unsafe { self.exit_span_below(id, mode) },
        }
    }

    /// [`ThreadData::exit_span`] of a span that is not the top entry
    /// (spans left out of order, deep stacks) or not entered here.
    ///
    /// # Safety
    /// Owner thread only.
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
    #[cold]
    #[inline(never)]
    unsafe fn exit_span_below(&self, id: u64, mode: u32) {
        // SAFETY: owner thread; the reference ends before the exit.
        let spans = unsafe { &mut (*self.local.get()).spans };
        let Some(pos) = spans.find(id) else {
            return;
        };
        // Leaving it also closes what was entered after it. (The exit does
        // not touch the span stack.)
        // SAFETY: caller contract; the token is only compared.
        let stamp = unsafe { self.exit_lenient(spans.get(pos).token, mode) };
        for i in pos..spans.len {
            let e = spans.get(i);
            // SAFETY: span states are static (never freed).
            unsafe { (*e.state).record_exit(e.id, stamp) };
        }
        spans.truncate(pos);
    }

    /// The stampers' exit of node `index` (`bits::METRICS`), left at wall
    /// stamp `wall` (0 when wall time is not measured).
    #[inline]
    fn stamp_exit(&self, index: u32, wall: u64, mode: u32) {
        if let Some(row) = self.rows.get(index) {
            for s in self.active_stampers(mode) {
                // SAFETY: rows are `width` words, which every stamper's
                // words fit (checked in `with_metrics`).
                unsafe { s.exit(index, row, wall) };
            }
        }
    }

    /// The stampers' enter of node `index`, just made the top of the stack
    /// (`bits::METRICS`).
    #[inline]
    fn stamp_enter(&self, index: u32, mode: u32) {
        if let Some(row) = self.rows.get(index) {
            for s in self.active_stampers(mode) {
                // SAFETY: as in `stamp_exit`.
                unsafe { s.enter(index, row) };
            }
        }
    }

    /// The stampers that run in `mode`: all of them with
    /// `bits::SLOW_STAMPS`, else those that may run outside the panic
    /// guard.
    #[inline(always)]
    fn active_stampers(&self, mode: u32) -> &[PlacedStamper] {
        if mode & bits::SLOW_STAMPS != 0 {
            &self.stampers
        } else {
            // SAFETY: `fast_stampers <= stampers.len()` (with_metrics).
            unsafe { self.stampers.get_unchecked(..self.fast_stampers) }
        }
    }

    /// Closes the activations from `top` down to `target` (included; it
    /// gets `size`), as if each had been left now; the stampers see each
    /// exit.
    ///
    /// # Safety
    /// Owner thread only; `target` is on this thread's stack at or below
    /// `top`, the top of the stack.
    unsafe fn close_down_to(
        &self,
        top: *const Node,
        target: *const Node,
        size: u64,
        mode: u32,
        wall: u64,
        cpu: u64,
    ) {
        let mut p = top;
        while p != target {
            // SAFETY: `p` is on this thread's stack, above `target`.
            unsafe {
                let parent = (*p).parent;
                if mode & bits::METRICS != 0 {
                    self.stamp_exit((*p).index, wall, mode);
                }
                self.close(p, 0, mode, wall, cpu);
                p = parent;
            }
        }
        if mode & bits::METRICS != 0 {
            // SAFETY: `target` is on this thread's stack (caller contract).
            self.stamp_exit(unsafe { (*target).index }, wall, mode);
        }
        // SAFETY: `target` is on this thread's stack (caller contract).
        unsafe { self.close(target, size, mode, wall, cpu) };
    }

    #[inline(never)]
    unsafe fn exit_slow_clocks(&self, token: *const Node, size: u64, mode: u32) -> u64 {
        let wall = if mode & bits::WALL != 0 {
            clock::wall(mode & bits::WALL_MONO != 0)
        } else {
            0
        };
        if mode & bits::METRICS != 0 && std::ptr::eq(token, self.current.load(Ordering::Relaxed)) {
            // SAFETY: `token` is the top of this thread's stack.
            self.stamp_exit(unsafe { (*token).index }, wall, mode);
        }
        let cpu = if mode & bits::CPU != 0 {
            clock::thread_cpu_ns()
        } else {
            0
        };
        // SAFETY: caller contract.
        unsafe { self.leave(token, size, mode, wall, cpu) };
        wall
    }

    #[inline(always)]
    unsafe fn leave(&self, token: *const Node, size: u64, mode: u32, wall: u64, cpu: u64) {
        let cur = self.current.load(Ordering::Relaxed) as *const Node;
        if cur != token {
            // SAFETY: owner thread (caller contract).
            return unsafe { self.exit_mismatch(token, size, mode, wall, cpu) };
        }
        // SAFETY: `token` is this thread's top node. (Closing `token`
        // rather than `cur`: the new top then comes from the token's parent,
        // which does not wait for the load of `current`.)
        unsafe { self.close(token, size, mode, wall, cpu) };
    }

    #[inline(always)]
    unsafe fn close(&self, node: *const Node, size: u64, mode: u32, wall: u64, cpu: u64) {
        // SAFETY: `node` is a node of this arena (caller contract).
        let n = unsafe { &*node };
        if mode & bits::TIMED != 0 {
            if mode & bits::WALL != 0 {
                let d = wall.saturating_sub(n.wall_enter.load(Ordering::Relaxed));
                n.wall_incl
                    .store(n.wall_incl.load(Ordering::Relaxed) + d, Ordering::Relaxed);
            }
            if mode & bits::CPU != 0 {
                let d = cpu.saturating_sub(n.cpu_enter.load(Ordering::Relaxed));
                n.cpu_incl
                    .store(n.cpu_incl.load(Ordering::Relaxed) + d, Ordering::Relaxed);
            }
        }
        self.current.store(n.parent as *mut Node, Ordering::Release);
        if size != 0 && mode & bits::SIZES != 0 {
            self.record_size(n.index, size);
        }
    }

    #[cold]
    fn record_size(&self, index: u32, size: u64) {
        let Some(slot) = self.sizes.slot(index) else {
            return;
        };
        // SAFETY: slots are never freed; only this thread writes them.
        let s = unsafe { &*slot };
        let count = s.count.load(Ordering::Relaxed);
        s.count.store(count + 1, Ordering::Relaxed);
        s.sum.store(
            s.sum.load(Ordering::Relaxed).saturating_add(size),
            Ordering::Relaxed,
        );
        if count == 0 || size < s.min.load(Ordering::Relaxed) {
            s.min.store(size, Ordering::Relaxed);
        }
        if size > s.max.load(Ordering::Relaxed) {
            s.max.store(size, Ordering::Relaxed);
        }
    }

    /// Finds or creates the child of `cur` for `site`, then activates it.
    #[cold]
    #[inline(never)]
    unsafe fn enter_miss<const COUNT: bool>(
        &self,
        site: &'static Site,
        id: u32,
        cur: *const Node,
        mode: u32,
    ) -> *const Node {
        // SAFETY: caller contract.
        unsafe {
            let node = self.lookup_slow(site, id, cur);
            self.activate::<COUNT>(node, mode)
        }
    }

    /// Finds or creates the child of `cur` for `site`.
    unsafe fn lookup_slow(&self, site: &'static Site, id: u32, cur: *const Node) -> *const Node {
        // A site seen for the first time anywhere gets its id now.
        let id = if id == 0 { site.id() } else { id };
        // SAFETY: owner thread; no other reference into `local` is live.
        let local = unsafe { &mut *self.local.get() };
        // SAFETY: `cur` is a node of this arena.
        let (cur_index, cur_tag) = unsafe { ((*cur).index, (*cur).tag) };
        let key = ((cur_index as u64) << 32) | id as u64;
        let _own = self.internal_work();
        let node = match local.map.get(key) {
            Some(n) => n,
            None => {
                let n = self
                    .arena
                    .push(cur, site, Node::child_tag(cur_tag, self.tid));
                // SAFETY: `n` was just published in this arena.
                self.rows.ensure(unsafe { (*n).index });
                local.map.insert(key, n);
                n
            }
        };
        let i = id as usize;
        if i >= local.by_site.len() {
            let new_len = (i + 1).next_power_of_two().max(64);
            local.by_site.resize(new_len, &SENTINEL);
            // Stored, then the mode checked again: a concurrent
            // `add_mode_bits` either sees this length and clears it, or is
            // seen here (both sides are sequentially consistent).
            let slow = |m: u32| m & bits::SYSCALL_CLOCKS != 0;
            let fast = if slow(self.mode.load(Ordering::SeqCst)) {
                0
            } else {
                new_len
            };
            self.fast_len.store(fast, Ordering::SeqCst);
            if slow(self.mode.load(Ordering::SeqCst)) {
                self.fast_len.store(0, Ordering::SeqCst);
            }
        }
        local.by_site[i] = node;
        node
    }

    /// An exit that does not match the top of the stack.
    #[cold]
    #[inline(never)]
    unsafe fn exit_mismatch(&self, token: *const Node, size: u64, mode: u32, wall: u64, cpu: u64) {
        // SAFETY: owner thread (caller contract); the token is only compared.
        unsafe { self.exit_mismatch_by(|p| p == token, None, None, false, size, mode, wall, cpu) }
    }

    /// Reports a mismatched exit and repairs the tree. `is_target` tells
    /// whether a node of this thread's stack is the activation being left;
    /// nothing presented by the caller is ever dereferenced.
    #[allow(clippy::too_many_arguments)]
    unsafe fn exit_mismatch_by(
        &self,
        is_target: impl Fn(*const Node) -> bool,
        presented: Option<u64>,
        exit_site: Option<&'static Site>,
        name_differs: bool,
        size: u64,
        mode: u32,
        wall: u64,
        cpu: u64,
    ) {
        let top = self.current.load(Ordering::Relaxed) as *const Node;
        // Find the activation being left on this thread's stack.
        let mut depth_above = 0u32;
        let mut p = top;
        let mut target = None;
        while !p.is_null() && p != self.root {
            if is_target(p) {
                target = Some(p);
                break;
            }
            depth_above += 1;
            // SAFETY: `p` is on this thread's stack, hence a node of this arena.
            p = unsafe { (*p).parent };
        }
        let site_of = |n: *const Node| -> Option<&'static Site> {
            // SAFETY: only called with nodes of this arena.
            (!n.is_null() && n != self.root)
                .then(|| unsafe { (*n).site.as_ref() })
                .flatten()
        };
        // Only regions that may be left out of order (tracing spans) still
        // open above the activation being left: close them silently.
        let only_lenient_above = depth_above > 0
            && target.is_some_and(|t| {
                let mut q = top;
                while q != t {
                    if !site_of(q).is_some_and(Site::is_lenient) {
                        return false;
                    }
                    // SAFETY: `q` is on this thread's stack, above `t`.
                    q = unsafe { (*q).parent };
                }
                true
            });
        if name_differs || !only_lenient_above {
            let expected = if top.is_null() || top == self.root {
                0
            } else {
                // SAFETY: `top` is a node of this arena.
                unsafe { (*top).handle64() }
            };
            // A Rust token is shown in the handle encoding, like foreign handles.
            let presented = presented.unwrap_or_else(|| {
                // SAFETY: `t` was found on this thread's stack.
                target.map_or(0, |t| unsafe { (*t).handle64() })
            });
            mismatch::report(&Mismatch {
                tid: self.tid,
                leaving: if name_differs {
                    exit_site
                } else {
                    target.and_then(site_of).or(exit_site)
                },
                top: site_of(top),
                on_stack: target.is_some(),
                open_above: depth_above,
                token: presented,
                expected,
                name_differs,
            });
        }
        if let Some(target) = target {
            // Close the activations that were never left, then the one being left.
            // SAFETY: `target` was found on this thread's stack.
            unsafe { self.close_down_to(top, target, size, mode, wall, cpu) };
        }
    }

    /// The 64-bit handle of the top of the stack (0 when nothing is active).
    #[inline(always)]
    pub(crate) fn top_handle64(&self, node: *const Node) -> u64 {
        // SAFETY: `node` is a node of this arena (just entered).
        unsafe { (*node).handle64() }
    }

    /// The handle of node `n` of this thread (64-bit when `wide`).
    #[inline(always)]
    fn handle_of(&self, n: &Node, wide: bool) -> u64 {
        if wide {
            n.handle64()
        } else {
            n.handle32() as u64
        }
    }

    /// Enter for a foreign caller, returning the handle. The fast path (the
    /// last node of this site is under the current node, no slow clock)
    /// makes no calls; everything else is one out-of-line call.
    ///
    /// # Safety
    /// As [`ThreadData::enter`].
    #[inline(always)]
    pub(crate) unsafe fn enter_handle(
        &self,
        site: &'static Site,
        id: u32,
        mode: u32,
        wide: bool,
    ) -> u64 {
        // SAFETY: caller contract.
        match unsafe { self.enter_handle_fast(id, mode, wide) } {
            Some(h) => h,
            // SAFETY: caller contract.
            None => unsafe { self.enter_handle_slow(site, id, mode, wide) },
        }
    }

    /// The call-free part of [`ThreadData::enter_handle`]: `None` when the
    /// full path is needed (first call under this parent, slow clocks).
    ///
    /// # Safety
    /// As [`ThreadData::enter`]; `mode` is this tree's mode (`self.mode`).
    #[inline(always)]
    pub(crate) unsafe fn enter_handle_fast(&self, id: u32, mode: u32, wide: bool) -> Option<u64> {
        // (`fast_len` is 0 when the mode reads a clock through a call.)
        // SAFETY: caller contract; `fast_len <= by_site.len()`.
        let cand = unsafe { self.cached_child(id, self.fast_len.load(Ordering::Relaxed)) }?;
        // SAFETY: a node of this arena, child of the top.
        Some(unsafe { self.activate_handle::<false>(cand, mode, wide) })
    }

    /// The enter of a foreign handle in a mode that calls the stampers but
    /// needs no panic guard (`METRICS` without `OUT_OF_LINE`: the memory
    /// metric): the call-free path's lookup, then the stampers and the wall
    /// clock, inlined into the entry point's slow path, before its guard.
    /// `None` when the full path is needed (another mode, the first call
    /// of the site under this parent).
    ///
    /// # Safety
    /// As [`ThreadData::enter`]; `mode` is this tree's mode (`self.mode`).
    #[inline(always)]
    pub(crate) unsafe fn enter_handle_stamped(
        &self,
        id: u32,
        mode: u32,
        wide: bool,
    ) -> Option<u64> {
        if mode & (bits::OUT_OF_LINE | bits::METRICS) != bits::METRICS {
            return None;
        }
        // SAFETY: owner-thread access to `local` (caller contract).
        let len = unsafe { (*self.local.get()).by_site.len() };
        // SAFETY: caller contract; `len` is the table's length.
        let cand = unsafe { self.cached_child(id, len) }?;
        // SAFETY: a node of this arena, child of the top.
        Some(unsafe { self.activate_handle::<true>(cand, mode, wide) })
    }

    /// The node cached for site `id` if it is a child of the top of the
    /// stack (the foreign enters' call-free lookup); `len` bounds `id`.
    ///
    /// # Safety
    /// Owner thread only; `len <= by_site.len()`.
    #[inline(always)]
    unsafe fn cached_child(&self, id: u32, len: usize) -> Option<*const Node> {
        let cur = self.current.load(Ordering::Relaxed) as *const Node;
        // SAFETY: owner-thread access to `local` (caller contract).
        let local = unsafe { &*self.local.get() };
        if id as usize >= len {
            return None;
        }
        // SAFETY: `id < len <= by_site.len()`.
        let cand = unsafe { *local.by_site.get_unchecked(id as usize) };
        // SAFETY: `cand` is the sentinel or a node of this arena.
        if unsafe { (*cand).parent } != cur {
            return None;
        }
        Some(cand)
    }

    /// Makes `cand` (from [`ThreadData::cached_child`]) the top for a
    /// foreign handle: counts the call, runs the stampers when `STAMP`,
    /// stamps the wall clock last; returns its handle.
    ///
    /// # Safety
    /// Owner thread only; `cand` a child of the top of this thread's stack.
    #[inline(always)]
    unsafe fn activate_handle<const STAMP: bool>(
        &self,
        cand: *const Node,
        mode: u32,
        wide: bool,
    ) -> u64 {
        // SAFETY: `cand` is a node of this arena (caller contract).
        let n = unsafe { &*cand };
        n.calls
            .store(n.calls.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        self.current.store(cand as *mut Node, Ordering::Release);
        if STAMP {
            self.stamp_enter(n.index, mode);
        }
        let h = self.handle_of(n, wide);
        if mode & bits::WALL != 0 {
            n.wall_enter.store(clock::cycles(), Ordering::Relaxed);
        }
        h
    }

    /// The exit of a foreign handle in the mode of
    /// [`ThreadData::enter_handle_stamped`]: true when the handle was the
    /// top of the stack and has been left (the stampers, then the close),
    /// false (nothing changed) when the full path is needed.
    ///
    /// # Safety
    /// Owner thread only; `mode` is this tree's mode.
    #[inline(always)]
    pub(crate) unsafe fn exit_handle_stamped(
        &self,
        handle: u64,
        wide: bool,
        size: u64,
        mode: u32,
    ) -> bool {
        let not_ours = bits::OUT_OF_LINE | bits::STRICT;
        if handle == 0 || mode & (not_ours | bits::METRICS) != bits::METRICS {
            return false;
        }
        // SAFETY: caller contract.
        unsafe { self.exit_top_handle::<true>(handle, wide, size, mode) }
    }

    #[inline(never)]
    unsafe fn enter_handle_slow(&self, site: &'static Site, id: u32, mode: u32, wide: bool) -> u64 {
        // SAFETY: caller contract.
        let node = unsafe { self.enter(site, id, mode) };
        // SAFETY: `node` was just entered on this thread.
        self.handle_of(unsafe { &*node }, wide)
    }

    /// Fast exit for a foreign handle: closes the top activation if the
    /// handle designates it and returns true; returns false (having changed
    /// nothing) otherwise. Only for modes without slow clocks or strict
    /// regions, and a non-zero handle (the root's handle is 0, so the root
    /// never matches).
    ///
    /// # Safety
    /// Owner thread only.
    #[inline(always)]
    pub(crate) unsafe fn exit_handle_fast(
        &self,
        handle: u64,
        wide: bool,
        size: u64,
        mode: u32,
    ) -> bool {
        // SAFETY: caller contract.
        unsafe { self.exit_top_handle::<false>(handle, wide, size, mode) }
    }

    /// Leaves the top activation if `handle` designates it (the stampers
    /// first when `STAMP`); false, with nothing changed, otherwise.
    ///
    /// # Safety
    /// Owner thread only.
    #[inline(always)]
    unsafe fn exit_top_handle<const STAMP: bool>(
        &self,
        handle: u64,
        wide: bool,
        size: u64,
        mode: u32,
    ) -> bool {
        let wall = if mode & bits::WALL != 0 {
            clock::cycles()
        } else {
            0
        };
        let top = self.current.load(Ordering::Relaxed) as *const Node;
        // SAFETY: the top of the stack (possibly the root) is a node of this arena.
        let n = unsafe { &*top };
        if handle != self.handle_of(n, wide) {
            return false;
        }
        if STAMP {
            self.stamp_exit(n.index, wall, mode);
        }
        // SAFETY: `top` is this thread's top node.
        unsafe { self.close(top, size, mode, wall, 0) };
        true
    }

    /// Leaves the activation designated by a foreign handle (64-bit, or
    /// 32-bit when `wide` is false), optionally checking that `exit_site`
    /// names the same routine (`DR_HOOK_STRICT_REGIONS`).
    ///
    /// # Safety
    /// Owner thread only.
    #[inline(always)]
    pub(crate) unsafe fn exit_handle(
        &self,
        handle: u64,
        wide: bool,
        size: u64,
        mode: u32,
        exit_site: Option<&'static Site>,
        strict: bool,
    ) {
        let is_target = move |p: *const Node| {
            // SAFETY: only called with nodes of this thread's stack.
            let n = unsafe { &*p };
            // (The root's handles are 0, which never matches.)
            handle != 0
                && if wide {
                    handle == n.handle64()
                } else {
                    handle as u32 == n.handle32()
                }
        };
        let top = self.current.load(Ordering::Relaxed) as *const Node;
        let same_routine = |p: *const Node| match exit_site {
            // SAFETY: `p` is a node of this thread's stack.
            Some(s) if strict => unsafe { (*p).site.as_ref() }.is_some_and(|t| t.same_routine(s)),
            _ => true,
        };
        if top != self.root && is_target(top) && same_routine(top) {
            // SAFETY: `top` is the top of this thread's stack.
            return unsafe { self.exit(top, size, mode) };
        }
        let name_differs = top != self.root && is_target(top);
        // SAFETY: owner thread.
        unsafe {
            self.exit_mismatch_by(
                is_target,
                Some(handle),
                exit_site,
                name_differs,
                size,
                mode,
                0,
                0,
            );
        }
    }

    /// Marks the engine's own work on this thread until the value is
    /// dropped (owner thread only).
    #[inline]
    pub(crate) fn internal_work(&self) -> InternalWork<'_> {
        self.internal
            .store(self.internal.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        InternalWork(&self.internal)
    }

    /// Whether the engine's own work is in progress on this thread.
    #[inline]
    pub(crate) fn in_internal_work(&self) -> bool {
        self.internal.load(Ordering::Relaxed) != 0
    }

    /// The metric words of the top of this thread's stack (the root when
    /// no routine is active), for event sources on the owning thread. None
    /// when no metric is installed.
    #[inline]
    pub(crate) fn current_row(&self) -> Option<&[AtomicU64]> {
        let top = self.current.load(Ordering::Relaxed);
        // SAFETY: the top of the stack is a node of this arena.
        self.rows.get(unsafe { (*top).index })
    }

    /// Bytes this thread's tree has allocated.
    pub(crate) fn allocated_bytes(&self) -> usize {
        // SAFETY: read of capacities only, by the owner (reports call this for
        // statistics on their own thread's data) — races elsewhere are benign
        // as only sizes are read.
        let local = unsafe { &*self.local.get() };
        size_of::<ThreadData>()
            + self.arena.allocated_bytes()
            + self.sizes.allocated_bytes()
            + self.resumed.allocated_bytes()
            + self.rows.allocated_bytes()
            + local.by_site.capacity() * size_of::<*const Node>()
            + local.map.bytes()
            + local.spans.bytes()
    }
}

/// The engine's own work on a thread (see [`ThreadData::internal_work`]).
pub(crate) struct InternalWork<'a>(&'a AtomicU32);

impl Drop for InternalWork<'_> {
    fn drop(&mut self) {
        self.0.store(
            self.0.load(Ordering::Relaxed).saturating_sub(1),
            Ordering::Relaxed,
        );
    }
}

/// Marks the engine's own work on the calling thread (if it has a tree)
/// until the value is dropped.
pub(crate) fn internal_work() -> Option<InternalWork<'static>> {
    let td = current();
    // SAFETY: registered trees are never freed.
    (!td.is_null()).then(|| unsafe { &*td }.internal_work())
}

// ---------------------------------------------------------------------------
// Registry and thread-local access.

static HEAD: AtomicPtr<ThreadData> = AtomicPtr::new(ptr::null_mut());
static NEXT_TID: AtomicU32 = AtomicU32::new(2);
static THREAD_HINT: AtomicPtr<()> = AtomicPtr::new(ptr::null_mut());
static USED_TIDS: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());

/// Installs the function that proposes a thread's number at its first
/// instrumented call (e.g. `omp_get_thread_num() + 1` in OpenMP programs).
/// A proposal already taken by another thread is replaced by a fresh number,
/// so two threads never share one.
pub(crate) fn set_thread_number_hint(hint: fn() -> Option<u32>) {
    THREAD_HINT.store(hint as *mut (), Ordering::Release);
}

/// Reserves the next free thread number for a thread about to be created
/// (the creating thread asks, so that threads are numbered in the order
/// they are created — OpenMP runtimes create a team's threads in the order
/// of their OpenMP numbers — whatever the order they then start in).
pub(crate) fn reserve_tid() -> u32 {
    let mut used = USED_TIDS.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        let n = NEXT_TID.fetch_add(1, Ordering::Relaxed);
        if !used.contains(&n) {
            used.push(n);
            return n;
        }
    }
}

fn choose_tid(unix_tid: i32, reserved: Option<u32>) -> u32 {
    if let Some(n) = reserved {
        return n;
    }
    let mut used = USED_TIDS.lock().unwrap_or_else(|p| p.into_inner());
    let hint = THREAD_HINT.load(Ordering::Acquire);
    let proposal = if hint.is_null() {
        None
    } else {
        // SAFETY: only `fn() -> Option<u32>` values are stored in THREAD_HINT.
        let f: fn() -> Option<u32> =
            unsafe { std::mem::transmute::<*mut (), fn() -> Option<u32>>(hint) };
        f().filter(|&n| n >= 1)
    };
    let proposal = proposal.or_else(|| is_main_thread(unix_tid).then_some(1));
    let tid = match proposal {
        Some(n) if !used.contains(&n) => n,
        _ => loop {
            let n = NEXT_TID.fetch_add(1, Ordering::Relaxed);
            if !used.contains(&n) {
                break n;
            }
        },
    };
    used.push(tid);
    tid
}

/// The calling thread's tree, or null before its first instrumented call.
#[inline(always)]
pub(crate) fn current() -> *const ThreadData {
    super::tls::get() as *const ThreadData
}

fn gettid() -> i32 {
    // SAFETY: `gettid` has no preconditions.
    unsafe { libc::gettid() }
}

/// The process id, kept (a system call each time otherwise); reset in a
/// `fork` child.
static PID: AtomicI32 = AtomicI32::new(0);

/// Whether the thread `unix_tid` is the process's main thread (its id is
/// the process id).
fn is_main_thread(unix_tid: i32) -> bool {
    let mut pid = PID.load(Ordering::Relaxed);
    if pid == 0 {
        // SAFETY: `getpid` has no preconditions.
        pid = unsafe { libc::getpid() };
        PID.store(pid, Ordering::Relaxed);
    }
    unix_tid == pid
}

/// Creates and registers the calling thread's tree.
#[cold]
#[inline(never)]
pub(crate) fn register_current(mode: u32, start_wall: u64) -> &'static ThreadData {
    register_current_as(mode, start_wall, None)
}

/// As [`register_current`], with the number reserved for this thread by
/// [`reserve_tid`] (if any).
#[cold]
#[inline(never)]
pub(crate) fn register_current_as(
    mode: u32,
    start_wall: u64,
    reserved: Option<u32>,
) -> &'static ThreadData {
    let existing = current();
    if !existing.is_null() {
        // SAFETY: registered trees are never freed.
        return unsafe { &*existing };
    }
    let unix_tid = gettid();
    let tid = choose_tid(unix_tid, reserved);
    let layout = crate::metrics::layout();
    // Every thread gets the stampers of the installed stamped metrics, even
    // while the METRICS bit is clear: a watch point set later turns them
    // on by setting the bit (`metrics::watch`).
    let stampers = if layout.stamped {
        layout.stampers(tid)
    } else {
        Vec::new()
    };
    let boxed = ThreadData::with_metrics(tid, unix_tid, start_wall, layout.width, stampers);
    boxed
        .mode
        .store(mode | ADDED_BITS.load(Ordering::SeqCst), Ordering::SeqCst);
    let td: &'static ThreadData = Box::leak(boxed);
    let mut head = HEAD.load(Ordering::Acquire);
    loop {
        td.next.store(head, Ordering::Relaxed);
        match HEAD.compare_exchange_weak(
            head,
            td as *const _ as *mut _,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => break,
            Err(h) => head = h,
        }
    }
    // Bits added while this tree was being registered: either
    // `add_mode_bits` found it in the list, or they are seen here.
    std::sync::atomic::fence(Ordering::SeqCst);
    let added = ADDED_BITS.load(Ordering::SeqCst);
    if added & !td.mode() != 0 {
        td.gain_mode_bits(added);
    }
    super::tls::set(td as *const ThreadData as *const ());
    let hook = ON_NEW_THREAD.load(Ordering::Acquire);
    if !hook.is_null() {
        // SAFETY: only `fn()` values are stored in ON_NEW_THREAD.
        let f: fn() = unsafe { std::mem::transmute::<*mut (), fn()>(hook) };
        f();
    }
    td
}

static ON_NEW_THREAD: AtomicPtr<()> = AtomicPtr::new(ptr::null_mut());

/// Mode bits added after start-up (see [`add_mode_bits`]).
static ADDED_BITS: AtomicU32 = AtomicU32::new(0);

/// Adds `bits_added` to the mode of every thread's tree, present and future
/// (the caller has added them to `setup::MODE`, which the enters read):
/// `METRICS` when the first watch point is set. Modes only gain bits.
pub(crate) fn add_mode_bits(bits_added: u32) {
    ADDED_BITS.fetch_or(bits_added, Ordering::SeqCst);
    std::sync::atomic::fence(Ordering::SeqCst);
    for_each_thread(|td| td.gain_mode_bits(bits_added));
}

/// Installs the function called on each thread right after its tree is
/// registered (at its first instrumented call): per-thread set-up of other
/// subsystems (signal stack, floating-point traps), wired by `runtime`.
pub(crate) fn set_new_thread_hook(hook: fn()) {
    ON_NEW_THREAD.store(hook as *mut (), Ordering::Release);
}

/// Holds the thread numbering's lock across a `fork`, so that the child
/// does not inherit it locked by a thread it does not have.
pub(crate) fn lock_for_fork() -> std::sync::MutexGuard<'static, Vec<u32>> {
    USED_TIDS.lock().unwrap_or_else(|p| p.into_inner())
}

/// In a `fork` child: only the forking thread exists, so only its tree
/// stays registered (the others hold the parent's numbers, which are not
/// the child's), with its counts started again at the fork (`wall`, `cpu`
/// stamps of now) and its open routines kept open.
///
/// # Safety
/// Only in a `fork` child, before any other thread exists.
pub(crate) unsafe fn restart_after_fork(wall: u64, cpu: u64) {
    PID.store(0, Ordering::Relaxed);
    let me = current();
    if me.is_null() {
        HEAD.store(ptr::null_mut(), Ordering::Release);
        return;
    }
    // SAFETY: registered trees are never freed; this is the calling
    // thread's own, and it is the only thread (caller contract).
    let td = unsafe { &*me };
    td.next.store(ptr::null_mut(), Ordering::Release);
    // SAFETY: as above.
    unsafe { td.restart_counts(wall, cpu) };
    HEAD.store(me as *mut ThreadData, Ordering::Release);
}

/// Every registered thread, in no particular order. Lock-free and
/// async-signal-safe.
pub(crate) fn for_each_thread(mut f: impl FnMut(&'static ThreadData)) {
    let mut p = HEAD.load(Ordering::Acquire);
    while !p.is_null() {
        // SAFETY: registered trees are never freed.
        let td = unsafe { &*p };
        f(td);
        p = td.next.load(Ordering::Acquire);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::bits::{ON, SIZES, WALL};

    static S1: Site = Site::new("t::one", file!(), line!());
    static S2: Site = Site::new("t::two", file!(), line!());

    fn node(td: &ThreadData, i: u32) -> &Node {
        td.arena.get(i).unwrap()
    }

    #[test]
    fn tree_shape_and_counts() {
        let td = ThreadData::new(1, 0, 0);
        let (a, b) = (S1.id(), S2.id());
        // SAFETY: private instance.
        unsafe {
            for _ in 0..3 {
                let t1 = td.enter(&S1, a, ON);
                for _ in 0..2 {
                    let t2 = td.enter(&S2, b, ON);
                    td.exit(t2, 0, ON);
                }
                td.exit(t1, 0, ON);
            }
            // S2 directly under the root: a different node.
            let t = td.enter(&S2, b, ON);
            td.exit(t, 0, ON);
        }
        assert_eq!(td.arena.len(), 4);
        assert_eq!(node(&td, 1).calls.load(Ordering::Relaxed), 3);
        assert_eq!(node(&td, 2).calls.load(Ordering::Relaxed), 6);
        assert!(ptr::eq(node(&td, 2).parent, node(&td, 1)));
        assert_eq!(node(&td, 3).calls.load(Ordering::Relaxed), 1);
        assert!(ptr::eq(node(&td, 3).parent, td.root));
        assert_eq!(td.current(), td.root);
    }

    #[test]
    fn recursion_makes_a_chain_and_times_nest() {
        let td = ThreadData::new(1, 0, 0);
        let a = S1.id();
        let mut toks = Vec::new();
        // SAFETY: private instance.
        unsafe {
            for _ in 0..10_000 {
                toks.push(td.enter(&S1, a, ON | WALL));
            }
            while let Some(t) = toks.pop() {
                td.exit(t, 0, ON | WALL);
            }
        }
        assert_eq!(td.arena.len(), 10_001);
        let mut prev = u64::MAX;
        for i in 1..=10_000 {
            let n = node(&td, i);
            assert_eq!(n.calls.load(Ordering::Relaxed), 1);
            assert_eq!(n.depth16(), i);
            let w = n.wall_incl.load(Ordering::Relaxed);
            assert!(
                w <= prev,
                "inner activations cannot last longer than outer ones"
            );
            prev = w;
        }
    }

    #[test]
    fn sizes_are_recorded_per_node() {
        let td = ThreadData::new(1, 0, 0);
        let a = S1.id();
        // SAFETY: private instance.
        unsafe {
            for s in [5u64, 0, 2, 9] {
                let t = td.enter(&S1, a, ON | SIZES);
                td.exit(t, s, ON | SIZES);
            }
        }
        let s = td.sizes.get(1).unwrap();
        assert_eq!(s.count.load(Ordering::Relaxed), 3);
        assert_eq!(s.sum.load(Ordering::Relaxed), 16);
        assert_eq!(s.min.load(Ordering::Relaxed), 2);
        assert_eq!(s.max.load(Ordering::Relaxed), 9);
    }

    #[test]
    fn many_children_of_one_parent_use_the_map() {
        static SITES: [Site; 40] = [const { Site::new("t::many", file!(), line!()) }; 40];
        let td = ThreadData::new(1, 0, 0);
        let ids: Vec<u32> = SITES.iter().map(|s| s.id()).collect();
        // SAFETY: private instance.
        unsafe {
            for _round in 0..3 {
                for parent in [&S1, &S2] {
                    let p = td.enter(parent, parent.id(), ON);
                    for (s, &id) in SITES.iter().zip(&ids) {
                        let t = td.enter(s, id, ON);
                        td.exit(t, 0, ON);
                    }
                    td.exit(p, 0, ON);
                }
            }
        }
        assert_eq!(td.arena.len(), 1 + 2 * 41);
        for i in 1..td.arena.len() {
            assert_eq!(node(&td, i).calls.load(Ordering::Relaxed), 3);
        }
    }

    #[test]
    fn forgotten_exit_is_repaired_at_the_parent_exit() {
        super::mismatch::set_quiet_for_tests();
        let td = ThreadData::new(1, 0, 0);
        // SAFETY: private instance.
        unsafe {
            let outer = td.enter(&S1, S1.id(), ON | WALL);
            let _forgotten = td.enter(&S2, S2.id(), ON | WALL);
            td.exit(outer, 0, ON | WALL);
        }
        assert_eq!(td.current(), td.root);
        // Exit of something never entered is ignored.
        // SAFETY: private instance; the token is only compared.
        unsafe { td.exit(0x1234 as *const Node, 0, ON) };
        assert_eq!(td.current(), td.root);
    }

    #[test]
    fn foreign_handles_are_checked_not_dereferenced() {
        super::mismatch::set_quiet_for_tests();
        let td = ThreadData::new(3, 0, 0);
        // SAFETY: private instance.
        unsafe {
            let a = td.enter(&S1, S1.id(), ON);
            let ha = td.top_handle64(a);
            let b = td.enter(&S2, S2.id(), ON);
            let hb = td.top_handle64(b);
            // Garbage (including what would be a pointer) is ignored.
            for garbage in [1u64, 0xdead_beef, b as usize as u64, u64::MAX] {
                td.exit_handle(garbage, true, 0, ON, None, false);
                assert_eq!(td.current(), b);
            }
            // The right handle closes the top.
            td.exit_handle(hb, true, 0, ON, Some(&S2), true);
            assert_eq!(td.current(), a);
            // Re-enter B, then close A directly: B is closed with it.
            let _b2 = td.enter(&S2, S2.id(), ON);
            td.exit_handle(ha, true, 0, ON, Some(&S1), false);
            assert_eq!(td.current(), td.root);
            // 32-bit handles.
            let a = td.enter(&S1, S1.id(), ON);
            let h32 = (*a).handle32();
            assert_eq!(h32, crate::tree::handle::encode32(1, (*a).index));
            td.exit_handle(h32 as u64 ^ 1, false, 0, ON, None, false);
            assert_eq!(td.current(), a);
            td.exit_handle(h32 as u64, false, 0, ON, None, false);
            assert_eq!(td.current(), td.root);
            // Strict regions: the right handle with another routine's name is
            // a mismatch; the activation is still closed (it is on the stack).
            let a = td.enter(&S1, S1.id(), ON);
            let ha = td.top_handle64(a);
            td.exit_handle(ha, true, 0, ON, Some(&S2), true);
            assert_eq!(td.current(), td.root);
        }
        // Another thread's handle (thread number differs) never matches.
        let other = crate::tree::handle::encode64(4, 1, 1);
        // SAFETY: private instance.
        unsafe {
            let a = td.enter(&S1, S1.id(), ON);
            td.exit_handle(other, true, 0, ON, None, false);
            assert_eq!(td.current(), a);
        }
    }

    #[test]
    fn span_activations_deep_out_of_order_and_resumed() {
        use crate::tree::spans::{CAP, SpanState};
        static SPAN_SITES: [Site; 3] = [const { Site::new("t::span", file!(), line!()) }; 3];
        static STATES: [SpanState; 2 * CAP + 8] = [const { SpanState::new() }; 2 * CAP + 8];
        let td = ThreadData::new(1, 0, 0);
        let mode = ON | WALL;
        let n = STATES.len();
        for (i, st) in STATES.iter().enumerate() {
            st.id.store(100 + i as u64, Ordering::Relaxed);
        }
        // SAFETY: private instance.
        unsafe {
            // Deeper than the inline stack, left in order.
            for (i, st) in STATES.iter().enumerate() {
                td.enter_span(&SPAN_SITES[i % 3], 100 + i as u64, st, mode);
            }
            for i in (0..n).rev() {
                td.exit_span(100 + i as u64, mode);
            }
            assert_eq!(td.current(), td.root);
            for st in &STATES {
                assert!(st.last_exit().is_some_and(|s| s > 0), "stamped");
            }
            // Out of order: leaving the outer one closes the inner one;
            // the inner one's later exit is ignored.
            for st in &STATES[..2] {
                st.stamp.store(0, Ordering::Relaxed);
            }
            td.enter_span(&SPAN_SITES[0], 100, &STATES[0], mode);
            td.enter_span(&SPAN_SITES[1], 101, &STATES[1], mode);
            td.exit_span(100, mode);
            assert_eq!(td.current(), td.root);
            td.exit_span(101, mode);
            assert_eq!(td.current(), td.root);
            // An exit of a span never entered here does nothing.
            td.exit_span(999, mode);
            // Entered again after an exit: a resumption, not a call.
            let calls = |i: u32| node(&td, i).calls.load(Ordering::Relaxed);
            let before = calls(1);
            td.enter_span(&SPAN_SITES[0], 100, &STATES[0], mode);
            td.exit_span(100, mode);
            assert_eq!(calls(1), before, "resumed, not counted");
            let r = td.resumed.get(1).unwrap();
            assert_eq!(r.resumes.load(Ordering::Relaxed), 1);
        }
        // SAFETY: private instance, no other reference into `local`.
        let spans = unsafe { &(*td.local.get()).spans };
        assert_eq!(spans.len, 0);
    }

    #[test]
    fn counters_are_read_once_per_enter_and_exit_and_nest() {
        use crate::tree::bits::{METRICS, SLOW_STAMPS};
        let fake = hpm::FakeBackend::new();
        fake.set_rate("instructions", 1.0);
        let counters = crate::metrics::counters::ThreadCounters::new(
            crate::metrics::counters::tests::fake_group(&fake, &["instructions"]),
        );
        // One event: its inclusive count, its entry value, enabled, running.
        let stamper = crate::metrics::PlacedStamper {
            offset: 0,
            len: 4,
            fast: false,
            stamper: Box::new(counters),
        };
        let td = ThreadData::with_metrics(1, 0, 0, 4, vec![stamper]);
        let mode = ON | METRICS | SLOW_STAMPS;
        // SAFETY: private instance.
        unsafe {
            fake.set_now_ns(1_000);
            let a = td.enter(&S1, S1.id(), mode);
            fake.set_now_ns(1_100);
            let b = td.enter(&S2, S2.id(), mode);
            fake.set_now_ns(1_400);
            td.exit(b, 0, mode);
            fake.set_now_ns(2_000);
            td.exit(a, 0, mode);
        }
        assert_eq!(fake.reads(), 4, "one group read per enter and per exit");
        let incl = |i: u32| td.rows.get(i).unwrap()[0].load(Ordering::Relaxed);
        assert_eq!((incl(1), incl(2)), (1_000, 300));
    }

    /// Counts its enters (word 0) and exits (word 1).
    struct Tally;
    impl crate::metrics::Stamper for Tally {
        fn enter(&self, _node: u32, row: &[AtomicU64]) {
            row[0].fetch_add(1, Ordering::Relaxed);
        }
        fn exit(&self, _node: u32, row: &[AtomicU64], _wall: u64) {
            row[1].fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn stampers_that_need_no_guard_have_their_own_foreign_path() {
        use crate::tree::bits::{METRICS, SIZES, SLOW_STAMPS, STRICT};
        let placed = |offset, fast| crate::metrics::PlacedStamper {
            offset,
            len: 2,
            fast,
            stamper: Box::new(Tally),
        };
        // The slow one first: the tree puts the fast ones first.
        let td = ThreadData::with_metrics(1, 0, 0, 4, vec![placed(0, false), placed(2, true)]);
        let mode = ON | WALL | SIZES | METRICS;
        td.mode.store(mode, Ordering::Relaxed);
        let words = |i: u32| -> Vec<u64> {
            let r = td.rows.get(i).unwrap();
            r.iter().map(|w| w.load(Ordering::Relaxed)).collect()
        };
        // SAFETY: private instance, owner thread.
        unsafe {
            // The first call makes the node (full path); the stamped path
            // takes the next ones, which the call-free one refuses.
            assert_eq!(td.enter_handle_stamped(S1.id(), mode, true), None);
            let h = td.enter_handle(&S1, S1.id(), mode, true);
            assert!(!td.exit_handle_stamped(h ^ 1, true, 0, mode), "not the top");
            assert!(!td.exit_handle_stamped(h, true, 0, mode | STRICT));
            assert!(td.exit_handle_stamped(h, true, 5, mode));
            for _ in 0..2 {
                assert_eq!(td.enter_handle_fast(S1.id(), mode, true), None);
                let h = td.enter_handle_stamped(S1.id(), mode, true).unwrap();
                assert!(td.exit_handle_stamped(h, true, 0, mode));
            }
            // Without SLOW_STAMPS only the fast stamper runs.
            assert_eq!(words(1), [0, 0, 3, 3]);
            // With it (a watch point, counters): the full path, both.
            let mode = mode | SLOW_STAMPS;
            assert_eq!(td.enter_handle_stamped(S1.id(), mode, true), None);
            let h = td.enter_handle(&S1, S1.id(), mode, true);
            assert!(!td.exit_handle_stamped(h, true, 0, mode));
            td.exit_handle(h, true, 0, mode, None, false);
        }
        assert_eq!(words(1), [1, 1, 4, 4]);
        assert_eq!(node(&td, 1).calls.load(Ordering::Relaxed), 4);
        assert_eq!(td.current(), td.root);
        assert_eq!(td.sizes.get(1).unwrap().sum.load(Ordering::Relaxed), 5);
    }
}
