//! The MPI queries a call's figures need, remembered per handle: the size
//! of a datatype (`PMPI_Type_size`), the size of a communicator and this
//! process's rank in it (`PMPI_Comm_size`, `PMPI_Comm_rank`), so that a
//! call on a handle seen before makes none (each is a call into the MPI
//! library, ~30 instructions there and as many here).
//!
//! A direct-mapped table per kind, lock-free: a slot holds the handle and
//! a word with the value and the handle's low 32 bits (a slot written by
//! two threads at once is read back only when both words agree, so a torn
//! pair needs two handles of one slot equal in their low 32 bits). A
//! handle can be reused once freed: `MPI_Type_free` forgets every
//! datatype, `MPI_Comm_free` every communicator (their wrappers call
//! [`forget`] before the real call). Not seen: a communicator freed by
//! `MPI_Comm_disconnect` (not wrapped) and reused.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

const SLOTS: usize = 64;

/// One table: a value per handle.
pub(super) struct Cache {
    key: [AtomicUsize; SLOTS],
    val: [AtomicU64; SLOTS],
}

impl Cache {
    pub(super) const fn new() -> Cache {
        Cache {
            key: [const { AtomicUsize::new(0) }; SLOTS],
            val: [const { AtomicU64::new(0) }; SLOTS],
        }
    }

    #[inline(always)]
    fn slot(h: usize) -> usize {
        // Handles are pointers (Open MPI) or small integers (MPICH).
        (h ^ (h >> 6) ^ (h >> 12)) % SLOTS
    }

    #[inline(always)]
    fn word(h: usize, v: i32) -> u64 {
        ((h as u32 as u64) << 32) | (v as u32 as u64)
    }

    /// The value of `h`, or `f(h)`'s (remembered when it is `Some`).
    #[inline(always)]
    pub(super) fn get(&self, h: usize, f: impl FnOnce(usize) -> Option<i32>) -> Option<i32> {
        let i = Self::slot(h);
        let k = self.key[i].load(Ordering::Acquire);
        let v = self.val[i].load(Ordering::Acquire);
        if k == h && h != 0 && v >> 32 == h as u32 as u64 {
            return Some(v as u32 as i32);
        }
        let r = f(h)?;
        self.val[i].store(Self::word(h, r), Ordering::Release);
        self.key[i].store(h, Ordering::Release);
        Some(r)
    }

    /// Forgets every handle.
    pub(super) fn clear(&self) {
        for i in 0..SLOTS {
            self.key[i].store(0, Ordering::Release);
            self.val[i].store(0, Ordering::Release);
        }
    }
}

/// Datatype sizes.
pub(super) static TYPE_SIZES: Cache = Cache::new();
/// Communicator sizes.
pub(super) static COMM_SIZES: Cache = Cache::new();
/// This process's rank in each communicator.
pub(super) static COMM_RANKS: Cache = Cache::new();

/// What a wrapper forgets before its real call.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Forget {
    /// Nothing.
    Nothing,
    /// Every datatype (`MPI_Type_free`).
    Types,
    /// Every communicator (`MPI_Comm_free`).
    Comms,
}

/// Forgets what `what` says.
#[cold]
pub(super) fn forget(what: Forget) {
    match what {
        Forget::Nothing => {}
        Forget::Types => TYPE_SIZES.clear(),
        Forget::Comms => {
            COMM_SIZES.clear();
            COMM_RANKS.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handle_is_asked_once_until_forgotten() {
        use std::sync::atomic::AtomicU32;
        static C: Cache = Cache::new();
        static ASKED: AtomicU32 = AtomicU32::new(0);
        let ask = |h: usize| {
            ASKED.fetch_add(1, Ordering::Relaxed);
            Some(h as i32 * 2)
        };
        let asked = || ASKED.load(Ordering::Relaxed);
        assert_eq!(C.get(0x7f00_1234_5670, ask), Some(0x1234_5670 * 2));
        assert_eq!(C.get(0x7f00_1234_5670, ask), Some(0x1234_5670 * 2));
        assert_eq!(asked(), 1);
        // Another handle, asked once too.
        assert_eq!(C.get(7, ask), Some(14));
        assert_eq!(C.get(7, ask), Some(14));
        assert_eq!(asked(), 2);
        // A failed query is not remembered.
        assert_eq!(C.get(9, |_| None), None);
        assert_eq!(C.get(9, ask), Some(18));
        assert_eq!(asked(), 3);
        C.clear();
        assert_eq!(C.get(7, ask), Some(14));
        assert_eq!(asked(), 4);
    }
}
