//! The one-time set-up every front door runs before its first call reaches
//! the engine: the OpenMP thread-number hint, the engine's environment
//! (`DR_HOOK`, ...) and the C switch `drhook_lhook`.

use std::sync::atomic::{AtomicU8, Ordering};

use crate::switch::set_lhook;

const UNKNOWN: u8 = 0;
const ON: u8 = 1;
const OFF: u8 = 2;

static STATE: AtomicU8 = AtomicU8::new(UNKNOWN);

/// Whether Dr.Hook is on, initialising everything on the first call. Cheap
/// after the first call (one load).
#[inline]
pub fn ensure() -> bool {
    match STATE.load(Ordering::Acquire) {
        ON => true,
        OFF => false,
        _ => init_cold(),
    }
}

#[cold]
#[inline(never)]
fn init_cold() -> bool {
    // Before the engine numbers any thread.
    crate::omp::install_thread_hint();
    let on = drhook::is_enabled();
    set_lhook(on);
    STATE.store(if on { ON } else { OFF }, Ordering::Release);
    on
}
