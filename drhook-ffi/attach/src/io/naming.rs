//! Who this process is in the run, for the names of its files: its
//! ancestry (`pid-command` of each ancestor under the same run, carried to
//! the children in `DRHOOK_IO_ANCESTRY`) and the paths of its report and
//! trace (`<stem>.<task>` for the first process of a run,
//! `<stem>.<task>.<command>.<pid>` for the others).
//!
//! No lock (a `fork` child must never find one held): the ancestry is set
//! once per process image (before `main`, or in a `fork` child's first
//! moments) by publishing a new, never freed value; the environment is
//! read and written with the C library's functions, not `std::env` (whose
//! lock another thread may hold at a `fork`).

use std::sync::atomic::{AtomicPtr, Ordering};

use crate::sys::env::env_value;

/// The ancestry of this process: `pid-command` of each ancestor under the
/// same run, outermost first, separated by `/` (`before`), and its own
/// entry (`me`).
pub(super) struct Ancestry {
    pub(super) before: String,
    pub(super) me: String,
}

static NONE: Ancestry = Ancestry {
    before: String::new(),
    me: String::new(),
};
static ANCESTRY: AtomicPtr<Ancestry> = AtomicPtr::new(std::ptr::null_mut());

/// This process's ancestry (empty before `init_process`).
pub(super) fn ancestry() -> &'static Ancestry {
    let p = ANCESTRY.load(Ordering::Acquire);
    // SAFETY: published values are leaked boxes, never freed.
    if p.is_null() { &NONE } else { unsafe { &*p } }
}

/// Sets this process's ancestry (the one before stays allocated: a reader
/// may hold it).
pub(super) fn set_ancestry(before: String, me: String) {
    let p = Box::into_raw(Box::new(Ancestry { before, me }));
    ANCESTRY.store(p, Ordering::Release);
}

pub(super) const ANCESTRY_VAR: &str = "DRHOOK_IO_ANCESTRY";

/// The value of environment variable `name` (empty when unset), read
/// without a lock.
pub(super) fn env(name: &str) -> String {
    env_value(name.as_bytes())
        .map(|v| String::from_utf8_lossy(v).into_owned())
        .unwrap_or_default()
}

/// Sets environment variable `name` with the C library's `setenv`
/// (`std::env::set_var` would also take Rust's environment lock).
///
/// # Safety
/// No other thread reads or writes the environment meanwhile (before
/// `main`, or in a `fork` child's first moments).
pub(super) unsafe fn set_env(name: &str, value: &str) {
    let (Ok(k), Ok(v)) = (std::ffi::CString::new(name), std::ffi::CString::new(value)) else {
        return;
    };
    // SAFETY: NUL-terminated strings; the caller's contract.
    unsafe { libc::setenv(k.as_ptr(), v.as_ptr(), 1) };
}

pub(super) fn task() -> u32 {
    let (t, _) = drhook::task::Task::from_lookup(&|k| {
        env_value(k.as_bytes()).map(|v| String::from_utf8_lossy(v).into_owned())
    });
    t.myproc
}

/// Where this process's file `<stem>.<task>` goes (the first process of
/// a run; `<stem>.<task>.<command>.<pid>` for the processes it started),
/// in `DRHOOK_IO_DIR` or the working directory.
pub(super) fn output_path(stem: &str) -> std::path::PathBuf {
    output_path_as(stem, false)
}

/// [`output_path`], or a child's name whatever this process is (`child`:
/// the image before an `exec`, whose program takes the plain name). By the
/// profiles' rule when Dr.Hook is on (the engine names it: the MPI rank's
/// task, a launcher is not its task's main process, `DRHOOK_PROFILE_PREFIX`,
/// the profile's directory); else, or in `DRHOOK_IO_DIR` when that is set,
/// the plain name for the first process of the run only.
pub(super) fn output_path_as(stem: &str, child: bool) -> std::path::PathBuf {
    if env("DRHOOK_IO_DIR").is_empty() && crate::engine::on() {
        let mut buf = [0u8; 4096];
        let h = crate::engine::hooks();
        let n = (h.companion_path)(
            stem.as_ptr(),
            stem.len(),
            child as std::ffi::c_int,
            buf.as_mut_ptr(),
            buf.len(),
        );
        if n > 0 {
            use std::os::unix::ffi::OsStrExt as _;
            return std::path::PathBuf::from(std::ffi::OsStr::from_bytes(&buf[..n]));
        }
    }
    let child = child || !ancestry().before.is_empty();
    let me = &ancestry().me;
    let command = me.split_once('-').map(|x| x.1).unwrap_or_default();
    let task = task();
    let file = if !child {
        format!("{stem}.{task}")
    } else {
        format!("{stem}.{task}.{command}.{}", std::process::id())
    };
    let dir = env("DRHOOK_IO_DIR");
    if dir.is_empty() {
        std::path::PathBuf::from(&file)
    } else {
        std::path::Path::new(&dir).join(&file)
    }
}

/// This process's ancestry, `pid-command` of each ancestor then of itself,
/// separated by `/`.
pub(super) fn ancestry_text() -> String {
    let a = ancestry();
    if a.before.is_empty() {
        a.me.clone()
    } else {
        format!("{}/{}", a.before, a.me)
    }
}
