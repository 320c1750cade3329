//! ROCTX: `libroctx64.so` opened with `dlopen` at the first range (never
//! at build time), `roctxRangePushA` / `roctxRangePop` called through the
//! pointers found. rocprof intercepts them in the library itself.

use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicPtr, AtomicU8, Ordering};

type PushA = unsafe extern "C" fn(*const c_char) -> c_int;
type Pop = unsafe extern "C" fn() -> c_int;

static STATE: AtomicU8 = AtomicU8::new(0);
static PUSH: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
static POP: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

/// The library names tried, in order.
const NAMES: [&std::ffi::CStr; 2] = [c"libroctx64.so", c"libroctx64.so.4"];

fn attach() -> bool {
    for n in NAMES {
        // SAFETY: a NUL-terminated name.
        let h = unsafe { libc::dlopen(n.as_ptr(), libc::RTLD_LAZY | libc::RTLD_GLOBAL) };
        if h.is_null() {
            continue;
        }
        // SAFETY: a valid handle and NUL-terminated names.
        let (push, pop) = unsafe {
            (
                libc::dlsym(h, c"roctxRangePushA".as_ptr()),
                libc::dlsym(h, c"roctxRangePop".as_ptr()),
            )
        };
        if push.is_null() || pop.is_null() {
            continue;
        }
        POP.store(pop, Ordering::Relaxed);
        PUSH.store(push, Ordering::Release);
        return true;
    }
    false
}

/// Opens the library at start-up; false when it is not there (then no
/// range can go anywhere, and the ranges cost nothing).
pub(crate) fn open_at_start() -> bool {
    if STATE
        .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        return !PUSH.load(Ordering::Acquire).is_null();
    }
    let found = attach();
    STATE.store(2, Ordering::Release);
    found
}

#[cold]
#[inline(never)]
fn settle(report: fn(bool)) -> bool {
    match STATE.compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => {
            let found = attach();
            STATE.store(2, Ordering::Release);
            report(found);
            true
        }
        Err(s) => s == 2,
    }
}

/// Pushes a range; true when the library took it.
#[inline]
pub(crate) fn push(name: *const c_char, report: fn(bool)) -> bool {
    if STATE.load(Ordering::Acquire) != 2 && !settle(report) {
        return false;
    }
    let f = PUSH.load(Ordering::Relaxed);
    if f.is_null() {
        return false;
    }
    // SAFETY: `roctxRangePushA`, with a NUL-terminated name that lives
    // forever.
    unsafe { std::mem::transmute::<*mut c_void, PushA>(f)(name) };
    true
}

/// Pops the range a successful [`push`] opened on this thread.
#[inline]
pub(crate) fn pop() {
    let f = POP.load(Ordering::Relaxed);
    if !f.is_null() {
        // SAFETY: `roctxRangePop`.
        unsafe { std::mem::transmute::<*mut c_void, Pop>(f)() };
    }
}
