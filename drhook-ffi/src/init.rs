//! The one-time set-up every front door runs before its first call reaches
//! the engine: the OpenMP thread-number hint, the engine's environment
//! (`DR_HOOK`, ...), the reference's MPI assertion and the C switch
//! `drhook_lhook`.

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
        _ => init_cold(false),
    }
}

/// [`ensure`] for the Fortran front doors (`DR_HOOK`, `DR_HOOK_INIT`):
/// the first call of the process, when it is a Fortran one, also makes
/// the reference's MPI assertion, which lives in its Fortran
/// `DR_HOOK_INIT` (C macros and compiler hooks, which the reference's
/// assertion never sees, do not make it: an instrumented `main` is always
/// entered before `MPI_Init`).
#[inline]
pub fn ensure_fortran() -> bool {
    match STATE.load(Ordering::Acquire) {
        ON => true,
        OFF => false,
        _ => init_cold(true),
    }
}

#[cold]
#[inline(never)]
fn init_cold(fortran: bool) -> bool {
    // Before the engine numbers any thread.
    crate::omp::install_thread_hint();
    // The reference's default for Fortran and C codes (the engine's,
    // started from Rust, leaves the floating-point environment alone).
    drhook::signals::trap_fpe_by_default(true);
    let on = drhook::is_enabled();
    // As the reference's DR_HOOK_INIT, whether Dr.Hook is on or not.
    if fortran {
        crate::mpi_assert::check();
    }
    set_lhook(on);
    STATE.store(if on { ON } else { OFF }, Ordering::Release);
    on
}

/// When the library is loaded: the preload and wrap libraries start the
/// engine from the lifecycle layer (before `main`), not through
/// [`ensure`]; they too keep the reference's default floating-point traps.
extern "C" fn reference_defaults() {
    drhook::signals::trap_fpe_by_default(true);
}

#[used]
#[unsafe(link_section = ".init_array")]
static REFERENCE_DEFAULTS: extern "C" fn() = reference_defaults;
