//! Allocation events for the memory metric (`metrics::mem`): the
//! `GlobalAlloc` wrapper [`Alloc`] for Rust programs, and the two entry
//! points every allocator wrapper calls ([`record_alloc`], [`record_free`];
//! the preload library's `malloc` family uses them too, and
//! [`record_count`] where its blocks cannot carry a header).
//!
//! Every tracked block carries a 16-byte [`Header`] just before the
//! address handed out: its size and the address of the `LIVE` word of the
//! node that allocated it (null when it was allocated outside any
//! instrumented routine or while the metric is off). A free reads the
//! header, so the bytes are taken back from the routine that allocated
//! them whichever thread frees them, and frees count the bytes of the
//! block exactly (not the allocator's rounded-up size).

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::metrics::mem::{self, ALLOC, FREE, HEAP, LIVE, NALLOC, NFREE, OFFSET, WORDS};
use crate::tree::thread::{self, ThreadData};

/// What a tracked block holds before the address handed out.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Header {
    /// Bytes asked for.
    pub size: u64,
    /// The owner's `LIVE` word (null: no owner).
    pub owner: *const AtomicU64,
}

/// Bytes of a [`Header`].
pub const HEADER: usize = 16;
const _: () = assert!(std::mem::size_of::<Header>() == HEADER);

#[inline]
fn bump(w: &AtomicU64, by: u64) {
    // Only the owner thread writes these words.
    w.store(
        w.load(Ordering::Relaxed).wrapping_add(by),
        Ordering::Relaxed,
    );
}

/// Where an allocation event of the calling thread goes.
enum Words {
    /// The memory words of the thread's current routine.
    Routine(&'static [AtomicU64; WORDS]),
    /// Outside any routine (before Dr.Hook started, a thread without a
    /// calling tree or between routines): `metrics::mem::Outside`.
    Outside,
    /// The engine's own work (a new node, a profile write): nowhere.
    Own,
}

/// The memory words of the current routine of `td`, the calling thread's
/// tree, if the metric is on.
#[inline(always)]
fn words_of(td: &'static ThreadData) -> Words {
    if td.in_internal_work() {
        return Words::Own;
    }
    match td.top_words::<WORDS>(&OFFSET) {
        Some(w) => Words::Routine(w),
        None => Words::Outside,
    }
}

/// The memory words of the calling thread's current routine, if the metric
/// is on and the thread has a calling tree.
#[inline(always)]
fn current_words() -> Words {
    match current_tree() {
        Some(td) => words_of(td),
        None => Words::Outside,
    }
}

/// The calling thread's tree, if it has one.
#[inline(always)]
fn current_tree() -> Option<&'static ThreadData> {
    // SAFETY: the calling thread's own tree (freed only once the thread
    // ended it and the thread-local pointer no longer reaches it).
    unsafe { thread::current().as_ref() }
}

/// Records an allocation of `size` bytes by the calling thread; returns
/// the owner word to store in the block's header. Never allocates, never
/// locks; a thread with a calling tree writes no word shared with other
/// threads but the owner's `LIVE` word (and the process peak when it
/// rises).
#[inline(always)]
pub fn record_alloc(size: usize) -> *const AtomicU64 {
    let Some(td) = current_tree() else {
        mem::total_alloc(size as u64);
        mem::outside(false, size as u64);
        return std::ptr::null();
    };
    let live = mem::level_with(td.heap_share_add(size as i64));
    let w = match words_of(td) {
        Words::Routine(w) => w,
        Words::Outside => {
            mem::outside(false, size as u64);
            return std::ptr::null();
        }
        Words::Own => return std::ptr::null(),
    };
    bump(&w[ALLOC], size as u64);
    bump(&w[NALLOC], 1);
    if live > w[HEAP].load(Ordering::Relaxed) {
        w[HEAP].store(live, Ordering::Relaxed);
    }
    if size == 0 {
        // No owner: nothing to take back, and a thread that ended with
        // its `LIVE` words all 0 has its rows freed (`profile::ended`).
        return std::ptr::null();
    }
    w[LIVE].fetch_add(size as u64, Ordering::Relaxed);
    &w[LIVE]
}

/// Records an allocation of `size` bytes by the calling thread whose free
/// will not be seen (an allocator whose blocks cannot carry a header, such
/// as jemalloc's with its own API on `malloc`'s blocks): the routine's
/// allocations and their bytes grow, its live bytes and the process heap
/// level do not (they would only grow). Never allocates, never locks.
#[inline]
pub fn record_count(size: usize) {
    match current_words() {
        Words::Routine(w) => {
            bump(&w[ALLOC], size as u64);
            bump(&w[NALLOC], 1);
        }
        Words::Outside => mem::outside(false, size as u64),
        Words::Own => {}
    }
}

/// An allocator wrapper tracks (or counts) blocks for the memory profile
/// from now on, before Dr.Hook has started: allocations made before it
/// starts are counted in the memory profile's "Outside any routine" line,
/// except where `own_work` says the calling thread is doing the wrapper's
/// or Dr.Hook's own work (Dr.Hook's start-up, a thread's set-up: no calling
/// tree can tell it then).
pub fn expect_memory_profile(own_work: fn() -> bool) {
    mem::expect_memory_profile(own_work);
}

/// Records the free of a block of `size` bytes allocated by the routine
/// whose `LIVE` word is `owner` (null: none).
///
/// # Safety
/// `owner` is null or a value returned by [`record_alloc`] in this process.
#[inline]
pub unsafe fn record_free(size: usize, owner: *const AtomicU64) {
    if !owner.is_null() {
        // SAFETY: owner words live in rows that never move, kept while a
        // block they own is allocated (`profile::ended`).
        unsafe { &*owner }.fetch_sub(size as u64, Ordering::Relaxed);
    }
    let Some(td) = current_tree() else {
        mem::total_free(size as u64);
        mem::outside(true, size as u64);
        return;
    };
    td.heap_share_add((size as u64).wrapping_neg() as i64);
    match words_of(td) {
        Words::Routine(w) => {
            bump(&w[FREE], size as u64);
            bump(&w[NFREE], 1);
        }
        Words::Outside => mem::outside(true, size as u64),
        Words::Own => {}
    }
}

/// A `GlobalAlloc` that records every allocation and free in the Dr.Hook
/// memory profile of the routine that makes it (`DR_HOOK_OPT=memprof`,
/// `heap`, `mem`, ...), around any allocator:
///
/// ```
/// use std::alloc::System;
/// #[global_allocator]
/// static A: drhook::Alloc<System> = drhook::Alloc::new(System);
/// # fn main() {}
/// ```
///
/// Each block is 16 bytes larger than asked (more for alignments above
/// 16), for its header; with Dr.Hook off the cost is that header and
/// one relaxed atomic addition per allocation and free (the process heap).
#[derive(Debug, Default)]
pub struct Alloc<A> {
    inner: A,
}

impl<A> Alloc<A> {
    /// Wraps `inner`.
    pub const fn new(inner: A) -> Self {
        Alloc { inner }
    }
}

/// The header's room for `layout`: at least 16 bytes, keeping the
/// alignment.
#[inline]
fn room(layout: Layout) -> usize {
    layout.align().max(HEADER)
}

#[inline]
fn outer(layout: Layout) -> Option<Layout> {
    let r = room(layout);
    Layout::from_size_align(layout.size().checked_add(r)?, layout.align().max(HEADER)).ok()
}

/// Writes the header before `user` and records the allocation.
///
/// # Safety
/// `user - 16 .. user` is writable memory of the block.
#[inline]
unsafe fn stamp(user: *mut u8, size: usize) {
    let owner = record_alloc(size);
    // SAFETY: the caller's room for the header, aligned to 8.
    unsafe {
        user.sub(HEADER).cast::<Header>().write(Header {
            size: size as u64,
            owner,
        })
    };
}

impl<A: GlobalAlloc> Alloc<A> {
    /// A block of `layout` from `get` (the inner allocation of the outer
    /// layout), stamped with its header.
    ///
    /// # Safety
    /// `get` returns null or a block of the layout it is given.
    #[inline]
    unsafe fn alloc_with(&self, layout: Layout, get: impl FnOnce(Layout) -> *mut u8) -> *mut u8 {
        let Some(o) = outer(layout) else {
            return std::ptr::null_mut();
        };
        let base = get(o);
        if base.is_null() {
            return base;
        }
        // SAFETY: `room` bytes of the block precede the user address.
        unsafe {
            let user = base.add(room(layout));
            stamp(user, layout.size());
            user
        }
    }
}

// SAFETY: every block handed out is `room` bytes into a block of the inner
// allocator with the outer layout, aligned as asked; dealloc and realloc
// undo exactly that.
unsafe impl<A: GlobalAlloc> GlobalAlloc for Alloc<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the outer layout has a non-zero size (the header).
        unsafe { self.alloc_with(layout, |o| self.inner.alloc(o)) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as in `alloc`.
        unsafe { self.alloc_with(layout, |o| self.inner.alloc_zeroed(o)) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` with this layout: its header
        // precedes it, and the inner block starts `room` bytes before.
        unsafe {
            let h = ptr.sub(HEADER).cast::<Header>().read();
            record_free(h.size as usize, h.owner);
            let o = outer(layout).unwrap_unchecked();
            self.inner.dealloc(ptr.sub(room(layout)), o);
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let r = room(layout);
        let Some(new_outer) = new_size.checked_add(r) else {
            return std::ptr::null_mut();
        };
        // SAFETY: as in `dealloc`; the inner realloc keeps the alignment.
        unsafe {
            let h = ptr.sub(HEADER).cast::<Header>().read();
            let o = outer(layout).unwrap_unchecked();
            let base = self.inner.realloc(ptr.sub(r), o, new_outer);
            if base.is_null() {
                return base;
            }
            // A reallocation is the free of the old block and the
            // allocation of the new one, where it happens.
            record_free(h.size as usize, h.owner);
            let user = base.add(r);
            stamp(user, new_size);
            user
        }
    }
}
