//! The I/O profile's time base: the wrappers stamp calls with the cheap
//! [`ticks`]; the report and the per-routine events convert them to
//! nanoseconds with the rate measured since the decision (or the fork).

use std::sync::atomic::{AtomicU64, Ordering};

pub(super) use crate::sys::clock::{mono_ns, ticks};

use super::guard;

pub(super) static START_TICKS: AtomicU64 = AtomicU64::new(0);
static START_NS: AtomicU64 = AtomicU64::new(0);

/// Restarts the time base (the decision, a fork child).
pub(super) fn restart() {
    START_TICKS.store(ticks(), Ordering::Relaxed);
    START_NS.store(mono_ns(), Ordering::Relaxed);
}

/// `mono_ns()` at the process's start (or its fork).
pub(super) fn start_ns() -> u64 {
    START_NS.load(Ordering::Relaxed)
}

/// The nanoseconds of the interval `t0..t1` in ticks, with the cached
/// rate (0 for one that runs backwards, across processors): through
/// signed integers, whose conversions are one instruction each (an
/// interval fits in 63 bits).
#[inline(always)]
pub(super) fn interval_ns(t0: u64, t1: u64) -> u64 {
    let dt = (t1.wrapping_sub(t0) as i64).max(0);
    (dt as f64 * NS_PER_TICK.get()) as i64 as u64
}

/// Nanoseconds per tick as the wrappers use it.
pub(super) fn ns_per_tick_cached() -> f64 {
    NS_PER_TICK.get()
}

/// Nanoseconds per tick, from the stamps at the decision and now (1 for a
/// run too short to tell: never a wait).
pub(super) fn ns_per_tick() -> f64 {
    if cfg!(not(target_arch = "x86_64")) {
        return 1.0;
    }
    let dt = ticks().saturating_sub(START_TICKS.load(Ordering::Relaxed));
    let dn = mono_ns().saturating_sub(START_NS.load(Ordering::Relaxed));
    if dt == 0 || dn == 0 {
        return 1.0;
    }
    dn as f64 / dt as f64
}

/// A cached conversion factor for the per-routine nanoseconds (refreshed
/// now and then; exact figures are converted at the report).
pub(super) struct NsPerTick(AtomicU64);
pub(super) static NS_PER_TICK: NsPerTick = NsPerTick(AtomicU64::new(0));
impl NsPerTick {
    #[inline]
    pub(super) fn get(&self) -> f64 {
        let v = self.0.load(Ordering::Relaxed);
        if v != 0 {
            return f64::from_bits(v);
        }
        let r = guard(ns_per_tick).unwrap_or(1.0);
        // Only once the run is long enough to calibrate well.
        if mono_ns().saturating_sub(START_NS.load(Ordering::Relaxed)) > 50_000_000 {
            self.0.store(r.to_bits(), Ordering::Relaxed);
        }
        r
    }
}
