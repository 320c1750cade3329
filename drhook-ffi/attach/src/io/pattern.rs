//! Path patterns of the I/O profile, one dialect for all: POSIX extended
//! regular expressions (`regcomp` with `REG_EXTENDED`), as `DRHOOK_FOLLOW`
//! reads them too. `DRHOOK_IO_TRACE` (the paths traced operation by
//! operation), `DRHOOK_IO_EXCLUDE` and `DRHOOK_IO_INCLUDE` (the system
//! files grouped as one record) are each read once, when the first new
//! file is seen, and compiled then.
//!
//! A `fork` child compiles its own copy at its next new file: the C
//! library's `regexec` takes a lock inside the compiled pattern that a
//! thread of the parent may have held at the fork.

use std::sync::atomic::{AtomicPtr, AtomicU8, Ordering};

const UNDECIDED: u8 = 0;
const OFF: u8 = 1;
const ON: u8 = 2;
const DECIDING: u8 = 3;

/// A pattern read from the first set of `vars` (else `default`), compiled
/// once per process.
pub(super) struct Pattern {
    state: AtomicU8,
    /// The compiled pattern (a leaked box, never freed).
    re: AtomicPtr<libc::regex_t>,
    vars: &'static [&'static str],
    default: Option<&'static str>,
    /// What it is for, in the message of a pattern that does not compile.
    what: &'static str,
}

impl Pattern {
    /// The pattern of the first of `vars` that is set and not empty (the
    /// value `none`: no pattern), else `default`.
    pub(super) const fn new(
        vars: &'static [&'static str],
        default: Option<&'static str>,
        what: &'static str,
    ) -> Self {
        Pattern {
            state: AtomicU8::new(UNDECIDED),
            re: AtomicPtr::new(std::ptr::null_mut()),
            vars,
            default,
            what,
        }
    }

    /// The compiled pattern, decided once; a pattern that does not compile
    /// is reported and matches nothing. Threads that find it being
    /// compiled wait (a `fork` child never does: [`Pattern::after_fork`]).
    fn compiled(&self) -> Option<*mut libc::regex_t> {
        loop {
            match self.state.load(Ordering::Acquire) {
                ON => return Some(self.re.load(Ordering::Acquire)),
                OFF => return None,
                DECIDING => std::hint::spin_loop(),
                _ => {
                    if self
                        .state
                        .compare_exchange(UNDECIDED, DECIDING, Ordering::AcqRel, Ordering::Acquire)
                        .is_ok()
                    {
                        let p = self.compile();
                        self.re.store(p, Ordering::Release);
                        self.state
                            .store(if p.is_null() { OFF } else { ON }, Ordering::Release);
                    }
                }
            }
        }
    }

    fn compile(&self) -> *mut libc::regex_t {
        let set = self.vars.iter().find_map(|k| {
            crate::sys::env::env_value(k.as_bytes())
                .filter(|v| !v.is_empty())
                .map(|v| (*k, v))
        });
        let (var, value) = match set {
            Some((k, v)) => (k, v.to_vec()),
            None => match self.default {
                Some(d) => ("the default", d.as_bytes().to_vec()),
                None => return std::ptr::null_mut(),
            },
        };
        if value == b"none" {
            return std::ptr::null_mut();
        }
        let Ok(c) = std::ffi::CString::new(value) else {
            crate::sys::diag(&format!(
                "drhook io: {var} holds a NUL byte; no {}",
                self.what
            ));
            return std::ptr::null_mut();
        };
        // SAFETY: all-zero bytes are a valid (unused) `regex_t`.
        let re: *mut libc::regex_t = Box::into_raw(Box::new(unsafe { std::mem::zeroed() }));
        // SAFETY: a pattern of our own, compiled before it is published.
        let r = unsafe { libc::regcomp(re, c.as_ptr(), libc::REG_EXTENDED | libc::REG_NOSUB) };
        if r == 0 {
            return re;
        }
        let mut msg = [0u8; 160];
        // SAFETY: a buffer of the given size.
        let n = unsafe { libc::regerror(r, re, msg.as_mut_ptr().cast(), msg.len()) };
        let text = String::from_utf8_lossy(&msg[..n.saturating_sub(1).min(msg.len())]);
        crate::sys::diag(&format!(
            "drhook io: {var}={:?} is not a POSIX extended regular expression ({text}); no {}",
            c.to_string_lossy(),
            self.what
        ));
        // SAFETY: ours, never published (a failed regcomp leaves nothing
        // to free).
        drop(unsafe { Box::from_raw(re) });
        std::ptr::null_mut()
    }

    /// Whether `path` matches (None: there is no pattern).
    pub(super) fn matches(&self, path: &[u8]) -> Option<bool> {
        let re = self.compiled()?;
        let Ok(c) = std::ffi::CString::new(path) else {
            return Some(false);
        };
        // SAFETY: a compiled pattern, a NUL-terminated string.
        Some(unsafe { libc::regexec(re, c.as_ptr(), 0, std::ptr::null_mut(), 0) } == 0)
    }

    /// In every `fork` child: the pattern is compiled again at the next
    /// use (see the module documentation).
    pub(super) fn after_fork(&self) {
        if matches!(self.state.load(Ordering::Acquire), ON | DECIDING) {
            self.state.store(UNDECIDED, Ordering::Release);
        }
    }
}

/// The system files, grouped as one record (`<system files>`), when
/// `DRHOOK_IO_EXCLUDE` is set (`none`: none); unset, [`DEFAULT_SYSTEM`].
pub(super) static EXCLUDE: Pattern =
    Pattern::new(&["DRHOOK_IO_EXCLUDE"], None, "exclusion of system files");

/// Paths kept as records of their own even where the exclusion matches.
pub(super) static INCLUDE: Pattern =
    Pattern::new(&["DRHOOK_IO_INCLUDE"], None, "inclusion of paths");

/// The default system directories: Darshan's default exclusions and
/// `/run/` (the pattern `^/(etc|dev|usr|bin|boot|lib|opt|sbin|sys|proc|
/// var|run)/`, matched as prefixes: no pattern compiled, nothing allocated
/// by the C library — whose blocks a leak checker such as AddressSanitizer
/// would report).
const DEFAULT_SYSTEM: [&[u8]; 12] = [
    b"/etc/", b"/dev/", b"/usr/", b"/bin/", b"/boot/", b"/lib/", b"/opt/", b"/sbin/", b"/sys/",
    b"/proc/", b"/var/", b"/run/",
];

/// Whether `DRHOOK_IO_EXCLUDE` is set (0: not read yet, 1: no, 2: yes).
static EXCLUDE_SET: AtomicU8 = AtomicU8::new(0);

/// Whether the file `path` (absolute) is one of the system files.
pub(super) fn is_system(path: &[u8]) -> bool {
    let set = match EXCLUDE_SET.load(Ordering::Relaxed) {
        0 => {
            let set =
                crate::sys::env::env_value(b"DRHOOK_IO_EXCLUDE").is_some_and(|v| !v.is_empty());
            EXCLUDE_SET.store(if set { 2 } else { 1 }, Ordering::Relaxed);
            set
        }
        v => v == 2,
    };
    let excluded = if set {
        EXCLUDE.matches(path) == Some(true)
    } else {
        DEFAULT_SYSTEM.iter().any(|p| path.starts_with(p))
    };
    excluded && INCLUDE.matches(path) != Some(true)
}

/// In every `fork` child (see [`Pattern::after_fork`]).
pub(super) fn after_any_fork() {
    EXCLUDE.after_fork();
    INCLUDE.after_fork();
}
