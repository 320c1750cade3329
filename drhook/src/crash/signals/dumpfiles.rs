//! `DR_HOOK_DUMP_SMAPS`, `DR_HOOK_DUMP_MAPS`, `DR_HOOK_DUMP_BUDDYINFO`,
//! `DR_HOOK_DUMP_MEMINFO`: at the first signal, before the calling trees,
//! the handler copies `/proc/<tid>/smaps`, `/proc/<tid>/maps` (of the
//! signalled thread), `/proc/buddyinfo` and `/proc/meminfo` to stderr, as
//! the reference's `dump_file`:
//!
//! ```text
//! PREFIX TIMESTR [dump_file@signals.rs] Content of the file '/proc/1234/maps', signal#11, nsigs = 1
//! PREFIX TIMESTR [dump_file@signals.rs] 00400000-00452000 r-xp 00000000 08:02 173521  /usr/bin/prog
//! ```
//!
//! With `open`/`read`/`write` and stack buffers only (the reference uses
//! `fopen` and `fprintf` in its handler, which are not async-signal-safe).

use std::sync::atomic::{AtomicU32, Ordering};

use super::handler::msg;
use crate::sys::linebuf::LineBuf;

/// `smaps` is dumped.
pub(crate) const SMAPS: u32 = 1;
/// `maps` is dumped.
pub(crate) const MAPS: u32 = 2;
/// `/proc/buddyinfo` is dumped.
pub(crate) const BUDDYINFO: u32 = 4;
/// `/proc/meminfo` is dumped.
pub(crate) const MEMINFO: u32 = 8;

/// Which files (set at installation).
pub(super) static FILES: AtomicU32 = AtomicU32::new(0);

/// Dumps the files asked for, for signal `sig` (`nsigs` so far).
pub(super) fn dump(sig: i32, nsigs: u32) {
    let files = FILES.load(Ordering::Relaxed);
    // SAFETY: no preconditions.
    let tid = unsafe { libc::gettid() } as u64;
    let mut path = LineBuf::new();
    for (bit, per_thread, name) in [
        (SMAPS, true, "smaps"),
        (MAPS, true, "maps"),
        (BUDDYINFO, false, "buddyinfo"),
        (MEMINFO, false, "meminfo"),
    ] {
        if files & bit == 0 {
            continue;
        }
        path.clear();
        path.str("/proc/");
        if per_thread {
            path.u64(tid).str("/");
        }
        path.str(name);
        dump_file(path.as_bytes(), sig, nsigs);
    }
}

fn dump_file(path: &[u8], sig: i32, nsigs: u32) {
    let mut l = LineBuf::new();
    msg(&mut l, "dump_file", |l| {
        l.str("Content of the file '")
            .bytes(path)
            .str("', signal#")
            .u64(sig as u64)
            .str(", nsigs = ")
            .u64(u64::from(nsigs));
    });
    let mut cpath = [0u8; 64];
    let n = path.len().min(cpath.len() - 1);
    cpath[..n].copy_from_slice(&path[..n]);
    // SAFETY: a NUL-terminated path in a local buffer.
    let fd = unsafe { libc::open(cpath.as_ptr().cast(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return;
    }
    // One line at a time, at most 255 bytes as the reference's `fgets`
    // (longer lines continue on the next output line).
    let mut line = [0u8; 255];
    let mut len = 0;
    let mut chunk = [0u8; 4096];
    loop {
        // SAFETY: reads into a local buffer of that size.
        let got = unsafe { libc::read(fd, chunk.as_mut_ptr().cast(), chunk.len()) };
        if got < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        if got <= 0 {
            break;
        }
        for &b in &chunk[..got as usize] {
            if b != b'\n' {
                line[len] = b;
                len += 1;
            }
            if b == b'\n' || len == line.len() {
                msg(&mut l, "dump_file", |l| {
                    l.bytes(&line[..len]);
                });
                len = 0;
            }
        }
    }
    if len > 0 {
        msg(&mut l, "dump_file", |l| {
            l.bytes(&line[..len]);
        });
    }
    // SAFETY: our own descriptor.
    unsafe { libc::close(fd) };
}
