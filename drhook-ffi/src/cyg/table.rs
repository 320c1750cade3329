//! Function address → entry: a static, lock-free, insert-only table with
//! linear probing (at most [`CAPACITY`] functions: a program with more has
//! the rest untimed, said once). A hit is a multiply, a shift and three
//! loads: no allocation, no lock, no hashing of text. An entry is claimed
//! by a compare-and-swap of its address, then its site is published
//! (release); readers that find the address without a site wait for it
//! (or, on the thread that is resolving it, see it as untimed).

use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};

use drhook::Site;

const LOG2: u32 = 16;
const SLOTS: usize = 1 << LOG2;
/// Functions the table takes (half its slots, so probes stay short).
pub const CAPACITY: usize = SLOTS / 2;

/// `ctl`: the function is not timed (excluded, or throttled).
pub const OFF: u64 = 1 << 63;

/// One function.
#[repr(C, align(32))]
pub struct Entry {
    /// The function's address (0: free slot). Written once.
    pub addr: AtomicUsize,
    /// Its region (null until resolved). Written once.
    pub site: AtomicPtr<Site>,
    /// Calls counted at entry (all threads; plain load and store, so a
    /// race may lose a count: only the throttling rule reads it), and
    /// [`OFF`].
    pub ctl: AtomicU64,
}

static TABLE: [Entry; SLOTS] = [const {
    Entry {
        addr: AtomicUsize::new(0),
        site: AtomicPtr::new(std::ptr::null_mut()),
        ctl: AtomicU64::new(0),
    }
}; SLOTS];
static USED: AtomicUsize = AtomicUsize::new(0);

#[inline(always)]
fn home(addr: usize) -> usize {
    ((addr as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - LOG2)) as usize
}

/// The entry of `addr` when it is in its home slot (the hot path).
#[inline(always)]
pub fn first(addr: usize) -> Option<&'static Entry> {
    // SAFETY: `home` keeps LOG2 bits, so the index is in bounds.
    let e = unsafe { TABLE.get_unchecked(home(addr)) };
    (e.addr.load(Ordering::Relaxed) == addr).then_some(e)
}

/// The entry of `addr` anywhere on its probe sequence (None: not there).
pub fn find(addr: usize) -> Option<&'static Entry> {
    let h = home(addr);
    for i in 0..SLOTS {
        let e = &TABLE[(h + i) & (SLOTS - 1)];
        match e.addr.load(Ordering::Acquire) {
            0 => return None,
            a if a == addr => return Some(e),
            _ => {}
        }
    }
    None
}

/// The entry of `addr`, claimed if it is new (`true` with it: the caller
/// resolves it and publishes the site). None when the table is full.
pub fn claim(addr: usize) -> Option<(&'static Entry, bool)> {
    let h = home(addr);
    for i in 0..SLOTS {
        let e = &TABLE[(h + i) & (SLOTS - 1)];
        match e.addr.load(Ordering::Acquire) {
            0 => {
                if USED.fetch_add(1, Ordering::Relaxed) >= CAPACITY {
                    USED.fetch_sub(1, Ordering::Relaxed);
                    return None;
                }
                match e
                    .addr
                    .compare_exchange(0, addr, Ordering::AcqRel, Ordering::Acquire)
                {
                    Ok(_) => return Some((e, true)),
                    Err(a) => {
                        USED.fetch_sub(1, Ordering::Relaxed);
                        if a == addr {
                            return Some((e, false));
                        }
                    }
                }
            }
            a if a == addr => return Some((e, false)),
            _ => {}
        }
    }
    None
}

impl Entry {
    /// The region, once resolved.
    #[inline(always)]
    pub fn site(&self) -> Option<&'static Site> {
        // SAFETY: only `&'static Site`s are stored.
        unsafe { self.site.load(Ordering::Acquire).as_ref() }
    }
}
