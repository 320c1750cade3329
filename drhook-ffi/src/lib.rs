//! # drhook-ffi: `libdrhook` for C and Fortran
//!
//! The C and Fortran front door of the [`drhook`] engine, built as
//! `libdrhook.a` and `libdrhook.so`, so that legacy codes instrumented
//! with ECMWF's Dr.Hook (`USE YOMHOOK` in Fortran, `drhook.h` in C) switch
//! to this engine by compiling `fortran/yomhook.F90` with their own
//! compiler and linking `libdrhook` instead of the old library. It also
//! carries the libhpm C and Fortran API over the [`hpm`] crate.
//!
//! Every exported function catches panics ([`boundary`]); null pointers
//! and empty names are accepted. Only Dr.Hook and libhpm symbols are
//! exported (no generic names such as `abort_`, `oml_*`, `mpl_*`).
//!
//! ## Modules
//! * [`fortran`] — the `drhook_f_*` entry points `yomhook.F90` calls.
//! * [`c_api`] — `drhook.h`: `Dr_Hook`, `drhook_lhook`, the macros' entry
//!   points, and the reference's `c_drhook_*_` ABI.
//! * [`compat`] — the rest of the reference's ABI: watch points,
//!   `c_drhook_getenv_`, `c_drhook_raise_`, `c_drhook_memcounter_`, the
//!   `util_*` timers, `drhook_PREFIX`/`drhook_TIMESTR`,
//!   `trapfpe_slave_threads_`.
//! * [`cyg`] — `__cyg_profile_func_enter`/`_exit`: functions compiled with
//!   `-finstrument-functions` as regions of the same tree.
//! * [`hpm_api`] — `hpmInit`, ..., `f_hpminit`, ..., `hpm_error_count`.
//! * [`names`] — name address → site cache (no hashing on the hot path).
//! * [`hook`] — the shared enter/exit paths over engine handles.
//! * [`init`], [`omp`], [`switch`] — first-call set-up, OpenMP thread
//!   numbers, the C macros' switch `drhook_lhook`; [`mpi_assert`] — the
//!   reference's `DR_HOOK_ASSERT_MPI_INITIALIZED` at that first call.
//! * [`boundary`] — the panic boundary and once-only warnings.

pub mod boundary;
pub mod c_api;
pub mod compat;
pub mod cyg;
pub mod fortran;
pub mod hook;
pub mod hpm_api;
pub mod init;
pub mod mpi_assert;
pub mod names;
pub mod omp;
pub mod switch;

// The preload and wrap libraries (packages drhook-preload, drhook-wrap) are
// built from these sources with the lifecycle layer's wrappers exported;
// libdrhook itself exports none (see drhook-attach).
#[cfg(drhook_attach = "preload")]
drhook_attach::interpose!(preload);

/// `libdrhook` (and the preload and wrap libraries built from these
/// sources) keeps Dr.Hook's own data out of the program's `malloc` heap
/// (`drhook::__private::heap`): the engine's trees, names and profile
/// buffers are not placed between the program's blocks.
#[global_allocator]
static DRHOOK_HEAP: drhook::__private::heap::Heap = drhook::__private::heap::Heap;
#[cfg(drhook_attach = "wrap")]
drhook_attach::interpose!(wrap);
