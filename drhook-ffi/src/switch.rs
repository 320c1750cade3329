//! `drhook_lhook`, the C switch of `drhook.h`'s macros (in the header:
//! generated from this file with `c_api.rs` and `fortran.rs`).

use std::ffi::c_int;
use std::sync::atomic::{AtomicI32, Ordering};

/// 1 until the first Dr.Hook call has read the environment, then 0 when
/// Dr.Hook is off: the `DRHOOK_*` macros test it before calling in.
/// `c_drhook_set_lhook_` changes it (and only it).
///
/// A plain (non-const) `int` for C; every access from Rust is atomic
/// ([`lhook`]).
#[allow(non_upper_case_globals)]
#[unsafe(no_mangle)]
pub static mut drhook_lhook: c_int = 1;

/// `drhook_lhook`, accessed atomically.
pub(crate) fn lhook() -> &'static AtomicI32 {
    // SAFETY: `drhook_lhook` is a properly aligned `int` that lives for the
    // whole program; Rust only ever accesses it through this atomic view.
    unsafe { AtomicI32::from_ptr(&raw mut drhook_lhook) }
}

pub(crate) fn set_lhook(on: bool) {
    lhook().store(c_int::from(on), Ordering::Relaxed);
}
