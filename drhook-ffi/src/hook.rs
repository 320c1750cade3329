//! The enter and exit paths shared by the Fortran and C entry points:
//! name (address) -> site through [`crate::names`], then the engine's
//! handle operations. A handle is what the engine encodes (thread, depth,
//! node index), stored bit for bit in the caller's `REAL(8)` / `double`
//! (or `REAL(4)`); it is never a pointer.

use drhook::Site;
use drhook::engine;

use crate::names;

/// Enters the routine `name` (optionally shown with `file`) and returns the
/// 64-bit handle (0 when Dr.Hook is off).
///
/// # Safety
/// `name` / `file` must be null or valid for their lengths.
#[inline(always)]
pub unsafe fn enter64(name: *const u8, name_len: usize, file: *const u8, file_len: usize) -> u64 {
    let site = match names::lookup(name, name_len, file, file_len) {
        Some(s) => s,
        // SAFETY: caller contract.
        None => match unsafe { site_cold(name, name_len, file, file_len) } {
            Some(s) => s,
            None => return 0,
        },
    };
    engine::enter_handle(site)
}

/// As [`enter64`], for a 4-byte handle.
///
/// # Safety
/// As [`enter64`].
#[inline(always)]
pub unsafe fn enter32(name: *const u8, name_len: usize, file: *const u8, file_len: usize) -> u32 {
    let site = match names::lookup(name, name_len, file, file_len) {
        Some(s) => s,
        // SAFETY: caller contract.
        None => match unsafe { site_cold(name, name_len, file, file_len) } {
            Some(s) => s,
            None => return 0,
        },
    };
    engine::enter_handle32(site)
}

/// Leaves the activation of a 64-bit handle; `name`/`file` name the routine
/// for diagnostics (and for `DR_HOOK_STRICT_REGIONS`).
///
/// # Safety
/// As [`enter64`].
#[inline(always)]
pub unsafe fn exit64(
    handle: u64,
    size: u64,
    name: *const u8,
    name_len: usize,
    file: *const u8,
    file_len: usize,
) {
    if handle == 0 {
        return;
    }
    let site = match names::lookup(name, name_len, file, file_len) {
        Some(s) => Some(s),
        // SAFETY: caller contract.
        None => unsafe { site_cold(name, name_len, file, file_len) },
    };
    engine::exit_handle(handle, size, site);
}

/// As [`exit64`], for a 4-byte handle.
///
/// # Safety
/// As [`enter64`].
#[inline(always)]
pub unsafe fn exit32(
    handle: u32,
    size: u64,
    name: *const u8,
    name_len: usize,
    file: *const u8,
    file_len: usize,
) {
    if handle == 0 {
        return;
    }
    let site = match names::lookup(name, name_len, file, file_len) {
        Some(s) => Some(s),
        // SAFETY: caller contract.
        None => unsafe { site_cold(name, name_len, file, file_len) },
    };
    engine::exit_handle32(handle, size, site);
}

/// First call from a call site: initialise if needed, then resolve the name
/// by its text. `None` when Dr.Hook is off (nothing is cached then).
///
/// # Safety
/// As [`enter64`].
#[cold]
#[inline(never)]
pub unsafe fn site_cold(
    name: *const u8,
    name_len: usize,
    file: *const u8,
    file_len: usize,
) -> Option<&'static Site> {
    if !crate::init::ensure() {
        return None;
    }
    // SAFETY: caller contract.
    Some(unsafe { names::resolve(name, name_len, file, file_len) })
}

/// A size argument as the engine takes it: negative values mean none.
#[inline(always)]
pub fn size_of_arg(size: i64) -> u64 {
    if size > 0 { size as u64 } else { 0 }
}
