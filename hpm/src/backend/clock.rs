//! Wall-clock source for section timing (a trait so tests can drive time).

use std::sync::OnceLock;
use std::time::Instant;

/// Monotonic nanoseconds since an arbitrary, fixed origin.
pub trait Clock: Send + Sync {
    /// Current time in nanoseconds.
    fn now_ns(&self) -> u64;
}

/// `CLOCK_MONOTONIC` through `Instant` (vDSO, no syscall).
#[derive(Debug, Default, Clone, Copy)]
pub struct MonotonicClock;

fn origin() -> Instant {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    *ORIGIN.get_or_init(Instant::now)
}

impl Clock for MonotonicClock {
    #[inline]
    fn now_ns(&self) -> u64 {
        origin().elapsed().as_nanos() as u64
    }
}
