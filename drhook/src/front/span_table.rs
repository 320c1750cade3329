//! What the tracing layer keeps per live span, keyed by span id: its site
//! (resolved once per callsite, when the span is created) and the wall
//! stamp of its last exit.
//!
//! The layer fills an entry at `on_new_span` (where the span's metadata
//! comes free), finds it at every enter (no registry lookup) and frees it
//! at `on_close`; the engine stamps its state at every exit through the
//! pointer the enter left on the thread's span stack. A span re-entered
//! after an exit (an `Instrumented` future polled again, perhaps on
//! another thread) resumes its call: see [`crate::engine::resume`].
//!
//! A lock-free table of 8192 buckets of 4 slots (two cache lines each),
//! static: 1 MiB of zero pages, touched as used. A slot is claimed with one
//! compare-and-swap on its id word; its other words are only written by
//! the span's own operations, which tracing orders (creation before any
//! enter, exits before later enters, everything before close). A full
//! bucket (more than 4 live spans hashing there) sends further spans to a
//! locked map, so lookups are always exact.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

use crate::runtime::ForkHeld;
use crate::tree::site::Site;
use crate::tree::spans::SpanState;

const WAYS: usize = 4;
const LOG2: u32 = 13;

/// One live span's entry: its state (id 0 = a free slot) and its site.
pub(crate) struct Slot {
    state: SpanState,
    site: AtomicPtr<Site>,
}

#[repr(C, align(128))]
struct Bucket {
    slots: [Slot; WAYS],
}

static TABLE: [Bucket; 1 << LOG2] = [const {
    Bucket {
        slots: [const {
            Slot {
                state: SpanState::new(),
                site: AtomicPtr::new(std::ptr::null_mut()),
            }
        }; WAYS],
    }
}; 1 << LOG2];

/// Spans of full buckets: their slots are leaked and reused through a free
/// list, so that a slot reference stays valid for the program's life.
struct Overflow {
    live: HashMap<u64, &'static Slot>,
    free: Vec<&'static Slot>,
}
static OVERFLOW: Mutex<Option<Overflow>> = Mutex::new(None);
static OVERFLOW_LEN: AtomicUsize = AtomicUsize::new(0);

/// Whether a span may have been registered: set before the first site of
/// a span is published (see [`may_register`]). While it is clear (Dr.Hook
/// off from the start), a lookup or removal that misses the first slot
/// stops there, inline, instead of calling the bucket's search.
static ANY: AtomicBool = AtomicBool::new(false);

/// Called before anything that can lead to [`insert`] is published: the
/// callsite cache's first filling of a slot, an overflow insertion. Any
/// thread that inserts a span has seen that publication, and any thread
/// that looks a span up or removes it was handed the span by one that
/// created it, so it sees the flag set.
pub(crate) fn may_register() {
    if !ANY.load(Ordering::Relaxed) {
        ANY.store(true, Ordering::Release);
    }
}

#[inline(always)]
fn bucket(id: u64) -> &'static Bucket {
    let i = (id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - LOG2)) as usize;
    // SAFETY: the shift keeps LOG2 bits.
    unsafe { TABLE.get_unchecked(i) }
}

fn overflow() -> std::sync::MutexGuard<'static, Option<Overflow>> {
    // Held across every `fork` (the engine's handlers), from before its
    // first use.
    static REGISTERED: AtomicBool = AtomicBool::new(false);
    if !REGISTERED.load(Ordering::Acquire) {
        crate::runtime::hold_across_fork(hold_for_fork, release_for_fork);
        REGISTERED.store(true, Ordering::Release);
    }
    OVERFLOW.lock().unwrap_or_else(|e| e.into_inner())
}

static HELD: ForkHeld<std::sync::MutexGuard<'static, Option<Overflow>>> = ForkHeld::new();

fn hold_for_fork() {
    HELD.hold(OVERFLOW.lock().unwrap_or_else(|e| e.into_inner()));
}

fn release_for_fork() {
    HELD.release();
}

impl Slot {
    /// The span's site. A slot found by id has had its site stored (before
    /// the span could be entered), and a freed slot keeps its last site:
    /// once set, the pointer is never null again.
    #[inline(always)]
    pub(crate) fn site(&self) -> &'static Site {
        let p = self.site.load(Ordering::Acquire);
        debug_assert!(!p.is_null(), "a span slot found by id has a site");
        // SAFETY: not null (above: stored at the claim, never cleared);
        // sites are leaked and never freed.
        unsafe { &*p }
    }

    /// The span's state (id, stamp of its last exit).
    #[inline(always)]
    pub(crate) fn state(&self) -> &SpanState {
        &self.state
    }
}

/// Registers the new span `id` of `site`.
#[inline(always)]
pub(crate) fn insert(id: u64, site: &'static Site) {
    let b = bucket(id);
    // Claim a slot, then fill it: a lookup of `id` cannot happen before
    // this returns (the span is not yet handed out). The first slot is
    // tried with the compare-and-swap alone (usually free: one
    // instruction less than testing it first).
    let first = &b.slots[0];
    if first
        .state
        .id
        .compare_exchange(0, id, Ordering::AcqRel, Ordering::Relaxed)
        .is_ok()
    {
        first
            .site
            .store(site as *const Site as *mut Site, Ordering::Release);
        first.state.stamp.store(0, Ordering::Release);
        return;
    }
    for s in &b.slots[1..] {
        if s.state.id.load(Ordering::Relaxed) == 0
            && s.state
                .id
                .compare_exchange(0, id, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        {
            s.site
                .store(site as *const Site as *mut Site, Ordering::Release);
            s.state.stamp.store(0, Ordering::Release);
            return;
        }
    }
    insert_overflow(id, site);
}

#[cold]
#[inline(never)]
fn insert_overflow(id: u64, site: &'static Site) {
    may_register();
    let mut g = overflow();
    let o = g.get_or_insert_with(|| Overflow {
        live: HashMap::new(),
        free: Vec::new(),
    });
    let s: &'static Slot = o.free.pop().unwrap_or_else(|| {
        Box::leak(Box::new(Slot {
            state: SpanState::new(),
            site: AtomicPtr::new(std::ptr::null_mut()),
        }))
    });
    s.site
        .store(site as *const Site as *mut Site, Ordering::Release);
    s.state.stamp.store(0, Ordering::Release);
    s.state.id.store(id, Ordering::Release);
    o.live.insert(id, s);
    OVERFLOW_LEN.store(o.live.len(), Ordering::Release);
}

/// The slot of live span `id`, if it was registered: the bucket's first
/// slot inline, the rest out of line.
#[inline(always)]
pub(crate) fn find(id: u64) -> Option<&'static Slot> {
    let b = bucket(id);
    if b.slots[0].state.id.load(Ordering::Acquire) == id {
        return Some(&b.slots[0]);
    }
    if !ANY.load(Ordering::Acquire) {
        return None;
    }
    find_other(b, id)
}

#[inline(never)]
fn find_other(b: &'static Bucket, id: u64) -> Option<&'static Slot> {
    for s in &b.slots[1..] {
        if s.state.id.load(Ordering::Acquire) == id {
            return Some(s);
        }
    }
    if id == 0 || OVERFLOW_LEN.load(Ordering::Acquire) == 0 {
        return None;
    }
    overflow().as_ref()?.live.get(&id).copied()
}

/// Forgets span `id` (it has closed; its id may be reused). Only the id
/// is cleared: the next span to claim the slot writes the rest before it
/// can be found.
#[inline(always)]
pub(crate) fn remove(id: u64) {
    let b = bucket(id);
    if b.slots[0].state.id.load(Ordering::Relaxed) == id {
        b.slots[0].state.id.store(0, Ordering::Release);
        return;
    }
    if !ANY.load(Ordering::Acquire) {
        return;
    }
    remove_other(b, id);
}

#[inline(never)]
fn remove_other(b: &'static Bucket, id: u64) {
    for s in &b.slots[1..] {
        if s.state.id.load(Ordering::Relaxed) == id {
            s.state.id.store(0, Ordering::Release);
            return;
        }
    }
    if OVERFLOW_LEN.load(Ordering::Acquire) == 0 {
        return;
    }
    let mut g = overflow();
    if let Some(o) = g.as_mut()
        && let Some(s) = o.live.remove(&id)
    {
        s.state.id.store(0, Ordering::Release);
        o.free.push(s);
        OVERFLOW_LEN.store(o.live.len(), Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fork_child_can_take_the_overflow_lock_a_thread_held() {
        drop(overflow());
        crate::runtime::assert_child_can_take(
            "the span table's overflow",
            || Box::new(overflow()),
            || drop(overflow()),
        );
    }

    static S: Site = Site::new("span_table::test", file!(), line!());

    #[test]
    fn entries_live_from_creation_to_close() {
        may_register();
        let id = 0x5EED_0001;
        assert!(find(id).is_none());
        insert(id, &S);
        let e = find(id).unwrap();
        assert!(std::ptr::eq(e.site(), &S) && e.state().last_exit().is_none());
        e.state().record_exit(id, 7);
        assert_eq!(find(id).unwrap().state().last_exit(), Some(7));
        e.state().record_exit(id, 0);
        assert_eq!(
            find(id).unwrap().state().last_exit(),
            Some(0),
            "exited, stamp unknown: a resume adds no suspension"
        );
        remove(id);
        assert!(find(id).is_none());
        // A stale slot reference no longer records anything.
        e.state().record_exit(id, 9);
        insert(id + 1, &S);
        assert!(find(id + 1).unwrap().state().last_exit().is_none());
        remove(id + 1);
    }

    static T: Site = Site::new("span_table::test_other", file!(), line!());

    #[test]
    fn a_freed_first_slot_is_claimed_again_and_never_loses_its_site() {
        may_register();
        // Two ids of one bucket: the first takes slot 0 (the claim without
        // a load), the second slot 1.
        let target = (0x4321u64.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - LOG2)) as usize;
        let ids: Vec<u64> = (0x6000_0000u64..)
            .filter(|&i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - LOG2)) as usize == target)
            .take(3)
            .collect();
        let b = bucket(ids[0]);
        insert(ids[0], &S);
        insert(ids[1], &T);
        assert!(std::ptr::eq(find(ids[0]).unwrap(), &b.slots[0]));
        assert!(std::ptr::eq(find(ids[1]).unwrap(), &b.slots[1]));
        find(ids[0]).unwrap().state().record_exit(ids[0], 5);
        remove(ids[0]);
        // Freed: not found, but a stale reference still reads a site.
        assert!(find(ids[0]).is_none());
        assert!(std::ptr::eq(b.slots[0].site(), &S));
        // The next span of the bucket takes the freed first slot, with its
        // own site and no exit stamp.
        insert(ids[2], &T);
        let e = find(ids[2]).unwrap();
        assert!(std::ptr::eq(e, &b.slots[0]));
        assert!(std::ptr::eq(e.site(), &T) && e.state().last_exit().is_none());
        assert!(std::ptr::eq(find(ids[1]).unwrap().site(), &T));
        remove(ids[1]);
        remove(ids[2]);
        assert!(find(ids[1]).is_none() && find(ids[2]).is_none());
    }

    #[test]
    fn a_full_bucket_overflows_exactly() {
        may_register();
        let target = (0x1234u64.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - LOG2)) as usize;
        let ids: Vec<u64> = (0x7000_0000u64..)
            .filter(|&i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - LOG2)) as usize == target)
            .take(WAYS + 3)
            .collect();
        for &id in &ids {
            insert(id, &S);
        }
        for (n, &id) in ids.iter().enumerate() {
            find(id).unwrap().state().record_exit(id, 100 + n as u64);
        }
        for (n, &id) in ids.iter().enumerate() {
            assert_eq!(
                find(id).unwrap().state().last_exit(),
                Some(100 + n as u64),
                "id {id:#x}"
            );
        }
        for &id in &ids {
            remove(id);
        }
        for &id in &ids {
            assert!(find(id).is_none());
        }
        assert_eq!(OVERFLOW_LEN.load(Ordering::Relaxed), 0);
    }
}
