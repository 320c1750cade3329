//! Exits that do not match the top of a [`ThreadData`]'s stack: lenient
//! exits (regions that may be left out of order, closed silently), and
//! mismatched exits, reported (`tree::mismatch`) and repaired by closing
//! the activations left open above the one being left.

use std::sync::atomic::Ordering;

use super::ThreadData;
use crate::sys::clock;
use crate::tree::bits;
use crate::tree::mismatch::{self, Mismatch};
use crate::tree::node::Node;
use crate::tree::site::Site;

impl ThreadData {
    /// Leaves `token` if it is on this thread's stack, first closing
    /// whatever was entered after it, without reporting anything; does
    /// nothing if it is not on the stack. Returns the exit's wall stamp (0
    /// when wall time is not measured or nothing was left). For front doors
    /// whose regions are not strictly nested (tracing spans).
    ///
    /// # Safety
    /// Owner thread only; the token is only compared.
    #[inline(always)]
    pub(crate) unsafe fn exit_lenient(&self, token: *const Node, mode: u32) -> u64 {
        let top = self.current.load(Ordering::Relaxed) as *const Node;
        if top == token {
            // SAFETY: `token` is the top of this thread's stack.
            return unsafe { self.exit_stamped(token, 0, mode) };
        }
        // SAFETY: caller contract.
        unsafe { self.exit_lenient_below(top, token, mode) }
    }

    /// [`ThreadData::exit_lenient`] of a token that is not the top of the
    /// stack: closes down to it if it is on the stack.
    ///
    /// # Safety
    /// As [`ThreadData::exit_lenient`]; `top` is the top of the stack.
    #[cold]
    #[inline(never)]
    unsafe fn exit_lenient_below(&self, top: *const Node, token: *const Node, mode: u32) -> u64 {
        let mut p = top;
        while !p.is_null() && p != self.root && p != token {
            // SAFETY: `p` is on this thread's stack.
            p = unsafe { (*p).parent };
        }
        if p != token || p.is_null() {
            return 0;
        }
        let wall = if mode & bits::WALL != 0 {
            clock::wall(mode & bits::WALL_MONO != 0)
        } else {
            0
        };
        let cpu = if mode & bits::CPU != 0 {
            clock::thread_cpu_ns()
        } else {
            0
        };
        // SAFETY: `token` is on this thread's stack, below `top`.
        unsafe { self.close_down_to(top, token, 0, mode, wall, cpu) };
        wall
    }

    /// Closes the activations from `top` down to `target` (included; it
    /// gets `size`), as if each had been left now; the stampers see each
    /// exit.
    ///
    /// # Safety
    /// Owner thread only; `target` is on this thread's stack at or below
    /// `top`, the top of the stack.
    unsafe fn close_down_to(
        &self,
        top: *const Node,
        target: *const Node,
        size: u64,
        mode: u32,
        wall: u64,
        cpu: u64,
    ) {
        let mut p = top;
        while p != target {
            // SAFETY: `p` is on this thread's stack, above `target`.
            unsafe {
                let parent = (*p).parent;
                if mode & bits::METRICS != 0 {
                    self.stamp_exit((*p).index, wall, mode);
                }
                self.close(p, 0, mode, wall, cpu);
                p = parent;
            }
        }
        if mode & bits::METRICS != 0 {
            // SAFETY: `target` is on this thread's stack (caller contract).
            self.stamp_exit(unsafe { (*target).index }, wall, mode);
        }
        // SAFETY: `target` is on this thread's stack (caller contract).
        unsafe { self.close(target, size, mode, wall, cpu) };
    }

    /// An exit that does not match the top of the stack.
    #[cold]
    #[inline(never)]
    pub(super) unsafe fn exit_mismatch(
        &self,
        token: *const Node,
        size: u64,
        mode: u32,
        wall: u64,
        cpu: u64,
    ) {
        // SAFETY: owner thread (caller contract); the token is only compared.
        unsafe { self.exit_mismatch_by(|p| p == token, None, None, false, size, mode, wall, cpu) }
    }

    /// Reports a mismatched exit and repairs the tree. `is_target` tells
    /// whether a node of this thread's stack is the activation being left;
    /// nothing presented by the caller is ever dereferenced.
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn exit_mismatch_by(
        &self,
        is_target: impl Fn(*const Node) -> bool,
        presented: Option<u64>,
        exit_site: Option<&'static Site>,
        name_differs: bool,
        size: u64,
        mode: u32,
        wall: u64,
        cpu: u64,
    ) {
        let top = self.current.load(Ordering::Relaxed) as *const Node;
        // Find the activation being left on this thread's stack.
        let mut depth_above = 0u32;
        let mut p = top;
        let mut target = None;
        while !p.is_null() && p != self.root {
            if is_target(p) {
                target = Some(p);
                break;
            }
            depth_above += 1;
            // SAFETY: `p` is on this thread's stack, hence a node of this arena.
            p = unsafe { (*p).parent };
        }
        let site_of = |n: *const Node| -> Option<&'static Site> {
            // SAFETY: only called with nodes of this arena.
            (!n.is_null() && n != self.root)
                .then(|| unsafe { (*n).site.as_ref() })
                .flatten()
        };
        // Only regions that may be left out of order (tracing spans) still
        // open above the activation being left: close them silently.
        let only_lenient_above = depth_above > 0
            && target.is_some_and(|t| {
                let mut q = top;
                while q != t {
                    if !site_of(q).is_some_and(Site::is_lenient) {
                        return false;
                    }
                    // SAFETY: `q` is on this thread's stack, above `t`.
                    q = unsafe { (*q).parent };
                }
                true
            });
        if name_differs || !only_lenient_above {
            let expected = if top.is_null() || top == self.root {
                0
            } else {
                // SAFETY: `top` is a node of this arena.
                unsafe { (*top).handle64() }
            };
            // A Rust token is shown in the handle encoding, like foreign handles.
            let presented = presented.unwrap_or_else(|| {
                // SAFETY: `t` was found on this thread's stack.
                target.map_or(0, |t| unsafe { (*t).handle64() })
            });
            mismatch::report(&Mismatch {
                tid: self.tid,
                leaving: if name_differs {
                    exit_site
                } else {
                    target.and_then(site_of).or(exit_site)
                },
                top: site_of(top),
                on_stack: target.is_some(),
                open_above: depth_above,
                token: presented,
                expected,
                name_differs,
            });
        }
        if let Some(target) = target {
            // Close the activations that were never left, then the one being left.
            // SAFETY: `target` was found on this thread's stack.
            unsafe { self.close_down_to(top, target, size, mode, wall, cpu) };
        }
    }
}
