//! `DR_HOOK_ASSERT_MPI_INITIALIZED`: the reference's `DR_HOOK_INIT`
//! aborts at the first Dr.Hook call of an MPI-launched process when MPI is
//! not initialised yet (it used to call `MPL_INIT` itself, and no longer
//! does). Checked here, as there, at the process's first Dr.Hook call when
//! it is a Fortran one (`DR_HOOK`, `DR_HOOK_INIT`: [`crate::init::ensure_fortran`]);
//! C macros and compiler hooks do not make it (the reference's C entry
//! points never did, and an instrumented `main` is always entered before
//! `MPI_Init`), nor does the `main` region the preload library opens before
//! `MPI_Init` under `drhook run`.

use std::ffi::{c_int, c_void};

/// The reference's file and line of its `ABOR1FL` call (`dr_hook_init.F90`).
const FILE: &str = "dr_hook_init.F90";
const LINE: u32 = 115;
/// The reference's message, its two lines.
pub const MESSAGE: &str = "DR_HOOK no longer calls MPL_INIT. Please initialize MPI (or MPL) before first DR_HOOK call.\n\
This assertion can be disabled with environment: DR_HOOK_ASSERT_MPI_INITIALIZED=0";

/// Aborts with the reference's message when the assertion is required
/// ([`drhook::config::mpi_assertion_required`]) and MPI is not initialised
/// (`MPI_Initialized` says so, or the process has no MPI library).
pub fn check() {
    if !drhook::config::mpi_assertion_required(drhook::env::process_env) {
        return;
    }
    match mpi_initialized() {
        Some(true) => {}
        Some(false) | None => drhook::abort::drhook_abort(FILE, LINE, MESSAGE),
    }
}

/// `MPI_Initialized` of the process's MPI library: `None` without one (or
/// when it fails, which the reference treats as fatal too).
fn mpi_initialized() -> Option<bool> {
    let f = real_mpi_initialized()?;
    // SAFETY: `f` is MPI's `int MPI_Initialized(int *flag)`.
    let f: unsafe extern "C" fn(*mut c_int) -> c_int =
        unsafe { std::mem::transmute::<*mut c_void, _>(f) };
    let mut flag: c_int = 0;
    // SAFETY: `flag` is a valid `int` for MPI to write.
    let rc = unsafe { f(&mut flag) };
    (rc == 0).then_some(flag != 0)
}

/// The MPI library's `MPI_Initialized`, not the wrapper the preload
/// library exports under that name (which calls it, or fails when it is
/// absent): the first definition in the process, or the next one after
/// this library's own.
fn real_mpi_initialized() -> Option<*mut c_void> {
    let name = c"MPI_Initialized";
    // SAFETY: RTLD_DEFAULT lookup of a NUL-terminated name.
    let f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    if f.is_null() {
        return None;
    }
    if !same_object(f, check as *const c_void) {
        return Some(f);
    }
    // SAFETY: RTLD_NEXT lookup, from this library, of a NUL-terminated name.
    let next = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) };
    (!next.is_null()).then_some(next)
}

/// Whether two addresses lie in the same loaded object.
fn same_object(a: *const c_void, b: *const c_void) -> bool {
    let base = |p: *const c_void| {
        // SAFETY: an all-zero `Dl_info` is valid (null pointers).
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is valid for writing; any address may be asked.
        (unsafe { libc::dladdr(p, &mut info) } != 0).then_some(info.dli_fbase)
    };
    matches!((base(a), base(b)), (Some(x), Some(y)) if x == y)
}
