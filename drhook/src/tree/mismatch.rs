//! The one place an exit that does not match the top of the thread's stack
//! is reported.
//!
//! The engine detects the mismatch and calls [`report`]. The default
//! handler prints Dr.Hook's diagnostics and the calling tree and aborts, as
//! the reference does. A handler installed with [`set_handler`] may instead
//! return; the engine then repairs the tree: when the routine being left is
//! further down the stack, the activations above it (whose exits never
//! came) are closed at this moment; when it is not on the stack at all, the
//! exit is ignored.

use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

use crate::site::Site;

/// What the engine knows about a mismatched exit.
#[derive(Clone, Debug)]
pub struct Mismatch {
    /// Dr.Hook thread number of the thread where the exit arrived (0 = a
    /// thread that never entered an instrumented routine).
    pub tid: u32,
    /// The routine whose exit arrived, when it could be identified safely.
    pub leaving: Option<&'static Site>,
    /// The routine on top of the stack: the probable routine missing its
    /// closing call.
    pub top: Option<&'static Site>,
    /// Whether the activation being left is on this thread's stack.
    pub on_stack: bool,
    /// Activations above it that were never left.
    pub open_above: u32,
    /// The handle/token value presented at exit (opaque).
    pub token: u64,
    /// The handle/token value that was expected (opaque).
    pub expected: u64,
    /// `DR_HOOK_STRICT_REGIONS`: the handle matched but the exit names
    /// another routine.
    pub name_differs: bool,
}

/// A mismatch handler.
pub type Handler = fn(&Mismatch);

static HANDLER: AtomicPtr<()> = AtomicPtr::new(std::ptr::null_mut());
static QUIET: AtomicBool = AtomicBool::new(false);

/// Installs the function called for every mismatched exit (replacing the
/// default, which prints Dr.Hook's diagnostics and aborts). If the handler
/// returns, the engine repairs the tree and the program goes on.
pub fn set_handler(handler: Handler) {
    HANDLER.store(handler as *mut (), Ordering::Release);
}

#[cfg(test)]
pub(crate) fn set_quiet_for_tests() {
    QUIET.store(true, Ordering::Relaxed);
}

/// Reports a mismatch through the installed handler.
pub(crate) fn report(m: &Mismatch) {
    let h = HANDLER.load(Ordering::Acquire);
    if h.is_null() {
        default_handler(m);
    } else {
        // SAFETY: only `Handler` values are stored in HANDLER.
        let f: Handler = unsafe { std::mem::transmute::<*mut (), Handler>(h) };
        f(m);
    }
}

fn name(s: Option<&'static Site>) -> &'static str {
    s.map_or("<unknown>", |s| s.name())
}

/// The default: the reference's diagnostics (compat §3.5), the thread's
/// calling tree, then Dr.Hook's abort (SIGABRT, whose handler prints the
/// full traceback).
pub fn default_handler(m: &Mismatch) {
    if QUIET.load(Ordering::Relaxed) {
        return;
    }
    let f = "putkey";
    let s = "[signal#6(SIGABRT)]:";
    crate::diag!(
        f,
        "{s} Dr.Hook has detected an invalid key-pointer/handle while leaving the routine '{}'",
        name(m.leaving)
    );
    crate::diag!(
        f,
        "{s} Expecting the key-pointer={:#x} (the top of thread {}'s call stack)",
        m.expected,
        m.tid
    );
    crate::diag!(
        f,
        "{s} A probable routine missing the closing DR_HOOK-call is '{}'",
        name(m.top)
    );
    crate::diag!(f, "{s} Got a key-pointer={:#x}", m.token);
    if m.name_differs {
        crate::diag!(
            f,
            "{s} DR_HOOK_STRICT_REGIONS: the exit names '{}' but the routine being left is '{}'",
            name(m.leaving),
            name(m.top)
        );
    } else if m.on_stack {
        crate::diag!(
            f,
            "{s} This key-pointer is associated with the routine '{}', {} activation(s) below the top of the stack",
            name(m.leaving),
            m.open_above
        );
    } else if m.tid == 0 {
        crate::diag!(
            f,
            "{s} This thread has not entered any instrumented routine (an exit on the wrong thread?)"
        );
    } else {
        crate::diag!(
            f,
            "{s} This key-pointer is not on thread {}'s call stack (an overwritten handle, or an exit on another thread)",
            m.tid
        );
    }
    crate::diag!(f, "{s} Aborting...");
    crate::print_calltree();
    crate::abort::drhook_abort(file!(), line!(), "drhook_abort");
}
