//! Diagnostic lines on stderr in the reference's format:
//! `[EC_DRHOOK:host:myproc:tid:pid:unixtid] [YYYYMMDD:HHMMSS:walltime] [function@file:line] text`.
//!
//! Each line is built in memory and written with a single `write(2)`, so
//! lines from different threads and processes do not interleave.

use std::fmt::Write as _;

use crate::sys::clock;
use crate::sys::linebuf;
use crate::sys::sysinfo::hostname;

/// Fixes the host, task number and time origin used in prefixes.
pub(crate) fn set_label(myproc: u32, start_ns: u64) {
    linebuf::set_label(&hostname(), myproc, start_ns);
}

/// The legend line printed before the first diagnostic.
pub const LEGEND: &str = "[EC_DRHOOK:hostname:myproc:omltid:pid:unixtid] [YYYYMMDD:HHMMSS:walltime] [function@file:lineno]";

/// Dr.Hook thread number of the caller (1 for an unregistered main thread,
/// 0 for another unregistered thread).
pub(crate) fn caller_tid() -> u32 {
    let td = crate::tree::thread::current();
    if td.is_null() {
        // A thread started without a tree yet (`tree::thread::lazy`).
        let r = crate::tree::thread::lazy::mine();
        // SAFETY: records live for ever; this one is the calling thread's.
        if let Some(i) = unsafe { r.as_ref() }.and_then(|r| r.info()) {
            return i.tid;
        }
        // SAFETY: no preconditions.
        let main = unsafe { libc::gettid() == libc::getpid() };
        u32::from(main)
    } else {
        // SAFETY: the calling thread's own tree (freed only once the thread ended it).
        unsafe { (*td).tid }
    }
}

/// Appends `PREFIX TIMESTR` for the calling thread.
pub fn prefix(out: &mut String) {
    if !linebuf::label_is_set() {
        linebuf::set_label(&hostname(), 1, clock::monotonic_ns());
    }
    let mut b = linebuf::LineBuf::new();
    // SAFETY: no preconditions.
    let utid = unsafe { libc::gettid() };
    linebuf::prefix(&mut b, caller_tid(), utid);
    out.push_str(&String::from_utf8_lossy(b.as_bytes()));
}

/// The two parts of the calling thread's prefix: `[EC_DRHOOK:...]` (the
/// reference's `drhook_PREFIX`) and `[YYYYMMDD:HHMMSS:walltime]`
/// (`drhook_TIMESTR`).
pub fn prefix_parts() -> (String, String) {
    let mut s = String::new();
    prefix(&mut s);
    match s.find("] ") {
        Some(i) => (s[..=i].to_string(), s[i + 2..].to_string()),
        None => (s, String::new()),
    }
}

/// Appends only `[EC_DRHOOK:...]` for the calling thread (the reference
/// prints some lines with its `PREFIX` alone).
pub fn prefix_only(out: &mut String) {
    out.push_str(&prefix_parts().0);
}

/// Writes one raw line (a newline is appended) to stderr in one write.
pub fn raw_line(text: &str) {
    let mut s = String::with_capacity(text.len() + 1);
    s.push_str(text);
    s.push('\n');
    linebuf::write_all(2, s.as_bytes());
}

/// Writes one prefixed diagnostic line. Control characters in `func` and
/// `text` (a routine or file name from outside) are escaped
/// (`linebuf::escape_controls`), so that a diagnostic is always one line.
pub fn emit(func: &str, file: &str, line: u32, text: &str) {
    let mut s = String::with_capacity(160 + text.len());
    prefix(&mut s);
    let base = file.rsplit('/').next().unwrap_or(file);
    let (func, text) = (
        linebuf::escape_controls(func),
        linebuf::escape_controls(text),
    );
    let _ = write!(s, " [{func}@{base}:{line}] {text}");
    raw_line(&s);
}

/// `diag!("function", "format", args...)`: one prefixed line on stderr.
#[doc(hidden)]
#[macro_export]
macro_rules! diag {
    ($func:expr, $($arg:tt)*) => {
        $crate::diag::emit($func, file!(), line!(), &format!($($arg)*))
    };
}
