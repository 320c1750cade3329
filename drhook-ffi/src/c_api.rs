//! The C interface of `drhook.h` (compat §5) and the reference's C ABI
//! called from Fortran (compat §4.2: `c_drhook_start_`, ...; hidden string
//! lengths are `size_t`, as gfortran passes them).

use std::ffi::{c_char, c_int, c_longlong, c_void};
use std::io::Write;
use std::sync::atomic::{AtomicPtr, Ordering};

use drhook::Site;

use crate::boundary::{Unimplemented, guard, warn_once};
use crate::switch::{lhook, set_lhook};
use crate::{hook, names};

/// Length of a C string argument: `len` if positive, else `strlen`.
///
/// # Safety
/// `p` must be null, or NUL-terminated when `len <= 0`, or valid for `len` bytes.
unsafe fn c_len(p: *const c_char, len: c_int) -> usize {
    if len > 0 {
        len as usize
    } else {
        // SAFETY: caller contract.
        unsafe { names::c_strlen(p) }
    }
}

/// Reads an optional `int` argument.
///
/// # Safety
/// `p` must be null or valid.
unsafe fn opt_int(p: *const c_int) -> Option<c_int> {
    // SAFETY: caller contract.
    (!p.is_null()).then(|| unsafe { p.read_unaligned() })
}

// --- drhook.h functions -----------------------------------------------------

/// `Dr_Hook(name, option, &handle, filename, sizeinfo, name_len,
/// filename_len)`: option 0 enters `name`, 1 leaves the activation in
/// `handle` (adding `sizeinfo` to the routine's size statistics when > 0);
/// lengths ≤ 0 mean "use strlen"; `filename` may be null (a null `handle`
/// enters nothing). The first call reads the environment; with Dr.Hook off
/// (`drhook_lhook == 0`) it returns at once.
///
/// # Safety
/// Strings valid for their lengths (or NUL-terminated when the length is
/// ≤ 0, or null); `handle` null or valid.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn Dr_Hook(
    name: *const c_char,
    option: c_int,
    handle: *mut f64,
    filename: *const c_char,
    sizeinfo: c_int,
    name_len: c_int,
    filename_len: c_int,
) {
    guard("Dr_Hook", (), || {
        if !crate::init::ensure() || lhook().load(Ordering::Relaxed) == 0 {
            return;
        }
        // SAFETY: caller contract.
        unsafe {
            let nl = c_len(name, name_len);
            let fl = if filename.is_null() {
                0
            } else {
                c_len(filename, filename_len)
            };
            match option {
                // Without a handle the activation could never be left.
                0 if !handle.is_null() => {
                    let h = hook::enter64(name.cast(), nl, filename.cast(), fl);
                    handle.cast::<u64>().write_unaligned(h);
                }
                1 if !handle.is_null() => hook::exit64(
                    handle.cast::<u64>().read_unaligned(),
                    hook::size_of_arg(sizeinfo.into()),
                    name.cast(),
                    nl,
                    filename.cast(),
                    fl,
                ),
                _ => {}
            }
        }
    })
}

/// `drhook_init(argc, argv)`: reads the environment now (the first Dr.Hook
/// call does it otherwise). The program name in the profile comes from the
/// process itself, so the arguments are not needed.
#[unsafe(no_mangle)]
pub extern "C" fn drhook_init(argc: c_int, argv: *mut *mut c_char) {
    let _ = (argc, argv);
    guard("drhook_init", (), || {
        crate::init::ensure();
    })
}

/// `drhook_active()`: 1 when Dr.Hook is on (reads the environment on first use).
#[unsafe(no_mangle)]
pub extern "C" fn drhook_active() -> c_int {
    guard("drhook_active", 0, || c_int::from(crate::init::ensure()))
}

/// `drhook_calltree()`: prints the calling thread's current calling tree on
/// stderr.
#[unsafe(no_mangle)]
pub extern "C" fn drhook_calltree() {
    guard("drhook_calltree", (), || {
        if crate::init::ensure() {
            drhook::print_calltree();
        }
    })
}

/// An abort hook: source file, line and message of a fatal Dr.Hook error.
pub type DrhookAbortFn =
    Option<unsafe extern "C" fn(file: *const c_char, line: c_int, text: *const c_char)>;

static C_ABORT_HOOK: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

fn abort_trampoline(file: &str, line: u32, text: &str) {
    let f = C_ABORT_HOOK.load(Ordering::Acquire);
    if f.is_null() {
        return;
    }
    let c = |s: &str| std::ffi::CString::new(s.replace('\0', " ")).unwrap_or_default();
    let (file, text) = (c(file), c(text));
    // SAFETY: only `unsafe extern "C" fn(*const c_char, c_int, *const c_char)`
    // values are stored in C_ABORT_HOOK.
    let f: unsafe extern "C" fn(*const c_char, c_int, *const c_char) =
        unsafe { std::mem::transmute::<*mut c_void, _>(f) };
    // SAFETY: valid NUL-terminated strings for the duration of the call.
    unsafe {
        f(
            file.as_ptr(),
            line.min(c_int::MAX as u32) as c_int,
            text.as_ptr(),
        )
    };
}

/// `drhook_set_abort(fn)`: installs the function Dr.Hook calls with
/// (file, line, message) before aborting on a fatal error (a mismatched
/// exit). If it returns, the process still aborts. Null removes it.
#[unsafe(no_mangle)]
pub extern "C" fn drhook_set_abort(hook: DrhookAbortFn) {
    guard("drhook_set_abort", (), || {
        let p = hook.map_or(std::ptr::null_mut(), |f| f as *mut c_void);
        C_ABORT_HOOK.store(p, Ordering::Release);
        drhook::set_abort_hook(abort_trampoline);
    })
}

/// `drhook_abort(file, line, text)`: reports a fatal error (through the
/// abort hook, if any) and aborts the process.
///
/// # Safety
/// Strings null or NUL-terminated.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn drhook_abort(file: *const c_char, line: c_int, text: *const c_char) -> ! {
    // SAFETY: caller contract.
    let s = |p: *const c_char| unsafe {
        names::trimmed_text(names::bytes(p.cast(), names::c_strlen(p))).into_owned()
    };
    let _ = std::panic::catch_unwind(|| {
        drhook::drhook_abort(&s(file), line.max(0) as u32, &s(text));
    });
    std::process::abort()
}

/// Entry of the `DRHOOK_START*` macros: enters the routine and returns the
/// handle (0 when Dr.Hook is off). `site` is the call site's own
/// `static void *` (null until its first call), so that after the first
/// call nothing is looked up at all.
///
/// # Safety
/// `site` must point to a `void *` only used by these functions (or be
/// null); `name` and `file` NUL-terminated (or null).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn drhook_c_start(
    site: *mut *mut c_void,
    name: *const c_char,
    file: *const c_char,
) -> u64 {
    // Fast path, without the panic guard (nothing here can panic).
    // SAFETY: caller contract.
    if let Some(s) = unsafe { cached_site(site) }
        && let Some(h) = drhook::engine::enter_handle_fast(s, true)
    {
        return h;
    }
    // SAFETY: caller contract.
    unsafe { c_start_slow(site, name, file) }
}

/// Entry of the `DRHOOK_START*` macros: [`drhook_c_start`] with a `site`
/// that is never null (the macro's own `static void *`), which saves the
/// fast path its null test. Modules compiled with an older `drhook.h`
/// call `drhook_c_start`, which stays.
///
/// # Safety
/// `site` must point to a `void *` only used by these functions; `name`
/// and `file` NUL-terminated (or null).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn drhook_c_enter(
    site: *mut *mut c_void,
    name: *const c_char,
    file: *const c_char,
) -> u64 {
    // Fast path, without the panic guard (nothing here can panic).
    // SAFETY: caller contract: an aligned `void *` used only through
    // atomics by these functions; only `&'static Site`s are stored in it.
    let s = unsafe { AtomicPtr::from_ptr(site.cast::<*mut Site>()).load(Ordering::Relaxed) };
    // SAFETY: as above.
    if let Some(s) = unsafe { s.as_ref() }
        && let Some(h) = drhook::engine::enter_handle_fast(s, true)
    {
        return h;
    }
    // SAFETY: caller contract.
    unsafe { c_start_slow(site, name, file) }
}

/// The site a `DRHOOK_START*` site's cache word holds (None: null, or not
/// set yet).
///
/// # Safety
/// `site` is null or points to a `void *` used only through atomics by
/// these functions.
#[inline(always)]
unsafe fn cached_site(site: *mut *mut c_void) -> Option<&'static Site> {
    if site.is_null() {
        return None;
    }
    // SAFETY: caller contract: an aligned `void *` used only through
    // atomics by these functions.
    let s = unsafe { AtomicPtr::from_ptr(site.cast::<*mut Site>()) }.load(Ordering::Relaxed);
    // SAFETY: only `&'static Site`s are stored in the cache.
    unsafe { s.as_ref() }
}

#[inline(never)]
unsafe extern "C" fn c_start_slow(
    site: *mut *mut c_void,
    name: *const c_char,
    file: *const c_char,
) -> u64 {
    // With `memprof` (stampers that cannot panic), before the guard.
    // SAFETY: caller contract.
    if let Some(s) = unsafe { cached_site(site) }
        && let Some(h) = drhook::engine::enter_handle_stamped(s, true)
    {
        return h;
    }
    // SAFETY: caller contract.
    unsafe { c_start_guarded(site, name, file) }
}

#[inline(never)]
unsafe extern "C" fn c_start_guarded(
    site: *mut *mut c_void,
    name: *const c_char,
    file: *const c_char,
) -> u64 {
    guard("drhook_c_start", 0, || {
        if site.is_null() {
            return 0;
        }
        // SAFETY: caller contract: an aligned `void *` used only through
        // atomics by these functions.
        let cache = unsafe { AtomicPtr::from_ptr(site.cast::<*mut Site>()) };
        let s = cache.load(Ordering::Relaxed);
        if s.is_null() {
            // SAFETY: caller contract.
            return unsafe { c_start_cold(cache, name, file) };
        }
        // SAFETY: only `&'static Site`s are stored in the cache.
        drhook::engine::enter_handle(unsafe { &*s })
    })
}

/// First call from a `DRHOOK_START*` site.
///
/// # Safety
/// Strings NUL-terminated or null.
#[cold]
#[inline(never)]
unsafe fn c_start_cold(cache: &AtomicPtr<Site>, name: *const c_char, file: *const c_char) -> u64 {
    // SAFETY: caller contract.
    let site = unsafe {
        let (nl, fl) = (names::c_strlen(name), names::c_strlen(file));
        hook::site_cold(name.cast(), nl, file.cast(), fl)
    };
    match site {
        Some(s) => {
            cache.store(s as *const Site as *mut Site, Ordering::Relaxed);
            drhook::engine::enter_handle(s)
        }
        None => 0,
    }
}

/// Exit of the `DRHOOK_END*` / `DRHOOK_RETURN*` macros: leaves the
/// activation of `handle` (from [`drhook_c_start`]; 0 is ignored); `size`
/// > 0 is added to the routine's size statistics.
///
/// # Safety
/// As [`drhook_c_start`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn drhook_c_end(site: *mut *mut c_void, handle: u64, size: c_longlong) {
    // Fast path, without the panic guard (nothing here can panic).
    if size <= 0 && drhook::engine::exit_handle_fast(handle, true) {
        return;
    }
    // SAFETY: caller contract.
    unsafe { c_end_slow(site, handle, size) }
}

/// Exit of the `DRHOOK_END*` / `DRHOOK_RETURN*` macros without size
/// information (a size that is not > 0): [`drhook_c_end`] with no size
/// and no zero handle to test (the macros call it only with the non-zero
/// handle their enter returned).
///
/// # Safety
/// As [`drhook_c_start`]; `handle` is not 0 (use [`drhook_c_end`] for a
/// handle that may be 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn drhook_c_leave(site: *mut *mut c_void, handle: u64) {
    // Fast path, without the panic guard (nothing here can panic).
    // SAFETY: `handle != 0` (caller contract).
    if unsafe { drhook::engine::exit_handle_fast_nonzero(handle) } {
        return;
    }
    // SAFETY: caller contract.
    unsafe { c_end_slow(site, handle, 0) }
}

#[inline(never)]
unsafe extern "C" fn c_end_slow(site: *mut *mut c_void, handle: u64, size: c_longlong) {
    // With `memprof` (stampers that cannot panic), before the guard.
    if drhook::engine::exit_handle_stamped(handle, true, hook::size_of_arg(size)) {
        return;
    }
    // SAFETY: caller contract.
    unsafe { c_end_guarded(site, handle, size) }
}

#[inline(never)]
unsafe extern "C" fn c_end_guarded(site: *mut *mut c_void, handle: u64, size: c_longlong) {
    guard("drhook_c_end", (), || {
        if site.is_null() || handle == 0 {
            return;
        }
        // SAFETY: caller contract.
        let s = unsafe { cached_site(site) };
        drhook::engine::exit_handle(handle, hook::size_of_arg(size), s);
    })
}

// --- the reference's C ABI (called from Fortran with implicit interfaces) ---

/// `c_drhook_start_(name, thread_id, key, filename, sizeinfo, name_len,
/// filename_len)`: enters `name` on the calling thread and stores the
/// handle in `key`. `thread_id` is not needed (the engine knows the calling
/// thread) and `sizeinfo` only counts at exit, as in the reference.
///
/// # Safety
/// Strings valid for their lengths (or null); `key` valid (or null).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn c_drhook_start_(
    name: *const c_char,
    thread_id: *const c_int,
    key: *mut f64,
    filename: *const c_char,
    sizeinfo: *const c_int,
    name_len: usize,
    filename_len: usize,
) {
    let _ = (thread_id, sizeinfo);
    guard("c_drhook_start_", (), || {
        if key.is_null() || !crate::init::ensure() {
            return;
        }
        // SAFETY: caller contract.
        unsafe {
            let h = hook::enter64(name.cast(), name_len, filename.cast(), filename_len);
            key.cast::<u64>().write_unaligned(h);
        }
    })
}

/// `c_drhook_end_(...)`: leaves the activation in `key`, adding `*sizeinfo`
/// (when > 0) to the routine's size statistics.
///
/// # Safety
/// As [`c_drhook_start_`] (`key` is only read).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn c_drhook_end_(
    name: *const c_char,
    thread_id: *const c_int,
    key: *const f64,
    filename: *const c_char,
    sizeinfo: *const c_int,
    name_len: usize,
    filename_len: usize,
) {
    let _ = thread_id;
    guard("c_drhook_end_", (), || {
        if key.is_null() {
            return;
        }
        // SAFETY: caller contract.
        unsafe {
            let size = opt_int(sizeinfo).map_or(0, |s| hook::size_of_arg(s.into()));
            hook::exit64(
                key.cast::<u64>().read_unaligned(),
                size,
                name.cast(),
                name_len,
                filename.cast(),
                filename_len,
            )
        }
    })
}

/// `c_drhook_init_(progname, num_threads, progname_len)`: reads the
/// environment now. The program name and thread count are not needed
/// (the engine takes them from the process and sizes per thread lazily).
#[unsafe(no_mangle)]
pub extern "C" fn c_drhook_init_(
    progname: *const c_char,
    num_threads: *const c_int,
    progname_len: usize,
) {
    let _ = (progname, num_threads, progname_len);
    guard("c_drhook_init_", (), || {
        crate::init::ensure();
    })
}

/// `c_drhook_prof_()`: writes the profile now (with `DR_HOOK_OPT=prof` or
/// `cpuprof`) and, as the reference, cancels the write at exit: the file
/// keeps the numbers of this moment.
#[unsafe(no_mangle)]
pub extern "C" fn c_drhook_prof_() {
    guard("c_drhook_prof_", (), || {
        if crate::init::ensure() {
            let _ = drhook::write_final_profile();
        }
    })
}

/// `c_drhook_init_signals_(&enforce)` (`CALL C_DRHOOK_INIT_SIGNALS(1)`):
/// installs Dr.Hook's signal handlers now, on top of those installed since
/// (e.g. by MPI), so that a crash prints the calling trees and a
/// traceback, even when Dr.Hook is off. `DR_HOOK_INIT_SIGNALS=0` prevents
/// it. The reference waits for MPI initialisation unless `enforce` is set;
/// this library does not look at MPI, so `enforce` makes no difference.
///
/// # Safety
/// `enforce` null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn c_drhook_init_signals_(enforce: *const c_int) {
    let _ = enforce;
    guard("c_drhook_init_signals_", (), || {
        crate::init::ensure();
        drhook::init_signals();
    })
}

/// `c_drhook_set_lhook_(&lhook)`: sets `drhook_lhook` (the switch the C
/// macros test) to 0 or 1.
///
/// # Safety
/// `lhook` null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn c_drhook_set_lhook_(lhook: *const c_int) {
    guard("c_drhook_set_lhook_", (), || {
        // SAFETY: caller contract.
        if let Some(v) = unsafe { opt_int(lhook) } {
            set_lhook(v != 0);
        }
    })
}

/// `c_drhook_print_(unit, thread_id, option, level)`: option 2 prints the
/// calling tree of thread `thread_id` (the calling thread's when it is ≤ 0)
/// and sets `*level` to the number of routines in it; option 3 writes the
/// profile file and prints it. Unit ≤ 0 is stderr, 6 is stdout, any other
/// unit is written by the Fortran companion (`dr_hook_watch_mod.F90`'s
/// `drhook_fortran_write`) when it is linked, else stderr with a warning;
/// other options are not available (a warning is printed once).
///
/// # Safety
/// Pointers null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn c_drhook_print_(
    ftnunitno: *const c_int,
    thread_id: *const c_int,
    print_option: *const c_int,
    level: *mut c_int,
) {
    guard("c_drhook_print_", (), || {
        if !crate::init::ensure() {
            return;
        }
        // SAFETY: caller contract.
        let (unit, tid, option) = unsafe {
            (
                opt_int(ftnunitno).unwrap_or(0),
                opt_int(thread_id).unwrap_or(0),
                opt_int(print_option).unwrap_or(2),
            )
        };
        let text = match option {
            2 => {
                let own = drhook::engine::current_thread_number();
                let mut buf = Vec::new();
                match own {
                    Some(own) if tid > 0 && tid as u32 != own => {
                        // Another thread's tree, read as the crash handler
                        // reads it; nothing if no thread has that number.
                        let _ = drhook::print_calltree_of_to(tid as u32, &mut buf);
                    }
                    _ => {
                        let _ = drhook::print_calltree_to(&mut buf);
                    }
                }
                let routines = String::from_utf8_lossy(&buf)
                    .lines()
                    .filter(|l| l.contains("[DrHookCallTree] :"))
                    .count();
                if !level.is_null() {
                    // SAFETY: caller contract.
                    unsafe { level.write_unaligned(routines.min(c_int::MAX as usize) as c_int) };
                }
                buf
            }
            3 => match drhook::write_profile() {
                Ok(Some(path)) => std::fs::read(path).unwrap_or_default(),
                _ => Vec::new(),
            },
            other => {
                warn_once(
                    Unimplemented::PrintOption,
                    "c_drhook_print_",
                    &format!(
                        "c_drhook_print_ option {other} is not implemented (2 = call tree and 3 = profile are)"
                    ),
                );
                return;
            }
        };
        let _ = match unit {
            6 => std::io::stdout()
                .write_all(&text)
                .and_then(|_| std::io::stdout().flush()),
            u if u > 0 && crate::compat::write_fortran_unit(u, &text) => Ok(()),
            u => {
                if u > 0 {
                    warn_once(
                        Unimplemented::FortranUnit,
                        "c_drhook_print_",
                        &format!(
                            "printing to Fortran unit {u} needs dr_hook_watch_mod.F90's object linked into the program; printing to stderr"
                        ),
                    );
                }
                std::io::stderr().write_all(&text)
            }
        };
    })
}
