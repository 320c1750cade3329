//! Threads: `pthread_create` runs the start routine inside a trampoline
//! that begins and ends the thread's events on the thread itself, when
//! anyone wants them; `pthread_exit` ends the thread first.
//!
//! A thread's stack may be as small as the C library allows (16 KiB, most
//! of it the thread's TLS and descriptor), and the program's start routine
//! is entitled to what plainly remains: the events (the engine's set-up and
//! tear-down of the thread, the tools' work) run on a work stack of the
//! engine's (`drhook::lifecycle::on_work_stack`), and the thread's own
//! stack holds only the trampoline's frame.

use std::ffi::{c_int, c_void};

use drhook::lifecycle::on_work_stack;

use super::process;
use crate::real::{real_fn, slots};

/// A thread's start routine.
pub type StartFn = unsafe extern "C-unwind" fn(*mut c_void) -> *mut c_void;

struct Started {
    start: StartFn,
    arg: *mut c_void,
    /// The thread's number in the engine, reserved at creation (0: none).
    reserved: u32,
}

extern "C-unwind" fn thread_trampoline(p: *mut c_void) -> *mut c_void {
    // SAFETY: the box made by `pthread_create` for this thread.
    let Started {
        start,
        arg,
        reserved,
    } = *unsafe { Box::from_raw(p as *mut Started) };
    on_work_stack(|| process::thread_begin(start as usize, reserved));
    // SAFETY: the program's start routine with its argument.
    let r = unsafe { start(arg) };
    on_work_stack(process::thread_end);
    r
}

/// `pthread_create`: when threads are watched, the start routine runs
/// inside a trampoline that starts and ends the thread's events on it.
///
/// # Safety
/// As `pthread_create(3)`.
pub unsafe fn pthread_create(
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    start: StartFn,
    arg: *mut c_void,
) -> c_int {
    type Create = unsafe extern "C" fn(
        *mut libc::pthread_t,
        *const libc::pthread_attr_t,
        StartFn,
        *mut c_void,
    ) -> c_int;
    let real = real_fn!(slots::PTHREAD_CREATE, Create);
    if !process::wants_threads() {
        // SAFETY: caller contract.
        return unsafe { real(thread, attr, start, arg) };
    }
    let reserved = process::thread_reserve();
    let b = Box::into_raw(Box::new(Started {
        start,
        arg,
        reserved,
    }));
    // SAFETY: caller contract; the trampoline takes the box.
    let r = unsafe { real(thread, attr, thread_trampoline, b.cast()) };
    if r != 0 {
        // SAFETY: the thread was not created: the box is still ours.
        drop(unsafe { Box::from_raw(b) });
    }
    r
}

/// `pthread_exit(value)`: the thread's end, then the real one (which
/// unwinds the thread's stack).
pub fn pthread_exit(value: *mut c_void) -> ! {
    on_work_stack(process::thread_end);
    let f = real_fn!(slots::PTHREAD_EXIT, extern "C-unwind" fn(*mut c_void) -> !);
    f(value)
}
