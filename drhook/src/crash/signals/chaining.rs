//! The end of the handler (step 6 of the module doc): the default actions
//! restored, the program's handler called if it was not called first
//! (a runtime that ends the process itself, see `view`; unless
//! `DR_HOOK_OPT=noprop`), and the signal re-raised with its default action.

use std::sync::atomic::Ordering;

use super::handler::msg;
use super::view::{self, own_default};
use super::{CAUGHT, NOPROP, NSIG};
use crate::sys::linebuf::LineBuf;

pub(super) fn restore_defaults() {
    for sig in 1..NSIG as i32 {
        if CAUGHT[sig as usize].load(Ordering::Acquire) {
            own_default(sig);
        }
    }
}

pub(super) fn chain(sig: i32, info: *mut libc::siginfo_t, uc: *mut libc::c_void, nsigs: u32) {
    let f = "signal_drhook";
    let mut l = LineBuf::new();
    let Some(prev) = view::get(sig) else { return };
    let h = prev.sa_sigaction;
    if NOPROP.load(Ordering::Relaxed) || h == libc::SIG_DFL || h == libc::SIG_IGN {
        msg(&mut l, f, |l| {
            l.str("Not configured (DR_HOOK_OPT=noprop) or no previous signal handler to call for signal#")
                .u64(sig as u64)
                .str(", nsigs = ")
                .u64(nsigs as u64);
        });
        return;
    }
    msg(&mut l, f, |l| {
        l.str("Calling previous signal handler at ")
            .hex(h as u64)
            .str(" for signal#")
            .u64(sig as u64);
    });
    // SAFETY: calling the handler that was installed before ours, with the
    // calling convention its flags declare.
    unsafe {
        if prev.sa_flags & libc::SA_SIGINFO != 0 {
            let f: extern "C" fn(i32, *mut libc::siginfo_t, *mut libc::c_void) =
                std::mem::transmute(h);
            f(sig, info, uc);
        } else {
            let f: extern "C" fn(i32) = std::mem::transmute(h);
            f(sig);
        }
    }
    msg(&mut l, f, |l| {
        l.str("Returned from previous signal handler for signal#")
            .u64(sig as u64)
            .str(", nsigs = ")
            .u64(nsigs as u64);
    });
}

pub(super) fn terminate(sig: i32) -> ! {
    own_default(sig);
    // SAFETY: async-signal-safe calls ending the process with `sig`'s default action.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::syscall(libc::SYS_tgkill, libc::getpid(), libc::gettid(), sig);
        crate::sys::exit_now(128 + sig);
    }
}

/// What the program's handler did with a signal [`call_first`] gave it.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    /// It returned and the program goes on (the signal handled, a fault
    /// repaired): Dr.Hook does nothing more.
    Continued,
    /// It means the process to end with the signal (it restored the
    /// default action and raised the signal again, or left a fault to
    /// repeat into the default action): Dr.Hook's report, then the end.
    Ending,
}

/// Calls the program's own handler of `sig` first, as the kernel would
/// have without Dr.Hook: its `sa_mask` (and `sig`, unless `SA_NODEFER`)
/// blocked for the call, `SA_RESETHAND` applied, the `SA_SIGINFO`
/// convention. `sig` itself stays blocked during the call, so that a
/// handler that ends the process by re-raising (after restoring the default
/// action) leaves the signal pending here instead of ending the process
/// before Dr.Hook's report. Nothing of Dr.Hook's is marked in progress
/// during the call: the handler may `siglongjmp` out of it.
/// Async-signal-safe.
pub(super) fn call_first(
    sig: i32,
    info: *mut libc::siginfo_t,
    uc: *mut libc::c_void,
    act: &libc::sigaction,
) -> Outcome {
    // SAFETY: signal sets are plain data; the mask calls are
    // async-signal-safe and act on the calling thread.
    let (old, before) = unsafe {
        let mut mask = act.sa_mask;
        libc::sigaddset(&mut mask, sig);
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::pthread_sigmask(libc::SIG_BLOCK, &mask, &mut old);
        let mut before: libc::sigset_t = std::mem::zeroed();
        libc::sigpending(&mut before);
        (old, before)
    };
    if act.sa_flags & libc::SA_RESETHAND != 0 {
        // SAFETY: a zeroed sigaction is SIG_DFL.
        let dfl: libc::sigaction = unsafe { std::mem::zeroed() };
        view::record(sig, &dfl);
    }
    let h = act.sa_sigaction;
    // SAFETY: the handler the program installed, called with the calling
    // convention its flags declare.
    unsafe {
        if act.sa_flags & libc::SA_SIGINFO != 0 {
            let f: extern "C" fn(i32, *mut libc::siginfo_t, *mut libc::c_void) =
                std::mem::transmute(h);
            f(sig, info, uc);
        } else {
            let f: extern "C" fn(i32) = std::mem::transmute(h);
            f(sig);
        }
    }
    // The default action now: in the program's view (its `sigaction`
    // reached the preload layer), or in the kernel (a program without the
    // preload layer replaced Dr.Hook's handler itself: Rust's standard
    // library does so for a fault that is not a stack overflow).
    // SAFETY: a zeroed sigaction, filled by the query.
    let mut kernel: libc::sigaction = unsafe { std::mem::zeroed() };
    let now_default = view::get(sig).is_none_or(|a| a.sa_sigaction == libc::SIG_DFL)
        || (view::own_sigaction(sig, std::ptr::null(), &mut kernel) == 0
            && kernel.sa_sigaction == libc::SIG_DFL);
    // SAFETY: as above.
    let raised = unsafe {
        let mut after: libc::sigset_t = std::mem::zeroed();
        libc::sigpending(&mut after);
        libc::sigismember(&after, sig) == 1 && libc::sigismember(&before, sig) == 0
    };
    // A fault the kernel raised (si_code > 0) repeats when the handler
    // returns without repairing it: into the default action now.
    // SAFETY: the kernel's siginfo (or null).
    let fault = super::names::SYNCHRONOUS.contains(&sig)
        && unsafe { info.as_ref() }.is_some_and(|i| i.si_code > 0);
    if now_default && (raised || fault) {
        // `sig` stays blocked (and pending if raised) until `terminate`.
        return Outcome::Ending;
    }
    // SAFETY: restores the mask of the interrupted code's delivery.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut()) };
    Outcome::Continued
}
