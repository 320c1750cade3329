//! Every `exec*`: if the program can be found, the process ends (its
//! reports written under this process's name, its role passed to the
//! program it becomes through its environment); if the `exec` then fails,
//! the process goes on as if nothing had happened.

use std::ffi::{CStr, c_char, c_int};

use super::process;
use crate::real::{real_fn, slots};
use crate::sys::{errno, set_errno};

unsafe extern "C" {
    static mut environ: *const *const c_char;
}

/// How an `exec` call looks for its program and takes its environment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub enum ExecKind {
    /// `execve`, `execle`: a path and an environment.
    PathEnv = 0,
    /// `execv`, `execl`: a path, the process's environment.
    Path = 1,
    /// `execvpe`: searched in `PATH`, an environment.
    SearchEnv = 2,
    /// `execvp`, `execlp`: searched in `PATH`, the process's environment.
    Search = 3,
}

/// Whether `exec` could find `file` to run (`access(X_OK)`, through `PATH`
/// when searching): an `exec` that cannot succeed is left to fail without
/// any of the layer's work, so it changes nothing.
///
/// # Safety
/// `file` is null or NUL-terminated.
unsafe fn runnable(file: *const c_char, search: bool) -> bool {
    if file.is_null() {
        return false;
    }
    // SAFETY: caller contract.
    let f = unsafe { CStr::from_ptr(file) }.to_bytes();
    if f.is_empty() {
        return false;
    }
    if !search || f.contains(&b'/') {
        // SAFETY: NUL-terminated path.
        return unsafe { libc::access(file, libc::X_OK) } == 0;
    }
    // SAFETY: getenv returns null or a NUL-terminated string.
    let path = unsafe { libc::getenv(c"PATH".as_ptr()) };
    let path: &[u8] = if path.is_null() {
        b"/bin:/usr/bin"
    } else {
        // SAFETY: as above.
        unsafe { CStr::from_ptr(path) }.to_bytes()
    };
    let mut buf = [0u8; 4096];
    for dir in path.split(|&c| c == b':') {
        let dir: &[u8] = if dir.is_empty() { b"." } else { dir };
        let n = dir.len() + 1 + f.len();
        if n + 1 > buf.len() {
            continue;
        }
        buf[..dir.len()].copy_from_slice(dir);
        buf[dir.len()] = b'/';
        buf[dir.len() + 1..n].copy_from_slice(f);
        buf[n] = 0;
        // SAFETY: NUL-terminated within the buffer.
        if unsafe { libc::access(buf.as_ptr().cast(), libc::X_OK) } == 0 {
            return true;
        }
    }
    false
}

/// `env` with the entry `entry` (`NAME=value`) in place of any entry of
/// the same name.
///
/// # Safety
/// `env` is null or a null-terminated array of NUL-terminated strings.
unsafe fn with_entry(env: *const *const c_char, entry: &CStr) -> Vec<*const c_char> {
    let e = entry.to_bytes();
    let name_len = e.iter().position(|&c| c == b'=').map_or(e.len(), |i| i + 1);
    let name = &e[..name_len];
    let mut v = Vec::new();
    let mut p = env;
    while !p.is_null() {
        // SAFETY: caller contract.
        let s = unsafe { *p };
        if s.is_null() {
            break;
        }
        // SAFETY: as above.
        if !unsafe { CStr::from_ptr(s) }.to_bytes().starts_with(name) {
            v.push(s);
        }
        // SAFETY: within the array (not past its terminator).
        p = unsafe { p.add(1) };
    }
    v.push(entry.as_ptr());
    v.push(std::ptr::null());
    v
}

/// Every `exec*`: if the program can be found, the process ends (profile
/// written under this process's name, the role passed to the program it
/// becomes through `DRHOOK_PROCESS_TREE` in its environment); if the
/// `exec` then fails, the process goes on as if nothing had happened.
///
/// # Safety
/// As `execve(2)`/`execvpe(3)`: valid NUL-terminated strings and
/// null-terminated arrays (`envp` ignored for the kinds without one).
pub unsafe fn exec(
    kind: ExecKind,
    file: *const c_char,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    type Execve =
        unsafe extern "C" fn(*const c_char, *const *const c_char, *const *const c_char) -> c_int;
    let search = matches!(kind, ExecKind::Search | ExecKind::SearchEnv);
    let env = match kind {
        ExecKind::PathEnv | ExecKind::SearchEnv => envp,
        // SAFETY: the process's environment, read on this thread.
        ExecKind::Path | ExecKind::Search => unsafe { environ },
    };
    let real: Execve = if search {
        real_fn!(slots::EXECVPE, Execve)
    } else {
        real_fn!(slots::EXECVE, Execve)
    };
    // SAFETY: caller contract.
    if !unsafe { runnable(file, search) } {
        // SAFETY: caller contract; it fails, changing nothing.
        return unsafe { real(file, argv, env) };
    }
    let mut buf = [0u8; 128];
    let entry = process::pre_exec(&mut buf);
    let owned;
    let env = match entry {
        Some(e) => {
            // SAFETY: caller contract.
            owned = unsafe { with_entry(env, e) };
            owned.as_ptr()
        }
        None => env,
    };
    // SAFETY: caller contract; `env` is the program's or our copy of it.
    let r = unsafe { real(file, argv, env) };
    let e = errno();
    process::exec_failed(e);
    set_errno(e);
    r
}

/// `fexecve(fd, argv, envp)`.
///
/// # Safety
/// As `fexecve(3)`.
pub unsafe fn fexecve(fd: c_int, argv: *const *const c_char, envp: *const *const c_char) -> c_int {
    type Fexecve = unsafe extern "C" fn(c_int, *const *const c_char, *const *const c_char) -> c_int;
    let real = real_fn!(slots::FEXECVE, Fexecve);
    if fd < 0 {
        // SAFETY: fails (bad descriptor), changing nothing.
        return unsafe { real(fd, argv, envp) };
    }
    let mut buf = [0u8; 128];
    let entry = process::pre_exec(&mut buf);
    let owned;
    let env = match entry {
        Some(e) => {
            // SAFETY: caller contract.
            owned = unsafe { with_entry(envp, e) };
            owned.as_ptr()
        }
        None => envp,
    };
    // SAFETY: caller contract.
    let r = unsafe { real(fd, argv, env) };
    let e = errno();
    process::exec_failed(e);
    set_errno(e);
    r
}

/// The `exec*` functions with variable arguments, written in C
/// (`c/variadic.c`): the exported `execl`, `execlp`, `execle` jump to them
/// with the arguments untouched; they gather the arguments and call
/// [`drhook_attach_exec`].
#[doc(hidden)]
pub mod c {
    unsafe extern "C" {
        /// `execl`.
        pub fn drhook_attach_c_execl();
        /// `execlp`.
        pub fn drhook_attach_c_execlp();
        /// `execle`.
        pub fn drhook_attach_c_execle();
    }
}

/// The `exec*` functions with variable arguments (`execl`, `execlp`,
/// `execle`), written in C, gather their arguments and come here.
///
/// # Safety
/// As [`exec`]; `kind` is an [`ExecKind`] value.
#[unsafe(no_mangle)]
pub unsafe extern "C-unwind" fn drhook_attach_exec(
    kind: c_int,
    file: *const c_char,
    argv: *const *const c_char,
    envp: *const *const c_char,
) -> c_int {
    let kind = match kind {
        0 => ExecKind::PathEnv,
        1 => ExecKind::Path,
        2 => ExecKind::SearchEnv,
        _ => ExecKind::Search,
    };
    // SAFETY: caller contract.
    unsafe { exec(kind, file, argv, envp) }
}
