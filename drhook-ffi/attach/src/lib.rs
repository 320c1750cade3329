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
//! ## Modules
//! * [`alloc`] — the `malloc` family, for the memory profile.
//! * [`io`] — the POSIX, stdio and AIO functions, for the I/O profile.
//! * `iotrace` — its per-operation trace of the files `DRHOOK_IO_TRACE`
//!   names.
//! * [`events`] — [`Monitor`], [`register`], [`Events`], [`Ending`].
//! * [`real`] — the real functions ([`real::Real`], [`real::fork`], ...).
//! * [`mpi`] — rank and size once MPI is initialised.
//! * [`wrap`] — the wrappers' bodies.
//! * `engine` — the built-in monitor: the process's Dr.Hook engine (the
//!   program's own copy if it has one, see `drhook::lifecycle`).

pub mod alloc;
pub mod events;
pub mod io;
mod iotrace;
pub mod mpi;
pub mod real;
pub mod wrap;

mod engine;
mod process;
mod tls;

pub use engine::{drhook_attach_register_engine_v1, is_programs_engine};
pub use events::{Ending, Events, ForkSide, Monitor, Process, TooManyMonitors, register};

/// Whether the Dr.Hook engine of this process is on (known once the
/// program's `main` is about to run).
pub fn drhook_on() -> bool {
    engine::on()
}

/// One line on stderr, without allocating (usable anywhere).
pub(crate) fn diag(msg: &str) {
    diag_name(msg, c"");
}

/// As [`diag`], with a name appended.
pub(crate) fn diag_name(msg: &str, name: &std::ffi::CStr) {
    let prefix = b"[drhook-attach] ";
    let n = name.to_bytes();
    // SAFETY: writes of valid buffers to stderr.
    unsafe {
        libc::write(2, prefix.as_ptr().cast(), prefix.len());
        libc::write(2, msg.as_ptr().cast(), msg.len());
        libc::write(2, n.as_ptr().cast(), n.len());
        libc::write(2, b"\n".as_ptr().cast(), 1);
    }
}

/// A `&'static CStr` from a string literal (for the macros).
#[doc(hidden)]
pub const fn __cstr(s: &'static str) -> &'static std::ffi::CStr {
    match std::ffi::CStr::from_bytes_with_nul(s.as_bytes()) {
        Ok(c) => c,
        Err(_) => panic!("not a C string"),
    }
}

/// Exports the wrapped functions: `interpose!(preload)` under their own
/// names (the preload library), `interpose!(wrap)` as `__wrap_<name>` with
/// the real ones from `__real_<name>` (the `--wrap` library). Invoke once,
/// in the crate that builds the library.
#[macro_export]
macro_rules! interpose {
    (preload) => {
        $crate::__interpose_all!("", preload);
        $crate::__interpose_alloc!("", preload);
        $crate::__interpose_io!("", preload);
    };
    (wrap) => {
        $crate::__interpose_all!("__wrap_", wrap);
        $crate::__interpose_alloc!("__wrap_", wrap);
    };
}

/// The real function `$name` of type `$ty`, in either mode.
#[macro_export]
#[doc(hidden)]
macro_rules! __real {
    (preload, $name:literal, $ty:ty) => {{
        static R: $crate::real::Real =
            $crate::real::Real::new($crate::__cstr(concat!($name, "\0")));
        match R.get() {
            // SAFETY: the next definition of the same function.
            Some(p) => unsafe { std::mem::transmute::<*mut std::ffi::c_void, $ty>(p) },
            None => $crate::wrap::missing(R.name()),
        }
    }};
    (wrap, $name:literal, $ty:ty) => {{
        mod w {
            $crate::__weak_address!(addr, concat!("__real_", $name));
        }
        let p = w::addr();
        if p.is_null() {
            $crate::wrap::missing($crate::__cstr(concat!($name, "\0")))
        } else {
            // SAFETY: `__real_<name>` is the wrapped function itself.
            unsafe { std::mem::transmute::<*mut std::ffi::c_void, $ty>(p) }
        }
    }};
}

/// Installs the `__real_<name>` functions as the real ones (wrap mode).
#[macro_export]
#[doc(hidden)]
macro_rules! __install {
    (preload) => {};
    (wrap) => {{
        unsafe extern "C" {
            fn __real___libc_start_main();
            fn __real_exit();
            fn __real__exit();
            fn __real__Exit();
            fn __real_abort();
            fn __real___assert_fail();
            fn __real_fork();
            fn __real_execve();
            fn __real_execvpe();
            fn __real_fexecve();
            fn __real_pthread_create();
            fn __real_pthread_exit();
            fn __real_dlopen();
            fn __real_dlclose();
        }
        use $crate::real::slots::*;
        let p = |f: unsafe extern "C" fn()| f as *const () as *mut std::ffi::c_void;
        $crate::real::set_link_mode();
        LIBC_START_MAIN.set(p(__real___libc_start_main));
        EXIT.set(p(__real_exit));
        UNDERSCORE_EXIT.set(p(__real__exit));
        UNDERSCORE_CAP_EXIT.set(p(__real__Exit));
        ABORT.set(p(__real_abort));
        ASSERT_FAIL.set(p(__real___assert_fail));
        FORK.set(p(__real_fork));
        EXECVE.set(p(__real_execve));
        EXECVPE.set(p(__real_execvpe));
        FEXECVE.set(p(__real_fexecve));
        PTHREAD_CREATE.set(p(__real_pthread_create));
        PTHREAD_EXIT.set(p(__real_pthread_exit));
        DLOPEN.set(p(__real_dlopen));
        DLCLOSE.set(p(__real_dlclose));
        $crate::wrap::DLOPEN_REAL.store(p(__real_dlopen), std::sync::atomic::Ordering::Release);
    }};
}

#[macro_export]
#[doc(hidden)]
macro_rules! __interpose_all {
    ($p:literal, $mode:ident) => {
        /// The functions the lifecycle layer wraps (`drhook-attach`).
        #[doc(hidden)]
        #[allow(clippy::missing_safety_doc, missing_docs)]
        pub mod __drhook_attach_exports {
            use std::ffi::{c_char, c_int, c_uint, c_void};
            use $crate::wrap;

            #[unsafe(export_name = concat!($p, "__libc_start_main"))]
            pub unsafe extern "C-unwind" fn start_main(
                main: wrap::MainFn,
                argc: c_int,
                argv: *mut *mut c_char,
                init: *mut c_void,
                fini: *mut c_void,
                rtld_fini: *mut c_void,
                stack_end: *mut c_void,
            ) -> c_int {
                $crate::__install!($mode);
                let real = $crate::__real!($mode, "__libc_start_main", wrap::StartMainFn);
                // SAFETY: libc's own arguments.
                unsafe { wrap::libc_start_main(real, main, argc, argv, init, fini, rtld_fini, stack_end) }
            }

            #[unsafe(export_name = concat!($p, "exit"))]
            pub extern "C" fn exit(status: c_int) -> ! {
                wrap::exit(status)
            }

            #[unsafe(export_name = concat!($p, "_exit"))]
            pub extern "C" fn underscore_exit(status: c_int) -> ! {
                wrap::underscore_exit(status)
            }

            #[unsafe(export_name = concat!($p, "_Exit"))]
            pub extern "C" fn underscore_cap_exit(status: c_int) -> ! {
                wrap::underscore_cap_exit(status)
            }

            #[unsafe(export_name = concat!($p, "abort"))]
            pub extern "C" fn abort() -> ! {
                wrap::abort()
            }

            #[unsafe(export_name = concat!($p, "__assert_fail"))]
            pub unsafe extern "C" fn assert_fail(
                a: *const c_char,
                f: *const c_char,
                l: c_uint,
                func: *const c_char,
            ) -> ! {
                // SAFETY: libc's contract.
                unsafe { wrap::assert_fail(a, f, l, func) }
            }

            #[unsafe(export_name = concat!($p, "fork"))]
            pub extern "C" fn fork() -> libc::pid_t {
                wrap::fork()
            }

            #[unsafe(export_name = concat!($p, "vfork"))]
            pub extern "C" fn vfork() -> libc::pid_t {
                wrap::fork()
            }

            #[unsafe(export_name = concat!($p, "execve"))]
            pub unsafe extern "C-unwind" fn execve(
                f: *const c_char,
                a: *const *const c_char,
                e: *const *const c_char,
            ) -> c_int {
                // SAFETY: libc's contract.
                unsafe { wrap::exec(wrap::ExecKind::PathEnv, f, a, e) }
            }

            #[unsafe(export_name = concat!($p, "execv"))]
            pub unsafe extern "C-unwind" fn execv(f: *const c_char, a: *const *const c_char) -> c_int {
                // SAFETY: libc's contract.
                unsafe { wrap::exec(wrap::ExecKind::Path, f, a, std::ptr::null()) }
            }

            #[unsafe(export_name = concat!($p, "execvp"))]
            pub unsafe extern "C-unwind" fn execvp(f: *const c_char, a: *const *const c_char) -> c_int {
                // SAFETY: libc's contract.
                unsafe { wrap::exec(wrap::ExecKind::Search, f, a, std::ptr::null()) }
            }

            #[unsafe(export_name = concat!($p, "execvpe"))]
            pub unsafe extern "C-unwind" fn execvpe(
                f: *const c_char,
                a: *const *const c_char,
                e: *const *const c_char,
            ) -> c_int {
                // SAFETY: libc's contract.
                unsafe { wrap::exec(wrap::ExecKind::SearchEnv, f, a, e) }
            }

            // The variadic ones: a jump to their C implementation, which
            // finds the arguments where the caller put them.
            $crate::__variadic_trampoline!($p, "execl", execl, drhook_attach_c_execl);
            $crate::__variadic_trampoline!($p, "execlp", execlp, drhook_attach_c_execlp);
            $crate::__variadic_trampoline!($p, "execle", execle, drhook_attach_c_execle);

            #[unsafe(export_name = concat!($p, "fexecve"))]
            pub unsafe extern "C-unwind" fn fexecve(
                fd: c_int,
                a: *const *const c_char,
                e: *const *const c_char,
            ) -> c_int {
                // SAFETY: libc's contract.
                unsafe { wrap::fexecve(fd, a, e) }
            }

            #[unsafe(export_name = concat!($p, "pthread_create"))]
            pub unsafe extern "C" fn pthread_create(
                t: *mut libc::pthread_t,
                attr: *const libc::pthread_attr_t,
                start: wrap::StartFn,
                arg: *mut c_void,
            ) -> c_int {
                // SAFETY: libc's contract.
                unsafe { wrap::pthread_create(t, attr, start, arg) }
            }

            #[unsafe(export_name = concat!($p, "pthread_exit"))]
            pub extern "C-unwind" fn pthread_exit(value: *mut c_void) -> ! {
                wrap::pthread_exit(value)
            }

            #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
            #[unsafe(naked)]
            #[unsafe(export_name = concat!($p, "dlopen"))]
            pub unsafe extern "C" fn dlopen() {
                #[cfg(target_arch = "x86_64")]
                std::arch::naked_asm!("jmp {f}", f = sym wrap::dlopen_fast);
                #[cfg(target_arch = "aarch64")]
                std::arch::naked_asm!("b {f}", f = sym wrap::dlopen_fast);
            }

            #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
            #[unsafe(export_name = concat!($p, "dlopen"))]
            pub unsafe extern "C" fn dlopen(f: *const c_char, flags: c_int) -> *mut c_void {
                // SAFETY: libc's contract.
                unsafe { wrap::dlopen_slow(f, flags) }
            }

            #[unsafe(export_name = concat!($p, "dlclose"))]
            pub unsafe extern "C" fn dlclose(h: *mut c_void) -> c_int {
                // SAFETY: libc's contract.
                unsafe { wrap::dlclose(h) }
            }

            // MPI, C bindings.
            type Init = unsafe extern "C" fn(*mut c_int, *mut *mut *mut c_char) -> c_int;
            type InitThread =
                unsafe extern "C" fn(*mut c_int, *mut *mut *mut c_char, c_int, *mut c_int) -> c_int;
            type Finalize = unsafe extern "C" fn() -> c_int;

            #[unsafe(export_name = concat!($p, "MPI_Init"))]
            pub unsafe extern "C" fn mpi_init(argc: *mut c_int, argv: *mut *mut *mut c_char) -> c_int {
                let real = $crate::__real!($mode, "MPI_Init", Init);
                // SAFETY: MPI's contract.
                unsafe { wrap::mpi_init(real, argc, argv) }
            }

            #[unsafe(export_name = concat!($p, "MPI_Init_thread"))]
            pub unsafe extern "C" fn mpi_init_thread(
                argc: *mut c_int,
                argv: *mut *mut *mut c_char,
                required: c_int,
                provided: *mut c_int,
            ) -> c_int {
                let real = $crate::__real!($mode, "MPI_Init_thread", InitThread);
                // SAFETY: MPI's contract.
                unsafe { wrap::mpi_init_thread(real, argc, argv, required, provided) }
            }

            #[unsafe(export_name = concat!($p, "MPI_Finalize"))]
            pub unsafe extern "C" fn mpi_finalize() -> c_int {
                let real = $crate::__real!($mode, "MPI_Finalize", Finalize);
                // SAFETY: MPI's contract.
                unsafe { wrap::mpi_finalize(real) }
            }

            // MPI, Fortran bindings, in the name manglings compilers use.
            $crate::__fortran_mpi!($p, $mode, "mpi_init_", "mpi_init_thread_", "mpi_finalize_", f1);
            $crate::__fortran_mpi!($p, $mode, "mpi_init__", "mpi_init_thread__", "mpi_finalize__", f2);
            $crate::__fortran_mpi!($p, $mode, "mpi_init", "mpi_init_thread", "mpi_finalize", f3);
            $crate::__fortran_mpi!($p, $mode, "MPI_INIT", "MPI_INIT_THREAD", "MPI_FINALIZE", f4);
        }
    };
}

#[macro_export]
#[doc(hidden)]
macro_rules! __variadic_trampoline {
    ($p:literal, $name:literal, $f:ident, $c:ident) => {
        #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
        #[unsafe(naked)]
        #[unsafe(export_name = concat!($p, $name))]
        pub unsafe extern "C" fn $f() {
            #[cfg(target_arch = "x86_64")]
            std::arch::naked_asm!("jmp {c}", c = sym $crate::wrap::c::$c);
            #[cfg(target_arch = "aarch64")]
            std::arch::naked_asm!("b {c}", c = sym $crate::wrap::c::$c);
        }
    };
}

#[macro_export]
#[doc(hidden)]
macro_rules! __fortran_mpi {
    ($p:literal, $mode:ident, $init:literal, $init_thread:literal, $fini:literal, $m:ident) => {
        #[allow(clippy::missing_safety_doc, missing_docs)]
        pub mod $m {
            use std::ffi::c_int;
            use $crate::wrap;
            type Init = unsafe extern "C" fn(*mut c_int);
            type InitThread = unsafe extern "C" fn(*const c_int, *mut c_int, *mut c_int);

            #[unsafe(export_name = concat!($p, $init))]
            pub unsafe extern "C" fn init(ierr: *mut c_int) {
                let real = $crate::__real!($mode, $init, Init);
                // SAFETY: the binding's contract.
                unsafe { wrap::mpi_init_f(real, ierr) }
            }

            #[unsafe(export_name = concat!($p, $init_thread))]
            pub unsafe extern "C" fn init_thread(
                required: *const c_int,
                provided: *mut c_int,
                ierr: *mut c_int,
            ) {
                let real = $crate::__real!($mode, $init_thread, InitThread);
                // SAFETY: the binding's contract.
                unsafe { wrap::mpi_init_thread_f(real, required, provided, ierr) }
            }

            #[unsafe(export_name = concat!($p, $fini))]
            pub unsafe extern "C" fn finalize(ierr: *mut c_int) {
                let real = $crate::__real!($mode, $fini, Init);
                // SAFETY: the binding's contract.
                unsafe { wrap::mpi_finalize_f(real, ierr) }
            }
        }
    };
}
