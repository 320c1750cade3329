//! Activations of tracing spans on one thread: the stack that maps a
//! span's exit (which names only the span) to the activation its enter
//! opened, kept in the thread's tree so that a span's enter and exit are
//! each one engine call with nothing to do after it.
//!
//! A span's state shared across threads (its id and the stamp of its last
//! exit) is a [`SpanState`] that the front door keeps per live span; each
//! entry here points to it, and an exit stamps it only if it still belongs
//! to the span (a closed span's state may have been reused).
//!
//! Used by the tracing layer (feature `tracing`).

#![cfg_attr(not(feature = "tracing"), allow(dead_code))]

use std::sync::atomic::{AtomicU64, Ordering};

use super::node::Node;

/// The cross-thread state of one live span: its id (0 = none) and the
/// stamp of its last exit: 0 before the first exit, `u64::MAX` when that
/// exit's stamp is unknown (wall time not measured, or the activation had
/// already been closed), else the wall stamp.
pub(crate) struct SpanState {
    pub(crate) id: AtomicU64,
    pub(crate) stamp: AtomicU64,
}

/// See [`SpanState::stamp`].
pub(crate) const UNKNOWN_STAMP: u64 = u64::MAX;

impl SpanState {
    pub(crate) const fn new() -> SpanState {
        SpanState {
            id: AtomicU64::new(0),
            stamp: AtomicU64::new(0),
        }
    }

    /// The stamp of the span's last exit (0 when unknown), or `None`
    /// before its first exit.
    #[inline(always)]
    pub(crate) fn last_exit(&self) -> Option<u64> {
        match self.stamp.load(Ordering::Acquire) {
            0 => None,
            UNKNOWN_STAMP => Some(0),
            s => Some(s),
        }
    }

    /// Records an exit of span `id` at wall stamp `stamp` (0 = unknown),
    /// if this state is still the span's.
    #[inline(always)]
    pub(crate) fn record_exit(&self, id: u64, stamp: u64) {
        if self.id.load(Ordering::Relaxed) == id {
            let s = if stamp == 0 { UNKNOWN_STAMP } else { stamp };
            self.stamp.store(s, Ordering::Release);
        }
    }
}

/// A span entered on this thread.
#[derive(Clone, Copy)]
pub(crate) struct Entered {
    pub id: u64,
    pub token: *const Node,
    pub state: *const SpanState,
}

const NONE: Entered = Entered {
    id: 0,
    token: std::ptr::null(),
    state: std::ptr::null(),
};

/// Entries beyond this depth go to a vector.
pub(crate) const CAP: usize = 16;

/// The stack of spans entered on one thread (owner thread only).
pub(crate) struct Spans {
    pub len: usize,
    pub items: [Entered; CAP],
    pub deeper: Vec<Entered>,
}

impl Spans {
    pub(crate) const fn new() -> Spans {
        Spans {
            len: 0,
            items: [NONE; CAP],
            deeper: Vec::new(),
        }
    }

    #[inline(always)]
    pub(crate) fn push(&mut self, e: Entered) {
        let n = self.len;
        if n < CAP {
            self.items[n] = e;
        } else {
            self.push_deep(e);
        }
        self.len = n + 1;
    }

    #[cold]
    #[inline(never)]
    fn push_deep(&mut self, e: Entered) {
        self.deeper.push(e);
    }

    /// The top entry if it is span `id`'s (removed), else `None`.
    #[inline(always)]
    pub(crate) fn pop_if(&mut self, id: u64) -> Option<Entered> {
        let n = self.len;
        if n.wrapping_sub(1) < CAP && self.items[n - 1].id == id {
            self.len = n - 1;
            return Some(self.items[n - 1]);
        }
        None
    }

    pub(crate) fn get(&self, i: usize) -> Entered {
        if i < CAP {
            self.items[i]
        } else {
            self.deeper.get(i - CAP).copied().unwrap_or(NONE)
        }
    }

    /// Position of the innermost entry of span `id`.
    pub(crate) fn find(&self, id: u64) -> Option<usize> {
        (0..self.len).rev().find(|&i| self.get(i).id == id)
    }

    /// Removes the entries from `pos` up.
    pub(crate) fn truncate(&mut self, pos: usize) {
        if self.len > CAP {
            self.deeper.truncate(pos.saturating_sub(CAP));
        }
        self.len = pos.min(self.len);
    }

    pub(crate) fn bytes(&self) -> usize {
        self.deeper.capacity() * size_of::<Entered>()
    }
}
