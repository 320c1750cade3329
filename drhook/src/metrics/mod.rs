//! Per-routine metrics beyond calls and time: one mechanism for the
//! counters of `hpmprof` and for whatever else a node accumulates (memory,
//! I/O).
//!
//! Calls, wall time and CPU time live in the calling-tree node itself (they
//! are the hot path). Any other metric is a group of 64-bit **words** per
//! node, in a per-thread side table (`Rows` in `sys::segmented`) whose row
//! width is fixed at start-up from the options:
//!
//! 1. `runtime` [`install`]s the metrics the options ask for, once, before
//!    the first tree exists; each gets an offset in the row ([`Installed`]).
//!    No metric installed: rows of width 0, nothing allocated, nothing done.
//! 2. A metric is fed either at every enter and exit of the thread's
//!    routines — a per-thread [`Stamper`] (counters read a counter group;
//!    `bits::METRICS` makes the engine take its out-of-line path, and
//!    `bits::SLOW_STAMPS`, unless every stamper is
//!    [`Metric::stamps_on_fast_paths`], keeps the foreign entry points
//!    behind their panic guard) — or by
//!    events on the current thread (an allocation, a write): the event
//!    source adds to the current node's row through
//!    `ThreadData::current_row` (one thread-local load, no lock, no
//!    allocation: rows are allocated when nodes are created). Neither
//!    touches `engine` or the node layout; an event-only metric costs the
//!    enter/exit path nothing.
//! 3. How each word sums over the tree is its [`Agg`]: the profile's
//!    `compute` turns the words of each node into a self and a total value
//!    per profile row by those rules (exactly as self and total time,
//!    recursion included), and the report writers read them by offset. The
//!    crash path prints [`Metric::calltree_fields`] in `[DrHookCallTree]`
//!    lines.
//!
//! Metrics:
//! * `counters` — hardware or software counters per routine (`hpmprof`).
//! * `mem` — memory per routine (`memprof`, `heap`, `stack`, ...): bytes
//!   and counts allocated and freed, leaked bytes, heap and stack
//!   high-water marks; events from the allocator wrappers
//!   (`front::alloc`), levels stamped at enter and exit.
//! * `io` — I/O per routine (`io`): bytes, operations and time inside
//!   I/O calls, events from the preload library's interposers
//!   (`front::io`).
//! * `watch` — watch points checked at every enter and exit; installed
//!   whenever Dr.Hook is on but stamped only once a watch point is set
//!   (the `METRICS` bit is set then; see `watch.rs`).
//! * `ranges` — NVTX / ROCTX ranges (`DR_HOOK_NVTX`, `DR_HOOK_ROCTX`):
//!   a range pushed at enter and popped at exit, through a tool found at
//!   run time; one word says which ranges the activation opened, two count
//!   the activations the spam filter skipped.
//! * `trace` — not a figure per routine but the timeline (`trace`): its
//!   stamper appends each enter and exit, with the node and a timestamp,
//!   to a bounded per-thread buffer that `profile::trace` writes out.

use std::sync::OnceLock;
use std::sync::atomic::AtomicU64;

use crate::sys::linebuf::LineBuf;

pub(crate) mod counters;
pub(crate) mod io;
pub(crate) mod mem;
pub mod mpi;
pub(crate) mod ranges;
pub(crate) mod trace;
pub(crate) mod watch;

/// How a word of a metric adds up over the calling tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Agg {
    /// Accumulated over the node's activations, children included (like
    /// time: counter deltas between enter and exit). Self = value − Σ
    /// children's values; a row's total = Σ over its outermost nodes.
    Inclusive,
    /// Added by events while the node is the top of its thread's stack
    /// (bytes allocated, bytes written). Self = value; a row's total = Σ
    /// over the subtrees of its outermost nodes.
    Event,
    /// A level observed while the node was active (a high-water mark).
    /// Self = value; total = the maximum over the subtree; rows take the
    /// maximum of their nodes.
    Peak,
    /// Working storage (an entry stamp): not reported.
    Scratch,
}

/// One word of a metric's per-node row.
#[derive(Clone, Debug)]
pub(crate) struct Word {
    /// Name in reports (an event name, a column title).
    #[allow(dead_code, reason = "read by the report writers of event metrics")]
    pub name: String,
    pub agg: Agg,
}

/// A per-routine metric (see the module documentation).
pub(crate) trait Metric: Send + Sync + 'static {
    /// Short name (`counters`, `memory`, `io`).
    fn name(&self) -> &'static str;
    /// The words each node holds for this metric.
    fn words(&self) -> &[Word];
    /// Whether the metric is read at every enter and exit (it has a
    /// [`Stamper`] per thread); false for metrics fed by events only.
    fn stamped(&self) -> bool {
        false
    }
    /// True for a stamped metric whose stamper never panics (bounded work,
    /// no formatting, no allocation): the foreign entry points then call
    /// it before their panic guard, on a short path of their own
    /// (`ThreadData::enter_handle_stamped`); any other stamped metric sets
    /// `bits::SLOW_STAMPS`, which sends them through the guard.
    fn stamps_on_fast_paths(&self) -> bool {
        false
    }
    /// The state of one thread for a stamped metric, created at the
    /// thread's first instrumented call on that thread, whose Dr.Hook
    /// thread number is `tid` (None: unavailable on this thread, which then
    /// records nothing for it).
    fn stamper(&self, _tid: u32) -> Option<Box<dyn Stamper>> {
        None
    }
    /// Appends this metric's fields for one node to a `[DrHookCallTree]`
    /// line. Runs in a signal handler: only formatting into `out`, no
    /// allocation, no lock.
    fn calltree_fields(&self, _words: &[AtomicU64], _out: &mut LineBuf) {}
    /// Whether the fields come before the times in a call-tree line (the
    /// reference prints its memory fields there); after them otherwise.
    fn calltree_before_times(&self) -> bool {
        false
    }
}

/// What a stamper may read of the node just entered, beyond its index:
/// the tree's own figures before this activation's time is added.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Seen {
    /// Calls of the node, this one included.
    pub calls: u64,
    /// Wall time of the node's earlier activations, in wall-clock ticks
    /// (0 when wall time is not measured).
    pub wall_incl: u64,
    /// The routine's name.
    pub name: &'static str,
    /// Depth below the root of the calling tree (1: an outermost routine),
    /// mod 2^16.
    pub depth: u32,
}

/// Per-thread state of a metric read at every enter and exit. Called on
/// the owning thread only.
pub(crate) trait Stamper: Send + Sync {
    /// After the node became the top of the stack; `node` is its index in
    /// the thread's tree, `row` this metric's words of that node.
    fn enter(&self, node: u32, row: &[AtomicU64]);
    /// As [`Stamper::enter`], with the node's figures (the stampers that
    /// need them: the NVTX/ROCTX ranges).
    #[inline]
    fn enter_seen(&self, node: u32, row: &[AtomicU64], _seen: &Seen) {
        self.enter(node, row);
    }
    /// Before the node is left (also when it is closed by the repair of a
    /// mismatched exit); `wall` is the exit's wall-clock stamp, already
    /// read (0 when wall time is not measured).
    fn exit(&self, node: u32, row: &[AtomicU64], wall: u64);
}

/// A thread's stamper with its metric's place in the row.
pub(crate) struct PlacedStamper {
    pub offset: usize,
    pub len: usize,
    /// Its metric's [`Metric::stamps_on_fast_paths`].
    pub fast: bool,
    pub stamper: Box<dyn Stamper>,
}

impl PlacedStamper {
    /// After node `node` (whose row is `row`) became the top of the stack.
    ///
    /// # Safety
    /// `row` holds this stamper's words: `offset + len <= row.len()` (the
    /// tree checks its stampers against its row width once, at creation).
    #[inline]
    pub unsafe fn enter(&self, node: u32, row: &[AtomicU64], seen: &Seen) {
        // SAFETY: caller contract.
        let words = unsafe { row.get_unchecked(self.offset..self.offset + self.len) };
        self.stamper.enter_seen(node, words, seen);
    }

    /// Before node `node` (whose row is `row`) is left at wall stamp
    /// `wall` (0: not measured).
    ///
    /// # Safety
    /// As [`PlacedStamper::enter`].
    #[inline]
    pub unsafe fn exit(&self, node: u32, row: &[AtomicU64], wall: u64) {
        // SAFETY: caller contract.
        let words = unsafe { row.get_unchecked(self.offset..self.offset + self.len) };
        self.stamper.exit(node, words, wall);
    }
}

/// A metric with its place in the row.
pub(crate) struct Installed {
    pub metric: &'static dyn Metric,
    /// First word of the metric in a node's row.
    pub offset: usize,
    /// Number of words.
    pub len: usize,
}

/// The metrics of this process, fixed at start-up.
#[derive(Default)]
pub(crate) struct Layout {
    pub metrics: Vec<Installed>,
    /// Words per node row.
    pub width: usize,
    /// Whether any metric is read at enter and exit.
    pub stamped: bool,
    /// The aggregation of every word of the row, in order.
    pub aggs: Vec<Agg>,
}

impl Layout {
    /// The installed metric named `name`.
    pub fn find(&self, name: &str) -> Option<&Installed> {
        self.metrics.iter().find(|m| m.metric.name() == name)
    }

    /// The calling thread's stampers of the stamped metrics (those that
    /// could open what they read on this thread); `tid` is the thread's
    /// Dr.Hook number.
    pub fn stampers(&self, tid: u32) -> Vec<PlacedStamper> {
        self.metrics
            .iter()
            .filter(|m| m.metric.stamped())
            .filter_map(|m| {
                Some(PlacedStamper {
                    offset: m.offset,
                    len: m.len,
                    fast: m.metric.stamps_on_fast_paths(),
                    stamper: m.metric.stamper(tid)?,
                })
            })
            .collect()
    }
}

static LAYOUT: OnceLock<Layout> = OnceLock::new();

/// Installs the process's metrics (once, at start-up, before any tree
/// exists); later calls change nothing. Returns the layout in force.
pub(crate) fn install(metrics: Vec<&'static dyn Metric>) -> &'static Layout {
    LAYOUT.get_or_init(|| {
        let mut l = Layout::default();
        for m in metrics {
            let len = m.words().len();
            l.aggs.extend(m.words().iter().map(|w| w.agg));
            l.stamped |= m.stamped();
            l.metrics.push(Installed {
                metric: m,
                offset: l.width,
                len,
            });
            l.width += len;
        }
        l
    })
}

/// The metrics in force (none before [`install`]).
pub(crate) fn layout() -> &'static Layout {
    static EMPTY: Layout = Layout {
        metrics: Vec::new(),
        width: 0,
        stamped: false,
        aggs: Vec::new(),
    };
    LAYOUT.get().unwrap_or(&EMPTY)
}
