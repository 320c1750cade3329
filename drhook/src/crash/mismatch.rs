//! The default handler of mismatched exits: the reference's diagnostics,
//! the calling tree, then Dr.Hook's abort.

use crate::tree::mismatch::Mismatch;
use crate::tree::site::Site;

fn name(s: Option<&'static Site>) -> &'static str {
    s.map_or("<unknown>", |s| s.name())
}

/// The default: the reference's diagnostics (compat §3.5), then Dr.Hook's
/// abort: the `ABOR1`/`MPL_ABORT` lines, the thread's calling tree, SIGABRT
/// (whose handler prints the full traceback).
pub fn default_handler(m: &Mismatch) {
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
    // ABOR1/MPL_ABORT lines, the calling tree, SIGABRT (as the reference).
    super::abort::drhook_abort(file!(), line!(), super::abort::FATAL_TEXT);
}
