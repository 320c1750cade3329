//! The one place an exit that does not match the top of the thread's stack
//! is reported.
//!
//! The engine detects the mismatch and calls [`report`]. The default
//! handler (`crash::mismatch::default_handler`, installed by `runtime`)
//! prints Dr.Hook's diagnostics and the calling tree and aborts, as the
//! reference does. A handler installed with [`set_handler`] may instead
//! return; the engine then repairs the tree: when the routine being left is
//! further down the stack, the activations above it (whose exits never
//! came) are closed at this moment; when it is not on the stack at all, the
//! exit is ignored.

use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

use super::site::Site;

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
static DEFAULT: AtomicPtr<()> = AtomicPtr::new(std::ptr::null_mut());
static QUIET: AtomicBool = AtomicBool::new(false);

/// Installs the function called for every mismatched exit (replacing the
/// default, which prints Dr.Hook's diagnostics and aborts). If the handler
/// returns, the engine repairs the tree and the program goes on.
pub fn set_handler(handler: Handler) {
    HANDLER.store(handler as *mut (), Ordering::Release);
}

/// Installs the handler used when the program installed none (wired by
/// `runtime` at start-up).
pub(crate) fn set_default_handler(handler: Handler) {
    DEFAULT.store(handler as *mut (), Ordering::Release);
}

#[cfg(test)]
pub(crate) fn set_quiet_for_tests() {
    QUIET.store(true, Ordering::Relaxed);
}

/// Reports a mismatch through the installed handler (or the default).
pub(crate) fn report(m: &Mismatch) {
    let mut h = HANDLER.load(Ordering::Acquire);
    if h.is_null() {
        if QUIET.load(Ordering::Relaxed) {
            return;
        }
        // Null only before `runtime` has wired the default, when no real
        // tree exists yet: a private tree of a unit test.
        h = DEFAULT.load(Ordering::Acquire);
        if h.is_null() {
            return;
        }
    }
    // SAFETY: only `Handler` values are stored in HANDLER and DEFAULT.
    let f: Handler = unsafe { std::mem::transmute::<*mut (), Handler>(h) };
    f(m);
}
