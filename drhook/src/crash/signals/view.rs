//! The program's view of the signals Dr.Hook catches. Dr.Hook's handler
//! stays in front, but for the program the disposition of such a signal is
//! what it would be without Dr.Hook: the one it had when Dr.Hook installed
//! its handler, then whatever the program sets. A program (or its
//! runtime) that asks finds `SIG_DFL` and installs its handler (Rust's
//! stack-overflow handler, which installs only over the default), and
//! the handler it installs is the one Dr.Hook's handler calls first
//! (`handler.rs`): its handlers win.
//!
//! The preload layer's `sigaction`/`signal` wrappers come here through the
//! lifecycle table ([`program_action`]); Dr.Hook's own calls, which may
//! reach the same wrappers (the preload library exports `sigaction`), go
//! through [`own_sigaction`] and pass through. Records are immutable once
//! published (a pool, never freed), so the handler reads a consistent one
//! with one atomic load.

use std::cell::{Cell, UnsafeCell};
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

use super::{CAUGHT, NSIG};

/// Records for the dispositions the program sets (each `sigaction` call
/// on a caught signal takes one).
const POOL: usize = 1024;

struct Pool(UnsafeCell<[MaybeUninit<libc::sigaction>; POOL]>);
// SAFETY: each slot is written once, by the thread that took it (an atomic
// increment), before it is published; then only read.
unsafe impl Sync for Pool {}
static RECORDS: Pool = Pool(UnsafeCell::new([const { MaybeUninit::uninit() }; POOL]));
static TAKEN: AtomicUsize = AtomicUsize::new(0);

/// The program's disposition of each caught signal (null: not recorded).
static VIEW: [AtomicPtr<libc::sigaction>; NSIG] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; NSIG];
/// Whether the program's handler of the signal ends the process itself
/// (a runtime that prints its own report and re-raises): Dr.Hook's report
/// comes first for those.
static ENDS: [AtomicBool; NSIG] = [const { AtomicBool::new(false) }; NSIG];

thread_local! {
    /// Dr.Hook's own `sigaction` call in progress on this thread.
    static OWN: Cell<bool> = const { Cell::new(false) };
}

/// `sigaction` for Dr.Hook itself: never virtualised, whoever's
/// `sigaction` the call reaches. Async-signal-safe.
pub(crate) fn own_sigaction(
    sig: i32,
    act: *const libc::sigaction,
    old: *mut libc::sigaction,
) -> i32 {
    let before = OWN.with(|c| c.replace(true));
    // SAFETY: the caller's valid (or null) pointers.
    let r = unsafe { libc::sigaction(sig, act, old) };
    OWN.with(|c| c.set(before));
    r
}

/// Sets the disposition of `sig` to its default action (Dr.Hook's own
/// call).
pub(super) fn own_default(sig: i32) {
    // SAFETY: a zeroed sigaction is SIG_DFL with no flags.
    let mut dfl: libc::sigaction = unsafe { std::mem::zeroed() };
    dfl.sa_sigaction = libc::SIG_DFL;
    own_sigaction(sig, &dfl, std::ptr::null_mut());
}

/// Publishes `act` as the program's disposition of `sig`; false when no
/// record is left.
pub(super) fn record(sig: i32, act: &libc::sigaction) -> bool {
    let i = TAKEN.fetch_add(1, Ordering::AcqRel);
    if i >= POOL {
        return false;
    }
    // SAFETY: slot `i` is this caller's alone (the increment above), and is
    // published only below.
    let p = unsafe {
        let slot = (*RECORDS.0.get())[i].as_mut_ptr();
        slot.write(*act);
        slot
    };
    VIEW[sig as usize].store(p, Ordering::Release);
    ENDS[sig as usize].store(ends_process(act), Ordering::Release);
    true
}

/// The program's disposition of `sig` (None before Dr.Hook installed its
/// handler). Async-signal-safe.
pub(super) fn get(sig: i32) -> Option<&'static libc::sigaction> {
    let p = VIEW.get(sig as usize)?.load(Ordering::Acquire);
    // SAFETY: published records are never written again nor freed.
    (!p.is_null()).then(|| unsafe { &*p })
}

/// Whether the program's handler of `sig` ends the process itself.
pub(super) fn handler_ends_process(sig: i32) -> bool {
    ENDS.get(sig as usize)
        .is_some_and(|e| e.load(Ordering::Acquire))
}

/// Whether `act` is a handler (not `SIG_DFL` or `SIG_IGN`).
pub(super) fn is_handler(act: &libc::sigaction) -> bool {
    act.sa_sigaction != libc::SIG_DFL && act.sa_sigaction != libc::SIG_IGN
}

/// Handlers of runtimes known to write their own report and end the
/// process with the signal (gfortran's backtrace handler, installed before
/// `main` by the default `-fbacktrace`): Dr.Hook's calling trees and
/// profile come before theirs, as the reference does. Other handlers are
/// called first; whether they end the process is seen when they return.
fn ends_process(act: &libc::sigaction) -> bool {
    if !is_handler(act) {
        return false;
    }
    // SAFETY: plain data that dladdr fills in.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the address.
    let found = unsafe { libc::dladdr(act.sa_sigaction as *const libc::c_void, &mut info) };
    if found == 0 || info.dli_fname.is_null() {
        return false;
    }
    // SAFETY: a NUL-terminated name from the loader.
    let file = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) }.to_bytes();
    let base = file.rsplit(|&c| c == b'/').next().unwrap_or(file);
    base.starts_with(b"libgfortran")
}

/// The program's `sigaction` on the signal the sampler took
/// (`DR_HOOK_OPT=sample`): for the program it is still its own — the
/// disposition it had (the default: the sampler takes only a signal
/// without a handler), then what it sets, kept in the view while the
/// sample handler stays in front and passes on the signals that are not
/// its timer's ([`call_program`]).
///
/// # Safety
/// `act` and `old` are null or valid.
unsafe fn sample_signal_action(
    sig: i32,
    act: *const libc::sigaction,
    old: *mut libc::sigaction,
) -> i32 {
    // SAFETY: a zeroed sigaction is SIG_DFL with no flags.
    let cur = get(sig).copied().unwrap_or(unsafe { std::mem::zeroed() });
    // SAFETY: the caller's valid (or null) pointer.
    if let Some(new) = unsafe { act.as_ref() } {
        if !record(sig, new) {
            // No record left: sampling stops, and the program's
            // disposition becomes the real one.
            crate::sample::stop();
            own_sigaction(sig, new, std::ptr::null_mut());
        }
    }
    // SAFETY: the caller's valid (or null) pointer.
    if let Some(o) = unsafe { old.as_mut() } {
        *o = cur;
    }
    1
}

/// A signal the sample handler received that is not its timer's: what the
/// program's disposition of it says (its handler called; the default
/// action of a real-time signal, ending the process; or nothing when
/// ignored). Async-signal-safe.
pub(crate) fn call_program(sig: i32, info: *mut libc::siginfo_t, uc: *mut libc::c_void) {
    let Some(p) = get(sig) else {
        super::chaining::terminate(sig)
    };
    let h = p.sa_sigaction;
    if h == libc::SIG_IGN {
        return;
    }
    if h == libc::SIG_DFL {
        super::chaining::terminate(sig);
    }
    // SAFETY: the handler the program set, called with the convention its
    // flags declare.
    unsafe {
        if p.sa_flags & libc::SA_SIGINFO != 0 {
            let f: extern "C" fn(i32, *mut libc::siginfo_t, *mut libc::c_void) =
                std::mem::transmute(h);
            f(sig, info, uc);
        } else {
            let f: extern "C" fn(i32) = std::mem::transmute(h);
            f(sig);
        }
    }
}

/// A program's `sigaction(sig, act, old)` on a signal Dr.Hook may hold:
/// 1 when it is answered from the program's view (the query gets the
/// program's disposition, a new one becomes the program's and Dr.Hook's
/// handler stays in front), 0 when the caller makes the real call
/// (Dr.Hook's own calls, signals Dr.Hook does not catch).
///
/// A program that ignores the signal gets it ignored for real (and
/// Dr.Hook no longer catches it); a handler installed with or without
/// `SA_RESTART` gets Dr.Hook's handler re-installed with the same, so
/// that interrupted system calls behave as the program asked.
///
/// # Safety
/// `act` and `old` are null or valid.
pub unsafe fn program_action(
    sig: i32,
    act: *const libc::sigaction,
    old: *mut libc::sigaction,
) -> i32 {
    if OWN.with(|c| c.get()) || sig <= 0 || sig as usize >= NSIG {
        return 0;
    }
    if sig == crate::crash::dump::signal() {
        // SAFETY: the caller's valid pointers.
        return unsafe { crate::crash::dump::program_action(sig, act, old) };
    }
    if crate::sample::signal() == sig {
        // SAFETY: the caller's pointers.
        return unsafe { sample_signal_action(sig, act, old) };
    }
    if !CAUGHT[sig as usize].load(Ordering::Acquire) {
        return 0;
    }
    let Some(cur) = get(sig) else { return 0 };
    let cur = *cur;
    // SAFETY: the caller's valid pointers.
    let new = unsafe { act.as_ref() }.copied();
    if let Some(new) = new {
        if new.sa_sigaction == libc::SIG_IGN || !record(sig, &new) {
            // Ignored (or no record left: the program's disposition
            // replaces Dr.Hook's handler, and Dr.Hook says so).
            if new.sa_sigaction != libc::SIG_IGN {
                crate::diag!(
                    "signal_drhook",
                    "too many sigaction calls: the program's handlers now replace Dr.Hook's"
                );
            }
            CAUGHT[sig as usize].store(false, Ordering::Release);
            own_sigaction(sig, &new, std::ptr::null_mut());
        } else if is_handler(&new) && (new.sa_flags ^ cur.sa_flags) & libc::SA_RESTART != 0 {
            let mut ours: libc::sigaction =
                // SAFETY: a zeroed sigaction, filled by the query.
                unsafe { std::mem::zeroed() };
            if own_sigaction(sig, std::ptr::null(), &mut ours) == 0 {
                ours.sa_flags =
                    (ours.sa_flags & !libc::SA_RESTART) | (new.sa_flags & libc::SA_RESTART);
                own_sigaction(sig, &ours, std::ptr::null_mut());
            }
        }
    }
    // SAFETY: the caller's valid pointer.
    if let Some(o) = unsafe { old.as_mut() } {
        *o = cur;
    }
    1
}
