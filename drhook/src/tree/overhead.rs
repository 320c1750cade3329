//! Measuring the instrumentation's own cost, so it can be reported (the
//! header's "Instrumentation overhead" line, `$drhook` rows) and removed
//! from the routines' times.
//!
//! Measuring the cost of every call would need two more clock reads per
//! call and double the cost of the profile. Instead the engine measures it
//! once, in the configured mode, on a private tree that uses the same code
//! path as real calls, when the first profile is written ([`Measured`]: a
//! process that writes no profile never pays for it, and one that made few
//! calls pays little — measuring at start-up was most of what a short
//! process spent on Dr.Hook): the best of several batches of enter/exit
//! pairs of an empty region gives
//! * `out`: the cost of one pair as seen by the caller, and
//! * `in_`: the part of it that falls inside the region's own measured time.
//!
//! At report time, with `c` calls of a node and `d` calls below it, the
//! node's inclusive time is reduced by `c·in_ + d·out` (never below zero),
//! so an empty routine shows zero self time and a parent is not charged for
//! its children's instrumentation. `DR_HOOK_OPT=noself` turns this off.
//! With `hpmprof` the pair's two counter reads are part of the cost: the
//! calibration's tree reads the counters too.

use std::hint::black_box;
use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};

use super::bits;
use super::site::{CALIBRATION_ID, Site};
use super::thread::ThreadData;
use crate::sys::clock::{self, ClockPair, WallSource};

/// Measured cost per enter/exit pair.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Overhead {
    /// Wall ticks per pair seen by the caller.
    pub wall_out: f64,
    /// Wall ticks per pair inside the region.
    pub wall_in: f64,
    /// CPU nanoseconds per pair seen by the caller.
    pub cpu_out: f64,
    /// CPU nanoseconds per pair inside the region.
    pub cpu_in: f64,
    /// Rough nanoseconds per wall tick (for start-up messages only).
    pub tick_ns: f64,
}

impl Overhead {
    /// Human-readable summary for the start-up message.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.wall_out > 0.0 {
            parts.push(format!(
                "wall {:.1} ns ({:.1} ns inside the region)",
                self.wall_out * self.tick_ns,
                self.wall_in * self.tick_ns
            ));
        }
        if self.cpu_out > 0.0 {
            parts.push(format!(
                "cpu {:.0} ns ({:.0} ns inside the region)",
                self.cpu_out, self.cpu_in
            ));
        }
        parts.join(", ")
    }
}

/// The overhead of a mode, measured at its first use and kept.
///
/// Plain atomics rather than a `OnceLock`: a profile may be written by the
/// crash path's forked copy of the process, where a lock held by a thread
/// of the parent that was measuring would never be released. Two threads
/// that measure at once both measure; the first to finish is kept.
pub(crate) struct Measured {
    /// 0: not measured, 1: being stored, 2: stored.
    state: AtomicU8,
    /// Pairs per batch of the stored measure.
    pairs: AtomicU32,
    values: [AtomicU64; 5],
}

impl Measured {
    pub(crate) const fn new() -> Self {
        Self {
            state: AtomicU8::new(0),
            pairs: AtomicU32::new(0),
            values: [const { AtomicU64::new(0) }; 5],
        }
    }

    /// The overhead of `mode` for a profile of `calls` calls, measured now
    /// if it never was, or was measured for a smaller profile; `true` with
    /// it when this call measured it.
    ///
    /// The measurement's effort follows what it corrects (see
    /// [`pairs_for`]): the profile of a process that made a handful of
    /// calls is corrected by nanoseconds, and a short process should not
    /// spend more on measuring than its profile shows.
    pub(crate) fn get(&self, mode: u32, calls: u64) -> (Overhead, bool) {
        let pairs = pairs_for(calls);
        if self.state.load(Ordering::Acquire) == 2
            && u64::from(self.pairs.load(Ordering::Relaxed)) >= u64::from(pairs)
        {
            let v = |i: usize| f64::from_bits(self.values[i].load(Ordering::Relaxed));
            return (
                Overhead {
                    wall_out: v(0),
                    wall_in: v(1),
                    cpu_out: v(2),
                    cpu_in: v(3),
                    tick_ns: v(4),
                },
                false,
            );
        }
        let o = if mode & (bits::WALL | bits::CPU) != 0 {
            calibrate(mode, pairs)
        } else {
            Overhead::default()
        };
        let prior = self.state.load(Ordering::Acquire);
        if prior != 1
            && self
                .state
                .compare_exchange(prior, 1, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            let all = [o.wall_out, o.wall_in, o.cpu_out, o.cpu_in, o.tick_ns];
            for (slot, v) in self.values.iter().zip(all) {
                slot.store(v.to_bits(), Ordering::Relaxed);
            }
            self.pairs.store(pairs, Ordering::Relaxed);
            self.state.store(2, Ordering::Release);
        }
        (o, true)
    }
}

/// Enter/exit pairs per timed batch for a profile of `calls` calls: a
/// quarter of them, from 16 to 256 (the full measurement: 5 batches of 256
/// wall-clock pairs, about 0.05 ms).
pub(crate) fn pairs_for(calls: u64) -> u32 {
    (calls / 4).clamp(16, 256) as u32
}

static CALIBRATION_SITE: Site = Site::new("$drhook:calibration", "", 0);

/// Out of line, as the engine's real enter (see `engine::enter`).
#[inline(never)]
fn cal_enter(td: &ThreadData, mode: u32) -> *const super::node::Node {
    // SAFETY: `td` is a private tree used only by this thread.
    unsafe { td.enter(&CALIBRATION_SITE, CALIBRATION_ID, mode) }
}

#[inline(never)]
fn cal_exit(td: &ThreadData, t: *const super::node::Node, mode: u32) {
    // SAFETY: as above.
    unsafe { td.exit(t, 0, mode) }
}

fn batch(
    td: &ThreadData,
    mode: u32,
    n: u32,
    now: &dyn Fn() -> u64,
    incl: &dyn Fn(&ThreadData) -> u64,
) -> (f64, f64) {
    let before = incl(td);
    let t0 = now();
    for _ in 0..n {
        let t = cal_enter(black_box(td), mode);
        cal_exit(td, black_box(t), mode);
    }
    let t1 = now();
    (
        t1.saturating_sub(t0) as f64 / n as f64,
        incl(td).saturating_sub(before) as f64 / n as f64,
    )
}

fn best_of(
    td: &ThreadData,
    mode: u32,
    n: u32,
    batches: u32,
    now: &dyn Fn() -> u64,
    incl: &dyn Fn(&ThreadData) -> u64,
) -> (f64, f64) {
    batch(td, mode, n / 4 + 1, now, incl); // warm-up
    let mut best = (f64::MAX, 0.0);
    for _ in 0..batches {
        let b = batch(td, mode, n, now, incl);
        if b.0 < best.0 {
            best = b;
        }
    }
    (best.0, best.1.min(best.0))
}

fn node_total(td: &ThreadData, f: fn(&super::node::Node) -> u64) -> u64 {
    (1..td.arena.len())
        .filter_map(|i| td.arena.get(i))
        .map(f)
        .sum()
}

/// A private tree with the counters' stamper (`hpmprof`), if they are
/// counted and can be opened on this thread.
fn counted_tree(mode: u32) -> Option<Box<ThreadData>> {
    if mode & bits::METRICS == 0 {
        return None;
    }
    let layout = crate::metrics::layout();
    let c = layout.find("counters")?;
    let stamper = crate::metrics::PlacedStamper {
        offset: c.offset,
        len: c.len,
        fast: c.metric.stamps_on_fast_paths(),
        stamper: c.metric.stamper(0)?,
    };
    Some(ThreadData::with_metrics(
        0,
        0,
        0,
        layout.width,
        vec![stamper],
    ))
}

/// Measures the cost of an enter/exit pair in `mode`, in batches of
/// `pairs` (CPU time, two system calls per pair: at most 100).
pub(crate) fn calibrate(mode: u32, pairs: u32) -> Overhead {
    // A private tree (never registered) with the same code as real calls;
    // with `hpmprof` it reads the counters as real calls do (a group
    // opened for this thread, closed when the tree is dropped), so that
    // their reads are part of the measured cost.
    let td = counted_tree(mode).unwrap_or_else(|| ThreadData::new(0, 0, 0));
    let mono = mode & bits::WALL_MONO != 0;
    let source = if mono {
        WallSource::Monotonic
    } else {
        WallSource::Tsc
    };
    let a = ClockPair::now(source);
    let mut o = Overhead::default();
    if mode & bits::WALL != 0 {
        let (out, inn) = best_of(&td, mode, pairs, 5, &|| clock::wall(mono), &|t| {
            node_total(t, |n| n.wall_incl.load(Ordering::Relaxed))
        });
        o.wall_out = out;
        o.wall_in = inn;
    }
    if mode & bits::CPU != 0 {
        let (out, inn) = best_of(&td, mode, pairs.min(100), 5, &clock::thread_cpu_ns, &|t| {
            node_total(t, |n| n.cpu_incl.load(Ordering::Relaxed))
        });
        o.cpu_out = out;
        o.cpu_in = inn;
    }
    let b = ClockPair::now(source);
    let dticks = b.ticks.saturating_sub(a.ticks).max(1);
    o.tick_ns = b.ns.saturating_sub(a.ns) as f64 / dticks as f64;
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calibration_is_positive_and_bounded() {
        let src_mono = !clock::tsc_is_invariant();
        let mut mode = bits::ON | bits::WALL | bits::CPU;
        if src_mono {
            mode |= bits::WALL_MONO;
        }
        let o = calibrate(mode, pairs_for(u64::MAX));
        assert!(
            o.wall_out > 0.0 && o.wall_in >= 0.0 && o.wall_in <= o.wall_out,
            "{o:?}"
        );
        assert!(o.cpu_out > 0.0 && o.cpu_in <= o.cpu_out, "{o:?}");
        // A pair costs far less than 100 microseconds even with two syscalls.
        assert!(o.wall_out * o.tick_ns < 100_000.0, "{o:?}");
        assert!(!o.describe().is_empty());
    }

    #[test]
    fn measured_once_then_kept() {
        let m = Measured::new();
        let mode = bits::ON | bits::WALL | bits::WALL_MONO;
        let (a, fresh) = m.get(mode, 10);
        assert!(fresh && a.wall_out > 0.0, "{a:?}");
        let (b, again) = m.get(mode, 64);
        assert!(!again, "a measure of 16 pairs serves up to 64 calls");
        assert_eq!(a, b);
        // A bigger profile is measured again, with more pairs, and kept.
        let (c, fresh) = m.get(mode, 1_000_000);
        assert!(fresh && c.wall_out > 0.0, "{c:?}");
        assert_eq!(m.get(mode, 1_000), (c, false));
        assert_eq!(
            Measured::new().get(bits::ON, 1),
            (Overhead::default(), true)
        );
        assert_eq!(
            (pairs_for(0), pairs_for(400), pairs_for(u64::MAX)),
            (16, 100, 256)
        );
    }
}
