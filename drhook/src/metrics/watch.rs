//! Watch points (the reference's `DR_HOOK_WATCH_MOD`, `c_drhook_watch_`):
//! memory ranges whose checksum is compared at every enter and exit of
//! every instrumented routine, reported with the calling tree when it
//! changes.
//!
//! The check is a stamped metric, so the engine's hot path carries no code
//! of its own for it: `runtime` installs this metric at start-up whenever
//! Dr.Hook is on (every thread then gets its [`WatchStamper`], a zero-sized
//! value: nothing allocated), but leaves the `METRICS` bit of the mode word
//! clear, so enter and exit never call it. Registering the first watch
//! point sets the bit and `SLOW_STAMPS` ([`crate::runtime`]'s
//! `enable_watch_checks`; without `SLOW_STAMPS` only the stampers of
//! [`Metric::stamps_on_fast_paths`] metrics run, so with `memprof` alone
//! this one stays idle): from then on enter and exit take the out-of-line
//! path, behind the entry points' panic guard, that calls the stampers,
//! which call the checker (`crash::watch`, wired by `runtime`). A process
//! that never registers a watch point pays one 8-byte scratch word per
//! calling-tree node and nothing per call.

use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};

use super::{Agg, Metric, Stamper, Word};

/// Number of active watch points (0: the stampers return at once).
pub(crate) static ACTIVE: AtomicUsize = AtomicUsize::new(0);

/// `DR_HOOK_STACKCHECK` / `DR_HOOK_HEAPCHECK` are on (the same stampers
/// report stack and heap growth; set at start-up by `runtime`).
pub(crate) static STACK_HEAP: AtomicBool = AtomicBool::new(false);

/// `DR_HOOK_FUNCENTER`, `_FUNCEXIT`, `_CALLTRACE` or `_TIMELINE` is set:
/// the same stampers print their lines (set at start-up by `runtime`).
pub(crate) static LINES: AtomicBool = AtomicBool::new(false);

/// The checker: called with `true` after an enter, `false` before an exit,
/// and an address in the stamper's frame (for the stack check).
static CHECK: AtomicPtr<()> = AtomicPtr::new(std::ptr::null_mut());

/// Installs the checker (`runtime` wires `crash::watch::check_boundary`).
pub(crate) fn set_checker(f: fn(bool, usize)) {
    CHECK.store(f as *mut (), Ordering::Release);
}

#[inline(never)]
fn check(entering: bool) {
    if ACTIVE.load(Ordering::Acquire) == 0
        && !STACK_HEAP.load(Ordering::Relaxed)
        && !LINES.load(Ordering::Relaxed)
    {
        return;
    }
    let f = CHECK.load(Ordering::Acquire);
    if !f.is_null() {
        let here = 0u8;
        let sp = std::hint::black_box(&here) as *const u8 as usize;
        // SAFETY: only `fn(bool, usize)` values are stored in CHECK.
        let f: fn(bool, usize) = unsafe { std::mem::transmute::<*mut (), fn(bool, usize)>(f) };
        f(entering, sp);
    }
}

/// The watch-point metric: one scratch word (stampers run only on nodes
/// with a row), reported nowhere.
pub(crate) struct Watch {
    words: Vec<Word>,
}

/// The per-thread stamper: no state.
pub(crate) struct WatchStamper;

impl Stamper for WatchStamper {
    fn enter(&self, _node: u32, _row: &[AtomicU64]) {
        check(true);
    }
    fn exit(&self, _node: u32, _row: &[AtomicU64], _wall: u64) {
        check(false);
    }
}

impl Metric for Watch {
    fn name(&self) -> &'static str {
        "watch"
    }
    fn words(&self) -> &[Word] {
        &self.words
    }
    fn stamped(&self) -> bool {
        true
    }
    fn stamper(&self, _tid: u32) -> Option<Box<dyn Stamper>> {
        Some(Box::new(WatchStamper))
    }
}

/// The metric (one instance per process).
pub(crate) fn metric() -> &'static Watch {
    static M: std::sync::OnceLock<Watch> = std::sync::OnceLock::new();
    M.get_or_init(|| Watch {
        words: vec![Word {
            name: "watch".into(),
            agg: Agg::Scratch,
        }],
    })
}

/// The reference's checksum (`crc32_` in its `crc.c`, "as in Unix
/// cksum"): CRC-32 with polynomial 0x04C11DB7, not reflected, over the
/// bytes and then the length's bytes (least significant first), inverted.
pub(crate) fn cksum(bytes: &[u8]) -> u32 {
    const fn table() -> [u32; 256] {
        let mut t = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = (i as u32) << 24;
            let mut k = 0;
            while k < 8 {
                c = if c & 0x8000_0000 != 0 {
                    (c << 1) ^ 0x04C1_1DB7
                } else {
                    c << 1
                };
                k += 1;
            }
            t[i] = c;
            i += 1;
        }
        t
    }
    static T: [u32; 256] = table();
    let step = |crc: u32, b: u8| (crc << 8) ^ T[((crc >> 24) ^ u32::from(b)) as usize & 0xFF];
    let mut crc = bytes.iter().fold(0u32, |c, &b| step(c, b));
    let mut n = bytes.len();
    while n > 0 {
        crc = step(crc, (n & 0xFF) as u8);
        n >>= 8;
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cksum_is_posix_cksum() {
        // `printf 'hello\n' | cksum` and `printf '' | cksum`.
        assert_eq!(cksum(b"hello\n"), 3_015_617_425);
        assert_eq!(cksum(b""), 4_294_967_295);
        assert_eq!(cksum(b"123456789"), 930_766_865);
    }
}
