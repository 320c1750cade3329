//! The support functions of `monitor.h` a tool calls, exported by the
//! preload library (`__interpose_libmonitor!`), each calling its body here.

use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::Ordering;

use super::callbacks::{self, RANK, SIZE};

/// `monitor_real_exit`: the real `_exit`, as libmonitor's.
pub fn real_exit(status: c_int) -> ! {
    crate::real::underscore_exit(status)
}

/// `monitor_real_abort`: the real `abort`.
pub fn real_abort() -> ! {
    crate::real::abort()
}

/// `monitor_real_fork`: the real `fork` (no callbacks).
pub fn real_fork() -> libc::pid_t {
    crate::real::fork()
}

/// `monitor_real_execve`.
///
/// # Safety
/// As `execve(2)`.
pub unsafe fn real_execve(
    path: *const c_char,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    // SAFETY: caller contract.
    unsafe { crate::real::execve(path, argv, envp) }
}

/// `monitor_real_dlopen`.
///
/// # Safety
/// As `dlopen(3)`.
pub unsafe fn real_dlopen(path: *const c_char, flags: c_int) -> *mut c_void {
    // SAFETY: caller contract.
    unsafe { crate::real::dlopen(path, flags) }
}

/// `monitor_real_dlclose`.
///
/// # Safety
/// As `dlclose(3)`.
pub unsafe fn real_dlclose(handle: *mut c_void) -> c_int {
    // SAFETY: caller contract.
    unsafe { crate::real::dlclose(handle) }
}

/// `monitor_get_thread_num`: 0 on the main thread, then 1, 2, ... in the
/// order threads start.
pub fn get_thread_num() -> c_int {
    callbacks::thread_num()
}

/// `monitor_get_user_data`: what `monitor_init_process` returned.
pub fn get_user_data() -> *mut c_void {
    callbacks::user_data()
}

/// `monitor_is_threaded`.
pub fn is_threaded() -> c_int {
    callbacks::is_threaded() as c_int
}

/// `monitor_set_size_rank`.
pub fn set_size_rank(size: c_int, rank: c_int) {
    SIZE.store(size, Ordering::Release);
    RANK.store(rank, Ordering::Release);
}

/// `monitor_mpi_comm_size`: as set, else `MPI_COMM_WORLD`'s once MPI is
/// initialised, else 0.
pub fn mpi_comm_size() -> c_int {
    match SIZE.load(Ordering::Acquire) {
        -1 => crate::lifecycle::mpi::size().unwrap_or(0),
        s => s,
    }
}

/// `monitor_mpi_comm_rank`: as set, else this process's rank once MPI is
/// initialised, else 0.
pub fn mpi_comm_rank() -> c_int {
    match RANK.load(Ordering::Acquire) {
        -1 => crate::lifecycle::mpi::rank().unwrap_or(0),
        r => r,
    }
}

/// `monitor_get_addr_main`: the program's `main`.
pub fn get_addr_main() -> *mut c_void {
    crate::lifecycle::start::main_addr()
}

/// `monitor_get_addr_thread_start`: this thread's start routine (null on
/// the main thread).
pub fn get_addr_thread_start() -> *mut c_void {
    callbacks::thread_start()
}

/// `monitor_stack_bottom`: an address in the bottom frame of this
/// thread's stack (the layer's trampoline below `main` or the start
/// routine).
pub fn stack_bottom() -> *mut c_void {
    crate::lifecycle::threads::stack_bottom() as *mut c_void
}

/// `monitor_in_start_func_wide` (`narrow` false) and
/// `monitor_in_start_func_narrow`: `addr` is in the function that calls
/// `main` or a thread's start routine (narrow: at the call itself).
pub fn in_start_func(addr: *mut c_void, narrow: bool) -> c_int {
    crate::lifecycle::fences::in_start_func(addr as usize, narrow) as c_int
}

/// `monitor_unwind_process_bottom_frame` (`thread` false) and
/// `monitor_unwind_thread_bottom_frame`: `addr` is in the bottom frame's
/// function of the main thread's (a thread's) stack.
pub fn unwind_bottom_frame(addr: *mut c_void, thread: bool) -> c_int {
    let a = addr as usize;
    let r = if thread {
        crate::lifecycle::fences::in_thread_bottom(a)
    } else {
        crate::lifecycle::fences::in_main_bottom(a)
    };
    r as c_int
}

/// `monitor_broadcast_signal`: `sig` to every thread the tool sees but
/// the caller (async-signal-safe).
pub fn broadcast_signal(sig: c_int) -> c_int {
    super::live::broadcast(sig)
}

/// `monitor_sigaction(sig, handler, flags, act)`: the tool's handler in
/// front of the program's disposition of `sig`; 0, or -1 for a signal that
/// cannot be caught.
///
/// # Safety
/// `handler` a function of `monitor_sighandler_t`'s type; `act` null or a
/// `struct sigaction`.
pub unsafe fn sigaction(
    sig: c_int,
    handler: Option<crate::lifecycle::client_signals::ClientHandler>,
    act: *const libc::sigaction,
) -> c_int {
    match handler {
        // SAFETY: the caller's contract.
        Some(h) => unsafe { crate::lifecycle::client_signals::claim(sig, h, act) },
        None => -1,
    }
}

/// `monitor_block_shootdown` (`true`: 1 when the process's end has
/// begun) and `monitor_unblock_shootdown`.
pub fn block_shootdown(on: bool) -> c_int {
    super::live::block(on) as c_int
}

/// `monitor_disable_new_threads` (`false`), `monitor_enable_new_threads`
/// (`true`): whether the threads this thread creates are seen by the tool.
pub fn new_threads(on: bool) {
    callbacks::set_new_threads(on)
}

/// `struct monitor_thread_info` of `monitor.h`.
#[repr(C)]
pub struct ThreadInfo {
    /// Where `pthread_create` returns to (not known here: null).
    pub create_return_addr: *mut c_void,
    /// The new thread's start routine.
    pub start_routine: *mut c_void,
}

/// `monitor_get_new_thread_info`: inside `pthread_create` (the tool's
/// `monitor_thread_pre_create`, `_post_create`, `monitor_reset_stacksize`),
/// the new thread's start routine; 0 then, else 1.
///
/// # Safety
/// `info` null or writable.
pub unsafe fn get_new_thread_info(info: *mut ThreadInfo) -> c_int {
    match callbacks::creating() {
        Some(start) if !info.is_null() => {
            // SAFETY: caller contract.
            unsafe {
                info.write(ThreadInfo {
                    create_return_addr: std::ptr::null_mut(),
                    start_routine: start as *mut c_void,
                })
            };
            0
        }
        _ => 1,
    }
}

/// `monitor_get_main_args` (libmonitor's, not in its header): `*argc`,
/// `argv` and the environment.
///
/// # Safety
/// Each pointer null or writable.
pub unsafe fn get_main_args(
    argc: *mut c_int,
    argv: *mut *mut *mut c_char,
    env: *mut *mut *mut c_char,
) {
    unsafe extern "C" {
        static mut environ: *mut *mut c_char;
    }
    let (c, v) = callbacks::main_args();
    // SAFETY: caller contract; `environ` read, not written.
    unsafe {
        if !argc.is_null() {
            *argc = c;
        }
        if !argv.is_null() {
            *argv = v;
        }
        if !env.is_null() {
            *env = environ;
        }
    }
}

/// Exports libmonitor's support functions and runs `monitor_init_library`
/// when the preload library is loaded.
#[macro_export]
#[doc(hidden)]
macro_rules! __interpose_libmonitor {
    (preload) => {
        /// libmonitor's library constructor (`monitor_init_library`).
        #[doc(hidden)]
        pub mod __drhook_libmonitor_init {
            extern "C" fn library_init() {
                $crate::libmonitor::library_init();
            }
            #[used]
            #[unsafe(link_section = ".init_array")]
            static LIBMONITOR_INIT: extern "C" fn() = library_init;
        }
        /// libmonitor's default `monitor_wrap_main` (returns 0; called
        /// only in a static program): a preloaded tool that calls it
        /// loads. A tool's own definition comes first in the lookup.
        #[doc(hidden)]
        pub mod __drhook_libmonitor_wrap_main {
            use std::ffi::{c_char, c_int};
            #[unsafe(no_mangle)]
            pub extern "C" fn monitor_wrap_main(
                _argc: c_int,
                _argv: *mut *mut c_char,
                _envp: *mut *mut c_char,
            ) -> c_int {
                0
            }
        }
        $crate::__interpose_libmonitor!(functions);
    };
    // A static program: no constructor (the tool starts just before
    // `main`); no default `monitor_wrap_main` (it would clash with the
    // tool's: a tool that does not define it gets libmonitor's default
    // behaviour, `main` called as ever).
    (wrap) => {
        $crate::__interpose_libmonitor!(functions);
    };
    (functions) => {
        /// libmonitor's support functions (`monitor.h`).
        #[doc(hidden)]
        // Each body forwards its arguments under the C contract of
        // `monitor.h`.
        #[allow(
            clippy::missing_safety_doc,
            clippy::undocumented_unsafe_blocks,
            missing_docs
        )]
        pub mod __drhook_libmonitor_exports {
            use std::ffi::{c_char, c_int, c_void};
            use $crate::libmonitor::exports as x;

            #[unsafe(no_mangle)]
            pub extern "C" fn monitor_initialize() {
                $crate::libmonitor::initialize()
            }
            #[unsafe(no_mangle)]
            pub extern "C" fn monitor_real_exit(status: c_int) -> ! {
                x::real_exit(status)
            }
            #[unsafe(no_mangle)]
            pub extern "C" fn monitor_real_abort() -> ! {
                x::real_abort()
            }
            #[unsafe(no_mangle)]
            pub extern "C" fn monitor_real_fork() -> libc::pid_t {
                x::real_fork()
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn monitor_real_execve(
                path: *const c_char,
                argv: *const *const c_char,
                envp: *const *const c_char,
            ) -> c_int {
                unsafe { x::real_execve(path, argv, envp) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn monitor_real_system(command: *const c_char) -> c_int {
                unsafe { libc::system(command) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn monitor_real_dlopen(
                path: *const c_char,
                flags: c_int,
            ) -> *mut c_void {
                unsafe { x::real_dlopen(path, flags) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn monitor_real_dlclose(handle: *mut c_void) -> c_int {
                unsafe { x::real_dlclose(handle) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn monitor_real_sigprocmask(
                how: c_int,
                set: *const libc::sigset_t,
                old: *mut libc::sigset_t,
            ) -> c_int {
                unsafe { libc::sigprocmask(how, set, old) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn monitor_real_pthread_sigmask(
                how: c_int,
                set: *const libc::sigset_t,
                old: *mut libc::sigset_t,
            ) -> c_int {
                unsafe { libc::pthread_sigmask(how, set, old) }
            }
            #[unsafe(no_mangle)]
            pub extern "C" fn monitor_get_thread_num() -> c_int {
                x::get_thread_num()
            }
            #[unsafe(no_mangle)]
            pub extern "C" fn monitor_get_user_data() -> *mut c_void {
                x::get_user_data()
            }
            #[unsafe(no_mangle)]
            pub extern "C" fn monitor_is_threaded() -> c_int {
                x::is_threaded()
            }
            #[unsafe(no_mangle)]
            pub extern "C" fn monitor_set_size_rank(size: c_int, rank: c_int) {
                x::set_size_rank(size, rank)
            }
            #[unsafe(no_mangle)]
            pub extern "C" fn monitor_mpi_comm_size() -> c_int {
                x::mpi_comm_size()
            }
            #[unsafe(no_mangle)]
            pub extern "C" fn monitor_mpi_comm_rank() -> c_int {
                x::mpi_comm_rank()
            }
            #[unsafe(no_mangle)]
            pub extern "C" fn monitor_get_addr_main() -> *mut c_void {
                x::get_addr_main()
            }
            #[unsafe(no_mangle)]
            pub extern "C" fn monitor_get_addr_thread_start() -> *mut c_void {
                x::get_addr_thread_start()
            }
            #[unsafe(no_mangle)]
            pub extern "C" fn monitor_stack_bottom() -> *mut c_void {
                x::stack_bottom()
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn monitor_sigaction(
                sig: c_int,
                handler: Option<$crate::lifecycle::client_signals::ClientHandler>,
                _flags: c_int,
                act: *const libc::sigaction,
            ) -> c_int {
                unsafe { x::sigaction(sig, handler, act) }
            }
            #[unsafe(no_mangle)]
            pub extern "C" fn monitor_broadcast_signal(sig: c_int) -> c_int {
                x::broadcast_signal(sig)
            }
            #[unsafe(no_mangle)]
            pub extern "C" fn monitor_in_start_func_wide(addr: *mut c_void) -> c_int {
                x::in_start_func(addr, false)
            }
            #[unsafe(no_mangle)]
            pub extern "C" fn monitor_in_start_func_narrow(addr: *mut c_void) -> c_int {
                x::in_start_func(addr, true)
            }
            #[unsafe(no_mangle)]
            pub extern "C" fn monitor_unwind_process_bottom_frame(addr: *mut c_void) -> c_int {
                x::unwind_bottom_frame(addr, false)
            }
            #[unsafe(no_mangle)]
            pub extern "C" fn monitor_unwind_thread_bottom_frame(addr: *mut c_void) -> c_int {
                x::unwind_bottom_frame(addr, true)
            }
            #[unsafe(no_mangle)]
            pub extern "C" fn monitor_disable_new_threads() {
                x::new_threads(false)
            }
            #[unsafe(no_mangle)]
            pub extern "C" fn monitor_enable_new_threads() {
                x::new_threads(true)
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn monitor_get_new_thread_info(
                info: *mut x::ThreadInfo,
            ) -> c_int {
                unsafe { x::get_new_thread_info(info) }
            }
            #[unsafe(no_mangle)]
            pub extern "C" fn monitor_block_shootdown() -> c_int {
                x::block_shootdown(true)
            }
            #[unsafe(no_mangle)]
            pub extern "C" fn monitor_unblock_shootdown() {
                x::block_shootdown(false);
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn monitor_get_main_args(
                argc: *mut c_int,
                argv: *mut *mut *mut c_char,
                env: *mut *mut *mut c_char,
            ) {
                unsafe { x::get_main_args(argc, argv, env) }
            }
        }
    };
}
