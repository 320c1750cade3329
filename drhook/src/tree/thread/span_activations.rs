//! Tracing span activations on a [`ThreadData`]: a span may be entered
//! on one thread, left and entered again later (a resumption), and left out
//! of order; each thread keeps a stack of the spans it has entered (its
//! `local` state) to find an activation at its exit.

use std::sync::atomic::Ordering;

use super::ThreadData;
use crate::sys::clock;
use crate::tree::bits;
use crate::tree::node::Node;
use crate::tree::site::Site;
use crate::tree::spans::{self, Entered, SpanState};

impl ThreadData {
    /// Enters an activation of tracing span `id` (state `state`, site
    /// `site`): a first activation counts a call, a later one (the span
    /// was exited before, on any thread) resumes it. The activation goes
    /// on this thread's span stack for [`ThreadData::exit_span`].
    ///
    /// The fast path (a first activation under the node's usual parent,
    /// TSC or no clock, room on the stack) makes no call; anything else is
    /// one tail call that does the whole operation.
    ///
    /// # Safety
    /// As [`ThreadData::enter`].
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
    #[inline(always)]
    pub(crate) unsafe fn enter_span(
        &self,
        site: &'static Site,
        id: u64,
        state: &'static SpanState,
        mode: u32,
    ) {
        // SAFETY: owner thread; no other reference into `local` is live.
        let local = unsafe { &mut *self.local.get() };
        let n = local.spans.len;
        if n >= spans::CAP || state.stamp.load(Ordering::Acquire) != 0 {
            // SAFETY: caller contract.
            return unsafe { self.enter_span_slow(site, id, state, mode) };
        }
        let cur = self.current.load(Ordering::Relaxed) as *const Node;
        let i = site.raw_id() as usize;
        // A mode that just gained a slow clock (`add_mode_bits`) may still
        // see the old length for a moment: those calls skip the new stamps.
        if i >= self.fast_len.load(Ordering::Relaxed) {
            // SAFETY: caller contract.
            return unsafe { self.enter_span_slow(site, id, state, mode) };
        }
        // SAFETY: `i < fast_len <= by_site.len()`.
        let cand = unsafe { *local.by_site.get_unchecked(i) };
        // SAFETY: `cand` is the sentinel or a node of this arena.
        if unsafe { (*cand).parent } != cur {
            // SAFETY: caller contract.
            return unsafe { self.enter_span_slow(site, id, state, mode) };
        }
        // SAFETY: `cand` is a node of this arena.
        let node = unsafe { &*cand };
        node.calls
            .store(node.calls.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
        self.current.store(cand as *mut Node, Ordering::Release);
        let e = &mut local.spans.items[n];
        e.id = id;
        e.token = cand;
        e.state = state;
        local.spans.len = n + 1;
        if mode & bits::WALL != 0 {
            node.wall_enter.store(clock::cycles(), Ordering::Relaxed);
        }
    }

    /// [`ThreadData::enter_span`], every case.
    ///
    /// # Safety
    /// As [`ThreadData::enter`].
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
    #[inline(never)]
    unsafe fn enter_span_slow(
        &self,
        site: &'static Site,
        id: u64,
        state: &'static SpanState,
        mode: u32,
    ) {
        // SAFETY: caller contract.
        let node = unsafe {
            match state.last_exit() {
                None => self.enter(site, site.raw_id(), mode),
                Some(since) => self.resume(site, site.raw_id(), mode, since),
            }
        };
        // SAFETY: owner thread; no other reference into `local` is live.
        unsafe { &mut (*self.local.get()).spans }.push(Entered {
            id,
            token: node,
            state,
        });
    }

    /// Leaves the activation of tracing span `id` on this thread, as
    /// [`ThreadData::exit_lenient`] does (closing what was entered after
    /// it; nothing if it is not entered here), and stamps the span's state
    /// for a later resumption.
    ///
    /// The fast path (the span is the top entry and its activation the top
    /// of the stack, TSC or no clock) makes no call; anything else is one
    /// tail call.
    ///
    /// # Safety
    /// Owner thread only.
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
    #[inline(always)]
    pub(crate) unsafe fn exit_span(&self, id: u64, mode: u32) {
        // SAFETY: owner thread; no other reference into `local` is live.
        let spans = unsafe { &mut (*self.local.get()).spans };
        let i = spans.len.wrapping_sub(1);
        if i >= spans::CAP {
            // SAFETY: caller contract.
            return unsafe { self.exit_span_slow(id, mode) };
        }
        if mode & bits::SYSCALL_CLOCKS != 0 {
            // SAFETY: caller contract.
            return unsafe { self.exit_span_slow(id, mode) };
        }
        let e = &spans.items[i];
        let (token, state) = (e.token, e.state);
        if e.id != id || !std::ptr::eq(self.current.load(Ordering::Relaxed), token) {
            // SAFETY: caller contract.
            return unsafe { self.exit_span_slow(id, mode) };
        }
        let wall = if mode & bits::WALL != 0 {
            clock::cycles()
        } else {
            0
        };
        spans.len = i;
        // SAFETY: `token` is the top of this thread's stack.
        unsafe { self.close(token, 0, mode, wall, 0) };
        // SAFETY: span states are static (never freed).
        unsafe { (*state).record_exit(id, wall) };
    }

    /// [`ThreadData::exit_span`], every case.
    ///
    /// # Safety
    /// Owner thread only.
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
    #[inline(never)]
    unsafe fn exit_span_slow(&self, id: u64, mode: u32) {
        // SAFETY: owner thread; the reference ends before the exit.
        let top = unsafe { &mut (*self.local.get()).spans }.pop_if(id);
        match top {
            Some(e) => {
                // SAFETY: caller contract; the token is only compared.
                let stamp = unsafe { self.exit_lenient(e.token, mode) };
                // SAFETY: span states are static (never freed).
                unsafe { (*e.state).record_exit(id, stamp) };
            }
            // SAFETY: caller contract.
            None => unsafe { self.exit_span_below(id, mode) },
        }
    }

    /// [`ThreadData::exit_span`] of a span that is not the top entry
    /// (spans left out of order, deep stacks) or not entered here.
    ///
    /// # Safety
    /// Owner thread only.
    #[cfg_attr(not(feature = "tracing"), allow(dead_code))]
    #[cold]
    #[inline(never)]
    unsafe fn exit_span_below(&self, id: u64, mode: u32) {
        // SAFETY: owner thread; the reference ends before the exit.
        let spans = unsafe { &mut (*self.local.get()).spans };
        let Some(pos) = spans.find(id) else {
            return;
        };
        // Leaving it also closes what was entered after it. (The exit does
        // not touch the span stack.)
        // SAFETY: caller contract; the token is only compared.
        let stamp = unsafe { self.exit_lenient(spans.get(pos).token, mode) };
        for i in pos..spans.len {
            let e = spans.get(i);
            // SAFETY: span states are static (never freed).
            unsafe { (*e.state).record_exit(e.id, stamp) };
        }
        spans.truncate(pos);
    }
}
