//! Chunked storage whose elements never move: chunk `k` holds `4 << k`
//! zero-initialised slots, allocated on first use and freed only with the
//! storage, so a reader on another thread can hold a reference while the
//! owner appends (whoever drops the storage makes sure no reader is left).

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ptr;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};

/// Types for which the all-zero bit pattern is a valid value.
///
/// # Safety
/// Implementors must be valid when zero-initialised.
pub(crate) unsafe trait Zeroable {}

/// Number of slots in the first chunk; chunk `k` holds `BASE << k` slots.
/// Small: a thread's tree starts with a chunk of its own, zeroed when it
/// is allocated, and most threads' trees hold a handful of nodes (a thread
/// that only runs its start routine: the root and the routine's region).
/// With 64, a thread's start zeroed a 4 KiB node chunk (issue 29).
const BASE: usize = 4;
/// Chunks up to index `u32::MAX - BASE` (as with 64 slots and 26 chunks:
/// the last index has none).
const CHUNKS: usize = 30;

#[inline(always)]
fn locate(index: u32) -> (usize, usize) {
    let i = index as usize;
    let k = (i / BASE + 1).ilog2() as usize;
    (k, i - BASE * ((1 << k) - 1))
}

/// Chunked storage whose elements never move, with lazily allocated chunks.
pub(crate) struct Segmented<T: Zeroable> {
    chunks: [AtomicPtr<T>; CHUNKS],
}

impl<T: Zeroable> Segmented<T> {
    pub const fn new() -> Self {
        Segmented {
            chunks: [const { AtomicPtr::new(ptr::null_mut()) }; CHUNKS],
        }
    }

    /// The element at `index` if its chunk exists.
    #[inline(always)]
    pub fn get(&self, index: u32) -> Option<&T> {
        let (k, off) = locate(index);
        let c = self.chunks.get(k)?.load(Ordering::Acquire);
        // SAFETY: a non-null chunk pointer refers to a live, zero-initialised
        // allocation of `BASE << k` elements that is never freed.
        (!c.is_null()).then(|| unsafe { &*c.add(off) })
    }

    /// Pointer to the slot at `index`, allocating its chunk if needed
    /// (owner thread only). `None` only past the last chunk.
    pub fn slot(&self, index: u32) -> Option<*mut T> {
        let (k, off) = locate(index);
        let cell = self.chunks.get(k)?;
        let mut c = cell.load(Ordering::Acquire);
        if c.is_null() {
            let layout = Layout::array::<T>(BASE << k).ok()?;
            // SAFETY: the layout has non-zero size; zeroed memory is a valid
            // `T` (Zeroable).
            c = unsafe { alloc_zeroed(layout) } as *mut T;
            if c.is_null() {
                std::alloc::handle_alloc_error(layout);
            }
            cell.store(c, Ordering::Release);
        }
        // SAFETY: `off < BASE << k` by construction of `locate`.
        Some(unsafe { c.add(off) })
    }

    /// Bytes allocated so far.
    pub fn allocated_bytes(&self) -> usize {
        (0..CHUNKS)
            .filter(|&k| !self.chunks[k].load(Ordering::Relaxed).is_null())
            .map(|k| (BASE << k) * size_of::<T>())
            .sum()
    }
}

impl<T: Zeroable> Drop for Segmented<T> {
    fn drop(&mut self) {
        for (k, cell) in self.chunks.iter_mut().enumerate() {
            let c = *cell.get_mut();
            if !c.is_null() {
                // SAFETY: allocated by `slot` with this layout; the
                // elements need no drop (atomics and plain data).
                unsafe { dealloc(c as *mut u8, Layout::array::<T>(BASE << k).unwrap()) };
            }
        }
    }
}

/// Rows of `width` 64-bit words per index, in the same never-moving
/// chunks as [`Segmented`] (the width is chosen at run time). Width 0
/// allocates nothing. The rows can outlive the storage ([`Rows::keep`]):
/// words whose address is held elsewhere (the memory profile's `LIVE`
/// words, in the headers of blocks still allocated).
pub(crate) struct Rows {
    width: usize,
    chunks: [AtomicPtr<AtomicU64>; CHUNKS],
    /// The chunks belong to a [`KeptRows`]: not freed with the storage.
    kept: AtomicBool,
}

/// Rows that outlived their storage ([`Rows::keep`]): read-only access to
/// the same words, and their memory, freed by [`KeptRows::free`].
pub(crate) struct KeptRows {
    width: usize,
    chunks: [*mut AtomicU64; CHUNKS],
}

// SAFETY: the chunks are atomics, shared as `Rows` shares them.
unsafe impl Send for KeptRows {}
// SAFETY: as above.
unsafe impl Sync for KeptRows {}

impl KeptRows {
    /// The row at `index`, if it existed.
    pub fn get(&self, index: u32) -> Option<&[AtomicU64]> {
        let (k, off) = locate(index);
        let c = *self.chunks.get(k)?;
        // SAFETY: a chunk of `(BASE << k) * width` words, alive until `free`.
        (!c.is_null() && self.width != 0)
            .then(|| unsafe { std::slice::from_raw_parts(c.add(off * self.width), self.width) })
    }

    /// Frees the rows.
    ///
    /// # Safety
    /// No word of theirs is used again (no address of one is held).
    pub unsafe fn free(self) {
        for (k, &c) in self.chunks.iter().enumerate() {
            if !c.is_null() {
                // SAFETY: allocated by `Rows::ensure` with this layout.
                unsafe { dealloc(c as *mut u8, rows_layout(k, self.width)) };
            }
        }
    }
}

/// The layout of chunk `k` of rows of `width` words.
fn rows_layout(k: usize, width: usize) -> Layout {
    Layout::array::<AtomicU64>((BASE << k) * width).unwrap()
}

impl Rows {
    /// Rows of `width` words.
    pub const fn new(width: usize) -> Self {
        Rows {
            width,
            chunks: [const { AtomicPtr::new(ptr::null_mut()) }; CHUNKS],
            kept: AtomicBool::new(false),
        }
    }

    /// Words per row.
    #[inline(always)]
    pub fn width(&self) -> usize {
        self.width
    }

    /// The row at `index` if its chunk exists (and the width is not 0).
    #[inline(always)]
    pub fn get(&self, index: u32) -> Option<&[AtomicU64]> {
        let (k, off) = locate(index);
        let c = self.chunks.get(k)?.load(Ordering::Acquire);
        // SAFETY: a non-null chunk refers to a live, zero-initialised
        // allocation of `(BASE << k) * width` words that is never freed.
        (!c.is_null())
            .then(|| unsafe { std::slice::from_raw_parts(c.add(off * self.width), self.width) })
    }

    /// Allocates the chunk holding row `index` if needed (owner thread
    /// only). Nothing to do for width 0.
    pub fn ensure(&self, index: u32) {
        if self.width == 0 {
            return;
        }
        let (k, _) = locate(index);
        let Some(cell) = self.chunks.get(k) else {
            return;
        };
        if !cell.load(Ordering::Acquire).is_null() {
            return;
        }
        let Ok(layout) = Layout::array::<AtomicU64>((BASE << k) * self.width) else {
            return;
        };
        debug_assert_eq!(layout, rows_layout(k, self.width));
        // SAFETY: non-zero size; zeroed memory is a valid `AtomicU64`.
        let c = unsafe { alloc_zeroed(layout) } as *mut AtomicU64;
        if c.is_null() {
            std::alloc::handle_alloc_error(layout);
        }
        cell.store(c, Ordering::Release);
    }

    /// Bytes allocated so far.
    pub fn allocated_bytes(&self) -> usize {
        (0..CHUNKS)
            .filter(|&k| !self.chunks[k].load(Ordering::Relaxed).is_null())
            .map(|k| (BASE << k) * self.width * 8)
            .sum()
    }

    /// The rows as they are, to outlive this storage: its drop then frees
    /// nothing. Owner thread only, once no row is added.
    pub fn keep(&self) -> KeptRows {
        self.kept.store(true, Ordering::Relaxed);
        KeptRows {
            width: self.width,
            chunks: std::array::from_fn(|k| self.chunks[k].load(Ordering::Acquire)),
        }
    }
}

impl Drop for Rows {
    fn drop(&mut self) {
        if *self.kept.get_mut() {
            return;
        }
        for (k, cell) in self.chunks.iter_mut().enumerate() {
            let c = *cell.get_mut();
            if !c.is_null() {
                // SAFETY: allocated by `ensure` with this layout; atomics
                // need no drop.
                unsafe { dealloc(c as *mut u8, rows_layout(k, self.width)) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_have_their_width_and_never_move() {
        let r = Rows::new(3);
        assert!(r.get(0).is_none());
        r.ensure(0);
        r.ensure(5);
        r.ensure(200);
        let a = r.get(5).unwrap().as_ptr();
        r.get(5).unwrap()[2].store(7, Ordering::Relaxed);
        r.ensure(5_000);
        assert_eq!(r.get(5).unwrap().as_ptr(), a);
        assert_eq!(r.get(5).unwrap()[2].load(Ordering::Relaxed), 7);
        assert_eq!(r.get(200).unwrap().len(), 3);
        assert!(r.get(100_000).is_none());
        let none = Rows::new(0);
        none.ensure(0);
        assert_eq!(none.allocated_bytes(), 0);
    }

    #[test]
    fn kept_rows_outlive_their_storage() {
        let r = Rows::new(2);
        r.ensure(70);
        r.get(70).unwrap()[1].store(9, Ordering::Relaxed);
        let kept = r.keep();
        drop(r);
        assert_eq!(kept.get(70).unwrap()[1].load(Ordering::Relaxed), 9);
        assert!(kept.get(1_000).is_none());
        // SAFETY: nothing holds an address of these rows.
        unsafe { kept.free() };
        // Storage dropped with its chunks (checked under Miri or a leak
        // checker; here: that it does not crash).
        struct Word(#[allow(dead_code)] AtomicU64);
        // SAFETY: a zero atomic is valid.
        unsafe impl Zeroable for Word {}
        let s: Segmented<Word> = Segmented::new();
        s.slot(300);
        drop(s);
    }

    #[test]
    fn locate_covers_indices_contiguously() {
        assert_eq!(locate(0), (0, 0));
        assert_eq!(locate(3), (0, 3));
        assert_eq!(locate(4), (1, 0));
        assert_eq!(locate(11), (1, 7));
        assert_eq!(locate(12), (2, 0));
        // The last chunk covers up to `u32::MAX - BASE`; past it, none.
        assert_eq!(locate(u32::MAX - BASE as u32).0, CHUNKS - 1);
        assert!(locate(u32::MAX).0 >= CHUNKS);
        let mut expect = (0usize, 0usize);
        for i in 0..100_000u32 {
            let got = locate(i);
            assert_eq!(got, expect, "index {i}");
            expect = if expect.1 + 1 == BASE << expect.0 {
                (expect.0 + 1, 0)
            } else {
                (expect.0, expect.1 + 1)
            };
        }
    }
}
