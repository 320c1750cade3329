//! The ways a process ends through the C library: `exit`, `quick_exit`,
//! `_exit`, `_Exit`, `abort` and a failed `assert`. `exit` and
//! `quick_exit` end the process after the program's exit handlers (the
//! handlers `process` registers first run last); the others end it (its
//! reports written once) before the real function, which runs nothing of
//! the program's.

use std::ffi::{c_char, c_int, c_uint};
use std::sync::atomic::{AtomicI32, Ordering};

use super::process;
use crate::events::Ending;
use crate::real::{self, real_fn, slots};

/// The thread that called `exit` first (0: none yet).
static EXITING: AtomicI32 = AtomicI32::new(0);

/// How long an `_exit` (or a second `exit`) waits for the reports of an
/// end in progress on another thread.
pub(crate) const WAIT_MS: u64 = 30_000;

/// `exit(status)`: the real `exit` (the program's exit handlers, then the
/// process ends in the handler registered first, which runs last). Threads
/// that call `exit` while another one is exiting wait for it, as glibc's
/// own `exit` does since 2.40 (two at once ran the handlers concurrently
/// and the second one's `_exit` cut the first one's reports short); a
/// thread that calls `exit` again from an exit handler goes on.
#[inline]
pub fn exit(status: c_int) -> ! {
    // SAFETY: gettid has no preconditions.
    let me = unsafe { libc::gettid() };
    if let Err(first) = EXITING.compare_exchange(0, me, Ordering::AcqRel, Ordering::Acquire)
        && first != me
    {
        loop {
            // SAFETY: waits for the process to end.
            unsafe { libc::pause() };
        }
    }
    real::exit(status)
}

/// After `main` returned, on the main thread: when another thread is
/// already in `exit`, the process ends there (with that thread's status,
/// after its reports), and this thread waits for it rather than run the
/// exit handlers a second time at once (the C start-up calls `exit`
/// directly, so the wrapper above does not see it).
pub(crate) fn after_main_returned() {
    // SAFETY: gettid has no preconditions.
    let me = unsafe { libc::gettid() };
    if EXITING
        .compare_exchange(0, me, Ordering::AcqRel, Ordering::Acquire)
        .is_err_and(|first| first != me)
    {
        loop {
            // SAFETY: waits for the process to end.
            unsafe { libc::pause() };
        }
    }
}

/// `quick_exit(status)`: the real one (the program's `at_quick_exit`
/// handlers, then the process ends in the one registered first).
pub fn quick_exit(status: c_int) -> ! {
    process::quick_exit_called(status);
    let f = real_fn!(slots::QUICK_EXIT, extern "C" fn(c_int) -> !);
    f(status)
}

/// `_exit(status)`: the process ends now (an end in progress on another
/// thread first finishes its reports).
#[inline]
pub fn underscore_exit(status: c_int) -> ! {
    if !process::fini_process(Ending::UnderscoreExit(status)) {
        process::wait_for_the_end(WAIT_MS);
    }
    real::underscore_exit(status)
}

/// `_Exit(status)`.
#[inline]
pub fn underscore_cap_exit(status: c_int) -> ! {
    if !process::fini_process(Ending::UnderscoreExit(status)) {
        process::wait_for_the_end(WAIT_MS);
    }
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
