//! Per-thread calling trees, the thread registry and the thread-local
//! pointer that reaches them.
//!
//! Each instrumented thread owns one [`ThreadData`], allocated at its first
//! instrumented call. When the thread ends, the profile layer keeps its
//! numbers in compact form (`profile::ended`) and the tree is freed once no
//! other thread can be reading it (`registry`: the list's walkers are
//! counted); the main thread's tree, and those of threads still running,
//! last until the profile is written. The current position in the tree (`current`) is a
//! single atomic pointer: the chain of parents from it to the root is
//! immutable, so one load gives any other thread (a crash handler, the
//! report writer) a consistent snapshot of the call stack.
//!
//! The tree's code lies in the files of this folder, each adding to the
//! one `ThreadData`:
//!
//! * here: the struct, its construction and mode, and the core enter and
//!   exit (activate, leave, close, the stampers' calls) that every front
//!   door builds on and the hot paths inline: kept in one file;
//! * `handles`: the foreign (C and Fortran) front door's paths, whose
//!   activations are named by handles;
//! * `span_activations`: tracing span activations (the span stack);
//! * `repair`: exits that do not match the top of the stack (lenient exits,
//!   mismatch reports and repair);
//! * `registry`: the thread registry (thread numbers, registration, the
//!   thread-local pointer, `fork`), and the restart of a tree in a `fork`
//!   child;
//! * `tests`: the unit tests.

use std::cell::UnsafeCell;
use std::ptr;
use std::sync::atomic::{AtomicI32, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use super::bits;
use super::node::{Node, NodeArena, ResumeStats, Segmented, SizeStats};
use super::site::Site;
use super::spans::Spans;
use crate::metrics::PlacedStamper;
use crate::sys::clock;
use crate::sys::segmented::Rows;

mod handles;
pub(crate) mod lazy;
mod registry;
mod repair;
mod span_activations;
mod words_cache;

pub(crate) use registry::{
    Pin, Registry, add_mode_bits, current, for_each_thread, for_each_thread_in, internal_work,
    lock_for_fork, number_for, register_current, register_current_as, reserve_tid,
    restart_after_fork, set_new_thread_hook, set_thread_end_hook, set_thread_number_hint,
    unregister_current,
};

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
    /// The allocation events' cache of the top's memory words.
    words_cache: words_cache::WordsCache,
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
    /// The node index and the address of the MPI metric's words in its row
    /// that the last MPI call's figures went to (`tree::mpi`; rows never
    /// move): a loop of one MPI call finds them with one compare. Owner
    /// thread only.
    pub(crate) mpi_row: (AtomicU32, AtomicPtr<AtomicU64>),
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
            mpi_row: (AtomicU32::new(u32::MAX), AtomicPtr::new(ptr::null_mut())),
            words_cache: words_cache::WordsCache::new(),
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
            self.stamp_enter(n, mode);
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

    /// The stampers' exit of node `index` (`bits::METRICS`), left at wall
    /// stamp `wall` (0 when wall time is not measured).
    #[inline]
    fn stamp_exit(&self, index: u32, wall: u64, mode: u32) {
        if let Some(row) = self.rows.get(index) {
            self.fold_heap_share();
            for s in self.active_stampers(mode) {
                // SAFETY: rows are `width` words, which every stamper's
                // words fit (checked in `with_metrics`).
                unsafe { s.exit(index, row, wall) };
            }
        }
    }

    /// The stampers' enter of node `n`, just made the top of the stack
    /// (`bits::METRICS`), before its entry time is stamped.
    #[inline]
    fn stamp_enter(&self, n: &Node, mode: u32) {
        if let Some(row) = self.rows.get(n.index) {
            self.fold_heap_share();
            let seen = crate::metrics::Seen {
                calls: n.calls.load(Ordering::Relaxed),
                wall_incl: n.wall_incl.load(Ordering::Relaxed),
                // (Only the root has no site, and it is never entered.)
                name: if n.site.is_null() {
                    ""
                } else {
                    // SAFETY: a non-null site lives forever.
                    unsafe { (*n.site).name() }
                },
                depth: n.tag & 0xFFFF,
            };
            for s in self.active_stampers(mode) {
                // SAFETY: as in `stamp_exit`.
                unsafe { s.enter(n.index, row, &seen) };
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

    /// Marks the engine's own work on this thread until the value is
    /// dropped (owner thread only).
    #[inline]
    pub(crate) fn internal_work(&self) -> InternalWork<'_> {
        self.internal
            .store(self.internal.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        InternalWork(&self.internal)
    }

    /// Marks the engine's (or the attach layer's) own work in progress on
    /// this thread until [`ThreadData::end_internal_work`] (for callers that
    /// cannot hold the guard of [`ThreadData::internal_work`]).
    pub(crate) fn begin_internal_work(&self) {
        std::mem::forget(self.internal_work());
    }

    /// Ends what [`ThreadData::begin_internal_work`] began.
    pub(crate) fn end_internal_work(&self) {
        drop(InternalWork(&self.internal));
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

#[cfg(test)]
mod tests;
