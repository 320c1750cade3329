//! The ways a process ends through the C library: `exit`, `_exit`,
//! `_Exit`, `abort` and a failed `assert`. The process ends (its reports
//! written once), then the real function runs.

use std::ffi::{c_char, c_int, c_uint};

use super::process;
use crate::events::Ending;
use crate::real::{self, real_fn, slots};

/// `exit(status)`: the process ends, then the real `exit` (at-exit
/// handlers, stdio flushing).
#[inline]
pub fn exit(status: c_int) -> ! {
    process::fini_process(Ending::Exit(status));
    real::exit(status)
}

/// `_exit(status)`.
#[inline]
pub fn underscore_exit(status: c_int) -> ! {
    process::fini_process(Ending::UnderscoreExit(status));
    real::underscore_exit(status)
}

/// `_Exit(status)`.
#[inline]
pub fn underscore_cap_exit(status: c_int) -> ! {
    process::fini_process(Ending::UnderscoreExit(status));
    let f = real_fn!(slots::UNDERSCORE_CAP_EXIT, extern "C" fn(c_int) -> !);
    f(status)
}

/// `abort()`.
pub fn abort() -> ! {
    process::fini_process(Ending::Abort);
    real::abort()
}

/// `__assert_fail`: a failed `assert` (libc prints the message and aborts).
///
/// # Safety
/// As glibc's `__assert_fail`.
pub unsafe fn assert_fail(
    assertion: *const c_char,
    file: *const c_char,
    line: c_uint,
    function: *const c_char,
) -> ! {
    process::fini_process(Ending::Abort);
    let f = real_fn!(
        slots::ASSERT_FAIL,
        unsafe extern "C" fn(*const c_char, *const c_char, c_uint, *const c_char) -> !
    );
    // SAFETY: caller contract.
    unsafe { f(assertion, file, line, function) }
}
