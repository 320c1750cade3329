//! NVTX and ROCTX ranges from the hooks (`DR_HOOK_NVTX`, `DR_HOOK_ROCTX`):
//! a stamped metric whose stamper pushes a range named after the routine
//! at every enter and pops it at the exit, on every thread, through a tool
//! found at run time (`nvtx`: the NVTX v3 injection protocol; `roctx`:
//! `libroctx64.so`).
//!
//! The reference's spam filter: an activation of a node entered more than
//! `SPAM_CALL_COUNT` times (this one included) whose earlier activations
//! add up to less than `SPAM_WT` seconds of wall time gets no range (a
//! tiny routine called often would flood the timeline). The reference
//! counts per routine and thread; here per node of the calling tree (the
//! routine under its caller), and the range's own bit in the node's row
//! says whether this activation pushed, so pushes and pops pair exactly
//! also under recursion. Skipped activations are counted per node (an
//! `Event` word per tool) and summed in the profile header.
//!
//! Words: `OPEN` (scratch: bit 0 an NVTX range, bit 1 a ROCTX range is
//! open for the node's activation), `NVTX_SKIPPED`, `ROCTX_SKIPPED`.

mod nvtx;
mod roctx;

use std::cell::UnsafeCell;
use std::collections::HashMap;
use std::ffi::{CString, c_char};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use super::{Agg, Metric, Seen, Stamper, Word};
use crate::config::ranges::Ranges;
use crate::sys::linebuf::{LineBuf, write_all};

/// Word: which ranges the node's current activation opened.
pub(crate) const OPEN: usize = 0;
/// Word: NVTX ranges skipped by the filter.
pub(crate) const NVTX_SKIPPED: usize = 1;
/// Word: ROCTX ranges skipped by the filter.
pub(crate) const ROCTX_SKIPPED: usize = 2;

/// A filter in the units of the tree: skip when `calls > calls` and the
/// node's wall ticks are `< ticks`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Filter {
    pub calls: u64,
    pub ticks: u64,
}

impl Filter {
    #[inline]
    fn skips(self, seen: &Seen) -> bool {
        seen.calls > self.calls && seen.wall_incl < self.ticks
    }
}

/// The `ranges` metric.
pub(crate) struct RangesMetric {
    words: Vec<Word>,
    nvtx: Option<Filter>,
    roctx: Option<Filter>,
    silent: bool,
}

static RANGES: OnceLock<RangesMetric> = OnceLock::new();

/// The tools that can take ranges, looked for at start-up (NVTX: a tool
/// named or loaded; ROCTX: `libroctx64.so` opened), with a line on stderr
/// for each one asked for and missing: the ranges of a missing tool are
/// not even tried (no cost).
pub(crate) fn available(r: &Ranges, silent: bool) -> Ranges {
    let nvtx = r.nvtx.filter(|_| nvtx::tool_present());
    let roctx = r.roctx.filter(|_| roctx::open_at_start());
    if !silent && r.nvtx.is_some() && nvtx.is_none() {
        write_all(
            2,
            b"DRHOOK:NVTX: no NVTX tool attached (NVTX_INJECTION64_PATH unset): no ranges, no cost\n",
        );
    }
    if !silent && r.roctx.is_some() && roctx.is_none() {
        note_roctx(false);
    }
    Ranges { nvtx, roctx }
}

/// Sets the ranges up (once, at start-up): `ticks_per_sec` converts the
/// wall-time thresholds to the tree's wall ticks.
pub(crate) fn init(r: &Ranges, ticks_per_sec: f64, silent: bool) -> &'static dyn Metric {
    let filter = |s: crate::config::ranges::Spam| Filter {
        calls: s.calls,
        ticks: (s.wall_secs * ticks_per_sec).max(0.0) as u64,
    };
    RANGES.get_or_init(|| RangesMetric {
        words: ["ranges@open", "nvtx skipped", "roctx skipped"]
            .iter()
            .zip([Agg::Scratch, Agg::Event, Agg::Event])
            .map(|(n, agg)| Word {
                name: n.to_string(),
                agg,
            })
            .collect(),
        nvtx: r.nvtx.map(filter),
        roctx: r.roctx.map(filter),
        silent,
    })
}

/// Whether NVTX and ROCTX ranges are on.
pub(crate) fn tools() -> (bool, bool) {
    RANGES
        .get()
        .map_or((false, false), |m| (m.nvtx.is_some(), m.roctx.is_some()))
}

impl Metric for RangesMetric {
    fn name(&self) -> &'static str {
        "ranges"
    }

    fn words(&self) -> &[Word] {
        &self.words
    }

    fn stamped(&self) -> bool {
        true
    }

    fn stamper(&self, _tid: u32) -> Option<Box<dyn Stamper>> {
        Some(Box::new(ThreadRanges {
            nvtx: self.nvtx,
            roctx: self.roctx,
            silent: self.silent,
            names: UnsafeCell::new(Vec::new()),
        }))
    }
}

/// A thread's stamper.
struct ThreadRanges {
    nvtx: Option<Filter>,
    roctx: Option<Filter>,
    silent: bool,
    /// NUL-terminated routine names (interned, never freed) and their
    /// colours, by node index: looked up once per node.
    names: UnsafeCell<Vec<(*const c_char, u32)>>,
}

// SAFETY: `names` is touched only by the owning thread (stampers run on
// it); the pointers are to interned names that are never freed.
unsafe impl Sync for ThreadRanges {}
// SAFETY: as above.
unsafe impl Send for ThreadRanges {}

impl ThreadRanges {
    #[inline]
    fn name(&self, node: u32, seen: &Seen) -> (*const c_char, u32) {
        // SAFETY: owner thread only (see the `Sync` impl).
        let names = unsafe { &mut *self.names.get() };
        match names.get(node as usize) {
            Some(&(p, c)) if !p.is_null() => (p, c),
            _ => intern_into(names, node, seen.name),
        }
    }
}

/// Interns `name` (once per process) and caches it at `node`.
#[cold]
#[inline(never)]
fn intern_into(
    names: &mut Vec<(*const c_char, u32)>,
    node: u32,
    name: &str,
) -> (*const c_char, u32) {
    static TABLE: OnceLock<Mutex<HashMap<String, usize>>> = OnceLock::new();
    let mut t = TABLE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let p = *t.entry(name.to_string()).or_insert_with(|| {
        let c = CString::new(name.replace('\0', " ")).unwrap_or_default();
        Box::leak(c.into_boxed_c_str()).as_ptr() as usize
    }) as *const c_char;
    let entry = (p, colour(name));
    let i = node as usize;
    if names.len() <= i {
        names.resize(i + 1, (std::ptr::null(), 0));
    }
    names[i] = entry;
    entry
}

/// An opaque ARGB colour from the name (FNV-1a), bright enough to read a
/// black label on.
pub(crate) fn colour(name: &str) -> u32 {
    let h = name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    let c = (h ^ (h >> 32)) as u32;
    0xff00_0000 | (c & 0x00ff_ffff) | 0x0040_4040
}

fn note_nvtx(found: nvtx::Found, path: Option<String>) {
    let silent = RANGES.get().is_none_or(|m| m.silent);
    if silent || found == nvtx::Found::Tool {
        return;
    }
    let msg = match (found, path) {
        (nvtx::Found::Failed, Some(p)) => format!(
            "DRHOOK:NVTX: the NVTX tool '{p}' (NVTX_INJECTION64_PATH) could not be loaded or refused to attach: no ranges"
        ),
        (nvtx::Found::Failed, None) => {
            "DRHOOK:NVTX: the NVTX tool refused to attach: no ranges".to_string()
        }
        _ => "DRHOOK:NVTX: no NVTX tool attached (NVTX_INJECTION64_PATH unset): no ranges"
            .to_string(),
    };
    write_all(2, format!("{msg}\n").as_bytes());
}

fn note_roctx(found: bool) {
    if found {
        return;
    }
    write_all(
        2,
        b"DRHOOK:ROCTX: libroctx64.so could not be loaded (dlopen): no ranges\n",
    );
}

/// The reference's message, once per node and thread (the reference
/// prints it at every skipped call).
#[cold]
#[inline(never)]
fn note_skip(tool: &str, name: &str) {
    let mut l = LineBuf::new();
    l.str("DRHOOK:")
        .str(tool)
        .str(": Skipping opening of region ")
        .text(name);
    l.write_line(2);
}

impl Stamper for ThreadRanges {
    fn enter(&self, _node: u32, row: &[AtomicU64]) {
        row[OPEN].store(0, Ordering::Relaxed);
    }

    #[inline]
    fn enter_seen(&self, node: u32, row: &[AtomicU64], seen: &Seen) {
        let mut open = 0;
        if let Some(f) = self.nvtx {
            if f.skips(seen) {
                skipped(&row[NVTX_SKIPPED], self.silent, "NVTX", seen.name);
            } else {
                let (name, colour) = self.name(node, seen);
                if nvtx::push(name, colour, note_nvtx) {
                    open |= 1;
                }
            }
        }
        if let Some(f) = self.roctx {
            if f.skips(seen) {
                skipped(&row[ROCTX_SKIPPED], self.silent, "ROCTX", seen.name);
            } else if roctx::push(self.name(node, seen).0, note_roctx) {
                open |= 2;
            }
        }
        row[OPEN].store(open, Ordering::Relaxed);
    }

    #[inline]
    fn exit(&self, _node: u32, row: &[AtomicU64], _wall: u64) {
        let open = row[OPEN].load(Ordering::Relaxed);
        if open == 0 {
            return;
        }
        row[OPEN].store(0, Ordering::Relaxed);
        // The mirror of the enter's order.
        if open & 2 != 0 {
            roctx::pop();
        }
        if open & 1 != 0 {
            nvtx::pop();
        }
    }
}

#[inline]
fn skipped(word: &AtomicU64, silent: bool, tool: &str, name: &str) {
    let n = word.load(Ordering::Relaxed);
    word.store(n + 1, Ordering::Relaxed);
    if n == 0 && !silent {
        note_skip(tool, name);
    }
}

/// The ranges skipped by the filters, NVTX and ROCTX, from the profile's
/// rows (each row's own count: the word is an `Event`).
pub(crate) fn skipped_in<'a>(rows: impl Iterator<Item = &'a [u64]>) -> (u64, u64) {
    rows.fold((0, 0), |(a, b), w| {
        (
            a + w.get(NVTX_SKIPPED).copied().unwrap_or(0),
            b + w.get(ROCTX_SKIPPED).copied().unwrap_or(0),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(calls: u64, wall_incl: u64) -> Seen {
        Seen {
            calls,
            wall_incl,
            name: "x",
            depth: 1,
        }
    }

    #[test]
    fn the_filter_skips_frequent_short_regions_only() {
        let f = Filter {
            calls: 10,
            ticks: 100,
        };
        assert!(!f.skips(&seen(10, 0)), "up to the count, always a range");
        assert!(f.skips(&seen(11, 99)));
        assert!(!f.skips(&seen(11, 100)), "long enough: a range");
        assert!(!f.skips(&seen(1000, 5000)));
    }

    #[test]
    fn colours_are_opaque_and_stable() {
        assert_eq!(colour("abc"), colour("abc"));
        assert_eq!(colour("abc") >> 24, 0xff);
    }

    #[test]
    fn a_skipped_activation_is_counted_and_pops_nothing() {
        let t = ThreadRanges {
            nvtx: Some(Filter {
                calls: 0,
                ticks: u64::MAX,
            }),
            roctx: None,
            silent: true,
            names: UnsafeCell::new(Vec::new()),
        };
        let row: Vec<AtomicU64> = (0..3).map(|_| AtomicU64::new(0)).collect();
        t.enter_seen(3, &row, &seen(1, 0));
        t.exit(3, &row, 0);
        t.enter_seen(3, &row, &seen(2, 0));
        t.exit(3, &row, 0);
        assert_eq!(row[NVTX_SKIPPED].load(Ordering::Relaxed), 2);
        assert_eq!(row[OPEN].load(Ordering::Relaxed), 0);
    }
}
