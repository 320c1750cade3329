//! Signals a tool takes in front of the program (libmonitor's
//! `monitor_sigaction`): the layer's dispatcher becomes the signal's
//! handler; it offers each signal to the tool's handler first, and when
//! that answers non-zero (not handled) applies the disposition the program
//! has — its handler called as the kernel would (its `sa_mask`, the signal
//! masked unless `SA_NODEFER`, `SA_RESETHAND`, `SA_SIGINFO`), `SIG_IGN`, or
//! the default action. For the program the signal keeps its own
//! disposition: its `sigaction`/`signal` calls on such a signal read and
//! set that one (`sigaction_view`), never the dispatcher.
//!
//! A signal Dr.Hook's engine also catches keeps the engine's handler (and
//! its view of the program's disposition) behind the tool's: the tool
//! first, then Dr.Hook's report, then the program's handler.

use std::cell::UnsafeCell;
use std::ffi::{c_int, c_void};
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

use crate::real::{real_fn, slots};

/// `monitor_sighandler_t`: 0 when the tool handled the signal.
pub type ClientHandler = unsafe extern "C" fn(c_int, *mut libc::siginfo_t, *mut c_void) -> c_int;

type SigactionFn =
    unsafe extern "C" fn(c_int, *const libc::sigaction, *mut libc::sigaction) -> c_int;

const NSIG: usize = 65;
/// Dispositions the program sets on claimed signals (each `sigaction` call
/// takes one record; records are never reused, so a handler reads a
/// consistent one with one load).
const POOL: usize = 1024;

struct Pool(UnsafeCell<[MaybeUninit<libc::sigaction>; POOL]>);
// SAFETY: each slot is written once, by the thread that took it (an atomic
// increment), before it is published; then only read.
unsafe impl Sync for Pool {}
static RECORDS: Pool = Pool(UnsafeCell::new([const { MaybeUninit::uninit() }; POOL]));
static TAKEN: AtomicUsize = AtomicUsize::new(0);

/// The tool's handler of each signal (0: not claimed).
static CLIENT: [AtomicUsize; NSIG] = [const { AtomicUsize::new(0) }; NSIG];
/// The disposition behind the tool's (the program's, or the engine's
/// handler); null: the default action.
static NEXT: [AtomicPtr<libc::sigaction>; NSIG] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; NSIG];

/// The real `sigaction` (in a static program, linked with `--wrap`, the
/// C library's: `sigaction` is not wrapped there).
pub(crate) fn real_sigaction(
    sig: c_int,
    act: *const libc::sigaction,
    old: *mut libc::sigaction,
) -> c_int {
    if crate::real::link_mode() {
        // SAFETY: valid (or null) pointers, as sigaction(2) takes them.
        return unsafe { libc::sigaction(sig, act, old) };
    }
    let real = real_fn!(slots::SIGACTION, SigactionFn);
    // SAFETY: valid (or null) pointers, as sigaction(2) takes them.
    unsafe { real(sig, act, old) }
}

/// Publishes `act` as what comes after the tool on `sig`; false when no
/// record is left (the disposition is then unchanged).
fn publish(sig: usize, act: &libc::sigaction) -> bool {
    let i = TAKEN.fetch_add(1, Ordering::AcqRel);
    if i >= POOL {
        return false;
    }
    // SAFETY: slot `i` is this caller's alone (the increment above), and
    // is published only below.
    let p = unsafe {
        let slot = (*RECORDS.0.get())[i].as_mut_ptr();
        slot.write(*act);
        slot
    };
    NEXT[sig].store(p, Ordering::Release);
    true
}

fn default_action() -> libc::sigaction {
    // SAFETY: a zeroed sigaction is SIG_DFL with no flags and an empty mask.
    unsafe { std::mem::zeroed() }
}

/// `monitor_sigaction(sig, handler, flags, act)`: the tool's `handler`
/// in front of `sig` (`act`: its `sa_flags` and `sa_mask` for the
/// dispatcher; `flags` unused, as in libmonitor). 0, or -1 for a signal
/// that cannot be caught.
///
/// # Safety
/// `act` null or a valid `struct sigaction`.
pub unsafe fn claim(sig: c_int, handler: ClientHandler, act: *const libc::sigaction) -> c_int {
    if sig <= 0 || sig as usize >= NSIG || sig == libc::SIGKILL || sig == libc::SIGSTOP {
        return -1;
    }
    let s = sig as usize;
    let first = CLIENT[s].swap(handler as usize, Ordering::AcqRel) == 0;
    let mut now = default_action();
    if first {
        // What is installed now comes after the tool: the program's
        // disposition, or Dr.Hook's handler (which keeps the program's).
        real_sigaction(sig, std::ptr::null(), &mut now);
        if !publish(s, &now) {
            CLIENT[s].store(0, Ordering::Release);
            return -1;
        }
    }
    install_dispatcher(sig, act);
    0
}

/// Installs the dispatcher on `sig` (`act`: the tool's `sa_mask` and
/// `sa_flags`, or null).
fn install_dispatcher(sig: c_int, act: *const libc::sigaction) {
    let mut mine = default_action();
    mine.sa_sigaction = dispatch as *const () as usize;
    mine.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART | libc::SA_ONSTACK;
    if act.is_null() {
        // SAFETY: a plain sigset_t.
        unsafe { libc::sigemptyset(&mut mine.sa_mask) };
    } else {
        // SAFETY: the tool's struct sigaction.
        let a = unsafe { &*act };
        mine.sa_mask = a.sa_mask;
        mine.sa_flags |= a.sa_flags & !(libc::SA_RESETHAND | libc::SA_NODEFER);
    }
    real_sigaction(sig, &mine, std::ptr::null_mut());
}

// --- the process's end by a signal's default action -----------------------

/// `CLIENT`'s mark for a signal watched for its default ending only (no
/// tool handler in front).
const END_ONLY: usize = 1;
/// Run, once per ending, before a watched signal's default action ends the
/// process (0: none).
static END_HOOK: AtomicUsize = AtomicUsize::new(0);
static WATCHED: [AtomicBool; NSIG] = [const { AtomicBool::new(false) }; NSIG];

/// The signals whose default action ends the process (libmonitor catches
/// these, and the real-time ones, which are left to the program and to the
/// shootdown here).
pub const ENDING: [c_int; 22] = [
    libc::SIGHUP,
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGILL,
    libc::SIGTRAP,
    libc::SIGABRT,
    libc::SIGBUS,
    libc::SIGFPE,
    libc::SIGUSR1,
    libc::SIGSEGV,
    libc::SIGUSR2,
    libc::SIGPIPE,
    libc::SIGALRM,
    libc::SIGTERM,
    libc::SIGSTKFLT,
    libc::SIGXCPU,
    libc::SIGXFSZ,
    libc::SIGVTALRM,
    libc::SIGPROF,
    libc::SIGIO,
    libc::SIGPWR,
    libc::SIGSYS,
];

/// A tool wants to hear of the process ending by the default action of
/// one of [`ENDING`] (libmonitor's `monitor_fini_process` with
/// `MONITOR_EXIT_SIGNAL`): `hook(sig)` runs on the signalled thread just
/// before that action (before Dr.Hook's crash report when Dr.Hook
/// catches the signal too). The dispatcher stands in front of such a
/// signal only while the program's disposition is the default (or the
/// signal is Dr.Hook's, or the tool's, or the program's handler is
/// `SA_RESETHAND`): a handler the program installs, or `SIG_IGN`, is
/// installed as it is (so that an ignored signal stays ignored across
/// `exec`, and the program's handler is called by the kernel itself).
/// Once per process, on its main thread, before `main`.
pub fn watch_endings(hook: fn(c_int)) {
    END_HOOK.store(hook as usize, Ordering::Release);
    for sig in ENDING {
        let s = sig as usize;
        WATCHED[s].store(true, Ordering::Release);
        if CLIENT[s]
            .compare_exchange(0, END_ONLY, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            // The tool's own claim: the dispatcher is there already.
            continue;
        }
        let mut now = default_action();
        real_sigaction(sig, std::ptr::null(), &mut now);
        if !publish(s, &now) {
            CLIENT[s].store(0, Ordering::Release);
            continue;
        }
        let mut prog = default_action();
        let drhooks = crate::engine::signal_action(sig, std::ptr::null(), &mut prog) == 1;
        if drhooks || needs_dispatcher(&now) {
            install_dispatcher(sig, std::ptr::null());
        }
    }
}

/// Whether a watched signal whose program's disposition is `act` needs the
/// dispatcher in the kernel (see [`watch_endings`]).
fn needs_dispatcher(act: &libc::sigaction) -> bool {
    act.sa_sigaction == libc::SIG_DFL || act.sa_flags & libc::SA_RESETHAND != 0
}

/// The program set `act` on a signal watched for its end only: the kernel
/// gets the dispatcher, or the program's disposition itself.
fn watched_set(sig: c_int, act: &libc::sigaction) {
    if needs_dispatcher(act) {
        install_dispatcher(sig, std::ptr::null());
    } else {
        real_sigaction(sig, act, std::ptr::null_mut());
    }
}

/// The default action of `sig` is about to end the process: the hook, if
/// the signal is watched. Async-signal-safe as far as the hook is.
fn ending(sig: c_int) {
    let s = sig as usize;
    let h = END_HOOK.load(Ordering::Acquire);
    if h != 0 && WATCHED[s].load(Ordering::Acquire) && !stops_by_default(sig) {
        // SAFETY: stored by `watch_endings` from a `fn(c_int)`.
        let f: fn(c_int) = unsafe { std::mem::transmute::<usize, fn(c_int)>(h) };
        f(sig);
    }
}

/// Signals whose default action stops the process.
fn stops_by_default(sig: c_int) -> bool {
    matches!(
        sig,
        libc::SIGTSTP | libc::SIGTTIN | libc::SIGTTOU | libc::SIGSTOP
    )
}

/// The program's `sigaction(sig, act, old)` on a signal a tool claimed:
/// answered from (and recorded into) the disposition behind the tool's.
/// `None` when `sig` is not claimed. Async-signal-safe.
///
/// # Safety
/// As `sigaction(2)`: `act` and `old` null or valid.
pub unsafe fn sigaction_view(
    sig: c_int,
    act: *const libc::sigaction,
    old: *mut libc::sigaction,
) -> Option<c_int> {
    if sig <= 0 || sig as usize >= NSIG || CLIENT[sig as usize].load(Ordering::Acquire) == 0 {
        return None;
    }
    let s = sig as usize;
    let cur = NEXT[s].load(Ordering::Acquire);
    if !old.is_null() {
        // SAFETY: a published record (never freed), the caller's `old`.
        unsafe {
            *old = if cur.is_null() {
                default_action()
            } else {
                *cur
            }
        };
    }
    if !act.is_null() {
        // SAFETY: the caller's `act`.
        let a = unsafe { *act };
        if !publish(s, &a) {
            crate::sys::set_errno(libc::ENOMEM);
            return Some(-1);
        }
        if CLIENT[s].load(Ordering::Acquire) == END_ONLY {
            watched_set(sig, &a);
        }
    }
    Some(0)
}

/// Signals whose default action is to do nothing.
fn ignored_by_default(sig: c_int) -> bool {
    matches!(
        sig,
        libc::SIGCHLD | libc::SIGCONT | libc::SIGURG | libc::SIGWINCH
    )
}

/// The dispatcher: the tool first, then the program's disposition.
extern "C" fn dispatch(sig: c_int, info: *mut libc::siginfo_t, uc: *mut c_void) {
    let saved = crate::sys::errno();
    let s = sig as usize;
    let h = CLIENT[s].load(Ordering::Acquire);
    if h > END_ONLY {
        // SAFETY: the tool's handler, of monitor_sighandler_t's type.
        let f: ClientHandler = unsafe { std::mem::transmute::<usize, ClientHandler>(h) };
        // SAFETY: the kernel's arguments.
        if unsafe { f(sig, info, uc) } == 0 {
            crate::sys::set_errno(saved);
            return;
        }
    }
    let cur = NEXT[s].load(Ordering::Acquire);
    let act = if cur.is_null() {
        default_action()
    } else {
        // SAFETY: a published record, never freed.
        unsafe { *cur }
    };
    match act.sa_sigaction {
        libc::SIG_IGN => {}
        libc::SIG_DFL => {
            if !ignored_by_default(sig) {
                ending(sig);
                default_end(sig);
            }
        }
        f => {
            // Dr.Hook's handler behind (its report, then the default
            // action) when the program's disposition is the default.
            let mut prog = default_action();
            if crate::engine::signal_action(sig, std::ptr::null(), &mut prog) == 1
                && prog.sa_sigaction == libc::SIG_DFL
            {
                ending(sig);
            }
            if act.sa_flags & libc::SA_RESETHAND != 0 {
                publish(s, &default_action());
            }
            // The mask the kernel would have set for the program's handler:
            // its sa_mask added, the signal itself let through with
            // SA_NODEFER.
            // SAFETY: plain sigset_t operations and the thread's mask.
            unsafe {
                let mut old: libc::sigset_t = std::mem::zeroed();
                libc::pthread_sigmask(libc::SIG_BLOCK, &act.sa_mask, &mut old);
                if act.sa_flags & libc::SA_NODEFER != 0 {
                    let mut one: libc::sigset_t = std::mem::zeroed();
                    libc::sigemptyset(&mut one);
                    libc::sigaddset(&mut one, sig);
                    libc::pthread_sigmask(libc::SIG_UNBLOCK, &one, std::ptr::null_mut());
                }
                if act.sa_flags & libc::SA_SIGINFO != 0 {
                    let h: extern "C" fn(c_int, *mut libc::siginfo_t, *mut c_void) =
                        std::mem::transmute(f);
                    h(sig, info, uc);
                } else {
                    let h: extern "C" fn(c_int) = std::mem::transmute(f);
                    h(sig);
                }
                libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
            }
        }
    }
    crate::sys::set_errno(saved);
}

/// The default action of `sig`, from inside its handler: the default
/// disposition installed, the signal sent again and let through (a stop
/// signal stops the process here; when it continues, the dispatcher is
/// back in place).
fn default_end(sig: c_int) {
    let mut mine = default_action();
    real_sigaction(sig, &default_action(), &mut mine);
    // SAFETY: async-signal-safe calls on this thread's own signal state.
    unsafe {
        libc::syscall(libc::SYS_tgkill, libc::getpid(), libc::gettid(), sig);
        let mut one: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut one);
        libc::sigaddset(&mut one, sig);
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &one, &mut old);
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
    }
    real_sigaction(sig, &mine, std::ptr::null_mut());
}
