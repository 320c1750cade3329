//! I/O events for the I/O metric (`metrics::io`), from the preload
//! library's interposers: one call per I/O operation on the calling
//! thread, no lock, no allocation.

use std::sync::atomic::{AtomicU64, Ordering};

use super::thread;
use crate::metrics::io::{
    NANOS, OFFSET, OTHER, READ, READ_BYTES, READS, WORDS, WRITE, WRITE_BYTES, WRITES,
};

pub use crate::metrics::io::{OTHER_OP, READ as READ_OP, WRITE as WRITE_OP};

/// Adds `by` to a word of the calling thread's own row.
#[inline]
pub(crate) fn bump(w: &AtomicU64, by: u64) {
    // Only the owner thread writes its row.
    w.store(
        w.load(Ordering::Relaxed).wrapping_add(by),
        Ordering::Relaxed,
    );
}

/// Records an I/O operation of `kind` (`READ_OP`, `WRITE_OP`, `OTHER_OP`)
/// moving `bytes` bytes and taking `nanos` ns in the calling thread's
/// current routine, and returns that routine's identity (the address of
/// its `Site`, for `routine_name`; 0: none). Nothing when the metric is
/// off or the thread has no calling tree.
#[inline]
pub fn record(kind: u32, bytes: u64, nanos: u64) -> usize {
    let off = OFFSET.load(Ordering::Relaxed);
    if off == usize::MAX {
        return 0;
    }
    let td = thread::current();
    if td.is_null() {
        return 0;
    }
    // SAFETY: the calling thread's own tree (freed only once the thread ended it).
    let td = unsafe { &*td };
    if td.in_internal_work() {
        return 0;
    }
    // SAFETY: the top of the thread's stack is a node of its arena.
    let site = unsafe { (*td.current()).site } as usize;
    let Some(w) = td.current_row().and_then(|r| r.get(off..off + WORDS)) else {
        return site;
    };
    match kind {
        READ => {
            bump(&w[READ_BYTES], bytes);
            bump(&w[READS], 1);
        }
        WRITE => {
            bump(&w[WRITE_BYTES], bytes);
            bump(&w[WRITES], 1);
        }
        _ => bump(&w[OTHER], 1),
    }
    bump(&w[NANOS], nanos);
    site
}

/// The name of a routine whose identity [`record`] returned, into `buf`
/// (truncated); its length.
///
/// # Safety
/// `id` was returned by [`record`] in this process (a `&'static Site`).
pub unsafe fn routine_name(id: usize, buf: &mut [u8]) -> usize {
    // SAFETY: caller contract.
    let Some(site) = (unsafe { (id as *const crate::tree::site::Site).as_ref() }) else {
        return 0;
    };
    let name = site.name().as_bytes();
    let n = name.len().min(buf.len());
    buf[..n].copy_from_slice(&name[..n]);
    n
}

/// The calling thread's calling tree into `buf`, innermost first:
/// `NAME@tid<CALLER<...<main` (truncated; names as in the profile); its
/// length, 0 when the thread has none. No allocation, no lock: for the
/// per-operation I/O trace.
pub fn current_path(buf: &mut [u8]) -> usize {
    let td = thread::current();
    if td.is_null() {
        return 0;
    }
    // SAFETY: the calling thread's own tree (freed only once the thread ended it).
    let td = unsafe { &*td };
    let mut out = std::io::Cursor::new(buf);
    let mut p = td.current();
    let mut first = true;
    use std::io::Write as _;
    while !p.is_null() && p != td.root {
        // SAFETY: nodes of the calling thread's own stack; sites are 'static.
        let (site, parent) = unsafe { ((*p).site.as_ref(), (*p).parent) };
        let Some(site) = site else { break };
        let r = if first {
            write!(out, "{}@{}", site.name(), td.tid)
        } else {
            write!(out, "<{}", site.name())
        };
        if r.is_err() {
            break;
        }
        first = false;
        p = parent;
    }
    out.position() as usize
}

/// `NAME@tid` of the calling thread's current routine into `buf`
/// (truncated); its length, 0 when there is none.
pub fn current_routine(buf: &mut [u8]) -> usize {
    let td = thread::current();
    if td.is_null() {
        return 0;
    }
    // SAFETY: the calling thread's own tree (freed only once the thread ended it).
    let td = unsafe { &*td };
    let top = td.current();
    // SAFETY: the top of the stack is a node of this arena; sites are 'static.
    let Some(site) = (unsafe { (*top).site.as_ref() }) else {
        return 0;
    };
    let text = format!("{}@{}", site.name(), td.tid);
    let n = text.len().min(buf.len());
    buf[..n].copy_from_slice(&text.as_bytes()[..n]);
    n
}

/// The calling thread's current routine and its Dr.Hook thread number
/// (None outside any region or before the thread's first call).
pub fn current_region() -> Option<(&'static str, u32)> {
    let td = thread::current();
    if td.is_null() {
        return None;
    }
    // SAFETY: the calling thread's own tree (freed only once the thread ended it).
    let td = unsafe { &*td };
    let top = td.current();
    // SAFETY: the top of the stack is a node of this arena; sites are 'static.
    let site = unsafe { (*top).site.as_ref() }?;
    Some((site.name(), td.tid))
}
