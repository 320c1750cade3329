//! Clocks: raw cycles for wall time, per-thread CPU time, and the conversion
//! of cycles to seconds (done once, at report time).
//!
//! The hot path stores raw counter values; nothing is converted per call.
//! Wall time uses the time-stamp counter (`rdtsc`, one instruction, no
//! syscall) when the CPU reports an invariant TSC, and the vDSO
//! `CLOCK_MONOTONIC` otherwise (or when `DRHOOK_CLOCK=monotonic`). The TSC
//! rate is measured over the whole run: the engine records a
//! (TSC, `CLOCK_MONOTONIC`) pair at start-up and another one when a report is
//! made. CPU time is `CLOCK_THREAD_CPUTIME_ID`: per thread, nanosecond
//! resolution, one syscall per read.

/// Which counter wall-time readings come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WallSource {
    /// The time-stamp counter (cycles).
    Tsc,
    /// `CLOCK_MONOTONIC` in nanoseconds.
    Monotonic,
}

impl WallSource {
    /// Name printed in diagnostics.
    pub fn name(self) -> &'static str {
        match self {
            WallSource::Tsc => "tsc",
            WallSource::Monotonic => "monotonic",
        }
    }
}

/// Reads the raw cycle counter (or monotonic nanoseconds where there is none).
#[inline(always)]
pub fn cycles() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: `rdtsc` is available on every x86_64 CPU and has no
        // memory effects.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(target_arch = "aarch64")]
    {
        let v: u64;
        // SAFETY: reading the virtual counter register is allowed from EL0
        // on Linux and has no side effects.
        unsafe { core::arch::asm!("mrs {}, cntvct_el0", out(reg) v, options(nomem, nostack)) };
        v
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        monotonic_ns()
    }
}

/// Reads the configured wall clock: `monotonic` selects `CLOCK_MONOTONIC`.
#[inline(always)]
pub fn wall(monotonic: bool) -> u64 {
    if monotonic { monotonic_ns() } else { cycles() }
}

#[inline(always)]
fn clock_ns(id: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock ids used here
    // exist on every Linux kernel this crate supports.
    unsafe { libc::clock_gettime(id, &mut ts) };
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

/// `CLOCK_MONOTONIC` in nanoseconds (vDSO, no syscall).
#[inline(always)]
pub fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// CPU time consumed by the calling thread, in nanoseconds.
#[inline(always)]
pub fn thread_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// CPU time consumed by another thread of this process (by kernel tid),
/// in nanoseconds; `None` if the thread is gone.
pub fn thread_cpu_ns_of(unix_tid: i32) -> Option<u64> {
    // Linux encodes a per-thread CPU clock as MAKE_THREAD_CPUCLOCK(tid, SCHED).
    let clk: libc::clockid_t = ((!unix_tid) << 3) | 6;
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid out-pointer; an invalid clock id only yields an error.
    let rc = unsafe { libc::clock_gettime(clk, &mut ts) };
    (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

/// `CLOCK_REALTIME` as (seconds, nanoseconds) since the epoch.
pub fn realtime() -> (i64, u32) {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: as in `clock_ns`.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    #[allow(clippy::unnecessary_cast)] // time_t is 32-bit on some targets
    (ts.tv_sec as i64, ts.tv_nsec as u32)
}

/// Whether the CPU declares an invariant time-stamp counter (constant rate,
/// running in every power state), which makes it usable as a wall clock.
pub fn tsc_is_invariant() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::__cpuid;
        let max_ext = __cpuid(0x8000_0000).eax;
        if max_ext < 0x8000_0007 {
            return false;
        }
        let edx = __cpuid(0x8000_0007).edx;
        edx & (1 << 8) != 0
    }
    #[cfg(target_arch = "aarch64")]
    {
        true
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        false
    }
}

/// A simultaneous reading of the wall counter and `CLOCK_MONOTONIC`.
#[derive(Clone, Copy, Debug)]
pub struct ClockPair {
    /// Wall counter value.
    pub ticks: u64,
    /// `CLOCK_MONOTONIC` nanoseconds.
    pub ns: u64,
}

impl ClockPair {
    /// Reads both clocks, keeping the tightest of a few attempts.
    pub fn now(source: WallSource) -> ClockPair {
        if source == WallSource::Monotonic {
            let ns = monotonic_ns();
            return ClockPair { ticks: ns, ns };
        }
        let mut best = (u64::MAX, ClockPair { ticks: 0, ns: 0 });
        for _ in 0..5 {
            let a = cycles();
            let ns = monotonic_ns();
            let b = cycles();
            if b.wrapping_sub(a) < best.0 {
                best = (
                    b.wrapping_sub(a),
                    ClockPair {
                        ticks: a / 2 + b / 2,
                        ns,
                    },
                );
            }
        }
        best.1
    }
}

/// Wall-counter ticks per second between two pairs.
pub fn ticks_per_second(source: WallSource, start: ClockPair, end: ClockPair) -> f64 {
    if source == WallSource::Monotonic {
        return 1e9;
    }
    let dns = end.ns.saturating_sub(start.ns);
    let dticks = end.ticks.saturating_sub(start.ticks);
    if dns < 1_000 || dticks == 0 {
        // Too short to measure: take a short, dedicated interval.
        let a = ClockPair::now(source);
        while monotonic_ns().saturating_sub(a.ns) < 2_000_000 {
            std::hint::spin_loop();
        }
        let b = ClockPair::now(source);
        return (b.ticks.saturating_sub(a.ticks)) as f64 * 1e9
            / (b.ns.saturating_sub(a.ns)).max(1) as f64;
    }
    dticks as f64 * 1e9 / dns as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clocks_advance() {
        let a = cycles();
        let c0 = thread_cpu_ns();
        let mut x = 0u64;
        for i in 0..200_000u64 {
            x = x.wrapping_add(std::hint::black_box(i));
        }
        std::hint::black_box(x);
        assert!(cycles() > a);
        assert!(thread_cpu_ns() > c0);
    }

    #[test]
    fn thread_cpu_time_is_per_thread_and_fine_grained() {
        let before = thread_cpu_ns();
        // Another thread burns CPU; ours sleeps.
        std::thread::spawn(|| {
            let t = std::time::Instant::now();
            while t.elapsed().as_millis() < 30 {
                std::hint::spin_loop();
            }
        })
        .join()
        .unwrap();
        let used = thread_cpu_ns() - before;
        assert!(
            used < 20_000_000,
            "this thread's CPU time must not include the other thread's 30 ms: {used} ns"
        );
        // Sub-millisecond resolution: the first change of the clock seen
        // by a busy loop is small (a tick-based clock jumps by a tick,
        // 1 ms or more). CPU time, so a preempted loop changes nothing.
        let a = thread_cpu_ns();
        let mut b = a;
        while b == a {
            std::hint::spin_loop();
            b = thread_cpu_ns();
        }
        assert!(b - a < 1_000_000, "the clock moved by {} ns at once", b - a);
    }

    #[test]
    fn rate_is_plausible() {
        let src = if tsc_is_invariant() {
            WallSource::Tsc
        } else {
            WallSource::Monotonic
        };
        let a = ClockPair::now(src);
        std::thread::sleep(std::time::Duration::from_millis(20));
        let b = ClockPair::now(src);
        let hz = ticks_per_second(src, a, b);
        assert!(hz > 1e8 && hz < 1e11, "{hz}");
    }
}
