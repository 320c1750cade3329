//! The rest of the reference's C ABI that codes call directly (implicit
//! Fortran interfaces, so trailing underscores and hidden `size_t` string
//! lengths): watch points, `getenv`/`raise` helpers, the memory-counter
//! feed, the `util_*` timers, the prefix strings, the per-thread FP-trap
//! set-up. Each keeps the reference's argument conventions; null pointers
//! are accepted.

use std::cell::RefCell;
use std::ffi::{CString, c_char, c_int, c_longlong, c_void};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::boundary::guard;
use crate::names;

/// A Fortran string argument as text (trailing blanks and NULs trimmed).
///
/// # Safety
/// `p` null or valid for `len` bytes.
unsafe fn text(p: *const c_char, len: usize) -> String {
    // SAFETY: caller contract.
    names::trimmed_text(unsafe { names::bytes(p.cast(), len) }).into_owned()
}

/// # Safety
/// `p` null or valid.
unsafe fn int(p: *const c_int, default: c_int) -> c_int {
    if p.is_null() {
        default
    } else {
        // SAFETY: caller contract.
        unsafe { p.read_unaligned() }
    }
}

/// `c_drhook_watch_(onoff, name, ptr, nbytes, abort_if_changed, printkey,
/// nvals, print_traceback_when_set, name_len)` (`DR_HOOK_WATCH_MOD`'s
/// `DR_HOOK_WATCH`): sets a watch point on `nbytes` bytes at `ptr`, checked
/// at every enter and exit of every instrumented routine from now on (see
/// `drhook::watch`). `onoff` 0 switches the watch point at that address
/// off. Does nothing when Dr.Hook is off, as the reference.
///
/// # Safety
/// Pointers null or valid; `ptr` readable for `nbytes` bytes while the
/// watch point is on.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn c_drhook_watch_(
    onoff: *const c_int,
    array_name: *const c_char,
    array_ptr: *const c_void,
    nbytes: *const c_int,
    abort_if_changed: *const c_int,
    printkey: *const c_int,
    nvals: *const c_int,
    print_traceback_when_set: *const c_int,
    array_name_len: usize,
) {
    guard("c_drhook_watch_", (), || {
        if !crate::init::ensure() {
            return;
        }
        // SAFETY: caller contract.
        unsafe {
            let name = text(array_name, array_name_len);
            let spec = drhook::watch::WatchSpec {
                active: int(onoff, 1) != 0,
                name: &name,
                addr: array_ptr.cast(),
                nbytes: int(nbytes, 0).max(0) as usize,
                abort: int(abort_if_changed, 0) != 0,
                printkey: int(printkey, 0),
                nvals: int(nvals, 0).max(0) as usize,
                traceback_now: int(print_traceback_when_set, 0) != 0,
            };
            drhook::watch::set(&spec);
        }
    })
}

/// `c_drhook_check_watch_(where, allow_abort, where_len)`
/// (`DR_HOOK_CHECK_WATCH`): checks every active watch point now; a change
/// is reported `-- whilst at WHERE`, and aborts only if `allow_abort` is
/// non-zero and the watch point asks for it.
///
/// # Safety
/// Pointers null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn c_drhook_check_watch_(
    where_: *const c_char,
    allow_abort: *const c_int,
    where_len: usize,
) {
    guard("c_drhook_check_watch_", (), || {
        // SAFETY: caller contract.
        let (w, a) = unsafe { (text(where_, where_len), int(allow_abort, 0)) };
        drhook::watch::check_now(&w, a != 0);
    })
}

/// `c_drhook_getenv_(name, value, name_len, value_len)`: `value` (a Fortran
/// `CHARACTER(value_len)`) gets the variable's value, cut to `value_len`
/// and blank-padded; all blanks when it is unset.
///
/// # Safety
/// `name` null or valid for `name_len` bytes; `value` null or writable for
/// `value_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn c_drhook_getenv_(
    name: *const c_char,
    value: *mut c_char,
    name_len: usize,
    value_len: usize,
) {
    guard("c_drhook_getenv_", (), || {
        if value.is_null() {
            return;
        }
        // SAFETY: caller contract.
        let out = unsafe { std::slice::from_raw_parts_mut(value.cast::<u8>(), value_len) };
        out.fill(b' ');
        // SAFETY: caller contract. The name as given (the reference does
        // not trim it either).
        let key = unsafe { names::bytes(name.cast(), name_len) };
        if key.is_empty() || key.contains(&b'=') || key.contains(&0) {
            return;
        }
        use std::os::unix::ffi::{OsStrExt, OsStringExt};
        if let Some(v) = std::env::var_os(std::ffi::OsStr::from_bytes(key)) {
            let v = v.into_vec();
            let n = v.len().min(value_len);
            out[..n].copy_from_slice(&v[..n]);
        }
    })
}

/// `c_drhook_raise_(sig)`: `raise(*sig)`, for Fortran.
///
/// # Safety
/// `sig` null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn c_drhook_raise_(sig: *const c_int) {
    // SAFETY: caller contract.
    let s = unsafe { int(sig, 0) };
    if s > 0 {
        // SAFETY: raise has no memory preconditions; the signal's effect is
        // what the caller asks for.
        unsafe { libc::raise(s) };
    }
}

/// `c_drhook_memcounter_(thread_id, size, keyptr_addr)`: the reference's
/// feed of allocations for `DR_HOOK_OPT=memprof` (an allocator of the
/// program's own reports its blocks): `size > 0` is an allocation of
/// `size` bytes by the calling thread's current routine, and
/// `*keyptr_addr` receives the key to give back with the free; `size < 0`
/// the free of `-size` bytes allocated under the key `*keyptr_addr`.
/// Counted in the memory profile as the `malloc` family's events are.
///
/// # Safety
/// Pointers null or valid; a free's key is 0 or one this function gave.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn c_drhook_memcounter_(
    thread_id: *const c_int,
    size: *const c_longlong,
    keyptr_addr: *mut c_longlong,
) {
    let _ = thread_id;
    if size.is_null() {
        return;
    }
    // SAFETY: caller contract.
    let n = unsafe { size.read_unaligned() };
    if n > 0 {
        let owner = drhook::__private::mem::record_alloc(n as usize);
        if !keyptr_addr.is_null() {
            // SAFETY: caller contract.
            unsafe { keyptr_addr.write_unaligned(owner as usize as c_longlong) };
        }
    } else if n < 0 {
        let key = if keyptr_addr.is_null() {
            0
        } else {
            // SAFETY: caller contract.
            unsafe { keyptr_addr.read_unaligned() }
        };
        // SAFETY: the key is 0 or an owner word given above.
        unsafe {
            drhook::__private::mem::record_free(
                n.unsigned_abs() as usize,
                key as usize as *const std::sync::atomic::AtomicU64,
            )
        };
    }
}

/// `util_walltime_()`: seconds since its first call (`CLOCK_BOOTTIME`, as
/// the reference).
#[unsafe(no_mangle)]
pub extern "C" fn util_walltime_() -> f64 {
    // The first call's time (bits of an f64; 0: none yet), set by one
    // compare-and-swap (no `OnceLock`: a `fork` child must never find it
    // being set by a thread it does not have).
    static FIRST: AtomicU64 = AtomicU64::new(0);
    let now = clock_secs(libc::CLOCK_BOOTTIME);
    let first = match FIRST.compare_exchange(0, now.to_bits(), Ordering::AcqRel, Ordering::Acquire)
    {
        Ok(_) => now,
        Err(bits) => f64::from_bits(bits),
    };
    now - first
}

fn clock_secs(id: libc::clockid_t) -> f64 {
    // SAFETY: plain data written by the call.
    let mut ts: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer.
    if unsafe { libc::clock_gettime(id, &mut ts) } != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// `util_cputime_()`: CPU seconds (user + system) of the process and its
/// waited-for children, as the reference's `times()` sum, but from
/// `getrusage` (microseconds instead of 10 ms ticks).
#[unsafe(no_mangle)]
pub extern "C" fn util_cputime_() -> f64 {
    let secs = |who| {
        // SAFETY: plain data written by the call.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: valid pointer.
        unsafe { libc::getrusage(who, &mut ru) };
        let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
        tv(ru.ru_utime) + tv(ru.ru_stime)
    };
    secs(libc::RUSAGE_SELF) + secs(libc::RUSAGE_CHILDREN)
}

/// `util_ihpstat_(option)`: 0, as the reference (a placeholder there too).
///
/// # Safety
/// `option` is not read.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn util_ihpstat_(option: *const c_int) -> c_int {
    let _ = option;
    0
}

thread_local! {
    static PREFIX: RefCell<(CString, CString)> = RefCell::new(Default::default());
}

fn prefix_part(second: bool) -> *const c_char {
    guard("drhook_PREFIX", std::ptr::null(), || {
        let (p, t) = drhook::diag::prefix_parts();
        // Each function keeps its own buffer, so that both pointers stay
        // valid in one printf.
        PREFIX.with(|c| {
            let mut c = c.borrow_mut();
            if second {
                c.1 = CString::new(t).unwrap_or_default();
                c.1.as_ptr()
            } else {
                c.0 = CString::new(p).unwrap_or_default();
                c.0.as_ptr()
            }
        })
    })
}

/// `drhook_PREFIX(tid)`: the calling thread's `[EC_DRHOOK:host:proc:tid:pid:unixtid]`
/// (NUL-terminated; valid on this thread until its next call of
/// `drhook_PREFIX`). `tid` is
/// not needed: the prefix is the calling thread's.
#[unsafe(no_mangle)]
#[allow(non_snake_case, reason = "the reference's name")]
pub extern "C" fn drhook_PREFIX(tid: c_int) -> *const c_char {
    let _ = tid;
    prefix_part(false)
}

/// `drhook_TIMESTR(tid)`: `[YYYYMMDD:HHMMSS:walltime]` now (as
/// [`drhook_PREFIX`]).
#[unsafe(no_mangle)]
#[allow(non_snake_case, reason = "the reference's name")]
pub extern "C" fn drhook_TIMESTR(tid: c_int) -> *const c_char {
    let _ = tid;
    prefix_part(true)
}

/// `trapfpe_slave_threads_(silent)`: sets the calling thread up as each
/// thread is at its first instrumented call (the floating-point traps of
/// `DR_HOOK_TRAPFPE*`, the alternate signal stack). The reference calls it
/// on every OpenMP thread from `DR_HOOK_UTIL_MULTI`.
///
/// # Safety
/// `silent` is not read.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn trapfpe_slave_threads_(silent: *const c_int) {
    let _ = silent;
    guard("trapfpe_slave_threads_", (), || {
        if crate::init::ensure() {
            drhook::signals::init_this_thread();
        }
    })
}

/// `void drhook_fortran_write(int unit, const char *text, int len)`: writes
/// one line to a Fortran unit (`dr_hook_watch_mod.F90`, compiled with the
/// program's Fortran compiler).
type FortranWrite = unsafe extern "C" fn(c_int, *const c_char, c_int);

/// The Fortran companion's line writer, when it is linked into the
/// program: a weak reference (the library must link without it, in C
/// programs), read from the GOT, where a missing weak symbol is 0.
pub(crate) fn fortran_writer() -> Option<FortranWrite> {
    #[cfg(target_arch = "x86_64")]
    let p: usize = {
        let p: usize;
        // SAFETY: loads the address of a (weak) symbol from the GOT; no
        // memory is written and no stack used.
        unsafe {
            std::arch::asm!(
                ".weak drhook_fortran_write",
                "mov {p}, qword ptr [rip + drhook_fortran_write@GOTPCREL]",
                p = out(reg) p,
                options(nostack, readonly, preserves_flags),
            );
        }
        p
    };
    #[cfg(target_arch = "aarch64")]
    let p: usize = {
        let p: usize;
        // SAFETY: as above.
        unsafe {
            std::arch::asm!(
                ".weak drhook_fortran_write",
                "adrp {p}, :got:drhook_fortran_write",
                "ldr {p}, [{p}, :got_lo12:drhook_fortran_write]",
                p = out(reg) p,
                options(nostack, readonly, preserves_flags),
            );
        }
        p
    };
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    let p: usize = 0;
    if p == 0 {
        return None;
    }
    // SAFETY: a non-zero address of the companion's BIND(C) subroutine.
    Some(unsafe { std::mem::transmute::<usize, FortranWrite>(p) })
}

/// Writes `text` line by line to Fortran unit `unit` through the
/// companion; false (nothing written) when it is not linked.
pub(crate) fn write_fortran_unit(unit: c_int, text: &[u8]) -> bool {
    let Some(w) = fortran_writer() else {
        return false;
    };
    for line in text.split(|&b| b == b'\n') {
        if line.is_empty() {
            continue;
        }
        let n = line.len().min(c_int::MAX as usize) as c_int;
        // SAFETY: `line` is valid for `n` bytes during the call.
        unsafe { w(unit, line.as_ptr().cast(), n) };
    }
    true
}
