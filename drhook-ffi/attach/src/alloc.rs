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

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};

use drhook::__private::mem::{HEADER, Header, record_alloc, record_free};

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
fn tracking<S: Source>() -> bool {
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

unsafe extern "C" {
    static environ: *const *const u8;
}

/// The value of `name=` in the environment, read without allocating.
pub(crate) fn env_value(name: &[u8]) -> Option<&'static [u8]> {
    // SAFETY: `environ` is the C library's; entries are NUL-terminated.
    unsafe {
        let mut p = environ;
        if p.is_null() {
            return None;
        }
        while !(*p).is_null() {
            let entry = std::ffi::CStr::from_ptr((*p).cast()).to_bytes();
            if let Some(rest) = entry.strip_prefix(name)
                && let Some(v) = rest.strip_prefix(b"=")
            {
                return Some(v);
            }
            p = p.add(1);
        }
    }
    None
}

/// `DR_HOOK` is on (the reference's rule: not unset, empty, `0`,
/// `false`, `off` or `no`), read without allocating.
pub(crate) fn dr_hook_on() -> bool {
    env_value(b"DR_HOOK").is_some_and(|v| {
        let v = v.trim_ascii();
        !(v.is_empty()
            || v == b"0"
            || v.eq_ignore_ascii_case(b"false")
            || v.eq_ignore_ascii_case(b"off")
            || v.eq_ignore_ascii_case(b"no"))
    })
}

/// `DR_HOOK` on and a memory token in `DR_HOOK_OPT` (the engine's own
/// parsing decides the rest; this only decides whether blocks get
/// headers).
fn wanted_by_environment() -> bool {
    dr_hook_on()
        && env_value(b"DR_HOOK_OPT").is_some_and(|v| {
            v.split(|&c| matches!(c, b',' | b' ' | b'\t' | b'/'))
                .any(|t| {
                    [
                        &b"MEMPROF"[..],
                        b"MEM",
                        b"MEMORY",
                        b"HWM",
                        b"HEAP",
                        b"STK",
                        b"STACK",
                        b"RSS",
                        b"PAG",
                        b"PAGING",
                        b"ALL",
                    ]
                    .iter()
                    .any(|k| t.eq_ignore_ascii_case(k))
                })
        })
}

// --- headers ----------------------------------------------------------------

/// The tag in the top 16 bits of a header's size word.
const TAG: u64 = 0xd7a1 << 48;
const TAG_MASK: u64 = 0xffff << 48;
/// Set when the block is aligned beyond 16: its start is in the word
/// before the header.
const ALIGNED: u64 = 1 << 47;
const SIZE_MASK: u64 = (1 << 47) - 1;

/// Writes the header of a tracked block before `user` and records it.
///
/// # Safety
/// `user - 16 .. user` (and `user - 24` when `base` differs) belong to the
/// block.
#[inline]
unsafe fn stamp(user: *mut u8, size: usize, base: *mut u8) -> *mut c_void {
    let owner = record_alloc(size);
    let mut word = TAG | (size as u64 & SIZE_MASK);
    // SAFETY: the caller's contract.
    unsafe {
        if base != user.sub(HEADER) {
            word |= ALIGNED;
            user.sub(HEADER + 8).cast::<*mut u8>().write(base);
        }
        user.sub(HEADER)
            .cast::<Header>()
            .write(Header { size: word, owner });
    }
    user.cast()
}

/// A tracked block's size, owner and start; None when `p` has no header
/// of ours.
///
/// # Safety
/// `p` is a block of the C library's allocator or of ours.
#[inline]
unsafe fn read(p: *mut c_void) -> Option<(usize, Header, *mut u8)> {
    let user = p.cast::<u8>();
    // SAFETY: every block of ours has its header there; glibc's blocks
    // have their chunk header there (readable).
    let h = unsafe { user.sub(HEADER).cast::<Header>().read() };
    if h.size & TAG_MASK != TAG {
        return None;
    }
    let size = (h.size & SIZE_MASK) as usize;
    let base = if h.size & ALIGNED != 0 {
        // SAFETY: written by `stamp` for aligned blocks.
        unsafe { user.sub(HEADER + 8).cast::<*mut u8>().read() }
    } else {
        // SAFETY: in the block.
        unsafe { user.sub(HEADER) }
    };
    Some((size, h, base))
}

// --- the early arena --------------------------------------------------------

const ARENA: usize = 64 * 1024;

#[repr(C, align(16))]
struct Arena([u8; ARENA]);

static mut EARLY: Arena = Arena([0; ARENA]);
static EARLY_USED: AtomicUsize = AtomicUsize::new(0);

fn early_base() -> usize {
    (&raw const EARLY) as usize
}

fn is_early(p: *mut c_void) -> bool {
    let a = p as usize;
    a >= early_base() && a < early_base() + ARENA
}

/// A block of the early arena (before the real functions can be had),
/// with a header (never freed).
fn early_alloc(size: usize, zero_needed: bool) -> *mut c_void {
    let _ = zero_needed; // the arena is zeroed and never reused
    let need = (size + HEADER + 15) & !15;
    let at = EARLY_USED.fetch_add(need, Ordering::Relaxed);
    if at + need > ARENA {
        return std::ptr::null_mut();
    }
    // SAFETY: a fresh, unshared range of the arena.
    unsafe {
        let user = (early_base() + at + HEADER) as *mut u8;
        user.sub(HEADER).cast::<Header>().write(Header {
            size: TAG | size as u64,
            owner: std::ptr::null(),
        });
        user.cast()
    }
}

fn early_size(p: *mut c_void) -> usize {
    // SAFETY: arena blocks have a header.
    (unsafe { p.cast::<u8>().sub(HEADER).cast::<Header>().read() }.size & SIZE_MASK) as usize
}

// --- the functions ----------------------------------------------------------

/// `malloc`.
///
/// # Safety
/// The C contract.
#[inline]
pub unsafe fn malloc<S: Source>(size: usize) -> *mut c_void {
    let Some(real) = S::malloc() else {
        return early_alloc(size, false);
    };
    if !tracking::<S>() {
        // SAFETY: the C contract.
        return unsafe { real(size) };
    }
    let Some(total) = size.checked_add(HEADER) else {
        set_enomem();
        return std::ptr::null_mut();
    };
    // SAFETY: the C contract.
    let base = unsafe { real(total) }.cast::<u8>();
    if base.is_null() {
        return base.cast();
    }
    // SAFETY: 16 bytes of header at the start of the block.
    unsafe { stamp(base.add(HEADER), size, base) }
}

/// `calloc`.
///
/// # Safety
/// The C contract.
pub unsafe fn calloc<S: Source>(n: usize, size: usize) -> *mut c_void {
    let Some(real) = S::calloc() else {
        return match n.checked_mul(size) {
            Some(b) => early_alloc(b, true),
            None => std::ptr::null_mut(),
        };
    };
    if !tracking::<S>() {
        // SAFETY: the C contract.
        return unsafe { real(n, size) };
    }
    let Some(bytes) = n.checked_mul(size) else {
        set_enomem();
        return std::ptr::null_mut();
    };
    let Some(total) = bytes.checked_add(HEADER) else {
        set_enomem();
        return std::ptr::null_mut();
    };
    // SAFETY: the C contract.
    let base = unsafe { real(1, total) }.cast::<u8>();
    if base.is_null() {
        return base.cast();
    }
    // SAFETY: as in `malloc`.
    unsafe { stamp(base.add(HEADER), bytes, base) }
}

/// `free`.
///
/// # Safety
/// The C contract.
#[inline]
pub unsafe fn free<S: Source>(p: *mut c_void) {
    if p.is_null() || is_early(p) {
        return;
    }
    let Some(real) = S::free() else {
        return;
    };
    if tracking::<S>()
        // SAFETY: a block of ours or of the C library.
        && let Some((size, h, base)) = unsafe { read(p) }
    {
        // SAFETY: the owner word came from `record_alloc`.
        unsafe { record_free(size, h.owner) };
        // SAFETY: the block's start.
        unsafe { real(base.cast()) };
        return;
    }
    // SAFETY: the C contract.
    unsafe { real(p) }
}

/// `realloc`.
///
/// # Safety
/// The C contract.
pub unsafe fn realloc<S: Source>(p: *mut c_void, size: usize) -> *mut c_void {
    if p.is_null() {
        // SAFETY: the C contract.
        return unsafe { malloc::<S>(size) };
    }
    if is_early(p) {
        // SAFETY: the C contract.
        let q = unsafe { malloc::<S>(size) };
        if !q.is_null() {
            let n = early_size(p).min(size);
            // SAFETY: both blocks hold at least `n` bytes.
            unsafe { std::ptr::copy_nonoverlapping(p.cast::<u8>(), q.cast::<u8>(), n) };
        }
        return q;
    }
    let Some(real) = S::realloc() else {
        return std::ptr::null_mut();
    };
    if !tracking::<S>() {
        // SAFETY: the C contract.
        return unsafe { real(p, size) };
    }
    // SAFETY: a block of ours or of the C library.
    let Some((old, h, base)) = (unsafe { read(p) }) else {
        // SAFETY: not ours: the C library's own.
        return unsafe { real(p, size) };
    };
    if size == 0 {
        // glibc: realloc(p, 0) frees p and returns NULL.
        // SAFETY: the C contract.
        unsafe { free::<S>(p) };
        return std::ptr::null_mut();
    }
    if h.size & ALIGNED != 0 {
        // An aligned block moves to a plain one (as glibc's realloc, which
        // keeps no alignment beyond malloc's).
        // SAFETY: the C contract.
        let q = unsafe { malloc::<S>(size) };
        if !q.is_null() {
            // SAFETY: both blocks hold at least min(old, size) bytes.
            unsafe {
                std::ptr::copy_nonoverlapping(p.cast::<u8>(), q.cast::<u8>(), old.min(size));
                free::<S>(p);
            }
        }
        return q;
    }
    let Some(total) = size.checked_add(HEADER) else {
        set_enomem();
        return std::ptr::null_mut();
    };
    // SAFETY: `base` is the block's start.
    let nb = unsafe { real(base.cast(), total) }.cast::<u8>();
    if nb.is_null() {
        return nb.cast();
    }
    // A reallocation: the free of the old block, the allocation of the
    // new one, where it happens.
    // SAFETY: the owner came from `record_alloc`; the header is in the block.
    unsafe {
        record_free(old, h.owner);
        stamp(nb.add(HEADER), size, nb)
    }
}

/// `reallocarray`.
///
/// # Safety
/// The C contract.
pub unsafe fn reallocarray<S: Source>(p: *mut c_void, n: usize, size: usize) -> *mut c_void {
    match n.checked_mul(size) {
        // SAFETY: the C contract.
        Some(b) => unsafe { realloc::<S>(p, b) },
        None => {
            set_enomem();
            std::ptr::null_mut()
        }
    }
}

/// A block of `size` bytes aligned to `align` (a power of two).
///
/// # Safety
/// The C contract.
unsafe fn aligned<S: Source>(align: usize, size: usize) -> *mut c_void {
    let Some(real) = S::malloc() else {
        return std::ptr::null_mut();
    };
    if align <= 16 {
        // SAFETY: malloc's blocks are 16-aligned.
        return unsafe { malloc::<S>(size) };
    }
    let Some(total) = size.checked_add(align + HEADER + 8) else {
        set_enomem();
        return std::ptr::null_mut();
    };
    // SAFETY: the C contract.
    let base = unsafe { real(total) }.cast::<u8>();
    if base.is_null() {
        return base.cast();
    }
    let user = (base as usize + HEADER + 8).next_multiple_of(align);
    // SAFETY: `user - 24 >= base`, `user + size <= base + total`.
    unsafe { stamp(user as *mut u8, size, base) }
}

/// `posix_memalign`.
///
/// # Safety
/// The C contract.
pub unsafe fn posix_memalign<S: Source>(out: *mut *mut c_void, align: usize, size: usize) -> c_int {
    if !tracking::<S>() {
        return match S::posix_memalign() {
            // SAFETY: the C contract.
            Some(f) => unsafe { f(out, align, size) },
            None => libc::ENOMEM,
        };
    }
    if !align.is_power_of_two() || align % size_of::<*mut c_void>() != 0 {
        return libc::EINVAL;
    }
    let saved = errno();
    // SAFETY: the C contract.
    let p = unsafe { aligned::<S>(align, size) };
    if p.is_null() {
        set_errno(saved);
        return libc::ENOMEM;
    }
    // SAFETY: the caller's pointer.
    unsafe { *out = p };
    0
}

/// `aligned_alloc`.
///
/// # Safety
/// The C contract.
pub unsafe fn aligned_alloc<S: Source>(align: usize, size: usize) -> *mut c_void {
    if !tracking::<S>() {
        return match S::aligned_alloc() {
            // SAFETY: the C contract.
            Some(f) => unsafe { f(align, size) },
            None => std::ptr::null_mut(),
        };
    }
    if !align.is_power_of_two() {
        set_errno(libc::EINVAL);
        return std::ptr::null_mut();
    }
    // SAFETY: the C contract.
    unsafe { aligned::<S>(align, size) }
}

/// `memalign` (an alignment that is not a power of two is rounded up, as
/// glibc does).
///
/// # Safety
/// The C contract.
pub unsafe fn memalign<S: Source>(align: usize, size: usize) -> *mut c_void {
    if !tracking::<S>() {
        return match S::memalign() {
            // SAFETY: the C contract.
            Some(f) => unsafe { f(align, size) },
            None => std::ptr::null_mut(),
        };
    }
    let align = align.max(1).checked_next_power_of_two().unwrap_or(0);
    if align == 0 {
        set_errno(libc::EINVAL);
        return std::ptr::null_mut();
    }
    // SAFETY: the C contract.
    unsafe { aligned::<S>(align, size) }
}

fn page() -> usize {
    // SAFETY: sysconf has no preconditions.
    (unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).max(4096) as usize
}

/// `valloc`.
///
/// # Safety
/// The C contract.
pub unsafe fn valloc<S: Source>(size: usize) -> *mut c_void {
    if !tracking::<S>() {
        return match S::valloc() {
            // SAFETY: the C contract.
            Some(f) => unsafe { f(size) },
            None => std::ptr::null_mut(),
        };
    }
    // SAFETY: the C contract.
    unsafe { aligned::<S>(page(), size) }
}

/// `pvalloc`.
///
/// # Safety
/// The C contract.
pub unsafe fn pvalloc<S: Source>(size: usize) -> *mut c_void {
    if !tracking::<S>() {
        return match S::pvalloc() {
            // SAFETY: the C contract.
            Some(f) => unsafe { f(size) },
            None => std::ptr::null_mut(),
        };
    }
    let p = page();
    match size.max(1).checked_next_multiple_of(p) {
        // SAFETY: the C contract.
        Some(s) => unsafe { aligned::<S>(p, s) },
        None => {
            set_enomem();
            std::ptr::null_mut()
        }
    }
}

/// `malloc_usable_size`.
///
/// # Safety
/// The C contract.
pub unsafe fn malloc_usable_size<S: Source>(p: *mut c_void) -> usize {
    if p.is_null() {
        return 0;
    }
    if is_early(p) {
        return early_size(p);
    }
    let Some(real) = S::usable() else {
        return 0;
    };
    if tracking::<S>()
        // SAFETY: a block of ours or of the C library.
        && let Some((_, _, base)) = unsafe { read(p) }
    {
        // SAFETY: the block's start.
        let whole = unsafe { real(base.cast()) };
        return whole.saturating_sub(p as usize - base as usize);
    }
    // SAFETY: the C contract.
    unsafe { real(p) }
}

fn errno() -> c_int {
    // SAFETY: the thread's errno.
    unsafe { *libc::__errno_location() }
}

fn set_errno(e: c_int) {
    // SAFETY: the thread's errno.
    unsafe { *libc::__errno_location() = e };
}

fn set_enomem() {
    set_errno(libc::ENOMEM);
}

/// Exports the `malloc` family (see the module documentation); `$p` is the
/// symbol prefix, `$src` the [`Source`] of the real functions.
#[macro_export]
#[doc(hidden)]
macro_rules! __interpose_alloc {
    ($p:literal, preload) => {
        $crate::__interpose_alloc!(@exports $p, $crate::alloc::Preload, {});
    };
    ($p:literal, wrap) => {
        $crate::__interpose_alloc!(@exports $p, W, {
            /// The real functions: `__real_<name>` (`-Wl,--wrap=<name>`).
            pub struct W;
            mod weak {
                $crate::__weak_address!(malloc, "__real_malloc");
                $crate::__weak_address!(free, "__real_free");
                $crate::__weak_address!(calloc, "__real_calloc");
                $crate::__weak_address!(realloc, "__real_realloc");
                $crate::__weak_address!(usable, "__real_malloc_usable_size");
                $crate::__weak_address!(posix_memalign, "__real_posix_memalign");
                $crate::__weak_address!(aligned_alloc, "__real_aligned_alloc");
                $crate::__weak_address!(memalign, "__real_memalign");
                $crate::__weak_address!(valloc, "__real_valloc");
                $crate::__weak_address!(pvalloc, "__real_pvalloc");
            }
            macro_rules! w {
                ($f:ident, $ty:ty) => {
                    fn $f() -> Option<$ty> {
                        let p = weak::$f();
                        // SAFETY: `__real_<name>` is the wrapped function.
                        (!p.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, $ty>(p) })
                    }
                };
            }
            impl a::Source for W {
                w!(malloc, a::MallocFn);
                w!(free, a::FreeFn);
                w!(calloc, a::CallocFn);
                w!(realloc, a::ReallocFn);
                w!(usable, a::UsableFn);
                w!(posix_memalign, a::PosixMemalignFn);
                w!(aligned_alloc, a::MemalignFn);
                w!(memalign, a::MemalignFn);
                w!(valloc, a::MallocFn);
                w!(pvalloc, a::MallocFn);
            }
        });
    };
    (@exports $p:literal, $src:ty, { $($extra:tt)* }) => {
        /// The `malloc` family (memory profile).
        #[doc(hidden)]
        #[allow(clippy::missing_safety_doc, missing_docs)]
        pub mod __drhook_alloc_exports {
            use std::ffi::{c_int, c_void};
            use $crate::alloc as a;
            $($extra)*
            type S = $src;

            #[unsafe(export_name = concat!($p, "malloc"))]
            pub unsafe extern "C" fn malloc(n: usize) -> *mut c_void {
                // SAFETY: the C contract.
                unsafe { a::malloc::<S>(n) }
            }
            #[unsafe(export_name = concat!($p, "free"))]
            pub unsafe extern "C" fn free(p: *mut c_void) {
                // SAFETY: the C contract.
                unsafe { a::free::<S>(p) }
            }
            #[unsafe(export_name = concat!($p, "calloc"))]
            pub unsafe extern "C" fn calloc(n: usize, s: usize) -> *mut c_void {
                // SAFETY: the C contract.
                unsafe { a::calloc::<S>(n, s) }
            }
            #[unsafe(export_name = concat!($p, "realloc"))]
            pub unsafe extern "C" fn realloc(p: *mut c_void, n: usize) -> *mut c_void {
                // SAFETY: the C contract.
                unsafe { a::realloc::<S>(p, n) }
            }
            #[unsafe(export_name = concat!($p, "reallocarray"))]
            pub unsafe extern "C" fn reallocarray(p: *mut c_void, n: usize, s: usize) -> *mut c_void {
                // SAFETY: the C contract.
                unsafe { a::reallocarray::<S>(p, n, s) }
            }
            #[unsafe(export_name = concat!($p, "posix_memalign"))]
            pub unsafe extern "C" fn posix_memalign(o: *mut *mut c_void, al: usize, n: usize) -> c_int {
                // SAFETY: the C contract.
                unsafe { a::posix_memalign::<S>(o, al, n) }
            }
            #[unsafe(export_name = concat!($p, "aligned_alloc"))]
            pub unsafe extern "C" fn aligned_alloc(al: usize, n: usize) -> *mut c_void {
                // SAFETY: the C contract.
                unsafe { a::aligned_alloc::<S>(al, n) }
            }
            #[unsafe(export_name = concat!($p, "memalign"))]
            pub unsafe extern "C" fn memalign(al: usize, n: usize) -> *mut c_void {
                // SAFETY: the C contract.
                unsafe { a::memalign::<S>(al, n) }
            }
            #[unsafe(export_name = concat!($p, "valloc"))]
            pub unsafe extern "C" fn valloc(n: usize) -> *mut c_void {
                // SAFETY: the C contract.
                unsafe { a::valloc::<S>(n) }
            }
            #[unsafe(export_name = concat!($p, "pvalloc"))]
            pub unsafe extern "C" fn pvalloc(n: usize) -> *mut c_void {
                // SAFETY: the C contract.
                unsafe { a::pvalloc::<S>(n) }
            }
            #[unsafe(export_name = concat!($p, "malloc_usable_size"))]
            pub unsafe extern "C" fn malloc_usable_size(p: *mut c_void) -> usize {
                // SAFETY: the C contract.
                unsafe { a::malloc_usable_size::<S>(p) }
            }
        }
    };
}
