//! Layer 2: the real functions behind the wrapped ones.
//!
//! Preloaded, a wrapped function's real one is the next definition after
//! the preload library (`dlsym(RTLD_NEXT)`), looked up at its first use and
//! kept in a [`Real`] (one atomic load afterwards). Linked with `--wrap`,
//! the real one is `__real_<name>`, installed at start-up by the wrap
//! library ([`set_link_mode`]), since `dlsym` does not work in a static
//! program.
//!
//! `dlsym` may allocate and may call functions the layer (or a tool on it)
//! wraps: a lookup made while another lookup is in progress on the same
//! thread gets `None` instead of recursing, and the caller falls back (a
//! memory tool serves such an early allocation from a static buffer).
//!
//! A wrapped function whose real one cannot be found ends the process
//! with a message ([`missing`]); [`weak`] gives the addresses of symbols a
//! static program may lack (`__real_<name>`, MPI's).

pub mod weak;

use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

use crate::sys::tls;

/// Guard bit of a lookup in progress.
const LOOKUP: u64 = 1;

static LINK_MODE: AtomicBool = AtomicBool::new(false);

/// A real function, looked up once by name.
///
/// ```
/// use drhook_attach::real::Real;
/// static REAL_GETPID: Real = Real::new(c"getpid");
/// let f = REAL_GETPID.get().expect("libc has getpid");
/// // SAFETY: getpid's signature.
/// let getpid: extern "C" fn() -> libc::pid_t = unsafe { std::mem::transmute(f) };
/// assert_eq!(getpid(), std::process::id() as libc::pid_t);
/// ```
pub struct Real {
    name: &'static CStr,
    ptr: AtomicPtr<c_void>,
}

impl Real {
    /// The real function called `name`.
    pub const fn new(name: &'static CStr) -> Real {
        Real {
            name,
            ptr: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    /// Its name.
    pub fn name(&self) -> &'static CStr {
        self.name
    }

    /// The address, looked up at the first call; `None` when there is no
    /// such function, or during a lookup already in progress on this thread
    /// (see the module documentation).
    #[inline]
    pub fn get(&self) -> Option<*mut c_void> {
        let p = self.ptr.load(Ordering::Acquire);
        if !p.is_null() {
            return Some(p);
        }
        self.lookup()
    }

    #[cold]
    #[inline(never)]
    fn lookup(&self) -> Option<*mut c_void> {
        if LINK_MODE.load(Ordering::Acquire) {
            return None;
        }
        let p = tls::guarded(LOOKUP, || {
            // SAFETY: RTLD_NEXT lookup of a NUL-terminated name.
            unsafe { libc::dlsym(libc::RTLD_NEXT, self.name.as_ptr()) }
        })?;
        if p.is_null() {
            return None;
        }
        self.ptr.store(p, Ordering::Release);
        Some(p)
    }

    /// Sets the address (the wrap library installs `__real_<name>`).
    pub fn set(&self, p: *mut c_void) {
        self.ptr.store(p, Ordering::Release);
    }
}

/// Linked with `--wrap`: real functions come only from [`Real::set`]
/// (installed by the wrap library), never from `dlsym`.
pub fn set_link_mode() {
    LINK_MODE.store(true, Ordering::Release);
}

/// Whether the layer is linked with `--wrap` (not preloaded).
pub fn link_mode() -> bool {
    LINK_MODE.load(Ordering::Acquire)
}

macro_rules! reals {
    ($($(#[$m:meta])* $slot:ident = $name:literal;)*) => {
        /// The [`Real`] of each function the layer wraps.
        pub mod slots {
            use super::Real;
            $($(#[$m])* pub static $slot: Real = Real::new($name);)*
        }
    };
}

reals! {
    /// `__libc_start_main`.
    LIBC_START_MAIN = c"__libc_start_main";
    /// `exit`.
    EXIT = c"exit";
    /// `_exit`.
    UNDERSCORE_EXIT = c"_exit";
    /// `_Exit`.
    UNDERSCORE_CAP_EXIT = c"_Exit";
    /// `abort`.
    ABORT = c"abort";
    /// `__assert_fail`.
    ASSERT_FAIL = c"__assert_fail";
    /// `fork`.
    FORK = c"fork";
    /// `execve`.
    EXECVE = c"execve";
    /// `execvpe`.
    EXECVPE = c"execvpe";
    /// `fexecve`.
    FEXECVE = c"fexecve";
    /// `posix_spawn`.
    POSIX_SPAWN = c"posix_spawn";
    /// `posix_spawnp`.
    POSIX_SPAWNP = c"posix_spawnp";
    /// `pthread_create`.
    PTHREAD_CREATE = c"pthread_create";
    /// `pthread_exit`.
    PTHREAD_EXIT = c"pthread_exit";
    /// `dlopen`.
    DLOPEN = c"dlopen";
    /// `dlclose`.
    DLCLOSE = c"dlclose";
    /// `MPI_Init`.
    MPI_INIT = c"MPI_Init";
    /// `MPI_Init_thread`.
    MPI_INIT_THREAD = c"MPI_Init_thread";
    /// `MPI_Finalize`.
    MPI_FINALIZE = c"MPI_Finalize";
    /// `quick_exit`.
    QUICK_EXIT = c"quick_exit";
    /// `sigaction`.
    SIGACTION = c"sigaction";
    /// `signal`.
    SIGNAL = c"signal";
    /// `bsd_signal`.
    BSD_SIGNAL = c"bsd_signal";
    /// `sysv_signal`.
    SYSV_SIGNAL = c"sysv_signal";
}

/// A wrapped function whose real one cannot be found: nothing sensible
/// can go on (the message names it; exit status 127, as a shell's for a
/// program not found).
#[cold]
#[doc(hidden)]
pub fn missing(name: &CStr) -> ! {
    crate::sys::diag_name("the real function cannot be found: ", name);
    // SAFETY: ends the process.
    unsafe { libc::syscall(libc::SYS_exit_group, 127 as libc::c_long) };
    unreachable!("exit_group returned")
}

/// The real function of a [`Real`] (or of any slot with `get()` and
/// `name()`) as a function of type `$ty`; the process ends with
/// [`missing`] when there is none.
macro_rules! real_fn {
    ($slot:expr, $ty:ty) => {{
        match $slot.get() {
            // SAFETY: the slot holds the function of this signature.
            Some(p) => unsafe { std::mem::transmute::<*mut std::ffi::c_void, $ty>(p) },
            None => $crate::real::missing($slot.name()),
        }
    }};
}
pub(crate) use real_fn;

#[inline]
fn get_or_die(r: &Real) -> *mut c_void {
    match r.get() {
        Some(p) => p,
        None => missing(r.name),
    }
}

macro_rules! typed {
    ($slot:ident) => {
        // SAFETY: the slot holds the function of this signature (same name).
        unsafe { std::mem::transmute::<*mut c_void, _>(get_or_die(&slots::$slot)) }
    };
}

/// The real `fork`.
#[inline]
pub fn fork() -> libc::pid_t {
    let f: extern "C" fn() -> libc::pid_t = typed!(FORK);
    f()
}

/// The real `exit`: ends the process without any of the layer's work.
#[inline]
pub fn exit(status: c_int) -> ! {
    let f: extern "C" fn(c_int) -> ! = typed!(EXIT);
    f(status)
}

/// The real `_exit`.
#[inline]
pub fn underscore_exit(status: c_int) -> ! {
    let f: extern "C" fn(c_int) -> ! = typed!(UNDERSCORE_EXIT);
    f(status)
}

/// The real `abort`.
pub fn abort() -> ! {
    let f: extern "C" fn() -> ! = typed!(ABORT);
    f()
}

/// The real `execve`.
///
/// # Safety
/// As `execve(2)`: NUL-terminated path, null-terminated arrays of
/// NUL-terminated strings.
pub unsafe fn execve(
    path: *const c_char,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    let f: unsafe extern "C" fn(
        *const c_char,
        *const *const c_char,
        *const *const c_char,
    ) -> c_int = typed!(EXECVE);
    // SAFETY: caller contract.
    unsafe { f(path, argv, envp) }
}

/// The real `pthread_create`.
///
/// # Safety
/// As `pthread_create(3)`.
pub unsafe fn pthread_create(
    thread: *mut libc::pthread_t,
    attr: *const libc::pthread_attr_t,
    start: extern "C" fn(*mut c_void) -> *mut c_void,
    arg: *mut c_void,
) -> c_int {
    let f: unsafe extern "C" fn(
        *mut libc::pthread_t,
        *const libc::pthread_attr_t,
        extern "C" fn(*mut c_void) -> *mut c_void,
        *mut c_void,
    ) -> c_int = typed!(PTHREAD_CREATE);
    // SAFETY: caller contract.
    unsafe { f(thread, attr, start, arg) }
}

/// The real `dlopen`.
///
/// # Safety
/// As `dlopen(3)`.
pub unsafe fn dlopen(file: *const c_char, flags: c_int) -> *mut c_void {
    let f: unsafe extern "C" fn(*const c_char, c_int) -> *mut c_void = typed!(DLOPEN);
    // SAFETY: caller contract.
    unsafe { f(file, flags) }
}

/// The real `dlclose`.
///
/// # Safety
/// As `dlclose(3)`.
pub unsafe fn dlclose(handle: *mut c_void) -> c_int {
    let f: unsafe extern "C" fn(*mut c_void) -> c_int = typed!(DLCLOSE);
    // SAFETY: caller contract.
    unsafe { f(handle) }
}

/// The next definition of `name` after the layer (`dlsym(RTLD_NEXT)`), for
/// functions a tool wraps itself; `None` when absent, during a lookup in
/// progress on this thread, or when linked with `--wrap`. Prefer a static
/// [`Real`], which looks up once.
pub fn lookup(name: &CStr) -> Option<*mut c_void> {
    if link_mode() {
        return None;
    }
    let p = tls::guarded(LOOKUP, || {
        // SAFETY: RTLD_NEXT lookup of a NUL-terminated name.
        unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr()) }
    })?;
    (!p.is_null()).then_some(p)
}

/// The real function `$name` (a string literal, or a macro making one:
/// `stringify!`, `concat!`) of type `$ty`, in either mode: preloaded, the
/// next definition; linked with `--wrap`, `__real_<name>`.
#[macro_export]
#[doc(hidden)]
macro_rules! __real {
    (preload, $name:expr, $ty:ty) => {{
        static R: $crate::real::Real =
            $crate::real::Real::new($crate::__cstr(concat!($name, "\0")));
        match R.get() {
            // SAFETY: the next definition of the same function.
            Some(p) => unsafe { std::mem::transmute::<*mut std::ffi::c_void, $ty>(p) },
            None => $crate::real::missing(R.name()),
        }
    }};
    (wrap, $name:expr, $ty:ty) => {{
        mod w {
            $crate::__weak_address!(addr, concat!("__real_", $name));
        }
        let p = w::addr();
        if p.is_null() {
            $crate::real::missing($crate::__cstr(concat!($name, "\0")))
        } else {
            // SAFETY: `__real_<name>` is the wrapped function itself.
            unsafe { std::mem::transmute::<*mut std::ffi::c_void, $ty>(p) }
        }
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_and_reentrancy() {
        static GETPID: Real = Real::new(c"getpid");
        assert!(GETPID.get().is_some());
        assert!(lookup(c"no_such_function_anywhere").is_none());
        // A lookup inside a lookup is refused rather than recursing.
        static OTHER: Real = Real::new(c"getppid");
        let inner = tls::guarded(LOOKUP, || OTHER.get());
        assert_eq!(inner, Some(None));
        assert!(OTHER.get().is_some(), "and works afterwards");
    }
}
