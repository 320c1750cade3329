//! A tracked block's 16-byte header, before the address the program gets:
//! its size with a tag (and a flag for blocks aligned beyond 16, whose
//! start is then in the word before the header), and the allocating
//! routine's leak word.

use std::ffi::c_void;
use std::sync::atomic::AtomicU64;

use drhook::__private::mem::{HEADER, Header, record_alloc};

/// The tag in the top 16 bits of a header's size word.
pub(super) const TAG: u64 = 0xd7a1 << 48;
const TAG_MASK: u64 = 0xffff << 48;
/// Set when the block is aligned beyond 16: its start is in the word
/// before the header.
pub(super) const ALIGNED: u64 = 1 << 47;
/// Set when the block was allocated for the layer's or Dr.Hook's own work
/// (the `OWN_WORK` bit of the thread: the C library's `regexec` in the I/O
/// layer's path patterns, ...): in no routine and in no total, its free
/// neither.
pub(super) const OWN: u64 = 1 << 46;
/// Set on the blocks of the early arena (never freed): a tracked `free`
/// that reads it needs no test of the address.
pub(super) const EARLY_BLOCK: u64 = 1 << 45;
pub(super) const SIZE_MASK: u64 = (1 << 45) - 1;

/// Whether the calling thread is doing the layer's or Dr.Hook's own work.
#[inline]
pub(super) fn own_work() -> bool {
    crate::sys::tls::get(crate::sys::tls::GUARD) & crate::sys::tls::OWN_WORK != 0
}

/// Records the free of a tracked block (nothing for one of [`OWN`] work).
///
/// # Safety
/// `h` is the header of a tracked block of this process.
#[inline]
pub(super) unsafe fn record_free(size: usize, h: &Header) {
    if h.size & OWN == 0 {
        // SAFETY: the owner word came from `record_alloc`.
        unsafe { drhook::__private::mem::record_free(size, h.owner) };
    }
}

/// Writes the header of a tracked block before `user` and records it.
///
/// # Safety
/// `user - 16 .. user` (and `user - 24` when `base` differs) belong to the
/// block.
#[inline(always)]
pub(super) unsafe fn stamp(user: *mut u8, size: usize, base: *mut u8) -> *mut c_void {
    let mut word = TAG | (size as u64 & SIZE_MASK);
    let owner = if own_work() {
        word |= OWN;
        std::ptr::null()
    } else {
        record_alloc(size)
    };
    // SAFETY: the caller's contract.
    unsafe {
        if base != user.sub(HEADER) {
            word |= ALIGNED;
            user.sub(HEADER + 8).cast::<*mut u8>().write(base);
        }
        user.sub(HEADER)
            .cast::<Header>()
            .write(Header { size: word, owner });
    }
    user.cast()
}

/// The header of a tracked block of the program's own work, neither
/// aligned beyond 16 nor of the early arena (the common case, told by one
/// mask and compare of the size word): its size and owner; None for any
/// other block (then [`read`] tells what it is).
///
/// # Safety
/// `p` is a block of the C library's allocator or of ours.
#[inline(always)]
pub(super) unsafe fn read_plain(p: *mut c_void) -> Option<(usize, *const AtomicU64)> {
    // SAFETY: as in `read`.
    let h = unsafe { p.cast::<u8>().sub(HEADER).cast::<Header>().read() };
    (h.size & !SIZE_MASK == TAG).then_some(((h.size & SIZE_MASK) as usize, h.owner))
}

/// A tracked block's size, owner and start; None when `p` has no header
/// of ours.
///
/// # Safety
/// `p` is a block of the C library's allocator or of ours.
#[inline]
pub(super) unsafe fn read(p: *mut c_void) -> Option<(usize, Header, *mut u8)> {
    let user = p.cast::<u8>();
    // SAFETY: every block of ours has its header there; glibc's blocks
    // have their chunk header there (readable).
    let h = unsafe { user.sub(HEADER).cast::<Header>().read() };
    if h.size & TAG_MASK != TAG {
        return None;
    }
    let size = (h.size & SIZE_MASK) as usize;
    let base = if h.size & ALIGNED != 0 {
        // SAFETY: written by `stamp` for aligned blocks.
        unsafe { user.sub(HEADER + 8).cast::<*mut u8>().read() }
    } else {
        // SAFETY: in the block.
        unsafe { user.sub(HEADER) }
    };
    Some((size, h, base))
}
