//! OpenMP thread numbers for `@tid`: users of the reference expect the
//! profile row of OpenMP thread `n` to be `NAME@n+1`.
//!
//! The OpenMP runtime is resolved weakly (`dlsym` in the running process,
//! at the first Dr.Hook call), so programs without OpenMP need nothing. The
//! engine replaces a proposed number that another thread already holds
//! (nested parallel regions, plain pthreads), so numbers are never shared.

use std::ffi::{CStr, c_int, c_void};
use std::sync::atomic::{AtomicPtr, Ordering};

static OMP_GET_THREAD_NUM: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

/// Looks up `omp_get_thread_num` in the process and, if present, makes the
/// engine number each thread `omp_get_thread_num() + 1` at its first call.
pub fn install_thread_hint() {
    let name: &CStr = c"omp_get_thread_num";
    // SAFETY: RTLD_DEFAULT lookup of a NUL-terminated name.
    let f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    if f.is_null() {
        return;
    }
    OMP_GET_THREAD_NUM.store(f, Ordering::Release);
    drhook::engine::set_thread_number_hint(hint);
    // The profile header counts omp_get_max_threads() threads, as the
    // reference does (its thread tables are sized by it at start-up).
    // SAFETY: RTLD_DEFAULT lookup of a NUL-terminated name.
    let max = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"omp_get_max_threads".as_ptr()) };
    if !max.is_null() {
        // SAFETY: `max` is the address of `int omp_get_max_threads(void)`.
        let max: extern "C" fn() -> c_int = unsafe { std::mem::transmute::<*mut c_void, _>(max) };
        drhook::sysinfo::set_thread_count_hint(max().max(0) as u32);
    }
}

/// The proposal for the calling thread. OpenMP thread 0 (the master of a
/// team, or any thread outside a parallel region) proposes nothing, so the
/// engine's own rule applies: the main thread is 1, others take the next
/// free number.
fn hint() -> Option<u32> {
    let f = OMP_GET_THREAD_NUM.load(Ordering::Acquire);
    if f.is_null() {
        return None;
    }
    // SAFETY: `f` is the address of `int omp_get_thread_num(void)`.
    let f: extern "C" fn() -> c_int = unsafe { std::mem::transmute::<*mut c_void, _>(f) };
    match f() {
        n if n >= 1 => Some(n as u32 + 1),
        _ => None,
    }
}
