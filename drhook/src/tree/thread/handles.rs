//! The foreign (C and Fortran) front door's enters and exits on a
//! [`ThreadData`]: its activations are named by handles (64- or 32-bit),
//! which an exit presents and which are compared, never dereferenced. The
//! common cases make no call (the cached child of the top, the top left
//! with its handle); the rest goes through the core enter or the mismatch
//! repair.

use std::sync::atomic::Ordering;

use super::ThreadData;
use crate::sys::clock;
use crate::tree::bits;
use crate::tree::node::Node;
use crate::tree::site::Site;

impl ThreadData {
    /// The 64-bit handle of the top of the stack (0 when nothing is active).
    #[inline(always)]
    pub(crate) fn top_handle64(&self, node: *const Node) -> u64 {
        // SAFETY: `node` is a node of this arena (just entered).
        unsafe { (*node).handle64() }
    }

    /// The handle of node `n` of this thread (64-bit when `wide`).
    #[inline(always)]
    fn handle_of(&self, n: &Node, wide: bool) -> u64 {
        if wide {
            n.handle64()
        } else {
            n.handle32() as u64
        }
    }

    /// Enter for a foreign caller, returning the handle. The fast path (the
    /// last node of this site is under the current node, no slow clock)
    /// makes no calls; everything else is one out-of-line call.
    ///
    /// # Safety
    /// As [`ThreadData::enter`].
    #[inline(always)]
    pub(crate) unsafe fn enter_handle(
        &self,
        site: &'static Site,
        id: u32,
        mode: u32,
        wide: bool,
    ) -> u64 {
        // SAFETY: caller contract.
        match unsafe { self.enter_handle_fast(id, mode, wide) } {
            Some(h) => h,
            // SAFETY: caller contract.
            None => unsafe { self.enter_handle_slow(site, id, mode, wide) },
        }
    }

    /// The call-free part of [`ThreadData::enter_handle`]: `None` when the
    /// full path is needed (first call under this parent, slow clocks).
    ///
    /// # Safety
    /// As [`ThreadData::enter`]; `mode` is this tree's mode (`self.mode`).
    #[inline(always)]
    pub(crate) unsafe fn enter_handle_fast(&self, id: u32, mode: u32, wide: bool) -> Option<u64> {
        // (`fast_len` is 0 when the mode reads a clock through a call.)
        // SAFETY: caller contract; `fast_len <= by_site.len()`.
        let cand = unsafe { self.cached_child(id, self.fast_len.load(Ordering::Relaxed)) }?;
        // SAFETY: a node of this arena, child of the top.
        Some(unsafe { self.activate_handle::<false>(cand, mode, wide) })
    }

    /// The enter of a foreign handle in a mode that calls the stampers but
    /// needs no panic guard (`METRICS` without `OUT_OF_LINE`: the memory
    /// metric): the call-free path's lookup, then the stampers and the wall
    /// clock, inlined into the entry point's slow path, before its guard.
    /// `None` when the full path is needed (another mode, the first call
    /// of the site under this parent).
    ///
    /// # Safety
    /// As [`ThreadData::enter`]; `mode` is this tree's mode (`self.mode`).
    #[inline(always)]
    pub(crate) unsafe fn enter_handle_stamped(
        &self,
        id: u32,
        mode: u32,
        wide: bool,
    ) -> Option<u64> {
        if mode & (bits::OUT_OF_LINE | bits::METRICS) != bits::METRICS {
            return None;
        }
        // SAFETY: owner-thread access to `local` (caller contract).
        let len = unsafe { (*self.local.get()).by_site.len() };
        // SAFETY: caller contract; `len` is the table's length.
        let cand = unsafe { self.cached_child(id, len) }?;
        // SAFETY: a node of this arena, child of the top.
        Some(unsafe { self.activate_handle::<true>(cand, mode, wide) })
    }

    /// The node cached for site `id` if it is a child of the top of the
    /// stack (the foreign enters' call-free lookup); `len` bounds `id`.
    ///
    /// # Safety
    /// Owner thread only; `len <= by_site.len()`.
    #[inline(always)]
    unsafe fn cached_child(&self, id: u32, len: usize) -> Option<*const Node> {
        let cur = self.current.load(Ordering::Relaxed) as *const Node;
        // SAFETY: owner-thread access to `local` (caller contract).
        let local = unsafe { &*self.local.get() };
        if id as usize >= len {
            return None;
        }
        // SAFETY: `id < len <= by_site.len()`.
        let cand = unsafe { *local.by_site.get_unchecked(id as usize) };
        // SAFETY: `cand` is the sentinel or a node of this arena.
        if unsafe { (*cand).parent } != cur {
            return None;
        }
        Some(cand)
    }

    /// Makes `cand` (from [`ThreadData::cached_child`]) the top for a
    /// foreign handle: counts the call, runs the stampers when `STAMP`,
    /// stamps the wall clock last; returns its handle.
    ///
    /// # Safety
    /// Owner thread only; `cand` a child of the top of this thread's stack.
    #[inline(always)]
    unsafe fn activate_handle<const STAMP: bool>(
        &self,
        cand: *const Node,
        mode: u32,
        wide: bool,
    ) -> u64 {
        // SAFETY: `cand` is a node of this arena (caller contract).
        let n = unsafe { &*cand };
        n.calls
            .store(n.calls.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        self.current.store(cand as *mut Node, Ordering::Release);
        if STAMP {
            self.stamp_enter(n, mode);
        }
        let h = self.handle_of(n, wide);
        if mode & bits::WALL != 0 {
            n.wall_enter.store(clock::cycles(), Ordering::Relaxed);
        }
        h
    }

    /// The exit of a foreign handle in the mode of
    /// [`ThreadData::enter_handle_stamped`]: true when the handle was the
    /// top of the stack and has been left (the stampers, then the close),
    /// false (nothing changed) when the full path is needed.
    ///
    /// # Safety
    /// Owner thread only; `mode` is this tree's mode.
    #[inline(always)]
    pub(crate) unsafe fn exit_handle_stamped(
        &self,
        handle: u64,
        wide: bool,
        size: u64,
        mode: u32,
    ) -> bool {
        let not_ours = bits::OUT_OF_LINE | bits::STRICT;
        if handle == 0 || mode & (not_ours | bits::METRICS) != bits::METRICS {
            return false;
        }
        // SAFETY: caller contract.
        unsafe { self.exit_top_handle::<true>(handle, wide, size, mode, |_| {}) }
    }

    /// As [`ThreadData::exit_handle_fast`], calling `after` with the node
    /// left once it is closed (the MPI wrappers' figures, added to the row
    /// of the call they leave).
    ///
    /// # Safety
    /// As [`ThreadData::exit_handle_fast`].
    #[inline(always)]
    pub(crate) unsafe fn exit_handle_fast_then(
        &self,
        handle: u64,
        wide: bool,
        mode: u32,
        after: impl FnOnce(&Node),
    ) -> bool {
        // SAFETY: caller contract.
        unsafe { self.exit_top_handle::<false>(handle, wide, 0, mode, after) }
    }

    #[inline(never)]
    unsafe fn enter_handle_slow(&self, site: &'static Site, id: u32, mode: u32, wide: bool) -> u64 {
        // SAFETY: caller contract.
        let node = unsafe { self.enter(site, id, mode) };
        // SAFETY: `node` was just entered on this thread.
        self.handle_of(unsafe { &*node }, wide)
    }

    /// Fast exit for a foreign handle: closes the top activation if the
    /// handle designates it and returns true; returns false (having changed
    /// nothing) otherwise. Only for modes without slow clocks or strict
    /// regions, and a non-zero handle (the root's handle is 0, so the root
    /// never matches).
    ///
    /// # Safety
    /// Owner thread only.
    #[inline(always)]
    pub(crate) unsafe fn exit_handle_fast(
        &self,
        handle: u64,
        wide: bool,
        size: u64,
        mode: u32,
    ) -> bool {
        // SAFETY: caller contract.
        unsafe { self.exit_top_handle::<false>(handle, wide, size, mode, |_| {}) }
    }

    /// Leaves the top activation if `handle` designates it (the stampers
    /// first when `STAMP`; `after` with its node once it is closed); false,
    /// with nothing changed, otherwise.
    ///
    /// # Safety
    /// Owner thread only.
    #[inline(always)]
    unsafe fn exit_top_handle<const STAMP: bool>(
        &self,
        handle: u64,
        wide: bool,
        size: u64,
        mode: u32,
        after: impl FnOnce(&Node),
    ) -> bool {
        let wall = if mode & bits::WALL != 0 {
            clock::cycles()
        } else {
            0
        };
        let top = self.current.load(Ordering::Relaxed) as *const Node;
        // SAFETY: the top of the stack (possibly the root) is a node of this arena.
        let n = unsafe { &*top };
        if handle != self.handle_of(n, wide) {
            return false;
        }
        if STAMP {
            self.stamp_exit(n.index, wall, mode);
        }
        // SAFETY: `top` is this thread's top node.
        unsafe { self.close(top, size, mode, wall, 0) };
        after(n);
        true
    }

    /// Leaves the activation designated by a foreign handle (64-bit, or
    /// 32-bit when `wide` is false), optionally checking that `exit_site`
    /// names the same routine (`DR_HOOK_STRICT_REGIONS`).
    ///
    /// # Safety
    /// Owner thread only.
    #[inline(always)]
    pub(crate) unsafe fn exit_handle(
        &self,
        handle: u64,
        wide: bool,
        size: u64,
        mode: u32,
        exit_site: Option<&'static Site>,
        strict: bool,
    ) {
        let is_target = move |p: *const Node| {
            // SAFETY: only called with nodes of this thread's stack.
            let n = unsafe { &*p };
            // (The root's handles are 0, which never matches.)
            handle != 0
                && if wide {
                    handle == n.handle64()
                } else {
                    handle as u32 == n.handle32()
                }
        };
        let top = self.current.load(Ordering::Relaxed) as *const Node;
        let same_routine = |p: *const Node| match exit_site {
            // SAFETY: `p` is a node of this thread's stack.
            Some(s) if strict => unsafe { (*p).site.as_ref() }.is_some_and(|t| t.same_routine(s)),
            _ => true,
        };
        if top != self.root && is_target(top) && same_routine(top) {
            // SAFETY: `top` is the top of this thread's stack.
            return unsafe { self.exit(top, size, mode) };
        }
        let name_differs = top != self.root && is_target(top);
        // SAFETY: owner thread.
        unsafe {
            self.exit_mismatch_by(
                is_target,
                Some(handle),
                exit_site,
                name_differs,
                size,
                mode,
                0,
                0,
            );
        }
    }
}
