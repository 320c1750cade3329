//! The process-wide state fixed at initialisation: the mode word that every
//! enter and exit reads, and the facts the reports need (configuration,
//! clocks at start-up, measured overhead, program name).
//!
//! `runtime` builds it once; everything else only reads it — never
//! initialising it — so that reading it is safe in a signal handler.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::config::Config;
use crate::sys::clock::{ClockPair, WallSource};
use crate::tree::bits;
use crate::tree::overhead::{Measured, Overhead};

/// The mode word (see [`crate::tree::bits`]): `0` when Dr.Hook is off,
/// `UNINIT` before the environment has been read.
pub(crate) static MODE: AtomicU32 = AtomicU32::new(bits::UNINIT);
pub(crate) static ENGINE: OnceLock<Engine> = OnceLock::new();

/// State fixed at initialisation.
pub(crate) struct Engine {
    pub config: Config,
    pub mode: u32,
    pub wall_source: WallSource,
    /// (wall ticks, monotonic ns) at start-up.
    pub start: ClockPair,
    /// Unix time at start-up.
    pub start_unix: i64,
    /// The instrumentation's cost, measured at the first profile write.
    pub overhead: Measured,
    pub program: String,
}

impl Engine {
    /// The cost of an enter/exit pair in this engine's mode for a profile
    /// of `calls` calls, measured now if it never was (`true` with it then).
    pub(crate) fn overhead(&self, calls: u64) -> (Overhead, bool) {
        self.overhead.get(self.mode, calls)
    }
}

/// The engine if it is initialised and on, without ever initialising it
/// (for signal handlers and report writers).
pub(crate) fn engine_if_ready() -> Option<&'static Engine> {
    let m = MODE.load(Ordering::Acquire);
    if m == 0 || m & bits::UNINIT != 0 {
        None
    } else {
        ENGINE.get()
    }
}

// --- this process among the processes of a run ----------------------------
//
// Decided by `runtime` at start-up (see `config::process::decide`), changed
// by `fork` (a child), `exec` (the role passes to the new program) and
// `MPI_Init` (the rank becomes known); read by the profile writer.

use crate::config::process::TreeMarker;
use crate::config::task::Task;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64};

/// The task once MPI has told it (`myproc << 32 | nproc`); 0: the
/// configuration's.
static TASK: AtomicU64 = AtomicU64::new(0);
/// Whether this process writes its task's plain profile name.
static MAIN: AtomicBool = AtomicBool::new(true);
/// Unix time at which this process's profile starts when it is not the
/// engine's start-up (a `fork` child: the fork); 0 otherwise.
static START_UNIX: AtomicI64 = AtomicI64::new(0);
/// `CLOCK_MONOTONIC` nanoseconds at which this process's profile starts
/// when it is not the engine's start-up (a `fork` child); 0 otherwise.
static START_NS: AtomicU64 = AtomicU64::new(0);
/// What this process passes to its children (`root, claimed, heir`).
static MARKER: [AtomicU64; 3] = [const { AtomicU64::new(0) }; 3];

/// This process's task.
pub(crate) fn task(e: &Engine) -> Task {
    match TASK.load(Ordering::Acquire) {
        0 => e.config.task,
        v => Task {
            myproc: (v >> 32) as u32,
            nproc: v as u32,
        },
    }
}

/// Records the task MPI reported.
pub(crate) fn set_task(t: Task) {
    TASK.store(
        (t.myproc as u64) << 32 | t.nproc.max(t.myproc) as u64,
        Ordering::Release,
    );
}

/// Whether this process writes its task's plain profile name.
pub(crate) fn is_main() -> bool {
    MAIN.load(Ordering::Acquire)
}

/// Sets whether this process writes its task's plain profile name.
pub(crate) fn set_main(main: bool) {
    MAIN.store(main, Ordering::Release);
}

/// Unix time at which this process's profile starts.
pub(crate) fn start_unix(e: &Engine) -> i64 {
    match START_UNIX.load(Ordering::Acquire) {
        0 => e.start_unix,
        t => t,
    }
}

/// Makes this process's profile start at Unix time `t` (a `fork` child).
pub(crate) fn set_start_unix(t: i64) {
    START_UNIX.store(t, Ordering::Release);
    START_NS.store(crate::sys::clock::monotonic_ns().max(1), Ordering::Release);
}

/// Seconds of wall-clock time from this process's profile start (the
/// engine's start-up, or the fork) to `now_ns` (`CLOCK_MONOTONIC`): the
/// task's elapsed time in its profile.
pub(crate) fn elapsed_s(e: &Engine, now_ns: u64) -> f64 {
    let start = match START_NS.load(Ordering::Acquire) {
        0 => e.start.ns,
        t => t,
    };
    now_ns.saturating_sub(start) as f64 * 1e-9
}

/// What this process passes to its children.
pub(crate) fn marker() -> TreeMarker {
    TreeMarker {
        root: MARKER[0].load(Ordering::Acquire) as u32,
        claimed: MARKER[1].load(Ordering::Acquire) as u32,
        heir: MARKER[2].load(Ordering::Acquire) as u32,
    }
}

/// Sets what this process passes to its children.
pub(crate) fn set_marker(m: TreeMarker) {
    MARKER[0].store(m.root as u64, Ordering::Release);
    MARKER[1].store(m.claimed as u64, Ordering::Release);
    MARKER[2].store(m.heir as u64, Ordering::Release);
}
