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

use std::ptr;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use super::site::Site;
pub(crate) use crate::sys::segmented::{Segmented, Zeroable};

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
    /// The upper half of the node's 64-bit foreign handle (see
    /// `handle.rs`): depth below the root mod 2^16 in bits 0..16, the
    /// owning thread's number mod 2^14 in bits 16..30; 0 for the root.
    /// Immutable. Next to `index`, so that the whole handle is one 8-byte
    /// load ([`Node::handle64`]).
    pub tag: u32,
}

impl Node {
    /// The tag of a child of a node with tag `parent` on thread `tid`.
    #[inline]
    pub fn child_tag(parent: u32, tid: u32) -> u32 {
        ((parent.wrapping_add(1)) & 0xFFFF) | ((tid & 0x3FFF) << 16)
    }

    /// Depth below the root, mod 2^16.
    #[cfg(test)]
    pub fn depth16(&self) -> u32 {
        self.tag & 0xFFFF
    }

    /// The 64-bit handle of this node (`handle::encode64(tid, depth,
    /// index)`), 0 for the root: `(tag << 32) | index`, one load.
    #[inline(always)]
    pub fn handle64(&self) -> u64 {
        ((self.tag as u64) << 32) | self.index as u64
    }

    /// The 32-bit handle of this node (`handle::encode32(depth, index)`),
    /// 0 for the root.
    #[inline(always)]
    pub fn handle32(&self) -> u32 {
        ((self.tag & 0x3FFF) << 16) | (self.index & 0xFFFF)
    }
}

// SAFETY: the raw pointers are immutable after publication and point to
// nodes of the same arena (freed with it, when no reader is left: see
// `tree::thread::registry`) and sites that are never freed; all mutable
// state is atomic.
unsafe impl Sync for Node {}
// SAFETY: as above.
unsafe impl Send for Node {}

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
    /// `tag`: see [`Node::tag`].
    pub fn push(&self, parent: *const Node, site: *const Site, tag: u32) -> *const Node {
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
                    tag,
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
    fn nodes_never_move() {
        let a = NodeArena::new();
        let root = a.push(ptr::null(), ptr::null(), 0);
        let mut ptrs = vec![root];
        for i in 1..5000u32 {
            ptrs.push(a.push(
                ptrs[(i - 1) as usize],
                ptr::null(),
                Node::child_tag(i - 1, 7),
            ));
        }
        assert_eq!(a.len(), 5000);
        for (i, p) in ptrs.iter().enumerate() {
            let n = a.get(i as u32).unwrap();
            assert!(ptr::eq(n, *p));
            assert_eq!(n.index, i as u32);
            if i > 0 {
                assert_eq!(n.depth16(), i as u32);
                assert_eq!(
                    n.handle64(),
                    crate::tree::handle::encode64(7, i as u32, i as u32)
                );
                assert_eq!(
                    n.handle32(),
                    crate::tree::handle::encode32(i as u32, i as u32)
                );
            }
        }
        assert!(a.get(5000).is_none());
        assert_eq!(size_of::<Node>(), 64);
    }
}
