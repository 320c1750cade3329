//! The crash path and the calling-tree printouts: signal handlers
//! (tracebacks of every thread, native backtrace, profile after a crash),
//! `[DrHookCallTree]` printing, `/proc/self/maps` lookups, Dr.Hook's abort
//! and the default report of a mismatched exit; `dump`: a look into a
//! running job (every thread's tree and a partial profile, on a signal or
//! when it hangs).

pub mod abort;
pub(crate) mod calltree;
pub(crate) mod drhack;
pub mod dump;
pub(crate) mod lines;
pub(crate) mod maps;
pub(crate) mod meminfo;
pub(crate) mod mismatch;
pub mod signals;
pub(crate) mod timed_kill;
pub mod watch;
