//! Where the numbers come from: the counter backend abstraction
//! ([`CounterBackend`], [`CounterGroup`]) and its implementations, plus the
//! wall clock. Everything above it (derived metrics, inclusive/exclusive
//! values, reports) is tested with the [`fake`] backend.
//!
//! - [`perf`]: Linux `perf_event_open(2)` (read(2) or `rdpmc`).
//! - [`rusage`]: `getrusage(2)` fields as counters, the last fallback.
//! - [`getrusage`]: the `getrusage(2)` call and its result ([`getrusage::Rusage`]).
//! - [`fake`]: a deterministic backend and clock for tests.
//! - [`clock`]: the wall-clock source of section timing.
//!
//! Depends on [`crate::events`] only.

pub mod clock;
pub mod fake;
pub mod getrusage;
pub mod perf;
pub mod rusage;

use std::cell::Cell;
use std::fmt;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::events::spec::EventSpec;

/// What a counter group observes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The calling thread only (libhpm sections, per-routine counters).
    CallingThread,
    /// The calling thread and every thread and process it creates after the
    /// group is opened (perf inheritance). Values of children are complete
    /// once the children have exited (seed §2.6). `hpmcount` probes its
    /// events with this scope but counts with [`Scope::Child`]: counts
    /// inherited from a running parent lose a child's whole count (or part
    /// of it) in some runs on Linux: 7 to 29 of 40 spawns of a shell loop
    /// in a small test program here (kernel 6.18), 40 of 150 runs of this
    /// crate's old unit test.
    ProcessTree,
    /// A child process that this one created and holds before its `exec`,
    /// with every thread and process it creates: counting starts at its
    /// `exec` (perf's `enable_on_exec`, as `perf stat` counts a command),
    /// so neither this process nor the child's set-up is counted. Values of
    /// the child's own children are complete once they have exited.
    Child(libc::pid_t),
    /// Every process and thread running on one CPU (system-wide counting,
    /// `perf_event_open(pid = -1, cpu = N)`, `hpmstat`). Needs root,
    /// `CAP_PERFMON` or `perf_event_paranoid <= 0`. Groups are opened
    /// disabled, as for [`Scope::ProcessTree`].
    Cpu(u32),
}

/// Enabled and running time of a group, in nanoseconds. When the kernel
/// multiplexes, `running < enabled` and values are scaled by
/// `enabled / running`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GroupTimes {
    /// Time the group was enabled.
    pub enabled_ns: u64,
    /// Time the group was actually counting.
    pub running_ns: u64,
}

/// Why a counter could not be opened.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpenErrorKind {
    /// The event does not exist here (no PMU, VM, unknown raw event).
    NotSupported,
    /// The kernel refuses (perf_event_paranoid, missing CAP_PERFMON, seccomp).
    Denied,
    /// perf_event_open itself is unavailable (ENOSYS).
    Unavailable,
    /// Out of file descriptors.
    TooManyFiles,
    /// Anything else.
    Other,
}

/// An error opening events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenError {
    /// Classification used for the fallback notice.
    pub kind: OpenErrorKind,
    /// Name of the event that failed (empty for the group leader).
    pub event: String,
    /// The OS error text.
    pub message: String,
}

impl OpenError {
    /// Classifies an `io::Error` from `perf_event_open`.
    pub fn from_io(event: &str, e: &io::Error) -> OpenError {
        let kind = match e.raw_os_error() {
            Some(libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV | libc::EINVAL) => {
                OpenErrorKind::NotSupported
            }
            Some(libc::EACCES | libc::EPERM) => OpenErrorKind::Denied,
            Some(libc::ENOSYS) => OpenErrorKind::Unavailable,
            Some(libc::EMFILE | libc::ENFILE) => OpenErrorKind::TooManyFiles,
            _ if e.kind() == io::ErrorKind::Unsupported => OpenErrorKind::NotSupported,
            _ => OpenErrorKind::Other,
        };
        OpenError {
            kind,
            event: event.to_string(),
            message: e.to_string(),
        }
    }
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.event.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.event, self.message)
        }
    }
}

impl std::error::Error for OpenError {}

/// An open group of counters, read as one unit.
///
/// `read` takes `&self` and must not allocate: it is the hot path. It may be
/// called from any thread (reading a thread's group from another thread
/// returns that thread's counts).
pub trait CounterGroup: Send + Sync {
    /// Number of values `read` writes.
    fn len(&self) -> usize;

    /// True when the group has no events.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes the current cumulative raw values into `values[..self.len()]`
    /// and returns the group's enabled/running times.
    fn read(&self, values: &mut [u64]) -> io::Result<GroupTimes>;

    /// Starts counting (groups are opened disabled for [`Scope::ProcessTree`]
    /// and [`Scope::Cpu`],
    /// enabled for [`Scope::CallingThread`], and start by themselves at the
    /// child's `exec` for [`Scope::Child`]).
    fn enable(&mut self) -> io::Result<()>;

    /// Stops counting.
    fn disable(&mut self) -> io::Result<()>;

    /// Whether reads go through user-space `rdpmc` instead of `read(2)`.
    fn uses_rdpmc(&self) -> bool {
        false
    }
}

/// A source of counter groups.
pub trait CounterBackend: Send + Sync {
    /// Short name for reports (`perf_event`, `getrusage`, `fake`).
    fn name(&self) -> &'static str;

    /// Opens `events` as one group. For [`Scope::CallingThread`] the group is
    /// enabled on return; for [`Scope::ProcessTree`] it is disabled; for
    /// [`Scope::Child`] it enables itself when the child calls `exec`.
    fn open_group(
        &self,
        events: &[EventSpec],
        scope: Scope,
    ) -> Result<Box<dyn CounterGroup>, OpenError>;

    /// Whether this backend can count `event` at all (without opening it).
    fn knows(&self, event: &EventSpec) -> bool;

    /// Whether the kernel restricted the group to user-space counting
    /// (e.g. perf_event_paranoid 2); reports show it.
    fn user_space_only(&self) -> bool {
        false
    }
}

/// Scales a raw count by `enabled / running` (multiplexing). Returns `None`
/// when the group never ran.
pub fn scale(raw: u64, times: GroupTimes) -> Option<f64> {
    if times.running_ns == 0 {
        return if times.enabled_ns == 0 && raw == 0 {
            Some(0.0)
        } else {
            None
        };
    }
    Some(raw as f64 * (times.enabled_ns as f64 / times.running_ns as f64))
}

thread_local! {
    static THREAD_SERIAL: Cell<u64> = const { Cell::new(0) };
}
static NEXT_SERIAL: AtomicU64 = AtomicU64::new(1);

/// A cheap process-unique id of the calling thread (no syscall after the
/// first call): backends check it before a read that only the owning thread
/// can do, the sessions to tell a section's owner.
pub(crate) fn thread_serial() -> u64 {
    THREAD_SERIAL.with(|s| {
        let v = s.get();
        if v != 0 {
            return v;
        }
        let v = NEXT_SERIAL.fetch_add(1, Ordering::Relaxed);
        s.set(v);
        v
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_classification() {
        let k = |errno| OpenError::from_io("x", &io::Error::from_raw_os_error(errno)).kind;
        assert_eq!(k(libc::ENOENT), OpenErrorKind::NotSupported);
        assert_eq!(k(libc::EACCES), OpenErrorKind::Denied);
        assert_eq!(k(libc::EPERM), OpenErrorKind::Denied);
        assert_eq!(k(libc::ENOSYS), OpenErrorKind::Unavailable);
        assert_eq!(k(libc::EMFILE), OpenErrorKind::TooManyFiles);
        assert_eq!(k(libc::EIO), OpenErrorKind::Other);
    }

    #[test]
    fn scaling() {
        let t = |e, r| GroupTimes {
            enabled_ns: e,
            running_ns: r,
        };
        assert_eq!(scale(100, t(10, 10)), Some(100.0));
        assert_eq!(scale(100, t(10, 5)), Some(200.0));
        assert_eq!(scale(0, t(0, 0)), Some(0.0));
        assert_eq!(scale(0, t(10, 0)), None);
    }
}
