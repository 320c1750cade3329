//! The allocation events' per-thread state (`front::alloc`):
//!
//! * the cache of the current routine's words: the node last seen at the
//!   top of the thread's stack by an allocation event, and the address of
//!   its memory words. A hit is one compare of the top with the cached
//!   node instead of the row's look-up (`Rows::get`: the chunk's index,
//!   its load and null test, the offset multiply) and the metric's offset
//!   and bounds checks;
//! * the thread's share of the process heap level not yet added to the
//!   process-wide word (`metrics::mem::TOTALS`): bytes this thread
//!   allocated minus bytes it freed since the share was last folded in,
//!   with plain additions by the thread itself. It is folded in (one
//!   atomic addition, when not 0) at each stamped enter and exit of a
//!   routine and at the thread's end, so the process-wide word is not
//!   written by every allocation and free.

use std::ptr;
use std::sync::atomic::{AtomicI64, AtomicPtr, AtomicU64, AtomicUsize, Ordering};

use super::ThreadData;
use crate::tree::node::Node;

/// Owner thread only (plain loads and stores through atomics).
pub(crate) struct WordsCache {
    node: AtomicPtr<Node>,
    words: AtomicPtr<AtomicU64>,
    heap_share: AtomicI64,
}

impl WordsCache {
    pub(crate) const fn new() -> Self {
        WordsCache {
            node: AtomicPtr::new(ptr::null_mut()),
            words: AtomicPtr::new(ptr::null_mut()),
            heap_share: AtomicI64::new(0),
        }
    }
}

impl ThreadData {
    /// Adds `bytes` to this thread's unfolded share of the process heap
    /// level (owner thread only); returns the share.
    #[inline(always)]
    pub(crate) fn heap_share_add(&self, bytes: i64) -> i64 {
        let w = &self.words_cache.heap_share;
        let v = w.load(Ordering::Relaxed).wrapping_add(bytes);
        w.store(v, Ordering::Relaxed);
        v
    }

    /// Folds this thread's share of the heap level into the process-wide
    /// word (owner thread, or the thread ending it).
    #[inline(always)]
    pub(crate) fn fold_heap_share(&self) {
        let w = &self.words_cache.heap_share;
        let v = w.load(Ordering::Relaxed);
        if v != 0 {
            w.store(0, Ordering::Relaxed);
            crate::metrics::mem::fold(v);
        }
    }

    /// The `N` words at `*offset` (`usize::MAX`: none) of the row of the
    /// top of this thread's stack, None when the row has no such words
    /// (owner thread only). `offset` and `N` must be the same at every
    /// call once words were returned (the memory metric's place, fixed
    /// once installed). A hit reads neither the offset nor the row.
    #[inline(always)]
    pub(crate) fn top_words<const N: usize>(
        &self,
        offset: &AtomicUsize,
    ) -> Option<&[AtomicU64; N]> {
        let top = self.current.load(Ordering::Relaxed);
        if top == self.words_cache.node.load(Ordering::Relaxed) {
            let w = self.words_cache.words.load(Ordering::Relaxed);
            // SAFETY: only the words of a row of this tree, `N` of them,
            // are cached (with their node: never null, as the top is
            // never); rows never move and live as long as the tree. Said
            // to the compiler, so that the caller's `Some` needs no null
            // test.
            unsafe { std::hint::assert_unchecked(!w.is_null()) };
            // SAFETY: as above.
            return Some(unsafe { &*w.cast::<[AtomicU64; N]>() });
        }
        self.top_words_missed(top, offset)
    }

    #[cold]
    #[inline(never)]
    fn top_words_missed<const N: usize>(
        &self,
        top: *mut Node,
        offset: &AtomicUsize,
    ) -> Option<&[AtomicU64; N]> {
        let off = offset.load(Ordering::Relaxed);
        if off == usize::MAX {
            return None;
        }
        // SAFETY: the top of the stack is a node of this arena.
        let row = self.rows.get(unsafe { (*top).index })?;
        let w: &[AtomicU64; N] = row.get(off..off.checked_add(N)?)?.try_into().ok()?;
        self.words_cache
            .words
            .store(w.as_ptr().cast_mut(), Ordering::Relaxed);
        self.words_cache.node.store(top, Ordering::Relaxed);
        Some(w)
    }
}
