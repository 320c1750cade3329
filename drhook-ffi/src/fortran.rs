//! Entry points for `fortran/yomhook.F90`, the `YOMHOOK` module that
//! clients compile with their own compiler.
//!
//! The specifics of the generic `DR_HOOK` map onto them as follows:
//! `DR_HOOK_DEFAULT8` and `DR_HOOK_DEFAULT4` *are* [`dr_hook_default8_`]
//! and [`dr_hook_default4_`]: the module declares them as interfaces to
//! these external procedures, so a client's `CALL DR_HOOK(...)` lands here
//! directly, in the Fortran calling convention (arguments by reference, the
//! name's hidden length by value after them); `LHOOK` is the COMMON
//! variable `yomhook_lhook_` defined in `switch.rs`.
//! `DR_HOOK_FILE`, `_SIZE`, `_FILE_SIZE` and the `MULTI` forms (one call per
//! element, on the OpenMP thread that owns it) are module procedures that
//! call [`drhook_f_enter8_fs`] / [`drhook_f_exit8_fs`] through `BIND(C)`
//! interfaces. The `drhook_f_enter8`/`_exit8`/`_enter4`/`_exit4`/`_enter8r`/
//! `_enter4r` entry points are what `yomhook.F90` called before; they stay
//! for modules compiled from that version.

use std::ffi::{c_char, c_int};
use std::sync::atomic::Ordering;

use drhook::engine;

use crate::boundary::guard;
use crate::switch::fortran_lhook;
use crate::{hook, names};

/// `DR_HOOK(CDNAME, KSWITCH, PKEY)` with an 8-byte `REAL` `PKEY`: the
/// specific `DR_HOOK_DEFAULT8` of `yomhook.F90`, called by client code
/// directly. `KSWITCH` 0 enters the routine `CDNAME` and stores the handle
/// in `PKEY` (bit for bit); 1 leaves the activation `PKEY` designates;
/// anything else does nothing, as does an enter while `LHOOK` is
/// `.FALSE.`, and an exit then unless `PKEY` is the top of the stack (a
/// region entered is left; the reference would leave it open). The first
/// call reads the environment; when Dr.Hook is off, an enter stores 0 and
/// sets `LHOOK = .FALSE.`.
///
/// The fast paths (a name in its slot of the direct-mapped table, the
/// engine's call-free enter and exit) make no call and save no register;
/// everything else is one tail call to an out-of-line function with the
/// panic guard.
///
/// # Safety
/// The Fortran calling convention of gfortran (≥ 8) and flang-new (see
/// the crate's README for other compilers): `name` valid for `name_len`
/// bytes (or null), `kswitch` and `pkey` valid (non-optional dummy
/// arguments are always present).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dr_hook_default8_(
    name: *const c_char,
    kswitch: *const i32,
    pkey: *mut u64,
    name_len: usize,
) {
    // SAFETY: caller contract.
    let k = unsafe { kswitch.read_unaligned() };
    if k == 0 {
        if fortran_lhook().load(Ordering::Relaxed) == 0 {
            return;
        }
        if let Some(site) = names::first_site(name.cast(), name_len) {
            if let Some(h) = engine::enter_handle_fast(site, true) {
                // SAFETY: caller contract.
                unsafe { pkey.write_unaligned(h) };
                return;
            }
        }
        // SAFETY: caller contract.
        unsafe { enter8_other(name, pkey, name_len) }
    } else if k == 1 {
        // SAFETY: caller contract.
        let h = unsafe { pkey.read_unaligned() };
        // A region entered is left even if `LHOOK` became .FALSE. since
        // (the handle is the top of the stack); anything else is ignored
        // then, as by the reference, so `LHOOK` is read on the slow path.
        if engine::exit_handle_fast(h, true) {
            return;
        }
        if fortran_lhook().load(Ordering::Relaxed) == 0 {
            return;
        }
        // SAFETY: caller contract.
        unsafe { exit8_slow(name, h, name_len) }
    }
}

/// An enter whose name is not a cached read-only literal: a name in
/// writable memory (flang copies literals to the stack before the call) is
/// looked up in the text-checked cache, still without a call; anything
/// else takes the slow path.
///
/// # Safety
/// As [`dr_hook_default8_`].
#[inline(never)]
unsafe fn enter8_other(name: *const c_char, pkey: *mut u64, name_len: usize) {
    // SAFETY: caller contract.
    let site = unsafe { names::writable::get(name.cast(), name_len) };
    if !site.is_null() {
        // SAFETY: cached sites are `&'static Site`s.
        if let Some(h) = engine::enter_handle_fast(unsafe { &*site }, true) {
            // SAFETY: caller contract.
            unsafe { pkey.write_unaligned(h) };
            return;
        }
    }
    // SAFETY: caller contract.
    unsafe { enter8r_slow(name, pkey, fortran_lhook().as_ptr(), name_len) }
}

/// As [`enter8_other`] for 4-byte handles.
///
/// # Safety
/// As [`dr_hook_default4_`].
#[inline(never)]
unsafe fn enter4_other(name: *const c_char, pkey: *mut u32, name_len: usize) {
    // SAFETY: caller contract.
    let site = unsafe { names::writable::get(name.cast(), name_len) };
    if !site.is_null() {
        // SAFETY: cached sites are `&'static Site`s.
        if let Some(h) = engine::enter_handle_fast(unsafe { &*site }, false) {
            // SAFETY: caller contract.
            unsafe { pkey.write_unaligned(h as u32) };
            return;
        }
    }
    // SAFETY: caller contract.
    unsafe { enter4r_slow(name, pkey, fortran_lhook().as_ptr(), name_len) }
}

/// As [`dr_hook_default8_`] with a 4-byte `REAL` `PKEY` (the specific
/// `DR_HOOK_DEFAULT4`, single-precision builds).
///
/// # Safety
/// As [`dr_hook_default8_`], with `pkey` valid for 4 bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dr_hook_default4_(
    name: *const c_char,
    kswitch: *const i32,
    pkey: *mut u32,
    name_len: usize,
) {
    // SAFETY: caller contract.
    let k = unsafe { kswitch.read_unaligned() };
    if k == 0 {
        if fortran_lhook().load(Ordering::Relaxed) == 0 {
            return;
        }
        if let Some(site) = names::first_site(name.cast(), name_len) {
            if let Some(h) = engine::enter_handle_fast(site, false) {
                // SAFETY: caller contract.
                unsafe { pkey.write_unaligned(h as u32) };
                return;
            }
        }
        // SAFETY: caller contract.
        unsafe { enter4_other(name, pkey, name_len) }
    } else if k == 1 {
        // SAFETY: caller contract.
        let h = unsafe { pkey.read_unaligned() };
        // A region entered is left even if `LHOOK` became .FALSE. since
        // (the handle is the top of the stack); anything else is ignored
        // then, as by the reference, so `LHOOK` is read on the slow path.
        if engine::exit_handle_fast(h as u64, false) {
            return;
        }
        if fortran_lhook().load(Ordering::Relaxed) == 0 {
            return;
        }
        // SAFETY: caller contract.
        unsafe { exit4_slow(name, h, name_len) }
    }
}

/// `DR_HOOK(CDNAME, 0, PKEY)` with an 8-byte `PKEY`: enters the routine and
/// returns the handle, which the module stores in `PKEY` bit for bit. 0
/// means that Dr.Hook is off (the module then sets `LHOOK = .FALSE.`). The
/// first call reads the environment.
///
/// The fast path (a name-table probe and the engine's call-free fast path)
/// cannot panic, so the panic guard sits on the slow path only: the fast
/// path then needs no landing pad and no saved registers.
///
/// # Safety
/// `name` must be valid for `name_len` bytes (or null).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn drhook_f_enter8(name: *const c_char, name_len: usize) -> u64 {
    if let Some(h) = enter_fast(name, name_len, true) {
        return h;
    }
    // SAFETY: caller contract.
    unsafe { enter8_slow(name, name_len) }
}

/// The call-free part of every enter: the name's first table slot, then
/// the engine's fast path. `None` when the slow path is needed. (Each entry
/// point inlines it: they call one another through the PLT otherwise.)
#[inline(always)]
fn enter_fast(name: *const c_char, name_len: usize, wide: bool) -> Option<u64> {
    let site = names::first(name.cast(), name_len);
    if site.is_null() {
        return None;
    }
    // SAFETY: cached sites are `&'static Site`s.
    engine::enter_handle_fast(unsafe { &*site }, wide)
}

/// The slow paths' first try with `memprof` (stampers that cannot panic):
/// the cached site (read-only literal or text-checked writable name), then
/// the engine's stamped enter, before the panic guard. `None` when the
/// full path is needed.
///
/// # Safety
/// `name` valid for `name_len` bytes (or null).
#[inline(always)]
unsafe fn enter_stamped(name: *const c_char, name_len: usize, wide: bool) -> Option<u64> {
    let mut site = names::first(name.cast(), name_len);
    if site.is_null() {
        // SAFETY: caller contract.
        site = unsafe { names::writable::get(name.cast(), name_len) };
    }
    // SAFETY: cached sites are `&'static Site`s.
    engine::enter_handle_stamped(unsafe { site.as_ref() }?, wide)
}

/// `DR_HOOK(CDNAME, 0, PKEY)` as `YOMHOOK` calls it: stores the handle in
/// `*pkey` (its bits) and, when Dr.Hook is off, clears the module's `LHOOK`
/// through `lhook`, so that the module procedure ends with this call as a
/// tail call. Otherwise as [`drhook_f_enter8`].
///
/// # Safety
/// As [`drhook_f_enter8`]; `pkey` valid for writing 8 bytes; `lhook` null
/// or the address of a default `LOGICAL`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn drhook_f_enter8r(
    name: *const c_char,
    pkey: *mut u64,
    lhook: *mut c_int,
    name_len: usize,
) {
    if let Some(h) = enter_fast(name, name_len, true) {
        store_handle(pkey, lhook, h);
        return;
    }
    // SAFETY: caller contract.
    unsafe { enter8r_slow(name, pkey, lhook, name_len) }
}

#[inline(never)]
unsafe extern "C" fn enter8r_slow(
    name: *const c_char,
    pkey: *mut u64,
    lhook: *mut c_int,
    name_len: usize,
) {
    // SAFETY: caller contract.
    let h = unsafe { enter8_slow(name, name_len) };
    store_handle(pkey, lhook, h);
}

/// Stores a handle for the module; 0 (Dr.Hook off) also clears `LHOOK`.
#[inline(always)]
fn store_handle<T>(pkey: *mut T, lhook: *mut c_int, h: T)
where
    T: PartialEq + Default,
{
    let off = h == T::default();
    if !pkey.is_null() {
        // SAFETY: caller contract of the entry points.
        unsafe { pkey.write_unaligned(h) };
    }
    if off && !lhook.is_null() {
        // SAFETY: `lhook` is the address of the module's default LOGICAL;
        // .FALSE. is 0 with every Fortran compiler.
        unsafe { lhook.write(0) };
    }
}

#[inline(never)]
unsafe extern "C" fn enter8_slow(name: *const c_char, name_len: usize) -> u64 {
    // SAFETY: caller contract.
    if let Some(h) = unsafe { enter_stamped(name, name_len, true) } {
        return h;
    }
    // SAFETY: caller contract.
    unsafe { enter8_guarded(name, name_len) }
}

#[inline(never)]
unsafe extern "C" fn enter8_guarded(name: *const c_char, name_len: usize) -> u64 {
    // SAFETY: caller contract.
    guard("drhook_f_enter8", 0, || unsafe {
        hook::enter64(name.cast(), name_len, std::ptr::null(), 0)
    })
}

/// `DR_HOOK(CDNAME, 1, PKEY)` with an 8-byte `PKEY` (passed by value, as its
/// bits): leaves the activation the handle designates. A handle that is not
/// the top of the calling thread's stack is ignored while `LHOOK` is
/// `.FALSE.`, else produces Dr.Hook's diagnostics and aborts; it is never
/// dereferenced. The name is only looked up on the slow
/// path (diagnostics, `DR_HOOK_STRICT_REGIONS`).
///
/// # Safety
/// As [`drhook_f_enter8`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn drhook_f_exit8(name: *const c_char, handle: u64, name_len: usize) {
    if engine::exit_handle_fast(handle, true) {
        return;
    }
    // As in `dr_hook_default8_`: not the top while `LHOOK` is .FALSE.
    if fortran_lhook().load(Ordering::Relaxed) == 0 {
        return;
    }
    // SAFETY: caller contract.
    unsafe { exit8_slow(name, handle, name_len) }
}

#[inline(never)]
unsafe extern "C" fn exit8_slow(name: *const c_char, handle: u64, name_len: usize) {
    if engine::exit_handle_stamped(handle, true, 0) {
        return;
    }
    // SAFETY: caller contract.
    unsafe { exit8_guarded(name, handle, name_len) }
}

#[inline(never)]
unsafe extern "C" fn exit8_guarded(name: *const c_char, handle: u64, name_len: usize) {
    // SAFETY: caller contract.
    guard("drhook_f_exit8", (), || unsafe {
        hook::exit64(handle, 0, name.cast(), name_len, std::ptr::null(), 0)
    })
}

/// `DR_HOOK(CDNAME, 0, PKEY)` with a 4-byte `PKEY` (`DR_HOOK_DEFAULT4`):
/// returns the 4-byte handle (0 when Dr.Hook is off).
///
/// # Safety
/// As [`drhook_f_enter8`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn drhook_f_enter4(name: *const c_char, name_len: usize) -> u32 {
    if let Some(h) = enter_fast(name, name_len, false) {
        return h as u32;
    }
    // SAFETY: caller contract.
    unsafe { enter4_slow(name, name_len) }
}

/// As [`drhook_f_enter8r`] for a 4-byte `PKEY` (`DR_HOOK_DEFAULT4`).
///
/// # Safety
/// As [`drhook_f_enter8r`], with `pkey` valid for 4 bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn drhook_f_enter4r(
    name: *const c_char,
    pkey: *mut u32,
    lhook: *mut c_int,
    name_len: usize,
) {
    if let Some(h) = enter_fast(name, name_len, false) {
        store_handle(pkey, lhook, h as u32);
        return;
    }
    // SAFETY: caller contract.
    unsafe { enter4r_slow(name, pkey, lhook, name_len) }
}

#[inline(never)]
unsafe extern "C" fn enter4r_slow(
    name: *const c_char,
    pkey: *mut u32,
    lhook: *mut c_int,
    name_len: usize,
) {
    // SAFETY: caller contract.
    let h = unsafe { enter4_slow(name, name_len) };
    store_handle(pkey, lhook, h);
}

#[inline(never)]
unsafe extern "C" fn enter4_slow(name: *const c_char, name_len: usize) -> u32 {
    // SAFETY: caller contract.
    if let Some(h) = unsafe { enter_stamped(name, name_len, false) } {
        return h as u32;
    }
    // SAFETY: caller contract.
    unsafe { enter4_guarded(name, name_len) }
}

#[inline(never)]
unsafe extern "C" fn enter4_guarded(name: *const c_char, name_len: usize) -> u32 {
    // SAFETY: caller contract.
    guard("drhook_f_enter4", 0, || unsafe {
        hook::enter32(name.cast(), name_len)
    })
}

/// `DR_HOOK(CDNAME, 1, PKEY)` with a 4-byte `PKEY` (`DR_HOOK_DEFAULT4`).
///
/// # Safety
/// As [`drhook_f_enter8`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn drhook_f_exit4(name: *const c_char, handle: u32, name_len: usize) {
    if engine::exit_handle_fast(handle as u64, false) {
        return;
    }
    // As in `dr_hook_default8_`: not the top while `LHOOK` is .FALSE.
    if fortran_lhook().load(Ordering::Relaxed) == 0 {
        return;
    }
    // SAFETY: caller contract.
    unsafe { exit4_slow(name, handle, name_len) }
}

#[inline(never)]
unsafe extern "C" fn exit4_slow(name: *const c_char, handle: u32, name_len: usize) {
    if engine::exit_handle_stamped(handle as u64, false, 0) {
        return;
    }
    // SAFETY: caller contract.
    unsafe { exit4_guarded(name, handle, name_len) }
}

#[inline(never)]
unsafe extern "C" fn exit4_guarded(name: *const c_char, handle: u32, name_len: usize) {
    // SAFETY: caller contract.
    guard("drhook_f_exit4", (), || unsafe {
        hook::exit32(handle, name.cast(), name_len)
    })
}

/// Enter with a file name (`DR_HOOK_FILE`, `DR_HOOK_FILE_SIZE`, their
/// `MULTI` forms; `file_len == 0` means no file, as for `DR_HOOK_SIZE`).
/// Profile rows of such a routine read `NAME@tid:file` (basename).
/// Returns the handle, 0 when Dr.Hook is off.
///
/// # Safety
/// `name`/`file` valid for their lengths (or null).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn drhook_f_enter8_fs(
    name: *const c_char,
    file: *const c_char,
    name_len: usize,
    file_len: usize,
) -> u64 {
    // SAFETY: caller contract.
    guard("drhook_f_enter8_fs", 0, || unsafe {
        hook::enter64(name.cast(), name_len, file.cast(), file_len)
    })
}

/// Exit with a file name and size information (`KSIZEINFO`, accumulated
/// into the routine's size statistics; values ≤ 0 mean none).
///
/// # Safety
/// As [`drhook_f_enter8_fs`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn drhook_f_exit8_fs(
    name: *const c_char,
    file: *const c_char,
    handle: u64,
    size: i64,
    name_len: usize,
    file_len: usize,
) {
    // SAFETY: caller contract.
    guard("drhook_f_exit8_fs", (), || unsafe {
        hook::exit64(
            handle,
            hook::size_of_arg(size),
            name.cast(),
            name_len,
            file.cast(),
            file_len,
        )
    })
}

/// `DR_HOOK_INIT`: reads the environment and returns 1 when Dr.Hook is on
/// (`LHOOK` is set from it), 0 otherwise.
#[unsafe(no_mangle)]
pub extern "C" fn drhook_f_init() -> c_int {
    guard("drhook_f_init", 0, || {
        c_int::from(crate::init::ensure_fortran())
    })
}

/// `DR_HOOK_END`: writes the profile now (when one was asked for with
/// `DR_HOOK_OPT=prof`/`cpuprof`), e.g. before `MPI_Finalize`. Unlike the
/// reference, whose inverted guard makes `DR_HOOK_END` a no-op, this writes
/// it; the write at process exit still happens, with the final numbers.
#[unsafe(no_mangle)]
pub extern "C" fn drhook_f_end() {
    guard("drhook_f_end", (), || {
        if crate::init::ensure() {
            let _ = drhook::write_profile();
        }
    })
}

/// `DR_HOOK_CALLTREE([KTID])`: prints the current calling tree of thread
/// `KTID` on stderr (`ktid` ≤ 0 = the calling thread; another thread's
/// stack is read as the crash handler reads it).
#[unsafe(no_mangle)]
pub extern "C" fn drhook_f_calltree(ktid: c_int) {
    guard("drhook_f_calltree", (), || {
        if !crate::init::ensure() {
            return;
        }
        let own = drhook::engine::current_thread_number();
        if ktid > 0 && own.is_some_and(|t| t != ktid as u32) {
            let mut buf = Vec::new();
            let _ = drhook::print_calltree_of_to(ktid as u32, &mut buf);
            drhook::linebuf::write_all(2, &buf);
        } else {
            drhook::print_calltree();
        }
    })
}
