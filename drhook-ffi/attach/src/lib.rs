//! # drhook-attach: Dr.Hook for unmodified programs
//!
//! A libmonitor-style lifecycle layer (seed 002): it sees every process,
//! thread, `fork`, `exec`, exit, `dlopen` and MPI start/end of a program
//! that knows nothing of it, and hands those events to the Dr.Hook engine
//! (root region `main` for the whole run, a root region per thread, the
//! profile written exactly once however the process ends, one profile per
//! process and per MPI rank) and to the tools built on it ([`Monitor`]).
//!
//! It is not a library one links by hand. Two libraries carry it, each
//! with the whole of `libdrhook` (so that a program linked with it finds
//! the same engine):
//!
//! * `libdrhook_preload.so` (package `drhook-preload`), used with
//!   `LD_PRELOAD` (or `drhook run`), exports the wrapped functions under
//!   their own names (`fork`, `exit`, `pthread_create`, ...);
//! * `libdrhook_wrap.a` (package `drhook-wrap`), for static programs,
//!   exports them as `__wrap_<name>`, used with the linker's
//!   `-Wl,--wrap=<name>` list shipped beside it.
//!
//! Both are made by [`interpose!`] in `drhook-ffi/src/lib.rs`; `libdrhook`
//! itself exports none of them and never interposes anything.
//!
//! ## For tools on the layer
//!
//! A tool (the memory and I/O interposers of the coming issues) is a
//! [`Monitor`] registered from its initialisation, and reaches the real
//! functions through [`real`]:
//!
//! ```no_run
//! use drhook_attach::{Ending, Events, Monitor, Process, register};
//!
//! struct Io;
//! impl Monitor for Io {
//!     fn events(&self) -> Events { Events::PROCESS | Events::THREADS }
//!     fn init_process(&self, p: &Process<'_>) { /* open per-process state */ }
//!     fn fini_process(&self, how: Ending) { /* write the report */ }
//! }
//! static IO: Io = Io;
//! register(&IO).expect("room for a monitor");
//! // A function of its own to wrap: looked up once, reentrancy-safe.
//! static REAL_READ: drhook_attach::real::Real = drhook_attach::real::Real::new(c"read");
//! ```
//!
//! Its own interposed symbols go into the preload library the same way the
//! layer's do (a macro invoked under `cfg(drhook_attach = ...)`), so that a
//! process has one layer and one engine.
//!
//! ## Layers
//!
//! Each part imports only from the parts listed before it, and a tool
//! never reaches into another tool (`tests/layering.rs` checks it):
//!
//! 1. [`sys`] — the per-thread words and guard bits, messages without
//!    allocating, `errno`, clocks, the environment read without allocating.
//! 2. [`real`] — the real functions ([`real::Real`], [`real::fork`], ...),
//!    looked up once; weak symbols for static programs.
//! 3. [`events`] — [`Monitor`], [`register`], [`Events`], [`Ending`]: what
//!    tools receive.
//! 4. [`engine`] — the built-in monitor: the process's Dr.Hook engine (the
//!    program's own copy if it has one, see `drhook::lifecycle`).
//! 5. [`lifecycle`] — the wrapped process, thread, `fork`, `exec`,
//!    `dlopen` and MPI functions, and the events they make ([`mpi`]: rank
//!    and size once MPI is initialised).
//! 6. The tools, each a folder: [`alloc`] (the `malloc` family, for the
//!    memory profile), [`io`] (the POSIX, stdio and AIO functions, for
//!    the I/O profile and its per-operation trace), [`mpi_calls`] (the
//!    MPI functions, each call a row of the calling tree, for
//!    `DR_HOOK_OPT=mpi`) and [`libmonitor`] (libmonitor's C interface: a
//!    preloaded C tool's callbacks).
//!
//! This file wires them: [`interpose!`] exports every wrapper, and starts
//! the tools with the process (the lifecycle knows none of them).

pub mod sys;

pub mod real;

pub mod events;

pub mod engine;

pub mod lifecycle;

pub mod alloc;
pub mod io;
pub mod libmonitor;
pub mod mpi_calls;

pub use engine::{drhook_attach_register_engine_v1, is_programs_engine};
pub use events::{Ending, Events, ForkSide, Monitor, Process, TooManyMonitors, register};
pub use lifecycle::mpi;

/// Whether the Dr.Hook engine of this process is on (known once the
/// program's `main` is about to run).
pub fn drhook_on() -> bool {
    engine::on()
}

/// A `&'static CStr` from a string literal (for the macros).
#[doc(hidden)]
pub const fn __cstr(s: &'static str) -> &'static std::ffi::CStr {
    match std::ffi::CStr::from_bytes_with_nul(s.as_bytes()) {
        Ok(c) => c,
        Err(_) => panic!("not a C string"),
    }
}

/// The tools that start with the process (from the trampoline around
/// `main`, after the engine, before the monitors' `init_process`): the I/O
/// profile registers its monitor when it is on.
#[doc(hidden)]
pub fn __start_tools() {
    io::register_if_enabled();
    libmonitor::start();
}

/// The tools' part of `__libc_start_main` (before the program's
/// constructors; preloaded only: a static program's C library is not set
/// up yet there).
#[doc(hidden)]
pub fn __start_main_tools() {
    if !real::link_mode() {
        libmonitor::start_main_init();
    }
}

/// A `fork`, `pthread_create` or `dlopen` before `main` (in a library's
/// constructor): the tools that see such events start there (libmonitor's
/// tool, as libmonitor does). Preloaded only.
#[doc(hidden)]
pub fn __pre_main_tools() {
    if !real::link_mode() {
        libmonitor::pre_main();
    }
}

/// Exports the wrapped functions: `interpose!(preload)` under their own
/// names (the preload library), `interpose!(wrap)` as `__wrap_<name>` with
/// the real ones from `__real_<name>` (the `--wrap` library). Invoke once,
/// in the crate that builds the library.
#[macro_export]
macro_rules! interpose {
    (preload) => {
        $crate::__interpose_lifecycle!(
            "",
            preload,
            $crate::__start_tools,
            $crate::__start_main_tools,
            $crate::__pre_main_tools
        );
        $crate::__interpose_alloc!("", preload);
        $crate::__interpose_io!("", preload);
        $crate::__interpose_mpi_calls!("", preload);
        $crate::__interpose_libmonitor!(preload);
    };
    (wrap) => {
        $crate::__interpose_lifecycle!(
            "__wrap_",
            wrap,
            $crate::__start_tools,
            $crate::__start_main_tools,
            $crate::__pre_main_tools
        );
        $crate::__interpose_alloc!("__wrap_", wrap);
        $crate::__interpose_mpi_calls!("__wrap_", wrap);
        $crate::__interpose_libmonitor!(wrap);
    };
}
