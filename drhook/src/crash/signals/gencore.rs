//! `DR_HOOK_GENCORE=1` with `DR_HOOK_GENCORE_SIGNAL=n`: signal `n` makes
//! the process write a core file — the reference's `signal_gencore`. The
//! handler (once; the signal is ignored afterwards) raises the core-file
//! limit to the hard limit, prints
//!
//! ```text
//! PREFIX TIMESTR [signal_gencore@signals.rs] Received signal#10 and now calling abort() ...
//! ```
//!
//! and the thread's Dr.Hook calling tree (the reference prints its native
//! traceback there), resets `SIGABRT` to its default action and aborts.
//! Unlike the reference's (`fprintf`, `signal`), everything it calls is
//! async-signal-safe: one `write(2)` per line from a stack buffer, the
//! tree from static scratch space.

use std::sync::atomic::{AtomicBool, Ordering};

use super::handler::msg;
use crate::sys::linebuf::LineBuf;

/// The handler ran (a second signal finds the process aborting).
static FIRED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(sig: libc::c_int) {
    if FIRED.swap(true, Ordering::AcqRel) {
        return;
    }
    // SAFETY: sigaction/signal, getrlimit/setrlimit, sigprocmask and
    // abort are async-signal-safe; the structures are valid locals.
    unsafe {
        libc::signal(sig, libc::SIG_IGN);
        libc::signal(libc::SIGABRT, libc::SIG_DFL);
        let mut r: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_CORE, &mut r) == 0 {
            r.rlim_cur = r.rlim_max;
            libc::setrlimit(libc::RLIMIT_CORE, &r);
        }
    }
    let mut l = LineBuf::new();
    msg(&mut l, "signal_gencore", |l| {
        l.str("Received signal#")
            .u64(sig as u64)
            .str(" and now calling abort() ...");
    });
    let td = crate::tree::thread::current();
    if !td.is_null() {
        // SAFETY: the calling thread's own tree.
        super::report::print_tree(unsafe { &*td });
    }
    // SAFETY: as above; SIGABRT must not stay blocked for abort to dump.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGABRT);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::abort();
    }
}

/// Installs the handler of `sig` (after Dr.Hook's own handlers, so it
/// replaces one of them for that signal, as in the reference).
pub(super) fn install(sig: i32, show: bool) {
    // SAFETY: installs a plain `extern "C" fn(c_int)` handler.
    unsafe {
        let mut act: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
        libc::sigemptyset(&mut act.sa_mask);
        act.sa_flags = libc::SA_RESTART;
        libc::sigaction(sig, &act, std::ptr::null_mut());
    }
    if show {
        crate::diag!(
            "signal_drhook_init",
            "DR_HOOK_GENCORE=1: signal#{sig} ({}) writes a core file (abort)",
            super::names::signal_name(sig)
        );
    }
}
