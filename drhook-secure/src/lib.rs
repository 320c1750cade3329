//! How drhook and its tools create what they write, and what they read
//! from the environment in a privileged program (see `SECURITY.md`).
//!
//! Dr.Hook writes files where a user's environment says, from inside other
//! people's programs, often in directories other users can write (a shared
//! scratch directory, `/tmp`). This crate is the one place that decides how:
//!
//! * [`file::NewFile`]: every file is created exclusively (`O_CREAT|O_EXCL`,
//!   so a planted link or file at the name is never opened) under an
//!   unpredictable temporary name beside its final name (the `tempfile`
//!   crate), with mode `0666` less the process's umask, and renamed into
//!   place (a rename replaces a link at the final name, it never writes
//!   through it).
//! * [`dir::create_dir_all`]: a directory Dr.Hook creates is made with
//!   `mkdir` (which never follows a link), then opened with
//!   `O_DIRECTORY|O_NOFOLLOW` and checked to be a directory this process
//!   owns; an entry that already existed is refused when another user
//!   could have planted it (it belongs to someone else, not root, in a
//!   directory anyone may write: [`dir::check_not_planted`]).
//! * [`raw`]: the same exclusive creation without allocating, with the
//!   system calls themselves (the preload library's I/O trace).
//! * [`secure_execution`]: glibc's secure-execution mode (`AT_SECURE`: a
//!   set-user-ID or set-group-ID program, file capabilities), in which
//!   drhook ignores every `DR_HOOK*`, `DRHOOK*` and `HPM_*` variable and
//!   says so once ([`announce_ignored`]).

pub mod dir;
pub mod file;
pub mod raw;

use std::sync::atomic::{AtomicBool, Ordering};

/// Whether the process runs in secure-execution mode: the kernel set
/// `AT_SECURE` in the auxiliary vector (a set-user-ID or set-group-ID
/// program run by another user, a program with file capabilities, an LSM
/// transition). Allocation-free and async-signal-safe.
pub fn secure_execution() -> bool {
    // SAFETY: getauxval only reads the auxiliary vector.
    unsafe { libc::getauxval(libc::AT_SECURE) != 0 }
}

/// Whether `name` (a variable's name, without `=value`) is one of
/// drhook's or hpm's: `DR_HOOK*`, `DRHOOK*` or `HPM_*`. These are the
/// variables ignored in secure-execution mode.
pub fn is_tool_variable(name: &[u8]) -> bool {
    name.starts_with(b"DR_HOOK") || name.starts_with(b"DRHOOK") || name.starts_with(b"HPM_")
}

/// The first `NAME=value` entry of `environ` whose name
/// [`is_tool_variable`], as bytes of the environment (no allocation).
pub fn first_tool_variable_in_environ() -> Option<&'static [u8]> {
    unsafe extern "C" {
        static environ: *const *const libc::c_char;
    }
    // SAFETY: `environ` is the C library's null-terminated array of
    // NUL-terminated strings (null before the C library set it up).
    let mut p = unsafe { environ };
    if p.is_null() {
        return None;
    }
    loop {
        // SAFETY: `p` points into the array, which ends with a null entry.
        let entry = unsafe { *p };
        if entry.is_null() {
            return None;
        }
        // SAFETY: a NUL-terminated string of the environment, which lives
        // as long as the process unless the program changes it.
        let bytes = unsafe { std::ffi::CStr::from_ptr(entry) }.to_bytes();
        let name = bytes.split(|&c| c == b'=').next().unwrap_or(bytes);
        if is_tool_variable(name) {
            return Some(name);
        }
        // SAFETY: not past the null entry (checked above).
        p = unsafe { p.add(1) };
    }
}

static ANNOUNCED: AtomicBool = AtomicBool::new(false);

/// Says once per process (per copy of this crate) on stderr that the
/// variable `name` and the others of drhook are ignored because the
/// program runs in secure-execution mode. Allocation-free: one `write` of a
/// line assembled on the stack, written with the `write` system call.
pub fn announce_ignored(name: &[u8]) {
    if ANNOUNCED.swap(true, Ordering::AcqRel) {
        return;
    }
    let mut buf = [0u8; 512];
    let mut len = 0;
    let mut put = |b: &[u8]| {
        let n = b.len().min(buf.len() - len);
        buf[len..len + n].copy_from_slice(&b[..n]);
        len += n;
    };
    put(b"drhook: this program runs in secure-execution mode (set-user-ID, set-group-ID or file capabilities): ");
    put(&name[..name.len().min(64)]);
    put(b" and every other DR_HOOK*, DRHOOK* and HPM_* variable are ignored; Dr.Hook and hpm stay off unless the program configures them from code\n");
    let mut off = 0;
    while off < len {
        // SAFETY: writing a valid stack buffer to stderr; the system call
        // itself (an interposed `write` of the preload library would
        // record it).
        let n = unsafe { libc::syscall(libc::SYS_write, 2, buf[off..].as_ptr(), len - off) };
        if n <= 0 {
            break;
        }
        off += n as usize;
    }
}

/// In secure-execution mode, says once (when one of them is set) that the
/// drhook variables are ignored, and returns true: the caller then reads
/// none of them. False, and nothing said, otherwise.
pub fn ignore_tool_variables() -> bool {
    if !secure_execution() {
        return false;
    }
    if let Some(name) = first_tool_variable_in_environ() {
        announce_ignored(name);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_variables_by_prefix() {
        for n in [
            "DR_HOOK",
            "DR_HOOK_OPT",
            "DRHOOK_PROFILE_PREFIX",
            "HPM_EVENT_SET",
        ] {
            assert!(is_tool_variable(n.as_bytes()), "{n}");
        }
        for n in ["PATH", "DR_HOO", "HPM", "XDR_HOOK", "TMPDIR"] {
            assert!(!is_tool_variable(n.as_bytes()), "{n}");
        }
    }

    #[test]
    fn a_test_runs_without_secure_execution() {
        // The test binary is neither set-user-ID nor privileged by
        // capabilities: the mode is off and nothing is ignored.
        assert!(!secure_execution());
        assert!(!ignore_tool_variables());
    }
}
