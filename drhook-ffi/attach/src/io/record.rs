//! What each kind of call adds to the tables: a read or write
//! ([`data`]), a metadata call on a descriptor ([`meta`]) or a path
//! ([`path_meta`]), an open, a close, a duplicate; each is also an event
//! of the engine's per-routine `io` metric, and a line of the trace when
//! its file is traced. [`timed`] runs a real call between two stamps,
//! keeping its `errno`.

use std::ffi::{CStr, c_int};
use std::sync::atomic::Ordering;

use super::clock::{interval_ns, ticks};
use super::paths::{absolute, classify, file_index, file_of, intern_opened, path_of};
use super::table::{
    FD_FILE, FD_POS, FD_POS_AT, FILES, MAX_FD, MEM_ALIGNMENT, OTHER_FILES, PATH_META, ROUTINES,
    SIZES, STRIDES, add, bin, c, lower1, pos_of, raise, stamp,
};
use super::{guard, trace};
use crate::engine::hooks;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Dir {
    Read,
    Write,
}

/// A read or write of `n` bytes (the call's result; negative: failed) on
/// `fd` at `off` (None: the descriptor's position, which then moves), from
/// or to the buffer at `mem` (0: none, or several).
#[inline]
pub(super) fn data(fd: c_int, dir: Dir, n: isize, off: Option<u64>, mem: usize, t0: u64, t1: u64) {
    let i = data_counts(fd, dir, n, off, mem, t0, t1);
    let bytes = n.max(0) as u64;
    let kind = if dir == Dir::Read { 0 } else { 1 };
    let routine = (hooks().io_event)(kind, bytes, interval_ns(t0, t1));
    if bytes != 0 {
        ROUTINES[i as usize].add(routine, bytes);
    }
}

/// What [`data`] adds to the file's counters and its trace (not the
/// routine's event): also a flush stdio made for a stream, whose bytes
/// the routine already has from its stdio call. Returns the file.
#[inline]
pub(super) fn data_counts(
    fd: c_int,
    dir: Dir,
    n: isize,
    off: Option<u64>,
    mem: usize,
    t0: u64,
    t1: u64,
) -> u32 {
    let i = file_index(fd);
    if trace::traced(i) {
        let op = if matches!(dir, Dir::Write) {
            b'w'
        } else {
            b'r'
        };
        let at = off.or_else(|| {
            (fd >= 0 && (fd as usize) < MAX_FD).then(|| pos_of(fd as usize).load(Ordering::Relaxed))
        });
        // (The descriptor's position as this table follows it: exact for
        // a descriptor opened through us and not moved by another process.)
        let at = at.filter(|&p| p < u64::MAX / 4);
        let _ = guard(|| trace::op(op, fd, n, at, t0, t1));
    }
    let f = &FILES[i as usize];
    let dt = t1.wrapping_sub(t0);
    let bytes = n.max(0) as u64;
    let (ops, b, t, seq, consec, max, min1, hist, top1, last_byte, this_io, slow) = match dir {
        Dir::Read => (
            c::READS,
            c::READ_BYTES,
            c::READ_T,
            c::SEQ_READS,
            c::CONSEC_READS,
            c::MAX_READ,
            c::MIN_READ1,
            c::HIST_READ,
            c::MAX_BYTE_READ1,
            c::LAST_BYTE_READ,
            1,
            c::MAX_READ_T,
        ),
        Dir::Write => (
            c::WRITES,
            c::WRITE_BYTES,
            c::WRITE_T,
            c::SEQ_WRITES,
            c::CONSEC_WRITES,
            c::MAX_WRITE,
            c::MIN_WRITE1,
            c::HIST_WRITE,
            c::MAX_BYTE_WRITTEN1,
            c::LAST_BYTE_WRITTEN,
            2,
            c::MAX_WRITE_T,
        ),
    };
    add(f, ops, 1);
    add(f, b, bytes);
    add(f, t, dt);
    if n >= 0 {
        add(f, hist + bin(bytes), 1);
        raise(f, max, bytes);
        lower1(f, min1, bytes);
        if dt > f.0[slow].load(Ordering::Relaxed) {
            // The slowest single access and its size (a race between two
            // threads may pair one's time with the other's size).
            f.0[slow].store(dt, Ordering::Relaxed);
            f.0[slow + 1].store(bytes, Ordering::Relaxed);
        }
        if mem != 0 && mem as u64 % MEM_ALIGNMENT != 0 {
            add(f, c::MEM_NOT_ALIGNED, 1);
        }
        let file = i as usize;
        SIZES[file].add(bytes);
        let at = if fd >= 0 && (fd as usize) < MAX_FD {
            match off {
                Some(o) => Some(o),
                None => {
                    let i = fd as usize;
                    let pos = pos_of(i);
                    let p = pos.load(Ordering::Relaxed);
                    pos.store(p + bytes, Ordering::Relaxed);
                    Some(p)
                }
            }
        } else {
            off
        };
        // Darshan's definitions, per file: sequential when the access
        // starts after the last byte of the previous one in the same
        // direction, consecutive when right after it; every open sets the
        // file's last bytes to 0, so a first access at offset 0 is
        // neither. (A descriptor opened with O_APPEND counts its offsets
        // from 0 at the open, as Darshan does.)
        if let Some(at) = at {
            let at = if at >= u64::MAX / 4 {
                at.wrapping_sub(u64::MAX / 2)
            } else {
                at
            } as i64;
            let last = f.0[last_byte].load(Ordering::Relaxed) as i64;
            if at > last {
                add(f, seq, 1);
            }
            if at == last.wrapping_add(1) {
                add(f, consec, 1);
            }
            // Darshan's stride: the gap after the last byte, 0 for a first
            // access or one that is not forward.
            let stride = if at > 0 && at > last && last != 0 {
                (at - last - 1) as u64
            } else {
                0
            };
            STRIDES[file].add(stride);
            let align = f.0[c::FILE_ALIGNMENT].load(Ordering::Relaxed);
            if align > 0 && (at as u64) % align != 0 {
                add(f, c::FILE_NOT_ALIGNED, 1);
            }
            let end = at + bytes as i64;
            f.0[last_byte].store((end - 1) as u64, Ordering::Relaxed);
            raise(f, top1, end as u64);
        }
        match f.0[c::LAST_IO].swap(this_io, Ordering::Relaxed) {
            0 => {}
            prev if prev != this_io => add(f, c::RW_SWITCHES, 1),
            _ => {}
        }
    }
    stamp(f, t1);
    i
}

/// A metadata call on `fd` (seek, sync, truncate, stat): counted for the
/// file and the routine.
#[inline]
pub(super) fn meta(fd: c_int, k: Option<usize>, t0: u64, t1: u64) {
    let f = file_of(fd);
    add(f, c::META_OPS, 1);
    add(f, c::META_T, t1.wrapping_sub(t0));
    if let Some(k) = k {
        add(f, k, 1);
    }
    stamp(f, t1);
    other_event(t0, t1);
}

#[inline]
pub(super) fn other_event(t0: u64, t1: u64) {
    let _ = (hooks().io_event)(2, 0, interval_ns(t0, t1));
}

/// `fd` now refers to the file `path` (an open that succeeded).
pub(super) fn opened(fd: c_int, path: Option<&CStr>, dirfd: c_int, flags: c_int, t0: u64, t1: u64) {
    if fd < 0 {
        other_event(t0, t1);
        return;
    }
    let i = guard(|| match path {
        Some(p) => intern_opened(fd, &absolute(dirfd, p)),
        None => classify(fd),
    })
    .unwrap_or(OTHER_FILES);
    if (fd as usize) < MAX_FD {
        FD_FILE[fd as usize].store(i, Ordering::Relaxed);
        let pos = if flags & libc::O_APPEND != 0 {
            u64::MAX / 2
        } else {
            0
        };
        FD_POS[fd as usize].store(pos, Ordering::Relaxed);
        FD_POS_AT[fd as usize].store(0, Ordering::Relaxed);
    }
    if trace::traced(i) {
        let _ = guard(|| trace::open(fd, path_of(i), flags, t0, t1));
    }
    let f = &FILES[i as usize];
    // Darshan's open: the file's last bytes read and written start again.
    f.0[c::LAST_BYTE_READ].store(0, Ordering::Relaxed);
    f.0[c::LAST_BYTE_WRITTEN].store(0, Ordering::Relaxed);
    if f.0[c::FILE_ALIGNMENT].load(Ordering::Relaxed) == 0 {
        // SAFETY: plain data written by fstat.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: a descriptor just opened, a valid pointer (the system
        // call directly: no wrapper of ours sees it).
        if unsafe { libc::syscall(libc::SYS_fstat, fd, &mut st) } == 0 && st.st_blksize > 0 {
            f.0[c::FILE_ALIGNMENT].store(st.st_blksize as u64, Ordering::Relaxed);
        }
    }
    add(f, c::OPENS, 1);
    add(f, c::OPEN_T, t1.wrapping_sub(t0));
    stamp(f, t1);
    other_event(t0, t1);
}

/// `fd` is being closed (the call's time `t0..t1`).
pub(super) fn closing(fd: c_int, t0: u64, t1: u64) {
    if fd < 0 {
        return;
    }
    let i = file_index(fd);
    if trace::traced(i) {
        let _ = guard(|| trace::op(b'c', fd, 0, None, t0, t1));
    }
    let f = &FILES[i as usize];
    add(f, c::CLOSES, 1);
    add(f, c::CLOSE_T, t1.wrapping_sub(t0));
    stamp(f, t1);
    if (fd as usize) < MAX_FD {
        FD_FILE[fd as usize].store(0, Ordering::Relaxed);
    }
    other_event(t0, t1);
}

/// `new` is a duplicate of `old` (dup, dup2, dup3, fcntl F_DUPFD).
pub(super) fn duplicated(old: c_int, new: c_int) {
    if new < 0 || old < 0 || (new as usize) >= MAX_FD {
        return;
    }
    let f = if (old as usize) < MAX_FD {
        let f = FD_FILE[old as usize].load(Ordering::Relaxed);
        if f == 0 {
            guard(|| classify(old)).unwrap_or(OTHER_FILES)
        } else {
            f
        }
    } else {
        OTHER_FILES
    };
    FD_FILE[new as usize].store(f, Ordering::Relaxed);
    // The duplicate shares the original's position.
    let at = if (old as usize) < MAX_FD {
        match FD_POS_AT[old as usize].load(Ordering::Relaxed) {
            0 => old as u32 + 1,
            at => at,
        }
    } else {
        0
    };
    FD_POS_AT[new as usize].store(at, Ordering::Relaxed);
    // Darshan's DUPS, and its OPENS count a duplicate too.
    add(&FILES[f as usize], c::DUPS, 1);
    add(&FILES[f as usize], c::OPENS, 1);
}

/// `from` was renamed to `to` (relative to `dirfd`): Darshan's rename
/// sources and targets, for files the profile knows by those names.
pub(super) fn renamed(dirfd: c_int, from: &CStr, to: &CStr) {
    let _ = guard(|| {
        if let Some(i) = super::paths::known(&absolute(dirfd, from)) {
            add(&FILES[i as usize], c::RENAMES_FROM, 1);
        }
        if let Some(i) = super::paths::known(&absolute(dirfd, to)) {
            add(&FILES[i as usize], c::RENAMES_TO, 1);
        }
    });
}

pub(super) fn path_meta(a: u64, b: u64) {
    PATH_META[0].fetch_add(1, Ordering::Relaxed);
    PATH_META[1].fetch_add(b.wrapping_sub(a), Ordering::Relaxed);
    other_event(a, b);
}

/// Runs the real call `f` timed, then `after` with the stamps, keeping
/// the real call's `errno`.
#[inline(always)]
pub(super) fn timed<R: Copy>(f: impl FnOnce() -> R, after: impl FnOnce(R, u64, u64)) -> R {
    let t0 = ticks();
    let r = f();
    let t1 = ticks();
    // SAFETY: the thread's errno location, the same throughout the call.
    let ep = unsafe { libc::__errno_location() };
    // SAFETY: as above.
    let e = unsafe { *ep };
    after(r, t0, t1);
    // SAFETY: as above.
    unsafe { *ep = e };
    r
}

/// The body of a wrapper that only times the call: the real call `f(args)`
/// alone when calls are not recorded (or `skip` holds), else timed with
/// [`timed`] and `after` run on its result and stamps.
macro_rules! pass_or_time {
    ($f:ident($($a:expr),*), $after:expr $(, if $skip:expr)?) => {{
        if !recording() $(|| $skip)? {
            // SAFETY: the C contract of the wrapped function.
            return unsafe { $f($($a),*) };
        }
        // SAFETY: as above.
        timed(|| unsafe { $f($($a),*) }, $after)
    }};
}
pub(super) use pass_or_time;
