//! The threads a tool sees, for `monitor_broadcast_signal` and the
//! process's end (every thread still running gets its
//! `monitor_fini_thread` on itself, as libmonitor's "shootdown" gives it):
//! the main
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
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU8, Ordering};

/// Threads seen at once (beyond them a thread is not signalled, and one
/// message says so).
const SLOTS: usize = 4096;

static LIVE: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];
/// Each slot's thread: [`RUNNING`], [`FINI_STARTED`], [`FINI_DONE`].
static STATE: [AtomicU8; SLOTS] = [const { AtomicU8::new(0) }; SLOTS];
const RUNNING: u8 = 0;
const FINI_STARTED: u8 = 1;
const FINI_DONE: u8 = 2;
/// The process's end has begun (`monitor_block_shootdown` answers 1).
static IN_EXIT: AtomicBool = AtomicBool::new(false);
/// The main thread's id (the thread that started the process, or the
/// forking thread in a child).
static MAIN: AtomicI32 = AtomicI32::new(0);

thread_local! {
    /// This thread's slot (`usize::MAX`: none).
    static SLOT: Cell<usize> = const { Cell::new(usize::MAX) };
    /// `monitor_block_shootdown` on this thread.
    static BLOCKED: Cell<bool> = const { Cell::new(false) };
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
        IN_EXIT.store(false, Ordering::Relaxed);
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
            STATE[i].store(RUNNING, Ordering::Release);
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

/// Whether this thread's `monitor_fini_thread` is to run now (once: its
/// own end, or the process's end, whichever comes first).
/// Async-signal-safe.
pub(super) fn begin_fini() -> bool {
    let i = SLOT.with(|c| c.get());
    i >= SLOTS
        || STATE[i]
            .compare_exchange(RUNNING, FINI_STARTED, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
}

/// This thread's `monitor_fini_thread` has returned.
pub(super) fn fini_done() {
    let i = SLOT.with(|c| c.get());
    if i < SLOTS {
        STATE[i].store(FINI_DONE, Ordering::Release);
    }
}

/// `monitor_block_shootdown` (`true`, answering whether the process's end
/// has begun) and `monitor_unblock_shootdown`: while blocked, the process's
/// end does not run this thread's `monitor_fini_thread` (it waits for it).
pub(super) fn block(on: bool) -> bool {
    BLOCKED.with(|b| b.set(on));
    IN_EXIT.load(Ordering::Acquire)
}

/// Whether the process's end may run this thread's fini now.
pub(super) fn blocked() -> bool {
    BLOCKED.with(|b| b.get())
}

/// At the process's end, on the ending thread: every other thread still
/// running gets `sig`, whose handler runs its `monitor_fini_thread` on
/// it; this waits until each has finished it, giving up on the threads
/// that have not even started theirs when no thread made progress for
/// 10 s (a thread that blocks the signal, or `monitor_block_shootdown`
/// held) — libmonitor's rule and time.
pub(super) fn shootdown(sig: c_int) {
    IN_EXIT.store(true, Ordering::Release);
    let me = gettid();
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() };
    let mut last_started = 0usize;
    let mut since = std::time::Instant::now();
    loop {
        let (mut started, mut unstarted, mut unfinished) = (0usize, 0usize, 0usize);
        for (i, s) in LIVE.iter().enumerate() {
            let tid = s.load(Ordering::Acquire);
            if tid == 0 || tid == me {
                continue;
            }
            match STATE[i].load(Ordering::Acquire) {
                RUNNING => {
                    // SAFETY: a signal to a thread of this process.
                    unsafe { libc::syscall(libc::SYS_tgkill, pid, tid, sig) };
                    unstarted += 1;
                    unfinished += 1;
                }
                FINI_STARTED => {
                    started += 1;
                    unfinished += 1;
                }
                _ => started += 1,
            }
        }
        if unfinished == 0 {
            return;
        }
        if started > last_started {
            last_started = started;
            since = std::time::Instant::now();
        } else if unstarted > 0 && since.elapsed() > std::time::Duration::from_secs(10) {
            crate::sys::diag(&format!(
                "drhook: libmonitor: no monitor_fini_thread for {unstarted} thread(s) still running at the end (no progress for 10 s)"
            ));
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// Whether a thread other than the caller is seen (the process's end then
/// shoots them down).
pub(super) fn others() -> bool {
    let me = gettid();
    LIVE.iter().any(|s| {
        let t = s.load(Ordering::Acquire);
        t != 0 && t != me
    })
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
