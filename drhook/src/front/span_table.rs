//! What the tracing layer keeps per live span, keyed by span id: its site
//! (resolved once, when the span is created) and the wall stamp of its last
//! exit.
//!
//! The layer fills an entry at `on_new_span` (where the span's metadata
//! comes free), reads it at every enter (no registry lookup), stamps it at
//! every exit and removes it at `on_close`. A span re-entered after an exit
//! (an `Instrumented` future polled again, perhaps on another thread)
//! resumes its call: see [`crate::engine::resume`].
//!
//! A lock-free table of 8192 buckets of 4 entries (two cache lines each),
//! static: 1 MiB of zero pages, touched as used. An entry is claimed with
//! one compare-and-swap on its id word; its other words are only written
//! by the span's own operations, which tracing orders (creation before any
//! enter, exits before later enters, everything before close). A full
//! bucket (more than 4 live spans hashing there) sends further spans to a
//! locked map, so lookups are always exact.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};

use crate::tree::site::Site;

const WAYS: usize = 4;
const LOG2: u32 = 13;

#[repr(C, align(128))]
struct Bucket {
    ids: [AtomicU64; WAYS],
    sites: [AtomicPtr<Site>; WAYS],
    /// See [`encode`].
    stamps: [AtomicU64; WAYS],
}

static TABLE: [Bucket; 1 << LOG2] = [const {
    Bucket {
        ids: [const { AtomicU64::new(0) }; WAYS],
        sites: [const { AtomicPtr::new(std::ptr::null_mut()) }; WAYS],
        stamps: [const { AtomicU64::new(0) }; WAYS],
    }
}; 1 << LOG2];

type Overflow = HashMap<u64, (&'static Site, u64)>;
static OVERFLOW: Mutex<Option<Overflow>> = Mutex::new(None);
static OVERFLOW_LEN: AtomicUsize = AtomicUsize::new(0);

/// A stored stamp: 0 until the span's first exit; then its last exit's
/// wall stamp, or `NO_STAMP` when that is unknown (wall time not measured).
const NO_STAMP: u64 = u64::MAX;

#[inline(always)]
fn encode(stamp: u64) -> u64 {
    if stamp == 0 { NO_STAMP } else { stamp }
}

#[inline(always)]
fn decode(stored: u64) -> Option<u64> {
    match stored {
        0 => None,
        NO_STAMP => Some(0),
        s => Some(s),
    }
}

#[inline(always)]
fn bucket(id: u64) -> &'static Bucket {
    &TABLE[(id.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - LOG2)) as usize]
}

fn overflow() -> std::sync::MutexGuard<'static, Option<Overflow>> {
    OVERFLOW.lock().unwrap_or_else(|e| e.into_inner())
}

/// A live span's entry.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry {
    pub site: &'static Site,
    /// The stamp of its last exit (0 when unknown), or `None` before its
    /// first exit.
    pub last_exit: Option<u64>,
}

/// Registers the new span `id` of `site`.
#[inline]
pub(crate) fn insert(id: u64, site: &'static Site) {
    let b = bucket(id);
    for k in 0..WAYS {
        if b.ids[k].load(Ordering::Relaxed) == 0 {
            // Claim the entry, then fill it: a lookup of `id` cannot happen
            // before this returns (the span is not yet handed out).
            if b.ids[k]
                .compare_exchange(0, id, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
            {
                b.sites[k].store(site as *const Site as *mut Site, Ordering::Release);
                b.stamps[k].store(0, Ordering::Release);
                return;
            }
        }
    }
    let mut m = overflow();
    let m = m.get_or_insert_with(HashMap::new);
    m.insert(id, (site, 0));
    OVERFLOW_LEN.store(m.len(), Ordering::Release);
}

/// The entry of live span `id`, if it was registered.
#[inline]
pub(crate) fn get(id: u64) -> Option<Entry> {
    let b = bucket(id);
    for k in 0..WAYS {
        if b.ids[k].load(Ordering::Acquire) == id {
            let site = b.sites[k].load(Ordering::Acquire);
            let stamp = b.stamps[k].load(Ordering::Acquire);
            if site.is_null() {
                return None;
            }
            return Some(Entry {
                // SAFETY: sites are leaked and never freed; the pointer was
                // stored before the span could be entered.
                site: unsafe { &*site },
                last_exit: decode(stamp),
            });
        }
    }
    get_overflow(id)
}

#[cold]
fn get_overflow(id: u64) -> Option<Entry> {
    if OVERFLOW_LEN.load(Ordering::Acquire) == 0 {
        return None;
    }
    overflow().as_ref()?.get(&id).map(|&(site, stamp)| Entry {
        site,
        last_exit: decode(stamp),
    })
}

/// Records an exit of span `id` at wall stamp `stamp` (0 when wall time is
/// not measured).
#[inline]
pub(crate) fn record_exit(id: u64, stamp: u64) {
    let stamp = encode(stamp);
    let b = bucket(id);
    for k in 0..WAYS {
        if b.ids[k].load(Ordering::Relaxed) == id {
            b.stamps[k].store(stamp, Ordering::Release);
            return;
        }
    }
    if OVERFLOW_LEN.load(Ordering::Acquire) > 0
        && let Some(e) = overflow().as_mut().and_then(|m| m.get_mut(&id))
    {
        e.1 = stamp;
    }
}

/// Forgets span `id` (it has closed; its id may be reused).
#[inline]
pub(crate) fn remove(id: u64) {
    let b = bucket(id);
    for k in 0..WAYS {
        if b.ids[k].load(Ordering::Relaxed) == id {
            b.sites[k].store(std::ptr::null_mut(), Ordering::Relaxed);
            b.stamps[k].store(0, Ordering::Relaxed);
            b.ids[k].store(0, Ordering::Release);
            return;
        }
    }
    if OVERFLOW_LEN.load(Ordering::Acquire) > 0 {
        let mut m = overflow();
        if let Some(m) = m.as_mut() {
            m.remove(&id);
            OVERFLOW_LEN.store(m.len(), Ordering::Release);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static S: Site = Site::new("span_table::test", file!(), line!());

    #[test]
    fn entries_live_from_creation_to_close() {
        let id = 0x5EED_0001;
        assert!(get(id).is_none());
        insert(id, &S);
        let e = get(id).unwrap();
        assert!(std::ptr::eq(e.site, &S) && e.last_exit.is_none());
        record_exit(id, 7);
        assert_eq!(get(id).unwrap().last_exit, Some(7));
        record_exit(id, 0);
        assert_eq!(
            get(id).unwrap().last_exit,
            Some(0),
            "exited, stamp unknown: a resume adds no suspension"
        );
        remove(id);
        assert!(get(id).is_none());
    }

    #[test]
    fn a_full_bucket_overflows_exactly() {
        let target = (0x1234u64.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - LOG2)) as usize;
        let ids: Vec<u64> = (0x7000_0000u64..)
            .filter(|&i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - LOG2)) as usize == target)
            .take(WAYS + 3)
            .collect();
        for &id in &ids {
            insert(id, &S);
        }
        for (n, &id) in ids.iter().enumerate() {
            record_exit(id, 100 + n as u64);
        }
        for (n, &id) in ids.iter().enumerate() {
            assert_eq!(
                get(id).unwrap().last_exit,
                Some(100 + n as u64),
                "id {id:#x}"
            );
        }
        for &id in &ids {
            remove(id);
        }
        for &id in &ids {
            assert!(get(id).is_none());
        }
        assert_eq!(OVERFLOW_LEN.load(Ordering::Relaxed), 0);
    }
}
