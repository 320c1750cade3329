//! `fork`: the child is a process of its own, with a profile of its own.
//!
//! Registered with `pthread_atfork` when the engine starts, so this works
//! in any program that forks, preloaded or not. Before the fork the engine's
//! locks are taken (a child must not inherit a lock held by a thread it does
//! not have); in the child
//! * only the forking thread's tree remains, its counts start again at the
//!   fork while the routines it is inside stay open (each one call, entered
//!   at the fork) — the parent's numbers stay the parent's;
//! * the profile is a child's: its file name gets `.<command>.<pid>`
//!   appended (the parent's file is never touched), its start is the fork;
//! * a child that `DRHOOK_FOLLOW` does not select stops measuring.

use std::cell::UnsafeCell;
use std::sync::MutexGuard;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::config::process::command_name;
use crate::setup::{self, MODE};
use crate::sys::clock;
use crate::tree::{bits, site, thread};

/// The profile writer's, the site tables' and the thread numbering's locks.
type Locks = (
    MutexGuard<'static, ()>,
    site::ForkLock,
    MutexGuard<'static, Vec<u32>>,
);

/// The locks held from `prepare` to `parent`/`child`. Only the forking
/// thread touches this (glibc runs the three handlers on it, serialised).
struct Held(UnsafeCell<Option<Locks>>);

// SAFETY: accessed only by the thread inside `fork` (see above).
unsafe impl Sync for Held {}

static HELD: Held = Held(UnsafeCell::new(None));

/// Set in a child process until it has run anything instrumented: a child
/// that only `exec`s writes no profile.
static FRESH_CHILD: AtomicBool = AtomicBool::new(false);

extern "C" fn prepare() {
    let _ = std::panic::catch_unwind(|| {
        // The order every other path takes them in: writer, sites, numbers.
        let w = crate::profile::write::lock_for_fork();
        let s = site::lock_for_fork();
        let t = thread::lock_for_fork();
        // SAFETY: only the forking thread uses HELD.
        unsafe { *HELD.0.get() = Some((w, s, t)) };
    });
}

fn release() {
    // SAFETY: only the forking thread uses HELD.
    drop(unsafe { (*HELD.0.get()).take() });
}

extern "C" fn parent() {
    let _ = std::panic::catch_unwind(release);
}

extern "C" fn child() {
    let _ = std::panic::catch_unwind(|| {
        release();
        let Some(e) = setup::engine_if_ready() else {
            return;
        };
        let mode = MODE.load(Ordering::Relaxed);
        let wall = clock::wall(mode & bits::WALL_MONO != 0);
        let cpu = if mode & bits::CPU != 0 {
            clock::thread_cpu_ns()
        } else {
            0
        };
        // SAFETY: a fork child, before it can have started a thread.
        unsafe { thread::restart_after_fork(wall, cpu) };
        setup::set_main(false);
        setup::set_start_unix(clock::realtime().0);
        crate::profile::write::reopen();
        FRESH_CHILD.store(true, Ordering::Release);
        if !e.config.follow.follows(&command_name(&e.program)) {
            MODE.store(0, Ordering::Release);
        }
    });
}

/// Whether this process is a `fork` child that has run nothing
/// instrumented since the fork (no call, no new thread): its profile would
/// only repeat the stack it inherited.
pub(crate) fn is_fresh_child() -> bool {
    if !FRESH_CHILD.load(Ordering::Acquire) {
        return false;
    }
    let mut fresh = true;
    let mut n = 0;
    thread::for_each_thread(|td| {
        n += 1;
        fresh &= td.calls_are_only_open_activations();
    });
    let fresh = fresh && n <= 1;
    if !fresh {
        FRESH_CHILD.store(false, Ordering::Release);
    }
    fresh
}

/// Registers the handlers (once).
pub(super) fn register() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: three plain `extern "C"` functions.
        if unsafe { libc::pthread_atfork(Some(prepare), Some(parent), Some(child)) } != 0 {
            crate::diag!(
                "drhook_init",
                "Warning - pthread_atfork() failed: a fork child would write its parent's profile"
            );
        }
    });
}
