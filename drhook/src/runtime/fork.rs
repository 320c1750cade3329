//! `fork`: the child is a process of its own, with a profile of its own.
//!
//! Registered with `pthread_atfork` when the engine starts, so this works
//! in any program that forks, preloaded or not, and also for the forks
//! nobody wraps (`daemon`, the C library's own). Before the fork every
//! lock of the engine is taken (a child must not inherit a lock held by a
//! thread it does not have), in the order they nest: first those of the
//! front doors above the engine ([`hold_across_fork`]: the tracing layer's
//! caches, the C and Fortran name tables), then the profile writer's, the
//! site tables', the thread numbers', the watch points' and the signal
//! installation's; a fork while the engine is starting on another thread
//! waits for the start to end. The rest of the engine is lock-free or set
//! once at the start. In the child
//! * only the forking thread's tree remains, its counts start again at the
//!   fork while the routines it is inside stay open (each one call, entered
//!   at the fork) — the parent's numbers stay the parent's;
//! * the profile is a child's: its file name gets `.<command>.<pid>`
//!   appended (the parent's file is never touched), its start is the fork;
//! * a child that `DRHOOK_FOLLOW` does not select stops measuring.

use std::cell::UnsafeCell;
use std::sync::MutexGuard;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, Ordering};

use crate::config::process::command_name;
use crate::setup::{self, MODE};
use crate::sys::clock;
use crate::tree::{bits, site, thread};

/// The engine's own locks, in the order they are taken: the profile
/// writer's, the ended threads', the site tables', the thread registry's,
/// then two that are never held while another is taken: the watch points'
/// and the signal installation's.
type Locks = (
    MutexGuard<'static, ()>,
    crate::profile::ended::Held,
    site::ForkLock,
    MutexGuard<'static, thread::Registry>,
    crate::crash::watch::ForkLock,
    crate::crash::signals::ForkLock,
);

/// The locks held from `prepare` to `parent`/`child`.
static HELD: ForkHeld<Locks> = ForkHeld::new();

/// A lock's guard held by the forking thread from a `prepare` to the
/// `release` of [`hold_across_fork`] (glibc runs the handlers on that
/// thread, serialised).
pub(crate) struct ForkHeld<G>(UnsafeCell<Option<G>>);

// SAFETY: accessed only by the thread inside `fork` (see above).
unsafe impl<G> Sync for ForkHeld<G> {}

impl<G> ForkHeld<G> {
    pub(crate) const fn new() -> Self {
        ForkHeld(UnsafeCell::new(None))
    }

    /// Keeps `guard` until [`ForkHeld::release`] (the `prepare` side).
    pub(crate) fn hold(&self, guard: G) {
        // SAFETY: only the forking thread uses it.
        unsafe { *self.0.get() = Some(guard) };
    }

    /// Drops the guard kept (the parent's and the child's side).
    pub(crate) fn release(&self) {
        // SAFETY: only the forking thread uses it.
        drop(unsafe { (*self.0.get()).take() });
    }
}

/// Front doors' locks taken before the engine's (`prepare`, `release`).
const OUTER: usize = 8;
static OUTER_PREPARE: [AtomicPtr<()>; OUTER] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; OUTER];
static OUTER_RELEASE: [AtomicPtr<()>; OUTER] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; OUTER];

/// Has the locks of a front door above the engine held across every
/// `fork` (the tracing layer's, the C and Fortran name tables of
/// `drhook-ffi`): `prepare` takes them just before the engine's own
/// (so they may be held while a site is interned), `release` lets them go
/// in the parent and in the child, after the engine's. Calling it again
/// with the same pair does nothing; at most eight pairs.
pub fn hold_across_fork(prepare: fn(), release: fn()) {
    register();
    let (p, r) = (prepare as *mut (), release as *mut ());
    for k in 0..OUTER {
        match OUTER_PREPARE[k].compare_exchange(
            std::ptr::null_mut(),
            p,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => {
                OUTER_RELEASE[k].store(r, Ordering::Release);
                return;
            }
            Err(q) if q == p => return,
            Err(_) => {}
        }
    }
}

/// The front doors' handlers registered so far (`prepare` side or
/// `release` side), in registration order.
fn each_outer(table: &[AtomicPtr<()>; OUTER], mut f: impl FnMut(fn())) {
    for slot in table {
        let p = slot.load(Ordering::Acquire);
        if p.is_null() {
            // A pair half registered has its release a moment later.
            continue;
        }
        // SAFETY: only `fn()` values are stored in these tables.
        f(unsafe { std::mem::transmute::<*mut (), fn()>(p) });
    }
}

/// The thread starting the engine (its kernel id; 0: none): a fork on
/// another thread waits until the start is over (a child would find the
/// engine's start state half made, and wait for it forever).
static STARTING: AtomicI32 = AtomicI32::new(0);

/// Marks the engine's start on this thread until the value is dropped
/// (the handlers are registered first, so that they see it).
pub(super) fn starting() -> impl Drop {
    struct Started;
    impl Drop for Started {
        fn drop(&mut self) {
            STARTING.store(0, Ordering::Release);
        }
    }
    register();
    // SAFETY: gettid has no preconditions.
    STARTING.store(unsafe { libc::gettid() }, Ordering::Release);
    Started
}

extern "C" fn prepare() {
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: gettid has no preconditions.
        let me = unsafe { libc::gettid() };
        loop {
            let s = STARTING.load(Ordering::Acquire);
            if s == 0 || s == me {
                break;
            }
            std::thread::yield_now();
        }
        each_outer(&OUTER_PREPARE, |f| f());
        // The order every other path takes them in: writer, ended threads,
        // sites, registry; the watch points' and the installation's hold no
        // other.
        let w = crate::profile::write::lock_for_fork();
        let e = crate::profile::ended::hold();
        let s = site::lock_for_fork();
        let t = thread::lock_for_fork();
        let p = crate::crash::watch::lock_for_fork();
        let i = crate::crash::signals::lock_for_fork();
        HELD.hold((w, e, s, t, p, i));
    });
}

fn release() {
    HELD.release();
    each_outer(&OUTER_RELEASE, |f| f());
}

extern "C" fn parent() {
    let _ = std::panic::catch_unwind(release);
}

extern "C" fn child() {
    let _ = std::panic::catch_unwind(|| {
        // The parent's threads that ended are not the child's.
        // SAFETY: only the forking thread uses HELD.
        if let Some(l) = unsafe { (*HELD.0.get()).as_mut() } {
            crate::profile::ended::clear_in_child(&mut l.1);
        }
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
        crate::profile::write::mark_fresh_child();
        crate::sample::after_fork_child();
        if !e.config.follow.follows(&command_name(&e.program)) {
            MODE.store(0, Ordering::Release);
        } else {
            crate::crash::dump::hang::restart_in_child();
        }
    });
}

/// Registers the handlers (once; no `Once`, whose state a child could
/// inherit half set).
fn register() {
    static DONE: AtomicBool = AtomicBool::new(false);
    if DONE.swap(true, Ordering::AcqRel) {
        return;
    }
    // SAFETY: three plain `extern "C"` functions.
    if unsafe { libc::pthread_atfork(Some(prepare), Some(parent), Some(child)) } != 0 {
        crate::diag!(
            "drhook_init",
            "Warning - pthread_atfork() failed: a fork child would write its parent's profile"
        );
    }
}

/// Forks while another thread holds a lock (`hold` takes it, for 300 ms)
/// and asserts that the child can take it (`take`, within 5 s; a child
/// that inherited it held waits forever and is ended by its `alarm`).
#[cfg(test)]
pub(crate) fn assert_child_can_take(what: &str, hold: fn() -> Box<dyn std::any::Any>, take: fn()) {
    register();
    let (tx, rx) = std::sync::mpsc::channel();
    let t = std::thread::spawn(move || {
        let g = hold();
        tx.send(()).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(300));
        drop(g);
    });
    rx.recv().unwrap();
    // SAFETY: the child only takes a lock and leaves with `_exit`.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: plain calls in the child.
        unsafe { libc::alarm(5) };
        take();
        // SAFETY: as above.
        unsafe { libc::_exit(0) };
    }
    let mut status = 0;
    // SAFETY: our child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    t.join().unwrap();
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "{what}: a fork child could not take the lock a thread held at the fork (status {status:#x})"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fork_child_can_take_every_engine_lock_a_thread_held() {
        assert_child_can_take(
            "the profile writer's",
            || Box::new(crate::profile::write::lock_for_fork()),
            || drop(crate::profile::write::lock_for_fork()),
        );
        assert_child_can_take(
            "the site tables'",
            || Box::new(site::lock_for_fork()),
            || drop(site::lock_for_fork()),
        );
        assert_child_can_take(
            "the thread numbers'",
            || Box::new(thread::lock_for_fork()),
            || drop(thread::lock_for_fork()),
        );
        assert_child_can_take(
            "the watch points'",
            || Box::new(crate::crash::watch::lock_for_fork()),
            || drop(crate::crash::watch::lock_for_fork()),
        );
        assert_child_can_take(
            "the signal installation's",
            || Box::new(crate::crash::signals::lock_for_fork()),
            || drop(crate::crash::signals::lock_for_fork()),
        );
    }

    #[test]
    fn a_fork_waits_for_the_engine_start_on_another_thread() {
        register();
        let (tx, rx) = std::sync::mpsc::channel();
        let t = std::thread::spawn(move || {
            let s = starting();
            tx.send(()).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(300));
            drop(s);
        });
        rx.recv().unwrap();
        // SAFETY: the child only reads an atomic and leaves with `_exit`.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            let code = (STARTING.load(Ordering::Acquire) != 0) as i32;
            // SAFETY: a plain call in the child.
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        // SAFETY: our child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        t.join().unwrap();
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "the child was forked in the middle of the engine's start (status {status:#x})"
        );
    }
}
