//! Dr.Hook's abort: the end of a fatal diagnostic (a mismatched exit).
//!
//! A user hook (the reference's `drhook_set_abort`) runs first, then
//! `abort()` raises SIGABRT, whose handler prints the full traceback.

use std::sync::atomic::{AtomicPtr, Ordering};

/// An abort hook: source file, line and message of the fatal error.
pub type AbortHook = fn(file: &str, line: u32, text: &str);

static HOOK: AtomicPtr<()> = AtomicPtr::new(std::ptr::null_mut());

/// Installs the function [`drhook_abort`] calls before aborting (the
/// reference's `drhook_set_abort`). If it returns, the process still aborts.
pub fn set_abort_hook(hook: AbortHook) {
    HOOK.store(hook as *mut (), Ordering::Release);
}

/// Reports a fatal Dr.Hook error and aborts the process.
pub fn drhook_abort(file: &str, line: u32, text: &str) -> ! {
    let h = HOOK.load(Ordering::Acquire);
    if !h.is_null() {
        // SAFETY: only `AbortHook` values are stored in HOOK.
        let f: AbortHook = unsafe { std::mem::transmute::<*mut (), AbortHook>(h) };
        let _ = std::panic::catch_unwind(|| f(file, line, text));
    }
    let base = file.rsplit('/').next().unwrap_or(file);
    crate::diag::emit(
        "drhook_abort",
        base,
        line,
        &format!("*** Fatal error; {text} ... aborting"),
    );
    std::process::abort()
}
