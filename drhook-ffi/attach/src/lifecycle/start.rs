//! The process's start: `__libc_start_main` runs `main` inside a
//! trampoline that starts the process (the engine, the tools, the
//! monitors) just before `main` and ends it when `main` returns.

use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

use super::process;
use crate::real::{real_fn, slots};

unsafe extern "C" {
    static mut environ: *const *const c_char;
    fn on_exit(f: extern "C" fn(c_int, *mut c_void), arg: *mut c_void) -> c_int;
    fn at_quick_exit(f: extern "C" fn()) -> c_int;
}

/// The program's `main`.
pub type MainFn = unsafe extern "C-unwind" fn(c_int, *mut *mut c_char, *mut *mut c_char) -> c_int;

static MAIN: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
/// The tools' start (see [`libc_start_main`]).
static TOOLS: AtomicPtr<()> = AtomicPtr::new(std::ptr::null_mut());
/// An address in the trampoline's frame below `main`.
static MAIN_BOTTOM: AtomicUsize = AtomicUsize::new(0);

/// Whether the process has not reached `main` yet (a library's
/// constructor runs). One load.
#[inline]
pub fn before_main() -> bool {
    process::before_main()
}

/// The program's `main` (null before `__libc_start_main`, or in a program
/// that did not start through it).
pub fn main_addr() -> *mut c_void {
    MAIN.load(Ordering::Acquire)
}

/// An address in the bottom frame of the main thread's stack as the
/// program sees it (the trampoline's, below `main`), or 0.
pub fn main_bottom() -> usize {
    MAIN_BOTTOM.load(Ordering::Acquire)
}

unsafe extern "C-unwind" fn main_trampoline(
    argc: c_int,
    argv: *mut *mut c_char,
    envp_in: *mut *mut c_char,
) -> c_int {
    let marker = 0u8;
    MAIN_BOTTOM.store(
        std::hint::black_box(&marker) as *const u8 as usize,
        Ordering::Release,
    );
    let tools = TOOLS.load(Ordering::Acquire);
    let tools = if tools.is_null() {
        None
    } else {
        // SAFETY: stored by libc_start_main from a `fn()`.
        Some(unsafe { std::mem::transmute::<*mut (), fn()>(tools) })
    };
    if crate::real::link_mode() {
        register_the_end();
    }
    process::init_process(argc, argv as *const *const c_char, tools);
    // The process start may have added to the environment (the marker the
    // children find their place by): main gets the environment as it is
    // now, as it would have without the layer (programs such as make build
    // their children's environment from main's third argument).
    // SAFETY: the process's environment, before main runs: one thread.
    let envp = unsafe { environ } as *mut *mut c_char;
    let envp = if envp.is_null() { envp_in } else { envp };
    // SAFETY: stored by libc_start_main from libc's own argument.
    let main: MainFn = unsafe { std::mem::transmute(MAIN.load(Ordering::Acquire)) };
    // SAFETY: calling the program's main with its own arguments.
    let status = unsafe { super::fences::call_main(main, argc, argv, envp) };
    // The process ends after the exit handlers `__libc_start_main` now runs
    // (`process::at_the_very_end`), unless another thread is already
    // ending it in `exit`.
    super::exit::after_main_returned();
    process::main_returned(status);
    status
}

/// Registers the handlers that end the process after the program's own
/// (`process::at_the_very_end`, `at_the_very_end_quick`).
fn register_the_end() {
    // SAFETY: registering plain `extern "C"` functions with the C library.
    unsafe {
        on_exit(process::at_the_very_end, std::ptr::null_mut());
        at_quick_exit(process::at_the_very_end_quick);
    }
}

/// The real `__libc_start_main`'s type.
pub type StartMainFn = unsafe extern "C-unwind" fn(
    MainFn,
    c_int,
    *mut *mut c_char,
    *mut c_void,
    *mut c_void,
    *mut c_void,
    *mut c_void,
) -> c_int;

/// `__libc_start_main`: `main` is replaced by a trampoline that runs the
/// process start just before it and the process end when it returns.
/// Nothing else happens here: in a static program this runs before libc
/// has set up thread-local storage and its own relocations.
///
/// `tools` starts the tools built on the layer (the crate root wires them:
/// this layer knows none of them); it runs after the engine has started and
/// before the monitors' `init_process`.
///
/// # Safety
/// Called by the C start-up code with its own arguments.
#[allow(clippy::too_many_arguments)]
pub unsafe fn libc_start_main(
    real: StartMainFn,
    tools: fn(),
    main: MainFn,
    argc: c_int,
    argv: *mut *mut c_char,
    init: *mut c_void,
    fini: *mut c_void,
    rtld_fini: *mut c_void,
    stack_end: *mut c_void,
) -> c_int {
    MAIN.store(main as *mut c_void, Ordering::Release);
    TOOLS.store(tools as *mut (), Ordering::Release);
    // Before the real `__libc_start_main` registers the loader's clean-up
    // and runs the program's constructors: these handlers run last. Not in
    // a static program (linked with `--wrap`), whose C library is not set
    // up yet here: there they are registered just before `main` (and run
    // before the destructors that the start-up registered).
    if !crate::real::link_mode() {
        register_the_end();
    }
    // SAFETY: libc's own arguments, with main replaced.
    unsafe {
        real(
            main_trampoline,
            argc,
            argv,
            init,
            fini,
            rtld_fini,
            stack_end,
        )
    }
}

/// The real `__libc_start_main`, preloaded.
pub fn real_start_main() -> StartMainFn {
    real_fn!(slots::LIBC_START_MAIN, StartMainFn)
}
