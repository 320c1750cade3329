//! The `malloc` family, for the memory profile of programs that were not
//! written for it (`DR_HOOK_OPT=memprof` under `drhook run`): `malloc`,
//! `calloc`, `realloc`, `reallocarray`, `free`, `posix_memalign`,
//! `aligned_alloc`, `memalign`, `valloc`, `pvalloc` and
//! `malloc_usable_size`. C++ `operator new`/`delete` (libstdc++ calls
//! `malloc`, `aligned_alloc` and `free`) and Fortran `ALLOCATE`
//! (libgfortran calls `malloc`) come through them.
//!
//! Whether blocks are tracked is decided once, at the first call, from the
//! environment (`DR_HOOK` on and a memory token in `DR_HOOK_OPT`), and
//! never changes: a tracked block carries a 16-byte header
//! (`drhook::__private::mem::Header`: its size with a tag, and the
//! allocating routine's leak word), so `free` must know that every block
//! it is given has one. Untracked, each function is one load and a jump to
//! the real one.
//!
//! The real functions are found with `dlsym`, which may itself allocate:
//! an allocation made while the lookup is in progress (or before it could
//! be made) is served from a small static arena, whose blocks `free`
//! recognises by address and ignores.
//!
//! * this file — the real functions' [`Source`] and the decision;
//! * `header` — a tracked block's header;
//! * `arena` — the early arena;
//! * `api` — the functions' bodies;
//! * `exports` — the exported symbols (`__interpose_alloc!`).

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicU8, Ordering};

mod api;
mod arena;
mod exports;
mod header;

pub use api::*;

use crate::sys::env::dr_hook_opt_has;

/// `malloc`, `valloc`, `pvalloc`.
pub type MallocFn = unsafe extern "C" fn(usize) -> *mut c_void;
/// `free`.
pub type FreeFn = unsafe extern "C" fn(*mut c_void);
/// `calloc`.
pub type CallocFn = unsafe extern "C" fn(usize, usize) -> *mut c_void;
/// `realloc`.
pub type ReallocFn = unsafe extern "C" fn(*mut c_void, usize) -> *mut c_void;
/// `malloc_usable_size`.
pub type UsableFn = unsafe extern "C" fn(*mut c_void) -> usize;

/// Where the real functions come from (the preload library: `dlsym`; the
/// `--wrap` library: `__real_<name>`).
pub trait Source {
    /// The real `malloc` (None while it cannot be had yet).
    fn malloc() -> Option<MallocFn>;
    /// The real `free`.
    fn free() -> Option<FreeFn>;
    /// The real `calloc`.
    fn calloc() -> Option<CallocFn>;
    /// The real `realloc`.
    fn realloc() -> Option<ReallocFn>;
    /// The real `malloc_usable_size`.
    fn usable() -> Option<UsableFn>;
    /// The real `posix_memalign`.
    fn posix_memalign() -> Option<PosixMemalignFn>;
    /// The real `aligned_alloc`.
    fn aligned_alloc() -> Option<MemalignFn>;
    /// The real `memalign`.
    fn memalign() -> Option<MemalignFn>;
    /// The real `valloc`.
    fn valloc() -> Option<MallocFn>;
    /// The real `pvalloc`.
    fn pvalloc() -> Option<MallocFn>;
}

/// `posix_memalign`.
pub type PosixMemalignFn = unsafe extern "C" fn(*mut *mut c_void, usize, usize) -> c_int;
/// `aligned_alloc`, `memalign`.
pub type MemalignFn = unsafe extern "C" fn(usize, usize) -> *mut c_void;

/// The real functions of the preload library (`dlsym(RTLD_NEXT)`, once).
pub struct Preload;

macro_rules! preload_real {
    ($f:ident, $name:literal, $ty:ty) => {
        #[inline]
        fn $f() -> Option<$ty> {
            static R: crate::real::Real = crate::real::Real::new($name);
            R.get().map(|p| {
                // SAFETY: the next definition of the function of that name.
                unsafe { std::mem::transmute::<*mut c_void, $ty>(p) }
            })
        }
    };
}

impl Source for Preload {
    preload_real!(malloc, c"malloc", MallocFn);
    preload_real!(free, c"free", FreeFn);
    preload_real!(calloc, c"calloc", CallocFn);
    preload_real!(realloc, c"realloc", ReallocFn);
    preload_real!(usable, c"malloc_usable_size", UsableFn);
    preload_real!(posix_memalign, c"posix_memalign", PosixMemalignFn);
    preload_real!(aligned_alloc, c"aligned_alloc", MemalignFn);
    preload_real!(memalign, c"memalign", MemalignFn);
    preload_real!(valloc, c"valloc", MallocFn);
    preload_real!(pvalloc, c"pvalloc", MallocFn);
}

// --- the decision -----------------------------------------------------------

const UNDECIDED: u8 = 0;
const OFF: u8 = 1;
const TRACK: u8 = 2;

static MODE: AtomicU8 = AtomicU8::new(UNDECIDED);

/// Whether blocks are tracked (decided at the first call).
#[inline(always)]
pub(super) fn tracking<S: Source>() -> bool {
    match MODE.load(Ordering::Relaxed) {
        TRACK => true,
        OFF => false,
        _ => decide::<S>(),
    }
}

#[cold]
#[inline(never)]
fn decide<S: Source>() -> bool {
    let track = wanted_by_environment();
    let m = if track { TRACK } else { OFF };
    // The first decision wins (two threads cannot be here before `main`,
    // but a race would otherwise give blocks with and without headers).
    let track = match MODE.compare_exchange(UNDECIDED, m, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => track,
        Err(other) => return other == TRACK,
    };
    // Every real function now: a lookup later (`dlsym` allocates and
    // frees) would count in the routine that first calls the function.
    // Calls made by the lookups see the decision already taken.
    let _ = (
        S::malloc(),
        S::free(),
        S::calloc(),
        S::realloc(),
        S::usable(),
    );
    let _ = (S::posix_memalign(), S::aligned_alloc(), S::memalign());
    let _ = (S::valloc(), S::pvalloc());
    track
}

/// `DR_HOOK` on and a memory token in `DR_HOOK_OPT` (the engine's own
/// parsing decides the rest; this only decides whether blocks get
/// headers).
fn wanted_by_environment() -> bool {
    dr_hook_opt_has(&[
        b"MEMPROF", b"MEM", b"MEMORY", b"HWM", b"HEAP", b"STK", b"STACK", b"RSS", b"PAG",
        b"PAGING", b"ALL",
    ])
}
