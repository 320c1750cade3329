//! Replacing this process by the program with the process state `drhook
//! run` was given: its signal dispositions, signal mask and descriptors as
//! they were when this executable started, its environment byte for byte
//! plus the variables `drhook run` sets.
//!
//! Rust's runtime changes two things at start-up, before `main`: it sets
//! `SIGPIPE` to `SIG_IGN`, and it opens `/dev/null` on any of the
//! descriptors 0-2 that is closed. `std::process::Command::exec` then
//! changes more in the new program (`SIGPIPE` back to `SIG_DFL` whatever
//! the caller had, an empty signal mask) and keeps only UTF-8 values
//! through `std::env::var`. So the executable records the state it was
//! given in a constructor ([`record_inherited_state`], in `.init_array`,
//! which runs before Rust's runtime), and [`exec`] puts it back and calls
//! `execvpe` itself.

use std::ffi::{CString, OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::sync::atomic::{AtomicU8, Ordering};

/// `SIGPIPE` at start-up: not recorded (the constructor did not run).
const UNKNOWN: u8 = 0;
/// `SIGPIPE` at start-up: `SIG_DFL` (or a handler, which the exec of this
/// executable made `SIG_DFL`).
const DEFAULT: u8 = 1;
/// `SIGPIPE` at start-up: `SIG_IGN`.
const IGNORED: u8 = 2;

static SIGPIPE_AT_START: AtomicU8 = AtomicU8::new(UNKNOWN);
/// Bit `n` set: descriptor `n` (0-2) was closed at start-up.
static CLOSED_AT_START: AtomicU8 = AtomicU8::new(0);

/// Records the `SIGPIPE` disposition and which of the descriptors 0-2 are
/// closed, before Rust's runtime changes them. The `drhook` executable
/// puts this function in its `.init_array` (constructors run before
/// `main`, and so before the runtime's initialisation).
pub extern "C" fn record_inherited_state() {
    // SAFETY: an all-zero `sigaction` is a valid value of this plain C
    // struct (a null handler, an empty mask, no flags).
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: a query only (the new action is null); `old` is a valid,
    // writable `sigaction`.
    let rc = unsafe { libc::sigaction(libc::SIGPIPE, std::ptr::null(), &mut old) };
    if rc == 0 {
        let state = if old.sa_sigaction == libc::SIG_IGN {
            IGNORED
        } else {
            DEFAULT
        };
        SIGPIPE_AT_START.store(state, Ordering::Relaxed);
    }
    let mut closed = 0u8;
    for fd in 0..3 {
        // SAFETY: F_GETFD reads a descriptor's flags and changes nothing;
        // on a closed descriptor it fails with EBADF.
        if unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1 {
            closed |= 1 << fd;
        }
    }
    CLOSED_AT_START.store(closed, Ordering::Relaxed);
}

/// The environment of the program: `current` (in its order, as bytes:
/// `std::env::vars_os`, which leaves out the odd entry without a `=` after
/// its first byte) with the variables of `set` replaced where they are (a
/// later duplicate of one is dropped, as `getenv` would never see it) and
/// the others appended, in the order of `set`; a name repeated in `set`
/// takes its last value.
pub fn environment(
    current: impl IntoIterator<Item = (OsString, OsString)>,
    set: &[(String, OsString)],
) -> Vec<OsString> {
    // The last value of each name, in the order of first appearance.
    let mut wanted: Vec<(&str, &OsStr)> = Vec::new();
    for (k, v) in set {
        match wanted.iter_mut().find(|(n, _)| n == k) {
            Some(w) => w.1 = v,
            None => wanted.push((k, v)),
        }
    }
    let entry = |k: &[u8], v: &OsStr| {
        let mut e = k.to_vec();
        e.push(b'=');
        e.extend_from_slice(v.as_bytes());
        OsString::from_vec(e)
    };
    let mut placed = vec![false; wanted.len()];
    let mut out = Vec::new();
    for (k, v) in current {
        match wanted
            .iter()
            .position(|(n, _)| n.as_bytes() == k.as_bytes())
        {
            Some(i) if placed[i] => {}
            Some(i) => {
                placed[i] = true;
                out.push(entry(k.as_bytes(), wanted[i].1));
            }
            None => out.push(entry(k.as_bytes(), &v)),
        }
    }
    for (i, (k, v)) in wanted.iter().enumerate() {
        if !placed[i] {
            out.push(entry(k.as_bytes(), v));
        }
    }
    out
}

fn c_string(what: &str, s: &OsStr) -> std::io::Result<CString> {
    CString::new(s.as_bytes()).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{what} {:?} contains a NUL byte", s.to_string_lossy()),
        )
    })
}

/// Replaces this process by `program` (searched in `PATH` as `execvp`
/// does) with `args` and the environment `env` (`NAME=VALUE` entries),
/// after putting back the `SIGPIPE` disposition and the closed descriptors
/// 0-2 of start-up. Returns only on failure, with the error of `execvpe`
/// (this process's state as before the call).
pub fn exec(program: &OsStr, args: &[OsString], env: &[OsString]) -> std::io::Error {
    let argv: std::io::Result<Vec<CString>> = std::iter::once(program)
        .chain(args.iter().map(OsString::as_os_str))
        .map(|a| c_string("the argument", a))
        .collect();
    let envp: std::io::Result<Vec<CString>> =
        env.iter().map(|e| c_string("the variable", e)).collect();
    let (argv, envp) = match (argv, envp) {
        (Ok(a), Ok(e)) => (a, e),
        (Err(e), _) | (_, Err(e)) => return e,
    };
    let file = &argv[0];
    let argv_ptrs: Vec<*const libc::c_char> = argv
        .iter()
        .map(|a| a.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect();
    let envp_ptrs: Vec<*const libc::c_char> = envp
        .iter()
        .map(|e| e.as_ptr())
        .chain(std::iter::once(std::ptr::null()))
        .collect();

    // SIGPIPE as the caller gave it. Rust's runtime ignored it; an ignored
    // signal stays ignored across exec, so only a default disposition needs
    // putting back (and without a record, Command's behaviour: default).
    let pipe_default = SIGPIPE_AT_START.load(Ordering::Relaxed) != IGNORED;
    if pipe_default {
        // SAFETY: setting SIGPIPE's disposition to SIG_DFL; no handler of
        // this program depends on it (Rust's runtime only ignored it).
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    }
    // Descriptors 0-2 that were closed at start-up are Rust's /dev/null:
    // close-on-exec, so the program finds them closed (and, should the exec
    // fail, the error message below still has somewhere harmless to go).
    let closed = CLOSED_AT_START.load(Ordering::Relaxed);
    for fd in 0..3 {
        if closed & (1 << fd) != 0 {
            // SAFETY: F_SETFD on a descriptor this process owns (Rust's
            // runtime opened it); it only sets its close-on-exec flag.
            unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
        }
    }
    // SAFETY: `file` and every non-null pointer of `argv_ptrs` and
    // `envp_ptrs` point to NUL-terminated strings that live until after the
    // call (`argv`, `envp`); both arrays end with a null pointer.
    unsafe { libc::execvpe(file.as_ptr(), argv_ptrs.as_ptr(), envp_ptrs.as_ptr()) };
    let err = std::io::Error::last_os_error();
    if pipe_default {
        // SAFETY: back to the disposition Rust's runtime set (ignored), so
        // that the error message cannot kill this process.
        unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    }
    err
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(s: &[u8]) -> OsString {
        OsString::from_vec(s.to_vec())
    }

    #[test]
    fn the_environment_keeps_its_bytes_and_its_order() {
        let current = vec![
            (os(b"A"), os(b"1")),
            (os(b"LD_PRELOAD"), os(b"/x/odd\xffdir/lib.so")),
            (os(b"B\xfe"), os(b"\xff")),
            (os(b"LD_PRELOAD"), os(b"second")),
            (os(b"C"), os(b"")),
        ];
        let set = vec![
            ("DR_HOOK_OPT".to_string(), os(b"prof")),
            ("LD_PRELOAD".to_string(), os(b"/x/odd\xffdir/lib.so:/p.so")),
            ("DR_HOOK".to_string(), os(b"1")),
            ("DR_HOOK_OPT".to_string(), os(b"prof,io")),
        ];
        assert_eq!(
            environment(current, &set),
            vec![
                os(b"A=1"),
                os(b"LD_PRELOAD=/x/odd\xffdir/lib.so:/p.so"),
                os(b"B\xfe=\xff"),
                os(b"C="),
                os(b"DR_HOOK_OPT=prof,io"),
                os(b"DR_HOOK=1"),
            ]
        );
    }

    #[test]
    fn a_program_that_cannot_be_run_is_an_error() {
        let e = exec(OsStr::new("/no/such/program"), &[], &[]);
        assert_eq!(e.kind(), std::io::ErrorKind::NotFound);
        let e = exec(OsStr::new("/"), &[], &[]);
        assert_eq!(e.raw_os_error(), Some(libc::EACCES));
        let e = exec(OsStr::new("true"), &[os(b"a\0b")], &[]);
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    }
}
