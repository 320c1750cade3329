//! The process-wide state fixed at initialisation: the mode word that every
//! enter and exit reads, and the facts the reports need (configuration,
//! clocks at start-up, measured overhead, program name).
//!
//! `runtime` builds it once; everything else only reads it — never
//! initialising it — so that reading it is safe in a signal handler.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::config::Config;
use crate::sys::clock::{ClockPair, WallSource};
use crate::tree::bits;
use crate::tree::overhead::Overhead;

/// The mode word (see [`crate::tree::bits`]): `0` when Dr.Hook is off,
/// `UNINIT` before the environment has been read.
pub(crate) static MODE: AtomicU32 = AtomicU32::new(bits::UNINIT);
pub(crate) static ENGINE: OnceLock<Engine> = OnceLock::new();

/// State fixed at initialisation.
pub(crate) struct Engine {
    pub config: Config,
    pub mode: u32,
    pub wall_source: WallSource,
    /// (wall ticks, monotonic ns) at start-up.
    pub start: ClockPair,
    /// Unix time at start-up.
    pub start_unix: i64,
    pub overhead: Overhead,
    pub program: String,
}

/// The engine if it is initialised and on, without ever initialising it
/// (for signal handlers and report writers).
pub(crate) fn engine_if_ready() -> Option<&'static Engine> {
    let m = MODE.load(Ordering::Acquire);
    if m == 0 || m & bits::UNINIT != 0 {
        None
    } else {
        ENGINE.get()
    }
}
