//! The exported wrappers of the lifecycle layer: the `__libc_start_main`,
//! exit, `fork`, `exec*`, thread, `dlopen` and MPI symbols that
//! [`crate::interpose!`] puts into the library that carries the layer,
//! each calling its body in this folder.

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
        $crate::lifecycle::dlopen::DLOPEN_REAL
            .store(p(__real_dlopen), std::sync::atomic::Ordering::Release);
    }};
}

#[macro_export]
#[doc(hidden)]
macro_rules! __interpose_lifecycle {
    ($p:literal, $mode:ident, $tools:path, $early:path, $pre_main:path) => {
        /// The functions the lifecycle layer wraps (`drhook-attach`).
        #[doc(hidden)]
        #[allow(clippy::missing_safety_doc, missing_docs)]
        pub mod __drhook_attach_exports {
            use std::ffi::{c_char, c_int, c_uint, c_void};
            use $crate::lifecycle as l;

            #[unsafe(export_name = concat!($p, "__libc_start_main"))]
            pub unsafe extern "C-unwind" fn start_main(
                main: l::start::MainFn,
                argc: c_int,
                argv: *mut *mut c_char,
                init: *mut c_void,
                fini: *mut c_void,
                rtld_fini: *mut c_void,
                stack_end: *mut c_void,
            ) -> c_int {
                $crate::__install!($mode);
                let real = $crate::__real!($mode, "__libc_start_main", l::start::StartMainFn);
                $early();
                // SAFETY: libc's own arguments.
                unsafe { l::start::libc_start_main(real, $tools, main, argc, argv, init, fini, rtld_fini, stack_end) }
            }

            #[unsafe(export_name = concat!($p, "exit"))]
            pub extern "C" fn exit(status: c_int) -> ! {
                l::exit::exit(status)
            }

            #[unsafe(export_name = concat!($p, "_exit"))]
            pub extern "C" fn underscore_exit(status: c_int) -> ! {
                l::exit::underscore_exit(status)
            }

            #[unsafe(export_name = concat!($p, "_Exit"))]
            pub extern "C" fn underscore_cap_exit(status: c_int) -> ! {
                l::exit::underscore_cap_exit(status)
            }

            #[unsafe(export_name = concat!($p, "abort"))]
            pub extern "C" fn abort() -> ! {
                l::exit::abort()
            }

            #[unsafe(export_name = concat!($p, "__assert_fail"))]
            pub unsafe extern "C" fn assert_fail(
                a: *const c_char,
                f: *const c_char,
                l: c_uint,
                func: *const c_char,
            ) -> ! {
                // SAFETY: libc's contract.
                unsafe { l::exit::assert_fail(a, f, l, func) }
            }

            #[unsafe(export_name = concat!($p, "fork"))]
            pub extern "C" fn fork() -> libc::pid_t {
                if l::start::before_main() {
                    return fork_before_main();
                }
                l::fork::fork()
            }

            #[unsafe(export_name = concat!($p, "vfork"))]
            pub extern "C" fn vfork() -> libc::pid_t {
                if l::start::before_main() {
                    return fork_before_main();
                }
                l::fork::fork()
            }

            #[unsafe(export_name = concat!($p, "execve"))]
            pub unsafe extern "C-unwind" fn execve(
                f: *const c_char,
                a: *const *const c_char,
                e: *const *const c_char,
            ) -> c_int {
                // SAFETY: libc's contract.
                unsafe { l::exec::exec(l::exec::ExecKind::PathEnv, f, a, e) }
            }

            #[unsafe(export_name = concat!($p, "execv"))]
            pub unsafe extern "C-unwind" fn execv(f: *const c_char, a: *const *const c_char) -> c_int {
                // SAFETY: libc's contract.
                unsafe { l::exec::exec(l::exec::ExecKind::Path, f, a, std::ptr::null()) }
            }

            #[unsafe(export_name = concat!($p, "execvp"))]
            pub unsafe extern "C-unwind" fn execvp(f: *const c_char, a: *const *const c_char) -> c_int {
                // SAFETY: libc's contract.
                unsafe { l::exec::exec(l::exec::ExecKind::Search, f, a, std::ptr::null()) }
            }

            #[unsafe(export_name = concat!($p, "execvpe"))]
            pub unsafe extern "C-unwind" fn execvpe(
                f: *const c_char,
                a: *const *const c_char,
                e: *const *const c_char,
            ) -> c_int {
                // SAFETY: libc's contract.
                unsafe { l::exec::exec(l::exec::ExecKind::SearchEnv, f, a, e) }
            }

            // The variadic ones: a jump to their C implementation, which
            // finds the arguments where the caller put them.
            $crate::__variadic_trampoline!($p, "execl", execl, $crate::lifecycle::exec::c::drhook_attach_c_execl);
            $crate::__variadic_trampoline!($p, "execlp", execlp, $crate::lifecycle::exec::c::drhook_attach_c_execlp);
            $crate::__variadic_trampoline!($p, "execle", execle, $crate::lifecycle::exec::c::drhook_attach_c_execle);

            #[unsafe(export_name = concat!($p, "fexecve"))]
            pub unsafe extern "C-unwind" fn fexecve(
                fd: c_int,
                a: *const *const c_char,
                e: *const *const c_char,
            ) -> c_int {
                // SAFETY: libc's contract.
                unsafe { l::exec::fexecve(fd, a, e) }
            }

            #[unsafe(export_name = concat!($p, "pthread_create"))]
            pub unsafe extern "C" fn pthread_create(
                t: *mut libc::pthread_t,
                attr: *const libc::pthread_attr_t,
                start: l::threads::StartFn,
                arg: *mut c_void,
            ) -> c_int {
                if l::start::before_main() {
                    // SAFETY: libc's contract.
                    return unsafe { create_before_main(t, attr, start, arg) };
                }
                // SAFETY: libc's contract.
                unsafe { l::threads::pthread_create(t, attr, start, arg) }
            }

            /// The tools that see events before `main`, for a `dlopen`
            /// there (`c/pre_main.c`).
            #[unsafe(no_mangle)]
            pub extern "C" fn drhook_attach_pre_main_tools() {
                $pre_main();
            }

            /// `fork` before `main` (a library's constructor): the tools
            /// that see it start first. Out of line, so that the wrapper's
            /// own path stays a check and a jump.
            #[cold]
            #[inline(never)]
            fn fork_before_main() -> libc::pid_t {
                $pre_main();
                l::fork::fork()
            }

            /// `pthread_create` before `main`, as [`fork_before_main`].
            #[cold]
            #[inline(never)]
            unsafe fn create_before_main(
                t: *mut libc::pthread_t,
                attr: *const libc::pthread_attr_t,
                start: l::threads::StartFn,
                arg: *mut c_void,
            ) -> c_int {
                $pre_main();
                // SAFETY: libc's contract.
                unsafe { l::threads::pthread_create(t, attr, start, arg) }
            }

            #[unsafe(export_name = concat!($p, "pthread_exit"))]
            pub extern "C-unwind" fn pthread_exit(value: *mut c_void) -> ! {
                l::threads::pthread_exit(value)
            }

            #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
            #[unsafe(naked)]
            #[unsafe(export_name = concat!($p, "dlopen"))]
            pub unsafe extern "C" fn dlopen() {
                #[cfg(target_arch = "x86_64")]
                std::arch::naked_asm!("jmp {f}", f = sym l::dlopen::dlopen_fast);
                #[cfg(target_arch = "aarch64")]
                std::arch::naked_asm!("b {f}", f = sym l::dlopen::dlopen_fast);
            }

            #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
            #[unsafe(export_name = concat!($p, "dlopen"))]
            pub unsafe extern "C" fn dlopen(f: *const c_char, flags: c_int) -> *mut c_void {
                // SAFETY: libc's contract.
                unsafe { l::dlopen::dlopen_slow(f, flags) }
            }

            #[unsafe(export_name = concat!($p, "dlclose"))]
            pub unsafe extern "C" fn dlclose(h: *mut c_void) -> c_int {
                // SAFETY: libc's contract.
                unsafe { l::dlopen::dlclose(h) }
            }

            // MPI start and end.
            $crate::__mpi_lifecycle!($p, $mode);

            // Signal dispositions (preloaded only).
            $crate::__interpose_signals!($p, $mode);
        }
    };
}

/// `MPI_Init`, `MPI_Init_thread` and `MPI_Finalize`, C and Fortran
/// bindings, in the module `mpi_lifecycle`: in the lifecycle layer, and
/// in mode `pmpi` in the link-time library `libdrhook_mpi` (the real
/// functions are then the profiling interface's `PMPI_*`/`pmpi_*`).
#[macro_export]
#[doc(hidden)]
macro_rules! __mpi_lifecycle {
    ($p:literal, $mode:ident) => {
        #[allow(clippy::missing_safety_doc, missing_docs)]
        pub mod mpi_lifecycle {
            use std::ffi::{c_char, c_int};
            use $crate::lifecycle::mpi;

            type Init = unsafe extern "C" fn(*mut c_int, *mut *mut *mut c_char) -> c_int;
            type InitThread =
                unsafe extern "C" fn(*mut c_int, *mut *mut *mut c_char, c_int, *mut c_int) -> c_int;
            type Finalize = unsafe extern "C" fn() -> c_int;

            #[unsafe(export_name = concat!($p, "MPI_Init"))]
            pub unsafe extern "C" fn mpi_init(
                argc: *mut c_int,
                argv: *mut *mut *mut c_char,
            ) -> c_int {
                let real = $crate::__mpi_real!($mode, "P", "MPI_Init", Init);
                // SAFETY: MPI's contract.
                unsafe { mpi::mpi_init($crate::__mpi_layer!($mode), real, argc, argv) }
            }

            #[unsafe(export_name = concat!($p, "MPI_Init_thread"))]
            pub unsafe extern "C" fn mpi_init_thread(
                argc: *mut c_int,
                argv: *mut *mut *mut c_char,
                required: c_int,
                provided: *mut c_int,
            ) -> c_int {
                let real = $crate::__mpi_real!($mode, "P", "MPI_Init_thread", InitThread);
                let layer = $crate::__mpi_layer!($mode);
                // SAFETY: MPI's contract.
                unsafe { mpi::mpi_init_thread(layer, real, argc, argv, required, provided) }
            }

            #[unsafe(export_name = concat!($p, "MPI_Finalize"))]
            pub unsafe extern "C" fn mpi_finalize() -> c_int {
                let real = $crate::__mpi_real!($mode, "P", "MPI_Finalize", Finalize);
                // SAFETY: MPI's contract.
                unsafe { mpi::mpi_finalize($crate::__mpi_layer!($mode), real) }
            }

            // Fortran bindings, in the name manglings compilers use.
            $crate::__fortran_mpi!(
                $p,
                $mode,
                "p",
                "mpi_init_",
                "mpi_init_thread_",
                "mpi_finalize_",
                f1
            );
            $crate::__fortran_mpi!(
                $p,
                $mode,
                "p",
                "mpi_init__",
                "mpi_init_thread__",
                "mpi_finalize__",
                f2
            );
            $crate::__fortran_mpi!(
                $p,
                $mode,
                "p",
                "mpi_init",
                "mpi_init_thread",
                "mpi_finalize",
                f3
            );
            $crate::__fortran_mpi!(
                $p,
                $mode,
                "P",
                "MPI_INIT",
                "MPI_INIT_THREAD",
                "MPI_FINALIZE",
                f4
            );
            // `use mpi_f08` (its `ierror` optional: a null pointer).
            $crate::__fortran_mpi!(
                $p,
                $mode,
                "p",
                "mpi_init_f08_",
                "mpi_init_thread_f08_",
                "mpi_finalize_f08_",
                f5
            );
        }
    };
}

/// The [`crate::lifecycle::mpi::Layer`] of the wrappers of a mode:
/// `pmpi` is the link-time library's.
#[macro_export]
#[doc(hidden)]
macro_rules! __mpi_layer {
    (pmpi) => {
        $crate::lifecycle::mpi::Layer::Linked
    };
    ($mode:ident) => {
        $crate::lifecycle::mpi::Layer::Lifecycle
    };
}

#[macro_export]
#[doc(hidden)]
macro_rules! __variadic_trampoline {
    ($p:literal, $name:literal, $f:ident, $c:path) => {
        #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
        #[unsafe(naked)]
        #[unsafe(export_name = concat!($p, $name))]
        pub unsafe extern "C" fn $f() {
            #[cfg(target_arch = "x86_64")]
            std::arch::naked_asm!("jmp {c}", c = sym $c);
            #[cfg(target_arch = "aarch64")]
            std::arch::naked_asm!("b {c}", c = sym $c);
        }
    };
}

#[macro_export]
#[doc(hidden)]
macro_rules! __fortran_mpi {
    ($p:literal, $mode:ident, $rp:literal, $init:literal, $init_thread:literal, $fini:literal, $m:ident) => {
        #[allow(clippy::missing_safety_doc, missing_docs)]
        pub mod $m {
            use std::ffi::c_int;
            use $crate::lifecycle::mpi;
            type Init = unsafe extern "C" fn(*mut c_int);
            type InitThread = unsafe extern "C" fn(*const c_int, *mut c_int, *mut c_int);

            #[unsafe(export_name = concat!($p, $init))]
            pub unsafe extern "C" fn init(ierr: *mut c_int) {
                let real = $crate::__mpi_real!($mode, $rp, $init, Init);
                // SAFETY: the binding's contract.
                unsafe { mpi::mpi_init_f($crate::__mpi_layer!($mode), real, ierr) }
            }

            #[unsafe(export_name = concat!($p, $init_thread))]
            pub unsafe extern "C" fn init_thread(
                required: *const c_int,
                provided: *mut c_int,
                ierr: *mut c_int,
            ) {
                let real = $crate::__mpi_real!($mode, $rp, $init_thread, InitThread);
                let layer = $crate::__mpi_layer!($mode);
                // SAFETY: the binding's contract.
                unsafe { mpi::mpi_init_thread_f(layer, real, required, provided, ierr) }
            }

            #[unsafe(export_name = concat!($p, $fini))]
            pub unsafe extern "C" fn finalize(ierr: *mut c_int) {
                let real = $crate::__mpi_real!($mode, $rp, $fini, Init);
                // SAFETY: the binding's contract.
                unsafe { mpi::mpi_finalize_f($crate::__mpi_layer!($mode), real, ierr) }
            }
        }
    };
}

#[macro_export]
#[doc(hidden)]
macro_rules! __interpose_signals {
    ($p:literal, preload) => {
        #[unsafe(export_name = concat!($p, "quick_exit"))]
        pub extern "C" fn quick_exit(status: c_int) -> ! {
            l::exit::quick_exit(status)
        }

        #[unsafe(export_name = concat!($p, "sigaction"))]
        pub unsafe extern "C" fn sigaction(
            sig: c_int,
            act: *const libc::sigaction,
            old: *mut libc::sigaction,
        ) -> c_int {
            // SAFETY: libc's contract.
            unsafe { l::signals::sigaction(sig, act, old) }
        }

        #[unsafe(export_name = concat!($p, "signal"))]
        pub unsafe extern "C" fn signal(sig: c_int, h: l::signals::Handler) -> l::signals::Handler {
            // SAFETY: libc's contract.
            unsafe { l::signals::signal(&$crate::real::slots::SIGNAL, sig, h) }
        }

        #[unsafe(export_name = concat!($p, "bsd_signal"))]
        pub unsafe extern "C" fn bsd_signal(
            sig: c_int,
            h: l::signals::Handler,
        ) -> l::signals::Handler {
            // SAFETY: libc's contract.
            unsafe { l::signals::signal(&$crate::real::slots::BSD_SIGNAL, sig, h) }
        }

        #[unsafe(export_name = concat!($p, "sysv_signal"))]
        pub unsafe extern "C" fn sysv_signal(
            sig: c_int,
            h: l::signals::Handler,
        ) -> l::signals::Handler {
            // SAFETY: libc's contract.
            unsafe { l::signals::sysv_signal(sig, h) }
        }
    };
    ($p:literal, wrap) => {};
}
