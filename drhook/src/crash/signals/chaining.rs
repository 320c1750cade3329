//! The end of the handler (step 6 of the module doc): the default actions
//! restored, the previously installed handler called (unless
//! `DR_HOOK_OPT=noprop`), and the signal re-raised with its default action.

use std::sync::atomic::Ordering;

use super::handler::msg;
use super::{CAUGHT, NOPROP, NSIG, PREV};
use crate::sys::linebuf::LineBuf;

pub(super) fn restore_defaults() {
    for sig in 1..NSIG as i32 {
        if CAUGHT[sig as usize].load(Ordering::Acquire) {
            // SAFETY: setting the default disposition.
            unsafe {
                let mut dfl: libc::sigaction = std::mem::zeroed();
                dfl.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(sig, &dfl, std::ptr::null_mut());
            }
        }
    }
}

pub(super) fn chain(sig: i32, info: *mut libc::siginfo_t, uc: *mut libc::c_void, nsigs: u32) {
    let f = "signal_drhook";
    let mut l = LineBuf::new();
    // SAFETY: written at installation, before the handler existed.
    let prev = unsafe { (*PREV.0.get())[sig as usize].assume_init_ref() };
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
    // SAFETY: async-signal-safe calls ending the process with `sig`'s default action.
    unsafe {
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(sig, &dfl, std::ptr::null_mut());
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::syscall(libc::SYS_tgkill, libc::getpid(), libc::gettid(), sig);
        crate::sys::exit_now(128 + sig);
    }
}
