//! A thread's samples: a fixed open-addressing table of distinct stacks
//! (the regions' sites, innermost first, then the native return
//! addresses, innermost first) and their counts, mapped when the thread
//! starts sampling. Only the owning thread writes (from its sample
//! handler: no lock, no allocation); any thread reads a slot once its key
//! is published (release store of the hash).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// Dr.Hook regions kept per sample (innermost first).
pub(crate) const REGIONS: usize = 8;
/// Native frames kept per sample (innermost first).
pub(crate) const FRAMES: usize = 48;
/// Words per slot: hash, count, lengths, regions, frames.
const WORDS: usize = 3 + REGIONS + FRAMES;
/// Slots per thread (distinct stacks): 4096 × 472 bytes, committed as
/// they are used.
pub(crate) const SLOTS: usize = 4096;
/// Probes before a sample is dropped as "table full".
const PROBES: usize = 64;

/// One thread's table.
pub(crate) struct Table {
    /// Dr.Hook thread number.
    pub(crate) tid: u32,
    words: *mut AtomicU64,
    /// Samples taken (recorded or not).
    pub(crate) taken: AtomicU64,
    /// Samples dropped because they fell in the engine's own work.
    pub(crate) in_engine: AtomicU64,
    /// Samples dropped because the table was full.
    pub(crate) full: AtomicU64,
    /// The thread's CPU-time timer (`timer_t` as an address; 0: none).
    pub(crate) timer: AtomicUsize,
    /// Whether the thread's sample handler is running (never nests).
    pub(crate) busy: AtomicBool,
}

// SAFETY: the words are atomics written only by the owning thread; the
// mapping lives as long as the process (tables are never freed).
unsafe impl Sync for Table {}
// SAFETY: as above.
unsafe impl Send for Table {}

/// One distinct stack and how many samples fell on it.
pub(crate) struct Stack {
    pub(crate) count: u64,
    /// Sites (`&'static Site` addresses) of the regions, innermost first.
    pub(crate) regions: Vec<usize>,
    /// Native addresses (looked-up addresses: return addresses less one),
    /// innermost first.
    pub(crate) frames: Vec<u64>,
}

fn hash(regions: &[usize], frames: &[u64]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for w in regions
        .iter()
        .map(|&r| r as u64)
        .chain(frames.iter().copied())
    {
        h = (h ^ w).wrapping_mul(0x0100_0000_01b3);
        h ^= h >> 29;
    }
    h ^= (regions.len() as u64) << 56 | (frames.len() as u64) << 48;
    h | 1
}

impl Table {
    /// A table for thread `tid`, its slots mapped (zero pages, committed
    /// when touched). None when the mapping fails.
    pub(crate) fn new(tid: u32) -> Option<Table> {
        let bytes = SLOTS * WORDS * 8;
        // SAFETY: an anonymous private mapping; no address given.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        Some(Table {
            tid,
            words: p.cast(),
            taken: AtomicU64::new(0),
            in_engine: AtomicU64::new(0),
            full: AtomicU64::new(0),
            timer: AtomicUsize::new(0),
            busy: AtomicBool::new(false),
        })
    }

    fn slot(&self, i: usize) -> &[AtomicU64] {
        // SAFETY: `i < SLOTS`; the mapping holds SLOTS × WORDS zeroed
        // words, valid as atomics, for the life of the process.
        unsafe { std::slice::from_raw_parts(self.words.add(i * WORDS), WORDS) }
    }

    /// Counts `weight` samples on the stack (`regions`, `frames`). Owner
    /// thread only (its sample handler); async-signal-safe.
    pub(crate) fn record(&self, regions: &[usize], frames: &[u64], weight: u64) {
        let regions = &regions[..regions.len().min(REGIONS)];
        let frames = &frames[..frames.len().min(FRAMES)];
        let h = hash(regions, frames);
        let lens = (regions.len() | frames.len() << 8) as u64;
        let mut i = (h as usize) % SLOTS;
        for _ in 0..PROBES {
            let s = self.slot(i);
            let k = s[0].load(Ordering::Relaxed);
            if k == 0 {
                s[2].store(lens, Ordering::Relaxed);
                for (w, r) in s[3..].iter().zip(regions) {
                    w.store(*r as u64, Ordering::Relaxed);
                }
                for (w, f) in s[3 + REGIONS..].iter().zip(frames) {
                    w.store(*f, Ordering::Relaxed);
                }
                s[1].store(weight, Ordering::Relaxed);
                s[0].store(h, Ordering::Release);
                return;
            }
            if k == h
                && s[2].load(Ordering::Relaxed) == lens
                && s[3..]
                    .iter()
                    .zip(regions)
                    .all(|(w, r)| w.load(Ordering::Relaxed) == *r as u64)
                && s[3 + REGIONS..]
                    .iter()
                    .zip(frames)
                    .all(|(w, f)| w.load(Ordering::Relaxed) == *f)
            {
                // Only the owner writes: no read-modify-write needed.
                s[1].store(s[1].load(Ordering::Relaxed) + weight, Ordering::Relaxed);
                return;
            }
            i = (i + 1) % SLOTS;
        }
        self.full.fetch_add(weight, Ordering::Relaxed);
    }

    /// Every distinct stack recorded so far (any thread).
    pub(crate) fn stacks(&self) -> Vec<Stack> {
        let mut out = Vec::new();
        for i in 0..SLOTS {
            let s = self.slot(i);
            if s[0].load(Ordering::Acquire) == 0 {
                continue;
            }
            let lens = s[2].load(Ordering::Relaxed) as usize;
            let (nr, nf) = (lens & 0xff, (lens >> 8) & 0xff);
            out.push(Stack {
                count: s[1].load(Ordering::Relaxed),
                regions: s[3..3 + nr.min(REGIONS)]
                    .iter()
                    .map(|w| w.load(Ordering::Relaxed) as usize)
                    .collect(),
                frames: s[3 + REGIONS..3 + REGIONS + nf.min(FRAMES)]
                    .iter()
                    .map(|w| w.load(Ordering::Relaxed))
                    .collect(),
            });
        }
        out
    }

    /// Forgets every sample (a `fork` child's table starts empty).
    pub(crate) fn clear(&self) {
        for i in 0..SLOTS {
            let s = self.slot(i);
            if s[0].load(Ordering::Relaxed) != 0 {
                s[0].store(0, Ordering::Relaxed);
            }
        }
        self.taken.store(0, Ordering::Relaxed);
        self.in_engine.store(0, Ordering::Relaxed);
        self.full.store(0, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_stacks_share_a_slot_and_different_ones_do_not() {
        let t = Table::new(1).unwrap();
        for _ in 0..3 {
            t.record(&[10, 20], &[0x1000, 0x2000], 1);
        }
        t.record(&[10], &[0x1000, 0x2000], 1);
        t.record(&[10, 20], &[0x1000], 1);
        let mut s = t.stacks();
        s.sort_by_key(|s| std::cmp::Reverse(s.count));
        assert_eq!(s.len(), 3);
        assert_eq!(s[0].count, 3);
        assert_eq!(s[0].regions, vec![10, 20]);
        assert_eq!(s[0].frames, vec![0x1000, 0x2000]);
        assert_eq!(s.iter().map(|s| s.count).sum::<u64>(), 5);
        t.clear();
        assert!(t.stacks().is_empty());
    }
}
