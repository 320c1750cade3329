//! The clocks of the interposed calls: a cheap time stamp ([`ticks`]) for
//! the calls' durations and the monotonic clock ([`mono_ns`]) that
//! calibrates it.

/// A cheap time stamp (the time-stamp counter on x86-64, else ns).
#[inline(always)]
pub fn ticks() -> u64 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: rdtsc has no preconditions.
    unsafe {
        std::arch::x86_64::_rdtsc()
    }
    #[cfg(not(target_arch = "x86_64"))]
    mono_ns()
}

/// `CLOCK_MONOTONIC` in nanoseconds.
pub fn mono_ns() -> u64 {
    // SAFETY: plain data written by the call.
    let mut t: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}
