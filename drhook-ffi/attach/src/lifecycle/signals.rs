//! `sigaction`, `signal`, `bsd_signal` and `sysv_signal`: the program's
//! view of the signals Dr.Hook catches. Dr.Hook's handler stays in front;
//! the program asking for the disposition of such a signal gets its own
//! (what it was before Dr.Hook, then what the program set), and a handler
//! it installs becomes the one Dr.Hook's handler calls first (the engine's
//! `crash::signals::view`). Every other call is the real one. A runtime
//! that installs its handler only over the default (Rust's stack-overflow
//! handler) then installs it, and the program's handlers win.
//!
//! A signal a tool took with `monitor_sigaction` is answered the same way
//! from the program's disposition behind the tool's handler
//! ([`super::client_signals`]).
//!
//! Not seen: `sigaction` made by the C library itself (`system`,
//! `posix_spawn`), `sigset`, and the `rt_sigaction` system call made
//! directly.

use std::ffi::c_int;

use crate::engine;
use crate::real::{real_fn, slots};

/// `sighandler_t`.
pub type Handler = libc::sighandler_t;

type SigactionFn =
    unsafe extern "C" fn(c_int, *const libc::sigaction, *mut libc::sigaction) -> c_int;
type SignalFn = unsafe extern "C" fn(c_int, Handler) -> Handler;

/// `sigaction(sig, act, old)`.
///
/// # Safety
/// As `sigaction(2)`.
pub unsafe fn sigaction(
    sig: c_int,
    act: *const libc::sigaction,
    old: *mut libc::sigaction,
) -> c_int {
    if engine::signal_action(sig, act, old) == 1 {
        return 0;
    }
    // SAFETY: the caller's contract.
    if let Some(r) = unsafe { super::client_signals::sigaction_view(sig, act, old) } {
        return r;
    }
    let real = real_fn!(slots::SIGACTION, SigactionFn);
    // SAFETY: the caller's contract.
    unsafe { real(sig, act, old) }
}

/// The `signal` family through the program's view: `handler` with
/// `flags` and, unless `SA_NODEFER`, `sig` masked, as glibc's `signal`
/// (BSD semantics: `SA_RESTART`) and `sysv_signal` (`SA_RESETHAND |
/// SA_NODEFER`) build it; `None` when the real function is to be called.
fn through_view(sig: c_int, handler: Handler, flags: c_int) -> Option<Handler> {
    // SAFETY: a zeroed sigaction is a valid starting point; the set calls
    // fill plain data.
    let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
    act.sa_sigaction = handler;
    act.sa_flags = flags;
    // SAFETY: as above.
    unsafe {
        libc::sigemptyset(&mut act.sa_mask);
        if flags & libc::SA_NODEFER == 0 && sig > 0 && sig < 65 {
            libc::sigaddset(&mut act.sa_mask, sig);
        }
    }
    // SAFETY: a zeroed sigaction, filled by the engine.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    if engine::signal_action(sig, &act, &mut old) == 1 {
        return Some(old.sa_sigaction);
    }
    // SAFETY: valid local records.
    match unsafe { super::client_signals::sigaction_view(sig, &act, &mut old) } {
        Some(0) => Some(old.sa_sigaction),
        Some(_) => Some(libc::SIG_ERR),
        None => None,
    }
}

/// `signal(sig, handler)` and `bsd_signal` (`which`: the slot).
///
/// # Safety
/// As `signal(2)`.
pub unsafe fn signal(which: &'static crate::real::Real, sig: c_int, handler: Handler) -> Handler {
    if let Some(old) = through_view(sig, handler, libc::SA_RESTART) {
        return old;
    }
    let real = real_fn!(which, SignalFn);
    // SAFETY: the caller's contract.
    unsafe { real(sig, handler) }
}

/// `sysv_signal(sig, handler)`.
///
/// # Safety
/// As `sysv_signal(3)`.
pub unsafe fn sysv_signal(sig: c_int, handler: Handler) -> Handler {
    if let Some(old) = through_view(sig, handler, libc::SA_RESETHAND | libc::SA_NODEFER) {
        return old;
    }
    let real = real_fn!(slots::SYSV_SIGNAL, SignalFn);
    // SAFETY: the caller's contract.
    unsafe { real(sig, handler) }
}
