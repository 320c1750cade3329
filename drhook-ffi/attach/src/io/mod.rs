//! I/O profiling by interposition (`DR_HOOK_OPT=io`, seed 001 — ECIOPROF):
//! the POSIX and stdio calls of a program that was not written for it,
//! per file and per Dr.Hook routine.
//!
//! * Per file (by its own path, `..` and links resolved at the first open
//!   by a name; system files — `/proc`, `/sys`, `/dev`, `/usr`... — as one
//!   record, `<system files>`; descriptors the program got
//!   otherwise — standard streams, pipes, sockets — grouped by kind at
//!   their first use): opens, reads and writes with their bytes, access
//!   size histograms (Darshan's ten bins), sequential and consecutive
//!   accesses, smallest and largest operations, time inside read, write,
//!   metadata, open and close calls, first and last use, stdio calls and
//!   bytes, the `setvbuf` buffer size, mappings, and the routine
//!   (`NAME@thread`) that opened it. Written at the end of each process to
//!   `drhook.io.<task>` (the first process of a run) or
//!   `drhook.io.<task>.<command>.<pid>` (its children), a JSON document
//!   with the ancestry of the process; `drhook io` reports it.
//! * Per routine: every call is also an event of the engine's `io` metric
//!   (bytes, operations, nanoseconds), written in `drhook.prof.N-io`.
//!
//! Whether calls are recorded is decided once, at the first interposed
//! call, from `DR_HOOK` and `DR_HOOK_OPT` (the `io` token); otherwise each
//! wrapper is one load, a branch and the real call. Recording is lock-free:
//! a fixed table of descriptors (the file each refers to) and a fixed table
//! of files, both of atomics; paths are interned without a lock too, and so
//! are the AIO requests in flight and the ancestry, so that a `fork` on
//! another thread never leaves a child a lock it cannot take. `errno` is
//! the real call's.
//!
//! The C library's own `write`s from inside stdio do not go through the
//! dynamic linker: they are inferred from the stream's buffer
//! (`stream`: flushes, the final one at `exit`). Not seen: system calls
//! made without the C library, and what the README lists.
//!
//! ## Files, in dependency order
//!
//! From an interposed `write` to a line of the report:
//! `exports` (the exported `write`) → [`posix`] (`rw`: the real call,
//! timed) → `record` (`data`: the counters of the descriptor's file, the
//! trace, the routine's event) → `table` (the lock-free counters) ←
//! `report` (`write_report`: the JSON document at the end).
//!
//! * `clock` — the I/O profile's time base (ticks to nanoseconds).
//! * `table` — the fixed tables: counters per file, file per descriptor.
//! * `naming` — the process's ancestry and the names of its files.
//! * `pattern` — path patterns (POSIX EREs): the traced paths, the system
//!   files grouped as one record (`DRHOOK_IO_EXCLUDE`/`_INCLUDE`).
//! * `trace` — the per-operation trace (`DRHOOK_IO_TRACE`).
//! * `paths` — path interning, descriptors classified by kind.
//! * `record` — what each kind of call adds to the tables.
//! * `stream` — stdio's flushes, from glibc's `FILE` buffer.
//! * `mpiio` — the MPI-IO level: `MPI_File_*` calls per file, handed
//!   over by the MPI calls tool (`events::MpiIoSink`).
//! * [`slots`] — the real functions ([`Source`], [`Slot`]).
//! * [`posix`], [`stdio`], [`aio`] — the wrappers' bodies.
//! * `report` — the monitor that writes the report.
//! * `exports` — the exported symbols (`__interpose_io!`).

mod clock;
mod mpiio;
mod naming;
mod paths;
mod pattern;
mod record;
mod reduce;
mod stream;
mod table;
mod trace;

pub mod aio;
mod exports;
pub mod posix;
pub mod printf;
mod report;
pub mod slots;
pub mod stdio;

pub use aio::*;
pub use posix::*;
pub use printf::*;
pub use report::IoMonitor;
pub(crate) use report::register_if_enabled;
pub use slots::{Preload, Slot, Source};
pub use stdio::*;
pub use table::{bin, c};

use std::sync::atomic::{AtomicU8, Ordering};

use crate::sys::env::dr_hook_opt_has;
use crate::sys::tls;

// --- the decision -------------------------------------------------------------

const UNDECIDED: u8 = 0;
const OFF: u8 = 1;
const ON: u8 = 2;
static MODE: AtomicU8 = AtomicU8::new(UNDECIDED);

/// Whether calls are recorded now on this thread.
#[inline(always)]
fn recording() -> bool {
    match MODE.load(Ordering::Relaxed) {
        ON => tls::get(tls::GUARD) & tls::OWN_WORK == 0,
        OFF => false,
        _ => decide() && tls::get(tls::GUARD) & tls::OWN_WORK == 0,
    }
}

/// Whether I/O is decided not profiled in this process (not merely not
/// yet decided).
fn decided_off() -> bool {
    MODE.load(Ordering::Relaxed) == OFF
}

/// Whether I/O is profiled in this process.
pub fn enabled() -> bool {
    match MODE.load(Ordering::Relaxed) {
        ON => true,
        OFF => false,
        _ => decide(),
    }
}

#[cold]
#[inline(never)]
fn decide() -> bool {
    let on = dr_hook_opt_has(&[b"IO", b"IOPROF"]);
    let m = if on { ON } else { OFF };
    match MODE.compare_exchange(UNDECIDED, m, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => {
            if on {
                clock::restart();
            }
            on
        }
        Err(other) => other == ON,
    }
}

/// Runs `f` with the layer's own I/O not recorded.
fn guard<R>(f: impl FnOnce() -> R) -> Option<R> {
    tls::guarded(tls::OWN_WORK, f)
}
