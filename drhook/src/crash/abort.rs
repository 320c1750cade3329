//! Dr.Hook's abort: the end of a fatal diagnostic (a mismatched exit, a
//! changed watch point, a code's own `DRHOOK_ABORT`).
//!
//! As the reference (`drhook_abort` → `ABOR1FL` → `MPL_ABORT` → `TABORT`),
//! without a user hook it prints
//!
//! ```text
//! ABOR1     [PROC=1,THRD=1] from [drhook.c +3141] : *** Fatal error; drhook_abort ...
//! MPL_ABORT [PROC=1,THRD=1] : *** Fatal error; drhook_abort ...
//! ```
//!
//! (`from [...]` only with a file name and a line > 0), then the calling
//! tree, then `abort()` raises SIGABRT, whose handler prints the full
//! traceback. A user hook (the reference's `drhook_set_abort`) replaces the
//! two lines; the process aborts after it all the same.

use std::sync::atomic::{AtomicPtr, Ordering};

/// An abort hook: source file, line and message of the fatal error.
pub type AbortHook = fn(file: &str, line: u32, text: &str);

static HOOK: AtomicPtr<()> = AtomicPtr::new(std::ptr::null_mut());

/// The message the reference's `DRHOOK_ABORT()` passes.
pub const FATAL_TEXT: &str = "*** Fatal error; drhook_abort ...";

/// Installs the function [`drhook_abort`] calls before aborting (the
/// reference's `drhook_set_abort`). If it returns, the process still aborts.
pub fn set_abort_hook(hook: AbortHook) {
    HOOK.store(hook as *mut (), Ordering::Release);
}

/// The reference's `ABOR1` and `MPL_ABORT` lines for `text` raised at
/// `file`:`line` (no `from [...]` without a file or with line 0), on task
/// `proc_` and thread `thread`.
pub fn abor1_lines(proc_: u32, thread: u32, file: &str, line: u32, text: &str) -> String {
    let text = crate::sys::linebuf::escape_controls(text);
    let file = crate::sys::linebuf::escape_controls(file);
    let from = if !file.is_empty() && line > 0 {
        format!(" from [{file} +{line}]")
    } else {
        String::new()
    };
    format!(
        "ABOR1     [PROC={proc_},THRD={thread}]{from} : {text}\nMPL_ABORT [PROC={proc_},THRD={thread}] : {text}\n"
    )
}

/// Reports a fatal Dr.Hook error and aborts the process: the user hook if
/// one is installed, else the reference's `ABOR1`/`MPL_ABORT` lines; then
/// the calling thread's tree; then `abort()`.
pub fn drhook_abort(file: &str, line: u32, text: &str) -> ! {
    let h = HOOK.load(Ordering::Acquire);
    if !h.is_null() {
        // SAFETY: only `AbortHook` values are stored in HOOK.
        let f: AbortHook = unsafe { std::mem::transmute::<*mut (), AbortHook>(h) };
        let _ = std::panic::catch_unwind(|| f(file, line, text));
    } else {
        let base = file.rsplit('/').next().unwrap_or(file);
        let myproc = crate::setup::ENGINE
            .get()
            .map_or(1, |e| e.config.task.myproc);
        let lines = abor1_lines(myproc, crate::diag::caller_tid().max(1), base, line, text);
        crate::sys::linebuf::write_all(2, lines.as_bytes());
    }
    super::calltree::print_calltree();
    std::process::abort()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn abor1_lines_are_the_references() {
        assert_eq!(
            abor1_lines(1, 1, "drhook.c", 3141, FATAL_TEXT),
            "ABOR1     [PROC=1,THRD=1] from [drhook.c +3141] : *** Fatal error; drhook_abort ...\n\
             MPL_ABORT [PROC=1,THRD=1] : *** Fatal error; drhook_abort ...\n"
        );
        // ABOR1 (no file, or line 0): no `from`.
        assert_eq!(
            abor1_lines(3, 2, "", 0, "Fortran ABORT()"),
            "ABOR1     [PROC=3,THRD=2] : Fortran ABORT()\nMPL_ABORT [PROC=3,THRD=2] : Fortran ABORT()\n"
        );
        assert_eq!(
            abor1_lines(1, 1, "x.F90", 0, "t").lines().next(),
            Some("ABOR1     [PROC=1,THRD=1] : t")
        );
    }
}
