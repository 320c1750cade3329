//! The bodies of the `malloc` family, generic over the [`Source`] of the
//! real functions.

use std::ffi::{c_int, c_void};

use drhook::__private::mem::{HEADER, record_free};

use super::arena::{early_alloc, early_size, is_early};
use super::header::{ALIGNED, read, stamp};
use super::{Source, tracking};
use crate::sys::{errno, set_errno};

/// `malloc`.
///
/// # Safety
/// The C contract.
#[inline]
pub unsafe fn malloc<S: Source>(size: usize) -> *mut c_void {
    let Some(real) = S::malloc() else {
        return early_alloc(size, false);
    };
    if !tracking::<S>() {
        // SAFETY: the C contract.
        return unsafe { real(size) };
    }
    let Some(total) = size.checked_add(HEADER) else {
        set_enomem();
        return std::ptr::null_mut();
    };
    // SAFETY: the C contract.
    let base = unsafe { real(total) }.cast::<u8>();
    if base.is_null() {
        return base.cast();
    }
    // SAFETY: 16 bytes of header at the start of the block.
    unsafe { stamp(base.add(HEADER), size, base) }
}

/// `calloc`.
///
/// # Safety
/// The C contract.
pub unsafe fn calloc<S: Source>(n: usize, size: usize) -> *mut c_void {
    let Some(real) = S::calloc() else {
        return match n.checked_mul(size) {
            Some(b) => early_alloc(b, true),
            None => std::ptr::null_mut(),
        };
    };
    if !tracking::<S>() {
        // SAFETY: the C contract.
        return unsafe { real(n, size) };
    }
    let Some(bytes) = n.checked_mul(size) else {
        set_enomem();
        return std::ptr::null_mut();
    };
    let Some(total) = bytes.checked_add(HEADER) else {
        set_enomem();
        return std::ptr::null_mut();
    };
    // SAFETY: the C contract.
    let base = unsafe { real(1, total) }.cast::<u8>();
    if base.is_null() {
        return base.cast();
    }
    // SAFETY: as in `malloc`.
    unsafe { stamp(base.add(HEADER), bytes, base) }
}

/// `free`.
///
/// # Safety
/// The C contract.
#[inline]
pub unsafe fn free<S: Source>(p: *mut c_void) {
    if p.is_null() || is_early(p) {
        return;
    }
    let Some(real) = S::free() else {
        return;
    };
    if tracking::<S>()
        // SAFETY: a block of ours or of the C library.
        && let Some((size, h, base)) = unsafe { read(p) }
    {
        // SAFETY: the owner word came from `record_alloc`.
        unsafe { record_free(size, h.owner) };
        // SAFETY: the block's start.
        unsafe { real(base.cast()) };
        return;
    }
    // SAFETY: the C contract.
    unsafe { real(p) }
}

/// `realloc`.
///
/// # Safety
/// The C contract.
pub unsafe fn realloc<S: Source>(p: *mut c_void, size: usize) -> *mut c_void {
    if p.is_null() {
        // SAFETY: the C contract.
        return unsafe { malloc::<S>(size) };
    }
    if is_early(p) {
        // SAFETY: the C contract.
        let q = unsafe { malloc::<S>(size) };
        if !q.is_null() {
            let n = early_size(p).min(size);
            // SAFETY: both blocks hold at least `n` bytes.
            unsafe { std::ptr::copy_nonoverlapping(p.cast::<u8>(), q.cast::<u8>(), n) };
        }
        return q;
    }
    let Some(real) = S::realloc() else {
        return std::ptr::null_mut();
    };
    if !tracking::<S>() {
        // SAFETY: the C contract.
        return unsafe { real(p, size) };
    }
    // SAFETY: a block of ours or of the C library.
    let Some((old, h, base)) = (unsafe { read(p) }) else {
        // SAFETY: not ours: the C library's own.
        return unsafe { real(p, size) };
    };
    if size == 0 {
        // glibc: realloc(p, 0) frees p and returns NULL.
        // SAFETY: the C contract.
        unsafe { free::<S>(p) };
        return std::ptr::null_mut();
    }
    if h.size & ALIGNED != 0 {
        // An aligned block moves to a plain one (as glibc's realloc, which
        // keeps no alignment beyond malloc's).
        // SAFETY: the C contract.
        let q = unsafe { malloc::<S>(size) };
        if !q.is_null() {
            // SAFETY: both blocks hold at least min(old, size) bytes.
            unsafe {
                std::ptr::copy_nonoverlapping(p.cast::<u8>(), q.cast::<u8>(), old.min(size));
                free::<S>(p);
            }
        }
        return q;
    }
    let Some(total) = size.checked_add(HEADER) else {
        set_enomem();
        return std::ptr::null_mut();
    };
    // SAFETY: `base` is the block's start.
    let nb = unsafe { real(base.cast(), total) }.cast::<u8>();
    if nb.is_null() {
        return nb.cast();
    }
    // A reallocation: the free of the old block, the allocation of the
    // new one, where it happens.
    // SAFETY: the owner came from `record_alloc`; the header is in the block.
    unsafe {
        record_free(old, h.owner);
        stamp(nb.add(HEADER), size, nb)
    }
}

/// `reallocarray`.
///
/// # Safety
/// The C contract.
pub unsafe fn reallocarray<S: Source>(p: *mut c_void, n: usize, size: usize) -> *mut c_void {
    match n.checked_mul(size) {
        // SAFETY: the C contract.
        Some(b) => unsafe { realloc::<S>(p, b) },
        None => {
            set_enomem();
            std::ptr::null_mut()
        }
    }
}

/// A block of `size` bytes aligned to `align` (a power of two).
///
/// # Safety
/// The C contract.
unsafe fn aligned<S: Source>(align: usize, size: usize) -> *mut c_void {
    let Some(real) = S::malloc() else {
        return std::ptr::null_mut();
    };
    if align <= 16 {
        // SAFETY: malloc's blocks are 16-aligned.
        return unsafe { malloc::<S>(size) };
    }
    let Some(total) = size.checked_add(align + HEADER + 8) else {
        set_enomem();
        return std::ptr::null_mut();
    };
    // SAFETY: the C contract.
    let base = unsafe { real(total) }.cast::<u8>();
    if base.is_null() {
        return base.cast();
    }
    let user = (base as usize + HEADER + 8).next_multiple_of(align);
    // SAFETY: `user - 24 >= base`, `user + size <= base + total`.
    unsafe { stamp(user as *mut u8, size, base) }
}

/// `posix_memalign`.
///
/// # Safety
/// The C contract.
pub unsafe fn posix_memalign<S: Source>(out: *mut *mut c_void, align: usize, size: usize) -> c_int {
    if !tracking::<S>() {
        return match S::posix_memalign() {
            // SAFETY: the C contract.
            Some(f) => unsafe { f(out, align, size) },
            None => libc::ENOMEM,
        };
    }
    if !align.is_power_of_two() || align % size_of::<*mut c_void>() != 0 {
        return libc::EINVAL;
    }
    let saved = errno();
    // SAFETY: the C contract.
    let p = unsafe { aligned::<S>(align, size) };
    if p.is_null() {
        set_errno(saved);
        return libc::ENOMEM;
    }
    // SAFETY: the caller's pointer.
    unsafe { *out = p };
    0
}

/// `aligned_alloc`.
///
/// # Safety
/// The C contract.
pub unsafe fn aligned_alloc<S: Source>(align: usize, size: usize) -> *mut c_void {
    if !tracking::<S>() {
        return match S::aligned_alloc() {
            // SAFETY: the C contract.
            Some(f) => unsafe { f(align, size) },
            None => std::ptr::null_mut(),
        };
    }
    if !align.is_power_of_two() {
        set_errno(libc::EINVAL);
        return std::ptr::null_mut();
    }
    // SAFETY: the C contract.
    unsafe { aligned::<S>(align, size) }
}

/// `memalign` (an alignment that is not a power of two is rounded up, as
/// glibc does).
///
/// # Safety
/// The C contract.
pub unsafe fn memalign<S: Source>(align: usize, size: usize) -> *mut c_void {
    if !tracking::<S>() {
        return match S::memalign() {
            // SAFETY: the C contract.
            Some(f) => unsafe { f(align, size) },
            None => std::ptr::null_mut(),
        };
    }
    let align = align.max(1).checked_next_power_of_two().unwrap_or(0);
    if align == 0 {
        set_errno(libc::EINVAL);
        return std::ptr::null_mut();
    }
    // SAFETY: the C contract.
    unsafe { aligned::<S>(align, size) }
}

fn page() -> usize {
    // SAFETY: sysconf has no preconditions.
    (unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).max(4096) as usize
}

/// `valloc`.
///
/// # Safety
/// The C contract.
pub unsafe fn valloc<S: Source>(size: usize) -> *mut c_void {
    if !tracking::<S>() {
        return match S::valloc() {
            // SAFETY: the C contract.
            Some(f) => unsafe { f(size) },
            None => std::ptr::null_mut(),
        };
    }
    // SAFETY: the C contract.
    unsafe { aligned::<S>(page(), size) }
}

/// `pvalloc`.
///
/// # Safety
/// The C contract.
pub unsafe fn pvalloc<S: Source>(size: usize) -> *mut c_void {
    if !tracking::<S>() {
        return match S::pvalloc() {
            // SAFETY: the C contract.
            Some(f) => unsafe { f(size) },
            None => std::ptr::null_mut(),
        };
    }
    let p = page();
    match size.max(1).checked_next_multiple_of(p) {
        // SAFETY: the C contract.
        Some(s) => unsafe { aligned::<S>(p, s) },
        None => {
            set_enomem();
            std::ptr::null_mut()
        }
    }
}

/// `malloc_usable_size`.
///
/// # Safety
/// The C contract.
pub unsafe fn malloc_usable_size<S: Source>(p: *mut c_void) -> usize {
    if p.is_null() {
        return 0;
    }
    if is_early(p) {
        return early_size(p);
    }
    let Some(real) = S::usable() else {
        return 0;
    };
    if tracking::<S>()
        // SAFETY: a block of ours or of the C library.
        && let Some((_, _, base)) = unsafe { read(p) }
    {
        // SAFETY: the block's start.
        let whole = unsafe { real(base.cast()) };
        return whole.saturating_sub(p as usize - base as usize);
    }
    // SAFETY: the C contract.
    unsafe { real(p) }
}

fn set_enomem() {
    set_errno(libc::ENOMEM);
}
