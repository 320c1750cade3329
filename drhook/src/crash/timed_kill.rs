//! `DR_HOOK_TIMED_KILL=task:thread:signal:seconds,...`: a developer's
//! simulated kill — a one-shot timer (`CLOCK_BOOTTIME`) sends `signal` to
//! Dr.Hook thread `thread` (`-1`: each thread) of task `task` (`-1`: each
//! task) `seconds` after that thread's first instrumented call, with the
//! reference's line
//!
//! ```text
//! PREFIX TIMESTR [set_killer_timer@timed_kill.rs] Developer timer (1:1:15:0.5) expires after 0.500s through signal#15 (ntids=1)
//! ```
//!
//! The reference arms the timers at start-up, in an OpenMP parallel
//! region for the threads other than 1; here each thread arms its own when
//! it first enters an instrumented routine, so threads that are not
//! OpenMP's get theirs too.

use crate::config::lines::TimedKill;

/// Arms the calling thread's timers (`runtime`, at each thread's first
/// instrumented call).
pub(crate) fn arm_for_current_thread(items: &[TimedKill]) {
    if items.is_empty() {
        return;
    }
    let tid = crate::diag::caller_tid();
    for k in items
        .iter()
        .filter(|k| k.thread == -1 || k.thread == i64::from(tid))
    {
        // SAFETY: plain data; the timer is created for the calling thread
        // (its kernel id) and armed once; it is never deleted (it fires
        // once, as the reference's).
        let ok = unsafe {
            let mut sev: libc::sigevent = std::mem::zeroed();
            sev.sigev_notify = libc::SIGEV_THREAD_ID;
            sev.sigev_signo = k.signal;
            sev.sigev_notify_thread_id = libc::gettid();
            let mut timer: libc::timer_t = std::mem::zeroed();
            let whole = k.seconds.trunc();
            let its = libc::itimerspec {
                it_interval: libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                },
                it_value: libc::timespec {
                    tv_sec: whole as libc::time_t,
                    tv_nsec: ((k.seconds - whole) * 1e9) as libc::c_long,
                },
            };
            libc::timer_create(libc::CLOCK_BOOTTIME, &mut sev, &mut timer) == 0
                && libc::timer_settime(timer, 0, &its, std::ptr::null_mut()) == 0
        };
        if ok {
            crate::diag!(
                "set_killer_timer",
                "Developer timer ({}) expires after {:.3}s through signal#{} (ntids={})",
                k.text,
                k.seconds,
                k.signal,
                crate::sys::sysinfo::thread_count_hint().max(1)
            );
        } else {
            crate::diag!(
                "set_killer_timer",
                "Developer timer ({}) could not be set: {}",
                k.text,
                std::io::Error::last_os_error()
            );
        }
    }
}
