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

// --- LHOOK of yomhook.F90 ---------------------------------------------------

/// The Fortran COMMON block `/YOMHOOK_LHOOK/` of `yomhook.F90`: `LHOOK`
/// (a default `LOGICAL`) and three words of padding, so that every
/// compiler's COMMON has this definition's size (16) and an alignment no
/// larger than its (16): linking gives no size or alignment warning.
/// Fortran compilers emit COMMON blocks as common symbols, so the linker
/// keeps this definition, with its initial value `.TRUE.` (1); in a client
/// linked with `libdrhook.so` the executable holds the copy, which the
/// library reaches through the GOT like any exported variable.
#[repr(C, align(16))]
pub struct FortranLhook {
    lhook: AtomicI32,
    _pad: [AtomicI32; 3],
}

/// `LHOOK` of `yomhook.F90` (see [`FortranLhook`]); named as gfortran,
/// flang, ifx and nvfortran name the COMMON block.
///
/// cbindgen:ignore
#[allow(non_upper_case_globals)]
#[unsafe(no_mangle)]
pub static yomhook_lhook_: FortranLhook = FortranLhook {
    lhook: AtomicI32::new(1),
    _pad: [const { AtomicI32::new(0) }; 3],
};

/// The Fortran `LHOOK`: non-zero while Fortran code should call `DR_HOOK`.
#[inline(always)]
pub(crate) fn fortran_lhook() -> &'static AtomicI32 {
    &yomhook_lhook_.lhook
}
