//! The libhpm C and Fortran API (HPM Toolkit guide §3.7, §3.10) over
//! [`hpm::libhpm`]: `hpmInit`, `hpmStart`, ... for C (`libhpm.h`), the
//! `f_hpm*` subroutines for Fortran (`f_hpm.h`, implicit interfaces, hidden
//! `size_t` string lengths), and the global `int hpm_error_count`.
//!
//! No function stops the program: errors are counted in `hpm_error_count`
//! and printed as `hpm ERROR - ...` by the `hpm` crate.

use std::ffi::{c_char, c_int};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use hpm::libhpm;

use crate::boundary::guard;
use crate::names;

/// Number of libhpm errors so far (the guide's `hpm_error_count`); C code
/// tests it after each call, Fortran code through the `COMMON` block that
/// `f_hpm.h` binds to it, or with `f_hpm_error()`.
#[allow(non_upper_case_globals)]
#[unsafe(no_mangle)]
pub static mut hpm_error_count: c_int = 0;

/// `hpm_error_count`, accessed atomically.
fn error_count_var() -> &'static AtomicI32 {
    // SAFETY: an aligned `int` living for the whole program, only accessed
    // atomically from Rust.
    unsafe { AtomicI32::from_ptr(&raw mut hpm_error_count) }
}

fn install_error_hook() {
    // No `Once` (a `fork` child must never find one half run): setting the
    // hook again does nothing.
    static DONE: AtomicBool = AtomicBool::new(false);
    if !DONE.load(Ordering::Acquire) {
        libhpm::set_error_hook(|total, _| {
            error_count_var().store(total.min(i32::MAX as u64) as i32, Ordering::Relaxed);
        });
        DONE.store(true, Ordering::Release);
    }
}

/// Runs a libhpm call behind the panic boundary, with the error hook in
/// place, and brings `hpm_error_count` up to date afterwards (a panic in
/// this layer counts as an error too).
fn call(entry: &'static str, f: impl FnOnce()) {
    install_error_hook();
    let ok = guard(entry, false, || {
        f();
        true
    });
    if !ok {
        libhpm::report_error(&hpm::HpmError::Internal(format!("panic in {entry}")));
    }
    error_count_var().store(
        libhpm::error_count().min(i32::MAX as u64) as i32,
        Ordering::Relaxed,
    );
}

/// Text of a C string argument (empty for null).
///
/// # Safety
/// `p` null or NUL-terminated.
unsafe fn c_text(p: *const c_char) -> String {
    // SAFETY: caller contract.
    unsafe { names::trimmed_text(names::bytes(p.cast(), names::c_strlen(p))).into_owned() }
}

/// Text of a Fortran string argument (blank padded, not NUL terminated).
///
/// # Safety
/// `p` null or valid for `len` bytes.
unsafe fn f_text(p: *const c_char, len: usize) -> String {
    // SAFETY: caller contract.
    unsafe { names::trimmed_text(names::bytes(p.cast(), len)).into_owned() }
}

/// Reads a Fortran `INTEGER` argument (null reads as 0).
///
/// # Safety
/// `p` null or valid.
unsafe fn f_int(p: *const c_int) -> c_int {
    if p.is_null() {
        0
    } else {
        // SAFETY: caller contract.
        unsafe { p.read_unaligned() }
    }
}

/// Default program name when none is given: the executable's basename.
fn default_prog(name: String) -> String {
    if !name.is_empty() {
        return name;
    }
    let p = drhook::sysinfo::program_name();
    p.rsplit('/').next().unwrap_or("hpm").to_string()
}

// --- C --------------------------------------------------------------------

/// `hpmInit(taskID, progName)`: starts the libhpm session; `progName` is the
/// default output name (`<progName>.hpm`, `.viz`, `.csv`).
///
/// # Safety
/// `progName` null or NUL-terminated.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hpmInit(taskID: c_int, progName: *const c_char) {
    call("hpmInit", || {
        // SAFETY: caller contract.
        let name = unsafe { c_text(progName) };
        libhpm::init(taskID, &default_prog(name))
    });
}

/// `hpmStart(instID, label)`: starts section `instID` (same as `hpmTstart`
/// on Linux).
///
/// # Safety
/// `label` null or NUL-terminated.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hpmStart(instID: c_int, label: *const c_char) {
    call("hpmStart", || {
        // SAFETY: caller contract.
        let label = unsafe { c_text(label) };
        libhpm::start(instID, &label)
    });
}

/// `hpmStartx(instID, parID, label)`: starts a section with an explicit
/// parent (`HPM_AUTO_PARENT` 0, `HPM_ONLY_EXCLUSIVE` -1, `HPM_NO_PARENT` -2).
///
/// # Safety
/// `label` null or NUL-terminated.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hpmStartx(instID: c_int, parID: c_int, label: *const c_char) {
    call("hpmStartx", || {
        // SAFETY: caller contract.
        let label = unsafe { c_text(label) };
        libhpm::startx(instID, parID, &label)
    });
}

/// `hpmStop(instID)`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn hpmStop(instID: c_int) {
    call("hpmStop", || libhpm::stop(instID));
}

/// `hpmTstart(instID, label)`: starts a section on the calling thread.
///
/// # Safety
/// `label` null or NUL-terminated.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hpmTstart(instID: c_int, label: *const c_char) {
    call("hpmTstart", || {
        // SAFETY: caller contract.
        let label = unsafe { c_text(label) };
        libhpm::tstart(instID, &label)
    });
}

/// `hpmTstartx(instID, parID, label)`.
///
/// # Safety
/// `label` null or NUL-terminated.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn hpmTstartx(instID: c_int, parID: c_int, label: *const c_char) {
    call("hpmTstartx", || {
        // SAFETY: caller contract.
        let label = unsafe { c_text(label) };
        libhpm::tstartx(instID, parID, &label)
    });
}

/// `hpmTstop(instID)`.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn hpmTstop(instID: c_int) {
    call("hpmTstop", || libhpm::tstop(instID));
}

/// `hpmTerminate(taskID)`: stops running sections and writes the outputs.
#[allow(non_snake_case)]
#[unsafe(no_mangle)]
pub extern "C" fn hpmTerminate(taskID: c_int) {
    call("hpmTerminate", || libhpm::terminate(taskID));
}

// --- Fortran (implicit interfaces: by reference, hidden size_t lengths) ----

/// `CALL f_hpminit(taskID, progName)`.
///
/// # Safety
/// Pointers null or valid; `name` valid for `name_len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn f_hpminit_(task_id: *const c_int, name: *const c_char, name_len: usize) {
    call("f_hpminit", || {
        // SAFETY: caller contract.
        let (t, n) = unsafe { (f_int(task_id), f_text(name, name_len)) };
        libhpm::init(t, &default_prog(n))
    });
}

/// `CALL f_hpmstart(instID, label)`.
///
/// # Safety
/// As [`f_hpminit_`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn f_hpmstart_(id: *const c_int, label: *const c_char, label_len: usize) {
    call("f_hpmstart", || {
        // SAFETY: caller contract.
        let (i, l) = unsafe { (f_int(id), f_text(label, label_len)) };
        libhpm::start(i, &l)
    });
}

/// `CALL f_hpmstartx(instID, parID, label)`.
///
/// # Safety
/// As [`f_hpminit_`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn f_hpmstartx_(
    id: *const c_int,
    parent: *const c_int,
    label: *const c_char,
    label_len: usize,
) {
    call("f_hpmstartx", || {
        // SAFETY: caller contract.
        let (i, p, l) = unsafe { (f_int(id), f_int(parent), f_text(label, label_len)) };
        libhpm::startx(i, p, &l)
    });
}

/// `CALL f_hpmstop(instID)`.
///
/// # Safety
/// `id` null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn f_hpmstop_(id: *const c_int) {
    call("f_hpmstop", || {
        // SAFETY: caller contract.
        let i = unsafe { f_int(id) };
        libhpm::stop(i)
    });
}

/// `CALL f_hpmtstart(instID, label)`.
///
/// # Safety
/// As [`f_hpminit_`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn f_hpmtstart_(id: *const c_int, label: *const c_char, label_len: usize) {
    call("f_hpmtstart", || {
        // SAFETY: caller contract.
        let (i, l) = unsafe { (f_int(id), f_text(label, label_len)) };
        libhpm::tstart(i, &l)
    });
}

/// `CALL f_hpmtstartx(instID, parID, label)`.
///
/// # Safety
/// As [`f_hpminit_`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn f_hpmtstartx_(
    id: *const c_int,
    parent: *const c_int,
    label: *const c_char,
    label_len: usize,
) {
    call("f_hpmtstartx", || {
        // SAFETY: caller contract.
        let (i, p, l) = unsafe { (f_int(id), f_int(parent), f_text(label, label_len)) };
        libhpm::tstartx(i, p, &l)
    });
}

/// `CALL f_hpmtstop(instID)`.
///
/// # Safety
/// `id` null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn f_hpmtstop_(id: *const c_int) {
    call("f_hpmtstop", || {
        // SAFETY: caller contract.
        let i = unsafe { f_int(id) };
        libhpm::tstop(i)
    });
}

/// `CALL f_hpmterminate(taskID)`.
///
/// # Safety
/// `task_id` null or valid.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn f_hpmterminate_(task_id: *const c_int) {
    call("f_hpmterminate", || {
        // SAFETY: caller contract.
        let t = unsafe { f_int(task_id) };
        libhpm::terminate(t)
    });
}

/// `LOGICAL FUNCTION f_hpm_error()`: `.TRUE.` (1) when a libhpm error has
/// occurred.
#[unsafe(no_mangle)]
pub extern "C" fn f_hpm_error_() -> c_int {
    guard("f_hpm_error", 0, || c_int::from(libhpm::error_count() > 0))
}
