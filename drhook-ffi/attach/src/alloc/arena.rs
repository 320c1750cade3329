//! The early arena: allocations made before the real functions can be had
//! (while `dlsym` looks them up), with a header, never freed; `free`
//! recognises its blocks by address.

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};

use drhook::__private::mem::{HEADER, Header};

use super::header::{EARLY_BLOCK, SIZE_MASK, TAG};

const ARENA: usize = 64 * 1024;

#[repr(C, align(16))]
struct Arena([u8; ARENA]);

static mut EARLY: Arena = Arena([0; ARENA]);
static EARLY_USED: AtomicUsize = AtomicUsize::new(0);

fn early_base() -> usize {
    (&raw const EARLY) as usize
}

pub(super) fn is_early(p: *mut c_void) -> bool {
    let a = p as usize;
    a >= early_base() && a < early_base() + ARENA
}

/// A block of the early arena (before the real functions can be had),
/// with a header (never freed).
pub(super) fn early_alloc(size: usize, zero_needed: bool) -> *mut c_void {
    let _ = zero_needed; // the arena is zeroed and never reused
    let need = (size + HEADER + 15) & !15;
    let at = EARLY_USED.fetch_add(need, Ordering::SeqCst);
    super::early_blocks_exist();
    if at + need > ARENA {
        return std::ptr::null_mut();
    }
    // SAFETY: a fresh, unshared range of the arena.
    unsafe {
        let user = (early_base() + at + HEADER) as *mut u8;
        user.sub(HEADER).cast::<Header>().write(Header {
            size: TAG | EARLY_BLOCK | (size as u64 & SIZE_MASK),
            owner: std::ptr::null(),
        });
        user.cast()
    }
}

/// Whether no block of the arena was ever handed out.
pub(super) fn no_early_blocks() -> bool {
    EARLY_USED.load(Ordering::SeqCst) == 0
}

pub(super) fn early_size(p: *mut c_void) -> usize {
    // SAFETY: arena blocks have a header.
    (unsafe { p.cast::<u8>().sub(HEADER).cast::<Header>().read() }.size & SIZE_MASK) as usize
}
