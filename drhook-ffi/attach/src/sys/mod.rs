//! Layer 1 of the crate: what every other part uses and that uses nothing
//! of the layer — the per-thread words and their guard bits ([`tls`]),
//! messages written without allocating (`diag`), `errno`, the clocks
//! ([`clock`]), the environment read without allocating ([`env`]), the
//! layer's own descriptors kept out of the program's way (`fd`) and the
//! object a code address belongs to (`object_base`).

pub mod clock;
pub(crate) mod diag;
pub(crate) mod env;
pub(crate) mod fd;
/// Dr.Hook's own heap (the engine's `__private::heap`).
pub use drhook::__private::heap;
pub mod tls;

pub(crate) use diag::{diag, diag_name, diag_parts};

use std::ffi::{c_int, c_void};

/// The calling thread's `errno`.
#[inline(always)]
pub(crate) fn errno() -> c_int {
    // SAFETY: the thread's errno location.
    unsafe { *libc::__errno_location() }
}

/// Sets the calling thread's `errno`.
#[inline(always)]
pub(crate) fn set_errno(e: c_int) {
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = e }
}

/// The base address of the object holding `p` (0 if none).
pub(crate) fn object_base(p: *const c_void) -> usize {
    // SAFETY: plain data that dladdr fills in.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the address.
    if unsafe { libc::dladdr(p, &mut info) } == 0 {
        return 0;
    }
    info.dli_fbase as usize
}
