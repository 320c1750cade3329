//! The bodies of the `malloc` family, generic over the [`Source`] of the
//! real functions. Each has the mode's cases: tracked (a header),
//! untracked (the real function), counted (the real function, and the
//! allocation counted when it succeeds), and the early arena while the
//! mode is being decided.

use std::ffi::{c_int, c_void};

use drhook::__private::mem::{HEADER, record_count};

use super::arena::{early_alloc, early_size, is_early};
use super::header::{ALIGNED, EARLY_BLOCK, read, read_plain, stamp};
use super::{COUNT, FreeFn, MallocFn, MemalignFn, OFF, Source, TRACK, current, mode, settle};

macro_rules! full {
    ($(#[$m:meta])* $name:ident => $f:ident($($a:ident: $t:ty),*) $(-> $r:ty)?) => {
        $(#[$m])*
        ///
        /// # Safety
        /// The C contract.
        #[inline(never)]
        pub unsafe extern "C" fn $name<S: Source>($($a: $t),*) $(-> $r)? {
            // SAFETY: the C contract.
            unsafe { $f::<S>($($a),*) }
        }
    };
}

full!(
    /// `malloc` without its shortcut (the exported wrapper's full path).
    malloc_full => malloc(size: usize) -> *mut c_void
);
full!(
    /// `calloc` without its shortcut.
    calloc_full => calloc(n: usize, size: usize) -> *mut c_void
);
full!(
    /// `free` without its shortcut.
    free_full => free(p: *mut c_void)
);
full!(
    /// `realloc` without its shortcut.
    realloc_full => realloc(p: *mut c_void, size: usize) -> *mut c_void
);
use crate::sys::set_errno;

/// `malloc`.
///
/// # Safety
/// The C contract.
#[inline(always)]
pub unsafe fn malloc<S: Source>(size: usize) -> *mut c_void {
    let Some(real) = S::malloc() else {
        return early_alloc(size, false);
    };
    let m = current();
    if m == TRACK {
        // SAFETY: the C contract.
        return unsafe { malloc_tracked_body(real, size) };
    }
    if m == OFF {
        // SAFETY: the C contract.
        return unsafe { real(size) };
    }
    // SAFETY: the C contract.
    unsafe { malloc_otherwise::<S>(m, size) }
}

/// `malloc` tracked, with the real function (the exported wrapper's
/// tracked shortcut; a C function in the arguments' order of the wrapper,
/// so that the wrapper jumps to it).
///
/// # Safety
/// The C contract; `real` is the real `malloc` and the mode is `TRACK`.
#[inline(never)]
pub unsafe extern "C" fn malloc_tracked(size: usize, real: MallocFn) -> *mut c_void {
    // SAFETY: the caller's contract.
    unsafe { malloc_tracked_body(real, size) }
}

/// The tracked `malloc`: a block with its header.
///
/// # Safety
/// The C contract; `real` is the real `malloc`.
#[inline(always)]
unsafe fn malloc_tracked_body(real: MallocFn, size: usize) -> *mut c_void {
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

/// `malloc` counted, or at the first call, or while the mode is decided.
///
/// # Safety
/// The C contract.
#[cold]
#[inline(never)]
unsafe fn malloc_otherwise<S: Source>(m: u8, size: usize) -> *mut c_void {
    match settle::<S>(m) {
        // SAFETY: the C contract.
        TRACK | OFF => unsafe { malloc::<S>(size) },
        COUNT => match S::malloc() {
            // SAFETY: the C contract.
            Some(real) => counted(unsafe { real(size) }, size),
            None => std::ptr::null_mut(),
        },
        _ => early_alloc(size, false),
    }
}

/// `p`, an allocation of `size` bytes counted if it succeeded.
#[inline]
fn counted(p: *mut c_void, size: usize) -> *mut c_void {
    if !p.is_null() && !super::header::own_work() {
        record_count(size);
    }
    p
}

/// `calloc`.
///
/// # Safety
/// The C contract.
pub unsafe fn calloc<S: Source>(n: usize, size: usize) -> *mut c_void {
    let early = || match n.checked_mul(size) {
        Some(b) => early_alloc(b, true),
        None => std::ptr::null_mut(),
    };
    let Some(real) = S::calloc() else {
        return early();
    };
    match mode::<S>() {
        TRACK => {}
        // SAFETY: the C contract.
        OFF => return unsafe { real(n, size) },
        // SAFETY: the C contract (the product cannot overflow when the
        // real one succeeds).
        COUNT => return counted(unsafe { real(n, size) }, n.wrapping_mul(size)),
        _ => return early(),
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
#[inline(always)]
pub unsafe fn free<S: Source>(p: *mut c_void) {
    if p.is_null() {
        return;
    }
    let Some(real) = S::free() else {
        return;
    };
    // Only tracked blocks have a header (none before the decision), and
    // the early arena's blocks (all with one, marked `EARLY_BLOCK`).
    if current() == TRACK {
        // SAFETY: the C contract.
        unsafe { free_tracked_body(real, p) };
        return;
    }
    if is_early(p) {
        return;
    }
    // SAFETY: the C contract.
    unsafe { real(p) }
}

/// `free` tracked, with the real function (the exported wrapper's tracked
/// shortcut; as [`malloc_tracked`]).
///
/// # Safety
/// The C contract; `real` is the real `free` and the mode is `TRACK`.
#[inline(never)]
pub unsafe extern "C" fn free_tracked(p: *mut c_void, real: FreeFn) {
    if !p.is_null() {
        // SAFETY: the caller's contract.
        unsafe { free_tracked_body(real, p) }
    }
}

/// The tracked `free` of `p`, not null: only tracked blocks have a header
/// (none before the decision), and the early arena's blocks (all with
/// one, marked `EARLY_BLOCK`).
///
/// # Safety
/// The C contract; `real` is the real `free`.
#[inline(always)]
unsafe fn free_tracked_body(real: FreeFn, p: *mut c_void) {
    // SAFETY: a block of ours (the early arena's included) or of the C
    // library.
    if let Some((size, owner)) = unsafe { read_plain(p) } {
        // SAFETY: a tracked block's owner word (`record_alloc`'s).
        unsafe { drhook::__private::mem::record_free(size, owner) };
        // SAFETY: the block's start, its header's.
        unsafe { real(p.cast::<u8>().sub(HEADER).cast()) };
        return;
    }
    // SAFETY: as above.
    if let Some((size, h, base)) = unsafe { read(p) } {
        if h.size & EARLY_BLOCK != 0 {
            return;
        }
        // SAFETY: a tracked block's header.
        unsafe { super::header::record_free(size, &h) };
        // SAFETY: the block's start.
        unsafe { real(base.cast()) };
        return;
    }
    // SAFETY: the C contract (the C library's block).
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
    match mode::<S>() {
        TRACK => {}
        // SAFETY: the C contract.
        COUNT if size != 0 => return counted(unsafe { real(p, size) }, size),
        // SAFETY: the C contract (not a block of ours).
        _ => return unsafe { real(p, size) },
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
        super::header::record_free(old, &h);
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

/// The header's room in front of a block the real function aligns to
/// `align`: the alignment rounded up to a power of two (glibc rounds a
/// `memalign` alignment up so), at least [`HEADER`], so that the address
/// handed out, `room` bytes into the block, keeps the alignment. None for
/// an alignment no block can have (the real function refuses it).
fn room(align: usize) -> Option<usize> {
    align.max(HEADER).checked_next_power_of_two()
}

/// A tracked block of `size` bytes from `real`, the real aligned
/// allocation function with its alignment (`room`, from [`room`]), asked
/// for `size` and the room: the real function decides what is valid, and
/// its errors and `errno` are the caller's. When `size` and the room do
/// not fit in a `usize` the real function is asked for `size` itself and
/// refuses it as it does plainly.
///
/// # Safety
/// `real` returns null or a block of the size it is given, aligned to
/// `room` (or more).
unsafe fn aligned<S: Source>(
    room: Option<usize>,
    size: usize,
    real: impl FnOnce(usize) -> *mut c_void,
) -> *mut c_void {
    let Some((room, total)) = room.and_then(|r| Some((r, size.checked_add(r)?))) else {
        return refused::<S>(real(size));
    };
    let base = real(total).cast::<u8>();
    if base.is_null() {
        return base.cast();
    }
    // SAFETY: `room` bytes of the block (16, or at least 32 when the
    // start is recorded before the header) precede `user`, and `size`
    // bytes follow it.
    unsafe { stamp(base.add(room), size, base) }
}

/// The outcome of asking the real function for a size it refuses
/// plainly: null, or (a C library that gave such a block) the block
/// returned and ENOMEM, since it has no room for a header.
fn refused<S: Source>(p: *mut c_void) -> *mut c_void {
    if !p.is_null() {
        if let Some(free) = S::free() {
            // SAFETY: a block of the real allocator.
            unsafe { free(p) };
        }
        set_enomem();
    }
    std::ptr::null_mut()
}

/// `posix_memalign`.
///
/// # Safety
/// The C contract.
pub unsafe fn posix_memalign<S: Source>(out: *mut *mut c_void, align: usize, size: usize) -> c_int {
    let Some(real) = S::posix_memalign() else {
        return libc::ENOMEM;
    };
    match mode::<S>() {
        TRACK => {}
        // SAFETY: the C contract.
        OFF => return unsafe { real(out, align, size) },
        COUNT => {
            // SAFETY: the C contract.
            let rc = unsafe { real(out, align, size) };
            if rc == 0 && !super::header::own_work() {
                record_count(size);
            }
            return rc;
        }
        _ => return libc::ENOMEM,
    }
    let mut rc = 0;
    // SAFETY: `real` gives a block aligned to `align` (rounded up, as the
    // C library does) or an error, kept in `rc`.
    let p = unsafe {
        aligned::<S>(room(align), size, |n| {
            let mut p = std::ptr::null_mut();
            rc = real(&mut p, align, n);
            if rc == 0 { p } else { std::ptr::null_mut() }
        })
    };
    if p.is_null() {
        return if rc == 0 { libc::ENOMEM } else { rc };
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
    // SAFETY: the C contract.
    unsafe { aligned_by::<S>(S::aligned_alloc(), align, size) }
}

/// `aligned_alloc` and `memalign` through their real function `real`.
///
/// # Safety
/// The C contract.
unsafe fn aligned_by<S: Source>(
    real: Option<MemalignFn>,
    align: usize,
    size: usize,
) -> *mut c_void {
    let Some(real) = real else {
        return std::ptr::null_mut();
    };
    match mode::<S>() {
        TRACK => {}
        // SAFETY: the C contract.
        OFF => return unsafe { real(align, size) },
        // SAFETY: the C contract.
        COUNT => return counted(unsafe { real(align, size) }, size),
        _ => return std::ptr::null_mut(),
    }
    // SAFETY: as in `posix_memalign`.
    unsafe { aligned::<S>(room(align), size, |n| real(align, n)) }
}

/// `memalign`.
///
/// # Safety
/// The C contract.
pub unsafe fn memalign<S: Source>(align: usize, size: usize) -> *mut c_void {
    // SAFETY: the C contract.
    unsafe { aligned_by::<S>(S::memalign(), align, size) }
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
    let Some(real) = S::valloc() else {
        return std::ptr::null_mut();
    };
    match mode::<S>() {
        TRACK => {}
        // SAFETY: the C contract.
        OFF => return unsafe { real(size) },
        // SAFETY: the C contract.
        COUNT => return counted(unsafe { real(size) }, size),
        _ => return std::ptr::null_mut(),
    }
    // SAFETY: page-aligned blocks.
    unsafe { aligned::<S>(Some(page()), size, |n| real(n)) }
}

/// `pvalloc` (the real one rounds the size, the header's page included,
/// up to whole pages).
///
/// # Safety
/// The C contract.
pub unsafe fn pvalloc<S: Source>(size: usize) -> *mut c_void {
    let Some(real) = S::pvalloc() else {
        return std::ptr::null_mut();
    };
    match mode::<S>() {
        TRACK => {}
        // SAFETY: the C contract.
        OFF => return unsafe { real(size) },
        // SAFETY: the C contract.
        COUNT => return counted(unsafe { real(size) }, size),
        _ => return std::ptr::null_mut(),
    }
    // SAFETY: page-aligned blocks.
    unsafe { aligned::<S>(Some(page()), size, |n| real(n)) }
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
    if current() == TRACK
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
