//! Calling-tree nodes and the append-only, never-moving storage they live in.
//!
//! A node is one call site under one parent node. Because a node's parent is
//! itself unique, a node can be active at most once at a time, so its entry
//! timestamp can live in the node and recursion is measured exactly.
//!
//! Nodes are written only by the thread that owns the tree, and read by the
//! report writer and by crash handlers on other threads. Mutable fields are
//! therefore atomics used with relaxed loads and stores (plain `mov`s on
//! x86-64 and aarch64, no locked instructions); immutable fields are written
//! before the node is published.

use std::alloc::{Layout, alloc_zeroed};
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, Ordering};

use crate::site::Site;

/// One node of a thread's calling tree (one cache line).
#[repr(C, align(64))]
pub(crate) struct Node {
    /// Parent node (null for the root). Immutable.
    pub parent: *const Node,
    /// Call site (null for the root). Immutable.
    pub site: *const Site,
    /// Number of activations.
    pub calls: AtomicU64,
    /// Accumulated wall ticks over completed activations.
    pub wall_incl: AtomicU64,
    /// Wall ticks at the current activation's entry.
    pub wall_enter: AtomicU64,
    /// Accumulated thread CPU nanoseconds over completed activations.
    pub cpu_incl: AtomicU64,
    /// Thread CPU nanoseconds at the current activation's entry.
    pub cpu_enter: AtomicU64,
    /// Position in the owning arena. Immutable.
    pub index: u32,
    /// Depth below the root (root = 0). Immutable.
    pub depth: u32,
}

// SAFETY: the raw pointers are immutable after publication and point to
// nodes and sites that are never freed; all mutable state is atomic.
unsafe impl Sync for Node {}
// SAFETY: as above.
unsafe impl Send for Node {}

/// Types for which the all-zero bit pattern is a valid value.
///
/// # Safety
/// Implementors must be valid when zero-initialised.
pub(crate) unsafe trait Zeroable {}
// SAFETY: null pointers, zero atomics and zero integers are valid.
unsafe impl Zeroable for Node {}

/// Size information attached at exit (`Guard::set_size`, `DRHOOK_END(size)`).
#[repr(C)]
pub(crate) struct SizeStats {
    pub count: AtomicU64,
    pub sum: AtomicU64,
    pub min: AtomicU64,
    pub max: AtomicU64,
}
// SAFETY: zero atomics are valid.
unsafe impl Zeroable for SizeStats {}

/// Per node, for activations that resume an earlier call (later polls of
/// an instrumented future, re-entered tracing spans): how many there were,
/// and the wall time the call spent suspended between them, which counts
/// in the routine's total time but not in its self time.
#[repr(C)]
pub(crate) struct ResumeStats {
    pub resumes: AtomicU64,
    pub suspended: AtomicU64,
}
// SAFETY: zero atomics are valid.
unsafe impl Zeroable for ResumeStats {}

/// Number of slots in the first chunk; chunk `k` holds `BASE << k` slots.
const BASE: usize = 64;
const CHUNKS: usize = 26;

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

/// A thread's nodes, in creation order (a parent always precedes its
/// children).
pub(crate) struct NodeArena {
    store: Segmented<Node>,
    len: AtomicU32,
}

impl NodeArena {
    pub const fn new() -> Self {
        NodeArena {
            store: Segmented::new(),
            len: AtomicU32::new(0),
        }
    }

    /// Number of published nodes.
    #[inline]
    pub fn len(&self) -> u32 {
        self.len.load(Ordering::Acquire)
    }

    /// A published node.
    #[inline]
    pub fn get(&self, index: u32) -> Option<&Node> {
        if index < self.len() {
            self.store.get(index)
        } else {
            None
        }
    }

    /// Appends a node (owner thread only) and returns a stable pointer to it.
    pub fn push(&self, parent: *const Node, site: *const Site, depth: u32) -> *const Node {
        let index = self.len.load(Ordering::Relaxed);
        let Some(slot) = self.store.slot(index) else {
            // 4 billion nodes: nothing sensible is left to do.
            std::process::abort();
        };
        // SAFETY: `slot` is a valid, unpublished slot owned by this thread.
        unsafe {
            ptr::write(
                slot,
                Node {
                    parent,
                    site,
                    calls: AtomicU64::new(0),
                    wall_incl: AtomicU64::new(0),
                    wall_enter: AtomicU64::new(0),
                    cpu_incl: AtomicU64::new(0),
                    cpu_enter: AtomicU64::new(0),
                    index,
                    depth,
                },
            );
        }
        self.len.store(index + 1, Ordering::Release);
        slot
    }

    pub fn allocated_bytes(&self) -> usize {
        self.store.allocated_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locate_covers_indices_contiguously() {
        assert_eq!(locate(0), (0, 0));
        assert_eq!(locate(63), (0, 63));
        assert_eq!(locate(64), (1, 0));
        assert_eq!(locate(191), (1, 127));
        assert_eq!(locate(192), (2, 0));
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

    #[test]
    fn nodes_never_move() {
        let a = NodeArena::new();
        let root = a.push(ptr::null(), ptr::null(), 0);
        let mut ptrs = vec![root];
        for i in 1..5000u32 {
            ptrs.push(a.push(ptrs[(i - 1) as usize], ptr::null(), i));
        }
        assert_eq!(a.len(), 5000);
        for (i, p) in ptrs.iter().enumerate() {
            let n = a.get(i as u32).unwrap();
            assert!(ptr::eq(n, *p));
            assert_eq!(n.index, i as u32);
            assert_eq!(n.depth, i as u32);
        }
        assert!(a.get(5000).is_none());
        assert_eq!(size_of::<Node>(), 64);
    }
}
