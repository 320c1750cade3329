//! Bits of the mode word: what every enter and exit does, fixed at
//! initialisation. The engine keeps the word in one relaxed atomic
//! (`setup::MODE`) and passes it down; the tree interprets it.

/// Dr.Hook is on: maintain the calling tree and count calls.
pub const ON: u32 = 1;
/// Read the wall clock at enter and exit.
pub const WALL: u32 = 2;
/// Read the thread CPU clock at enter and exit.
pub const CPU: u32 = 4;
/// Record size information.
pub const SIZES: u32 = 8;
/// The wall clock is `CLOCK_MONOTONIC` rather than the TSC.
pub const WALL_MONO: u32 = 16;
/// A metric is read at every enter and exit (`crate::metrics`: the
/// counters of `hpmprof`).
pub const METRICS: u32 = 64;
/// Anything is read at enter and exit.
pub const TIMED: u32 = WALL | CPU | METRICS;
/// Something read through a function call (CPU time, the monotonic wall
/// clock, metrics) rather than one instruction: the out-of-line path.
pub const SYSCALL_CLOCKS: u32 = CPU | WALL_MONO | METRICS;
/// `DR_HOOK_STRICT_REGIONS`: foreign exits must name the routine they leave.
pub const STRICT: u32 = 32;
/// A stamper that must stay behind the foreign entry points' panic guard
/// (the counters, the trace, the watch-point checks). Without this bit,
/// `METRICS` alone (the memory metric, whose stamper cannot panic) lets
/// the entry points' slow path try the stamped path before the guard
/// (`ThreadData::enter_handle_stamped`), and only the guard-free stampers
/// run.
pub const SLOW_STAMPS: u32 = 128;
/// What closes the stamped path: a clock read through a call, or a
/// stamper that needs the panic guard.
pub const OUT_OF_LINE: u32 = CPU | WALL_MONO | SLOW_STAMPS;
/// The environment has not been read yet.
pub const UNINIT: u32 = 1 << 31;
