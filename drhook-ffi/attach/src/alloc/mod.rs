//! The `malloc` family, for the memory profile of programs that were not
//! written for it (`DR_HOOK_OPT=memprof` under `drhook run`): `malloc`,
//! `calloc`, `realloc`, `reallocarray`, `free`, `posix_memalign`,
//! `aligned_alloc`, `memalign`, `valloc`, `pvalloc` and
//! `malloc_usable_size`. C++ `operator new`/`delete` (libstdc++ calls
//! `malloc`, `aligned_alloc` and `free`) and Fortran `ALLOCATE`
//! (libgfortran calls `malloc`) come through them.
//!
//! Whether blocks are tracked is decided once, at the first call, from the
//! environment (`DR_HOOK` on and a memory token in `DR_HOOK_OPT`) and the
//! allocator, and never changes: a tracked block carries a 16-byte header
//! (`drhook::__private::mem::Header`: its size with a tag, and the
//! allocating routine's leak word), so `free` must know that every block
//! it is given has one. Untracked, `malloc`, `calloc`, `free` and
//! `realloc` are four instructions (a load of the library's own
//! [`Shortcuts`], a test, a branch and the jump to the real one: +4
//! instructions a call, BENCHMARKS.md "Speed targets (issue 29)"); the
//! others load and compare the decision first.
//!
//! The header scheme needs the C library's allocator: an allocator with
//! its own functions on `malloc`'s blocks (jemalloc's `sallocx`,
//! `dallocx`, ...), or any `malloc` that is not glibc's, would be handed
//! addresses 16 bytes into its blocks. With such an allocator the blocks
//! get no header and allocations are only counted (`foreign`: the
//! detection and its one message); under AddressSanitizer, whose checks
//! need its own blocks, the functions pass through untracked.
//!
//! The real functions are found with `dlsym`, which may itself allocate:
//! an allocation made while the lookup is in progress (or before it could
//! be made) is served from a small static arena, whose blocks `free`
//! recognises by address and ignores.
//!
//! * this file — the real functions' [`Source`] and the decision;
//! * `foreign` — allocators the header cannot serve;
//! * `header` — a tracked block's header;
//! * `arena` — the early arena;
//! * `api` — the functions' bodies;
//! * `exports` — the exported symbols (`__interpose_alloc!`).

use std::ffi::{CStr, c_int, c_void};
use std::sync::atomic::{AtomicPtr, AtomicU8, Ordering};

mod api;
mod arena;
mod exports;
mod foreign;
mod header;

pub use api::*;

use crate::sys::env::dr_hook_opt_has;
use crate::sys::{errno, set_errno};

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
    /// The file the real `malloc` is defined in, when that can be told
    /// (the preload library: `dladdr`; a static program cannot).
    fn malloc_file() -> Option<&'static CStr> {
        None
    }
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

    fn malloc_file() -> Option<&'static CStr> {
        let f = Self::malloc()?;
        // SAFETY: plain data that dladdr fills in.
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        // SAFETY: dladdr only reads the address (it takes the loader's
        // lock and allocates nothing).
        if unsafe { libc::dladdr(f as *const c_void, &mut info) } == 0 || info.dli_fname.is_null() {
            return None;
        }
        // SAFETY: the loader's name of a loaded object, which stays
        // loaded (the real `malloc` is in it).
        Some(unsafe { CStr::from_ptr(info.dli_fname) })
    }
}

// --- the decision -----------------------------------------------------------

const UNDECIDED: u8 = 0;
/// A thread is deciding (its look-ups may allocate): the allocations made
/// meanwhile come from the early arena.
const DECIDING: u8 = 1;
/// Untracked: every function is the real one.
pub(super) const OFF: u8 = 2;
/// Tracked: blocks with a header.
pub(super) const TRACK: u8 = 3;
/// Counted: no header, allocations counted where their size is known.
pub(super) const COUNT: u8 = 4;

static MODE: AtomicU8 = AtomicU8::new(UNDECIDED);

/// Untracked (`OFF`, decided): the real `malloc`, `calloc`, `free` and
/// `realloc`, which the exported wrappers (`__interpose_alloc!`, where
/// they are statics of the library itself, read without the GOT) jump to
/// after one load and one test; null: decide, track, count, or the early
/// arena. `free` and `realloc` only while no block of the early arena
/// exists: the real functions cannot be given one.
///
/// Tracked (`TRACK`, decided): `tracked_malloc` and `tracked_free`, the
/// real `malloc` and `free` handed to the tracked paths
/// ([`api::malloc_tracked`], [`api::free_tracked`]), which then load
/// neither the real function nor the mode again.
pub struct Shortcuts {
    malloc: AtomicPtr<c_void>,
    calloc: AtomicPtr<c_void>,
    free: AtomicPtr<c_void>,
    realloc: AtomicPtr<c_void>,
    tracked_malloc: AtomicPtr<c_void>,
    tracked_free: AtomicPtr<c_void>,
}

macro_rules! shortcut {
    ($f:ident, $ty:ty) => {
        /// The real function when untracked (None: the full path).
        #[inline(always)]
        pub fn $f(&self) -> Option<$ty> {
            let p = self.$f.load(Ordering::Relaxed);
            // SAFETY: only the real function of this type is stored there.
            (!p.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, $ty>(p) })
        }
    };
}

impl Shortcuts {
    /// None yet.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Shortcuts {
        Shortcuts {
            malloc: AtomicPtr::new(std::ptr::null_mut()),
            calloc: AtomicPtr::new(std::ptr::null_mut()),
            free: AtomicPtr::new(std::ptr::null_mut()),
            realloc: AtomicPtr::new(std::ptr::null_mut()),
            tracked_malloc: AtomicPtr::new(std::ptr::null_mut()),
            tracked_free: AtomicPtr::new(std::ptr::null_mut()),
        }
    }
    shortcut!(malloc, MallocFn);
    shortcut!(calloc, CallocFn);
    shortcut!(free, FreeFn);
    shortcut!(realloc, ReallocFn);
    shortcut!(tracked_malloc, MallocFn);
    shortcut!(tracked_free, FreeFn);
}

/// The exported wrappers' [`Shortcuts`] (given by the library's
/// constructor).
static SHORTCUTS: AtomicPtr<Shortcuts> = AtomicPtr::new(std::ptr::null_mut());

/// The library's constructor gives the exported wrappers' [`Shortcuts`]
/// (published at once when the decision, taken at the first allocation,
/// was to leave blocks untracked).
pub fn register<S: Source>(sc: &'static Shortcuts) {
    SHORTCUTS.store(sc as *const Shortcuts as *mut Shortcuts, Ordering::SeqCst);
    match current() {
        OFF => publish_off::<S>(),
        TRACK => publish_tracked::<S>(),
        _ => {}
    }
}

/// The exported wrappers' [`Shortcuts`], once the library's constructor
/// gave them.
fn shortcuts() -> Option<&'static Shortcuts> {
    // SAFETY: null or a static of the library (`register`).
    unsafe { SHORTCUTS.load(Ordering::SeqCst).as_ref() }
}

/// Publishes the tracked shortcuts (mode [`TRACK`], the real `malloc` and
/// `free` found). They stay: the mode never changes once decided.
fn publish_tracked<S: Source>() {
    let (Some(sc), Some(m), Some(f)) = (shortcuts(), S::malloc(), S::free()) else {
        return;
    };
    sc.tracked_malloc.store(m as *mut c_void, Ordering::SeqCst);
    sc.tracked_free.store(f as *mut c_void, Ordering::SeqCst);
}

/// A block of the early arena was handed out: `free` and `realloc` must
/// look at every address again (called by the arena before the block is
/// returned; `publish_off` checks the arena after publishing, so one of
/// the two sees the other).
pub(super) fn early_blocks_exist() {
    if let Some(sc) = shortcuts() {
        sc.free.store(std::ptr::null_mut(), Ordering::SeqCst);
        sc.realloc.store(std::ptr::null_mut(), Ordering::SeqCst);
    }
}

/// Publishes the untracked shortcuts (mode [`OFF`], every real function
/// found).
fn publish_off<S: Source>() {
    let (Some(sc), Some(m), Some(c), Some(f), Some(r)) = (
        shortcuts(),
        S::malloc(),
        S::calloc(),
        S::free(),
        S::realloc(),
    ) else {
        return;
    };
    sc.malloc.store(m as *mut c_void, Ordering::SeqCst);
    sc.calloc.store(c as *mut c_void, Ordering::SeqCst);
    sc.free.store(f as *mut c_void, Ordering::SeqCst);
    sc.realloc.store(r as *mut c_void, Ordering::SeqCst);
    if !arena::no_early_blocks() {
        early_blocks_exist();
    }
}

/// The mode as it is (before the first call: undecided, which is not
/// [`TRACK`]: no block made before the decision has a header).
#[inline(always)]
pub(super) fn current() -> u8 {
    MODE.load(Ordering::Relaxed)
}

/// The mode, decided at the first call; [`DECIDING`] while a decision is
/// being made.
#[inline(always)]
pub(super) fn mode<S: Source>() -> u8 {
    settle::<S>(current())
}

/// `m` ([`current`]), or the decision when there is none yet.
#[inline(always)]
pub(super) fn settle<S: Source>(m: u8) -> u8 {
    if m >= OFF { m } else { decide::<S>() }
}

#[cold]
#[inline(never)]
fn decide<S: Source>() -> u8 {
    // The first decision wins (two threads cannot be here before `main`,
    // but a race would otherwise give blocks with and without headers).
    if let Err(m) = MODE.compare_exchange(UNDECIDED, DECIDING, Ordering::AcqRel, Ordering::Acquire)
    {
        return m;
    }
    let saved = errno();
    let (m, foreign) = if !wanted_by_environment() {
        (OFF, None)
    } else {
        match foreign::detect::<S>() {
            None => (TRACK, None),
            Some(f) if f.passes_through() => (OFF, Some(f)),
            Some(f) => (COUNT, Some(f)),
        }
    };
    MODE.store(m, Ordering::Release);
    if m != OFF {
        // Allocations before Dr.Hook starts get the memory profile's
        // "Outside any routine" line.
        drhook::__private::mem::expect_memory_profile(|| {
            crate::sys::tls::get(crate::sys::tls::GUARD) & crate::sys::tls::OWN_WORK != 0
        });
    }
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
    match m {
        OFF => publish_off::<S>(),
        TRACK => publish_tracked::<S>(),
        _ => {}
    }
    if let Some(f) = foreign {
        // With the `write` system call: this may run inside another
        // runtime's start (ASan calls `dlsym`, which allocates, while
        // its wrappers of `write` and `clock_gettime` cannot be called
        // yet).
        f.say();
    }
    set_errno(saved);
    m
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
