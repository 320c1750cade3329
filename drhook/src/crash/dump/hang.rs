//! `DR_HOOK_HANG_TIMEOUT=seconds`: a watchdog thread, started with the
//! engine when the variable is set, wakes every second (or every quarter
//! of the timeout, if shorter) and compares a fingerprint of all threads'
//! trees (the sum of their nodes' calls and their current positions) with
//! the last one. When nothing changed for the timeout, it dumps once
//! ([`super::dump_for_hang`]); activity re-arms it.
//!
//! Off the program's view: created with the C library's own
//! `pthread_create` (not a preloaded wrapper, so it has no region, no
//! thread number and no events), every signal blocked (a signal sent to
//! the process is never delivered to it), and no calling tree. Threads do
//! not survive `fork`: a child that keeps Dr.Hook on starts its own
//! watchdog from the engine's `atfork` child handler
//! ([`restart_in_child`]).

use std::sync::atomic::{AtomicBool, Ordering};

use crate::tree::thread;

static STARTED: AtomicBool = AtomicBool::new(false);

/// The timeout in seconds from `DR_HOOK_HANG_TIMEOUT` (None: unset, 0, or
/// not a number).
fn timeout() -> Option<f64> {
    let v = crate::config::env::process_env("DR_HOOK_HANG_TIMEOUT")?;
    match v.trim().parse::<f64>() {
        Ok(s) if s > 0.0 && s.is_finite() => Some(s),
        Ok(_) => None,
        Err(_) => {
            crate::diag!(
                "drhook_init",
                "Warning - DR_HOOK_HANG_TIMEOUT={v:?} is not a number of seconds: no watchdog"
            );
            None
        }
    }
}

/// Starts the watchdog if `DR_HOOK_HANG_TIMEOUT` asks for one (once).
pub(crate) fn start() {
    let Some(secs) = timeout() else { return };
    if STARTED.swap(true, Ordering::AcqRel) {
        return;
    }
    type Create = unsafe extern "C" fn(
        *mut libc::pthread_t,
        *const libc::pthread_attr_t,
        extern "C" fn(*mut libc::c_void) -> *mut libc::c_void,
        *mut libc::c_void,
    ) -> i32;
    // The C library's own pthread_create: under the preload library the
    // program's symbol is the lifecycle layer's wrapper.
    // SAFETY: dlopen of an already loaded library (RTLD_NOLOAD), dlsym of
    // a function with this signature.
    let create: Option<Create> = unsafe {
        let h = libc::dlopen(c"libc.so.6".as_ptr(), libc::RTLD_NOLOAD | libc::RTLD_LAZY);
        let f = if h.is_null() {
            std::ptr::null_mut()
        } else {
            libc::dlsym(h, c"pthread_create".as_ptr())
        };
        (!f.is_null()).then(|| std::mem::transmute::<*mut libc::c_void, Create>(f))
    };
    let create = create.unwrap_or(libc::pthread_create as Create);
    let arg = Box::into_raw(Box::new(secs)) as *mut libc::c_void;
    // SAFETY: plain data; the masks are valid.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
        let mut t: libc::pthread_t = 0;
        let r = create(&mut t, std::ptr::null(), watchdog, arg);
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        if r == 0 {
            libc::pthread_detach(t);
        } else {
            drop(Box::from_raw(arg as *mut f64));
            STARTED.store(false, Ordering::Release);
        }
    }
}

/// In a `fork` child (the engine's `atfork` child handler, Dr.Hook on):
/// the parent's watchdog is not here; start this process's own.
pub(crate) fn restart_in_child() {
    if STARTED.swap(false, Ordering::AcqRel) {
        start();
    }
}

/// The sum of every thread's nodes' calls and current positions.
fn fingerprint() -> u64 {
    let mut sum = 0u64;
    thread::for_each_thread(|td| {
        sum = sum.wrapping_add((td.current() as usize as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let n = td.arena.len();
        for i in 0..n {
            if let Some(node) = td.arena.get(i) {
                sum = sum.wrapping_add(node.calls.load(Ordering::Relaxed));
            }
        }
    });
    sum
}

extern "C" fn watchdog(arg: *mut libc::c_void) -> *mut libc::c_void {
    // SAFETY: the box made by `start` for this thread.
    let secs = *unsafe { Box::from_raw(arg as *mut f64) };
    let step = (secs / 4.0).clamp(0.01, 1.0);
    let mut last = fingerprint();
    let mut since = crate::sys::clock::monotonic_ns();
    let mut dumped = false;
    loop {
        std::thread::sleep(std::time::Duration::from_secs_f64(step));
        let now = crate::sys::clock::monotonic_ns();
        let f = crate::sys::own::own_work(fingerprint);
        if f != last {
            (last, since, dumped) = (f, now, false);
            continue;
        }
        if !dumped && (now - since) as f64 >= secs * 1e9 {
            dumped = true;
            super::dump_for_hang(secs.round() as u32);
        }
    }
}
