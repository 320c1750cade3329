//! The threads a tool sees, for `monitor_broadcast_signal`: the main
//! thread and every thread between its `monitor_init_thread` and its
//! `monitor_fini_thread` (libmonitor's "application started, fini not
//! started"), by kernel thread id. Lock-free: a broadcast comes from a
//! signal handler (libmonitor's only try-locks its list and fails when it
//! cannot; this one never fails), and a thread id is signalled with
//! `tgkill`, which cannot reach another process's thread and answers
//! `ESRCH` for one that has just ended (a `pthread_t` of an ended thread
//! cannot be used safely).

use std::cell::Cell;
use std::ffi::c_int;
use std::sync::atomic::{AtomicI32, Ordering};

/// Threads seen at once (beyond them a thread is not signalled, and one
/// message says so).
const SLOTS: usize = 4096;

static LIVE: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];
/// The main thread's id (the thread that started the process, or the
/// forking thread in a child).
static MAIN: AtomicI32 = AtomicI32::new(0);

thread_local! {
    /// This thread's slot (`usize::MAX`: none).
    static SLOT: Cell<usize> = const { Cell::new(usize::MAX) };
}

fn gettid() -> i32 {
    // SAFETY: gettid has no preconditions.
    unsafe { libc::gettid() }
}

/// The process starts (or a fork child goes on) on this thread: it is the
/// main thread, and no other thread is alive.
pub(super) fn process_start(forked: bool) {
    if forked {
        for s in &LIVE {
            s.store(0, Ordering::Relaxed);
        }
        SLOT.with(|s| s.set(usize::MAX));
    }
    MAIN.store(gettid(), Ordering::Release);
}

/// This thread is seen by the tool from now on.
pub(super) fn thread_start() {
    let me = gettid();
    for (i, s) in LIVE.iter().enumerate() {
        if s.compare_exchange(0, me, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            SLOT.with(|c| c.set(i));
            return;
        }
    }
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !SAID.swap(true, Ordering::Relaxed) {
        crate::sys::diag(
            "drhook: more than 4096 threads at once: monitor_broadcast_signal leaves the others out",
        );
    }
}

/// This thread is no longer seen by the tool.
pub(super) fn thread_end() {
    let i = SLOT.with(|c| c.replace(usize::MAX));
    if i < SLOTS {
        LIVE[i].store(0, Ordering::Release);
    }
}

/// `monitor_broadcast_signal(sig)`: `sig` to every seen thread but the
/// caller. Async-signal-safe. 0, or -1 for an invalid signal number.
pub(super) fn broadcast(sig: c_int) -> c_int {
    if !(1..65).contains(&sig) {
        return -1;
    }
    let saved = crate::sys::errno();
    let me = gettid();
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() };
    let send = |tid: i32| {
        if tid != 0 && tid != me {
            // SAFETY: a signal to a thread of this process (tgkill checks
            // the thread group); an ended thread answers ESRCH, ignored.
            unsafe { libc::syscall(libc::SYS_tgkill, pid, tid, sig) };
        }
    };
    for s in &LIVE {
        send(s.load(Ordering::Acquire));
    }
    send(MAIN.load(Ordering::Acquire));
    crate::sys::set_errno(saved);
    0
}
