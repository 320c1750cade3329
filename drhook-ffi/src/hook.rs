//! The enter and exit paths shared by the Fortran and C entry points:
//! name (address) -> site through [`crate::names`], then the engine's
//! handle operations. A handle is what the engine encodes (thread, depth,
//! node index), stored bit for bit in the caller's `REAL(8)` / `double`
//! (or `REAL(4)`); it is never a pointer.
//!
//! The hot paths (a name without a file, found in its first slot) are a
//! cache probe and one engine call; anything else goes to an out-of-line
//! function that does the whole operation, so that the hot paths keep no
//! values across calls and need no saved registers.

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
    if file_len == 0 {
        let site = names::first(name, name_len);
        if !site.is_null() {
            // SAFETY: cached sites are `&'static Site`s.
            return engine::enter_handle(unsafe { &*site });
        }
    }
    // SAFETY: caller contract.
    unsafe { enter64_slow(name, name_len, file, file_len) }
}

#[inline(never)]
unsafe fn enter64_slow(name: *const u8, name_len: usize, file: *const u8, file_len: usize) -> u64 {
    // SAFETY: caller contract.
    match unsafe { site(name, name_len, file, file_len) } {
        Some(site) => engine::enter_handle(site),
        None => 0,
    }
}

/// As [`enter64`] (without a file), for a 4-byte handle.
///
/// # Safety
/// As [`enter64`].
#[inline(always)]
pub unsafe fn enter32(name: *const u8, name_len: usize) -> u32 {
    let site = names::first(name, name_len);
    if !site.is_null() {
        // SAFETY: cached sites are `&'static Site`s.
        return engine::enter_handle32(unsafe { &*site });
    }
    // SAFETY: caller contract.
    unsafe { enter32_slow(name, name_len) }
}

#[inline(never)]
unsafe fn enter32_slow(name: *const u8, name_len: usize) -> u32 {
    // SAFETY: caller contract.
    match unsafe { site(name, name_len, std::ptr::null(), 0) } {
        Some(site) => engine::enter_handle32(site),
        None => 0,
    }
}

/// Leaves the activation of a 64-bit handle; `name`/`file` name the routine
/// for diagnostics (and for `DR_HOOK_STRICT_REGIONS`). The name is looked
/// up only when the engine needs it (a mismatch, strict regions, a slow
/// clock): the common exit does no lookup at all. A handle of 0 (an enter
/// made while Dr.Hook was off) is ignored.
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
    if file_len == 0 {
        // The common case: the slow path needs only the name (two words).
        // SAFETY: caller contract (the closure runs during this call).
        return engine::exit_handle_lazy(handle, size, move || unsafe {
            exit_site(name, name_len, std::ptr::null(), 0)
        });
    }
    // SAFETY: caller contract (the closure runs during this call).
    engine::exit_handle_lazy(handle, size, move || unsafe {
        exit_site(name, name_len, file, file_len)
    });
}

/// As [`exit64`] (without a file or size), for a 4-byte handle.
///
/// # Safety
/// As [`enter64`].
#[inline(always)]
pub unsafe fn exit32(handle: u32, name: *const u8, name_len: usize) {
    // SAFETY: caller contract (the closure runs during this call).
    engine::exit_handle32_lazy(handle, 0, move || unsafe {
        exit_site(name, name_len, std::ptr::null(), 0)
    });
}

/// The site an exit names, for the engine's slow path.
///
/// # Safety
/// As [`enter64`].
#[cold]
#[inline(never)]
unsafe fn exit_site(
    name: *const u8,
    name_len: usize,
    file: *const u8,
    file_len: usize,
) -> Option<&'static Site> {
    // SAFETY: caller contract.
    unsafe { site(name, name_len, file, file_len) }
}

/// The site of a name (and file) that is not in its first slot: the rest
/// of the probe sequence, then (first call from a call site) initialisation
/// and resolution of the text. `None` when Dr.Hook is off (nothing is
/// cached then).
///
/// # Safety
/// As [`enter64`].
unsafe fn site(
    name: *const u8,
    name_len: usize,
    file: *const u8,
    file_len: usize,
) -> Option<&'static Site> {
    // SAFETY: caller contract.
    if let Some(s) = unsafe { names::lookup(name, name_len, file, file_len) } {
        return Some(s);
    }
    // SAFETY: caller contract.
    unsafe { fortran_site_cold(name, name_len, file, file_len) }
}

/// [`site_cold`] from a Fortran `DR_HOOK`: the process's first Dr.Hook
/// call, when it is this one, also makes the reference's MPI assertion
/// ([`crate::init::ensure_fortran`]).
///
/// # Safety
/// As [`enter64`].
#[cold]
#[inline(never)]
unsafe fn fortran_site_cold(
    name: *const u8,
    name_len: usize,
    file: *const u8,
    file_len: usize,
) -> Option<&'static Site> {
    if !crate::init::ensure_fortran() {
        return None;
    }
    // SAFETY: caller contract.
    unsafe { site_cold(name, name_len, file, file_len) }
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
