//! Crash tracebacks: signal handlers that print every thread's Dr.Hook
//! calling tree, a native backtrace, and write the profile.
//!
//! What the handler does, in order (compat §3.4, improved):
//! 0. the program's own handler of the signal first, as the kernel would
//!    have called it without Dr.Hook (`chaining::call_first`; unless
//!    `DR_HOOK_OPT=noprop`, or it is a runtime's handler that ends the
//!    process itself, `view`): if it returns and the program can go on (a
//!    handled SIGTERM, a repaired fault), that is all; if it restored the
//!    default action and raised the signal again, or left a fault to
//!    repeat, the steps below follow — the program's view of its
//!    dispositions is kept by `view`;
//!    A signal that asks the process to end (SIGHUP, SIGINT, SIGTERM)
//!    reaching Dr.Hook's handler from a handler the program installed
//!    after it (which calls the one it replaced, as `signal-hook` and so
//!    tokio do) is the program's to handle: nothing more either;
//! 1. a second fatal signal on the same thread ends the process at once;
//!    a signal on another thread while one is being handled waits for it
//!    (and is killed after the harakiri timeout);
//! 2. arms `alarm(DR_HOOK_HARAKIRI_TIMEOUT)` whose handler kills the
//!    process, so a crash never hangs;
//! 3. with several MPI tasks (or `DR_HOOK_USE_LOCKFILE=1`) takes an `flock`
//!    on `./drhook_lock` so the tasks print their tracebacks one after the
//!    other instead of interleaving them (the lock is released by the kernel
//!    even if a task is killed; the empty file stays);
//! 4. prints the signal, its cause, and the calling tree of every thread
//!    that is inside instrumented routines — the signalled thread first,
//!    then by thread number, each exactly once;
//! 5. in a forked helper process (bounded by a timeout, so a lock held by
//!    the crashed code cannot hang the program): the native backtrace of the
//!    signalled thread with module+offset and symbol names, and, except for
//!    SIGXCPU, the profile at its normal path;
//! 6. restores the default actions, calls the program's handler if step 0
//!    did not (a runtime that ends the process itself, e.g. gfortran's
//!    backtrace handler: its report comes after Dr.Hook's; not with
//!    `DR_HOOK_OPT=noprop`), and re-raises the signal with its default
//!    action, so the exit status is that of the signal.
//!
//! Steps 1–4 and 6 are async-signal-safe: no allocation, no locks, no
//! stdio — preallocated buffers, values cached at start-up, and `write(2)`.
//! From step 2 on the handler runs on its own crash stack (4 MiB reserved
//! at installation, one for the process: one thread handles at a time),
//! and so does the helper's copy, whatever stack the signal arrived on: a
//! thread that never entered a region, the program's own alternate stack
//! (Rust's standard library gives each of its threads 8 KiB for its
//! stack-overflow report). Dr.Hook gives its own alternate stack (256
//! KiB) to an instrumented thread that has none or a smaller one than 64
//! KiB, so that a stack overflow there is reported (`installation.rs`).
//! Other threads' stacks are read through their top-of-stack pointer, whose
//! parent chain is immutable, so a thread entering or leaving routines
//! during the crash cannot corrupt the output.
//!
//! The code is split by step: `names.rs` (signal names and the lists of
//! signals to catch), `installation.rs` (installing the handlers,
//! floating-point traps, alternate signal stacks, the panic hook),
//! `handler.rs` (the handler itself: steps 1–3, the harakiri alarm, the
//! lock file), `report.rs` (step 4: the signal, its cause, every thread's
//! calling tree), `helper.rs` (step 5: the forked helper process) and
//! `chaining.rs` (steps 0 and 6), `view.rs` (the program's view of its
//! dispositions). This file holds the state they share, set at
//! installation.

mod chaining;
pub(crate) mod dumpfiles;
mod gencore;
mod handler;
mod helper;
mod installation;
mod names;
mod report;
pub(crate) mod view;

use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicU32};

pub(crate) use installation::{
    alt_stack_for_untreed_thread, install, on_new_thread, release_alt_stack,
};
pub use installation::{init_this_thread, trap_fpe_by_default};
pub use names::{DEFAULT_SIGNALS, catchable_fatal, signal_name, signals_to_catch};
pub(crate) use view::call_program;
pub use view::program_action;

const NSIG: usize = 65;

// --- state (all set before the handlers are installed) ----------------------

static CAUGHT: [AtomicBool; NSIG] = [const { AtomicBool::new(false) }; NSIG];
static INSTALL_LOCK: std::sync::Mutex<bool> = std::sync::Mutex::new(false);
/// The installation's lock, held across a `fork` (the engine's
/// `pthread_atfork` handlers) so that a child never inherits it held.
pub(crate) struct ForkLock(#[allow(dead_code)] std::sync::MutexGuard<'static, bool>);

/// Takes the installation's lock for a `fork` (see [`ForkLock`]).
pub(crate) fn lock_for_fork() -> ForkLock {
    ForkLock(INSTALL_LOCK.lock().unwrap_or_else(|p| p.into_inner()))
}
/// Set (after the handlers) once `install` has installed them.
static INSTALLED: AtomicBool = AtomicBool::new(false);
static NOPROP: AtomicBool = AtomicBool::new(false);
static HARAKIRI: AtomicU32 = AtomicU32::new(500);
static LOCKFILE: AtomicBool = AtomicBool::new(false);
static COREDUMP: AtomicBool = AtomicBool::new(false);
static PROFILE_ON_CRASH: AtomicBool = AtomicBool::new(false);
static NATIVE_BACKTRACE: AtomicBool = AtomicBool::new(true);
/// FE_* bits to enable on every instrumented thread (0 = none).
static TRAP_BITS: AtomicI32 = AtomicI32::new(0);
static HANDLING: AtomicI32 = AtomicI32::new(0);
static NSIGS: AtomicU32 = AtomicU32::new(0);
static PROGRAM: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
static PROGRAM_LEN: AtomicU32 = AtomicU32::new(0);
/// The top of the crash stack (mapped at installation; null: the handler
/// runs in place), on which the handling thread writes the report and the
/// helper process writes the profile.
static CRASH_STACK: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
/// Bytes of the crash stack (reserved, touched only by a crash).
const CRASH_STACK_SIZE: usize = 4 << 20;

#[cfg(test)]
mod tests;
