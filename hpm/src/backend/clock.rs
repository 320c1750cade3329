//! Wall-clock source for section timing (a trait so tests can drive time).

/// Monotonic nanoseconds since an arbitrary, fixed origin.
pub trait Clock: Send + Sync {
    /// Current time in nanoseconds.
    fn now_ns(&self) -> u64;
}

/// `CLOCK_MONOTONIC` (vDSO, no syscall); its own origin, so that nothing
/// is initialised on first use (a `fork` child must never find such a
/// state half set by a thread it does not have).
#[derive(Debug, Default, Clone, Copy)]
pub struct MonotonicClock;

impl Clock for MonotonicClock {
    #[inline]
    fn now_ns(&self) -> u64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid pointer to a timespec.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }
}
