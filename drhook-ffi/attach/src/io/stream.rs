//! The writes stdio makes for a stream (seed 001: "`fprintf()` will
//! eventually call `write()` to flush the buffer"): glibc calls its own
//! `write` from inside the C library, which no wrapper sees, so they are
//! inferred from the stream's buffer. glibc's `FILE` is a public structure
//! (`struct _IO_FILE`, `<bits/types/struct_FILE.h>`): the bytes waiting in
//! its buffer are `_IO_write_ptr - _IO_write_base`. Around every stdio call
//! the wrapper reads them before and after (the stream locked, as the call
//! locks it): the bytes that left the buffer are
//! `before + bytes given - after`, written by the call as one system write
//! (a flush of a full buffer, of a line, `fflush`, `fclose`, `fseek`) or,
//! for a piece larger than the buffer, as one per buffer. The final flush
//! at `exit` is what every stream holds when the process ends
//! ([`exit_flushes`], walking `_IO_list_all`).

use std::ffi::c_int;
use std::sync::atomic::Ordering;

use super::record::{Dir, data_counts};
use super::table::{FILES, add, c};

/// glibc's `struct _IO_FILE`, up to `_flags2` (the same on every 64-bit
/// glibc target: an `int` then pointers).
#[repr(C)]
struct IoFile {
    flags: c_int,
    read_ptr: *mut u8,
    read_end: *mut u8,
    read_base: *mut u8,
    write_base: *mut u8,
    write_ptr: *mut u8,
    write_end: *mut u8,
    buf_base: *mut u8,
    buf_end: *mut u8,
    save_base: *mut u8,
    backup_base: *mut u8,
    save_end: *mut u8,
    markers: *mut u8,
    chain: *mut IoFile,
    fileno: c_int,
    flags2: c_int,
}

/// `_IO_FLAGS2_NEED_LOCK` (libio.h): set on every stream by the first
/// `pthread_create` (`_IO_enable_locks`), and on every stream opened after.
const NEED_LOCK: c_int = 0x80;

/// `_IO_UNBUFFERED`, `_IO_EOF_SEEN`, `_IO_ERR_SEEN`, `_IO_IN_BACKUP`,
/// `_IO_LINE_BUF`, `_IO_CURRENTLY_PUTTING` (libio.h).
const UNBUFFERED: c_int = 0x2;
const EOF_SEEN: c_int = 0x10;
const ERR_SEEN: c_int = 0x20;
const IN_BACKUP: c_int = 0x100;
const LINE_BUF: c_int = 0x200;
const CURRENTLY_PUTTING: c_int = 0x800;

#[cfg(target_env = "gnu")]
unsafe extern "C" {
    /// glibc's list of open streams (`_IO_list_all`, public since 2.2.5).
    static _IO_list_all: *mut IoFile;
}

/// `fp`'s descriptor (`_fileno`: -1 for a null stream or one on no
/// descriptor), as `fileno` gives it, without the call.
#[inline(always)]
pub(super) fn fd_of(fp: *mut libc::FILE) -> c_int {
    if fp.is_null() {
        return -1;
    }
    // SAFETY: as in `pending`.
    unsafe { (*fp.cast::<IoFile>()).fileno }
}

/// Whether another thread may use `fp` (the process has started one):
/// glibc's own test before it locks a stream. A null stream: false.
#[inline(always)]
pub(super) fn shared(fp: *mut libc::FILE) -> bool {
    if fp.is_null() {
        return false;
    }
    // SAFETY: as in `pending`.
    unsafe { (*fp.cast::<IoFile>()).flags2 & NEED_LOCK != 0 }
}

/// Bytes waiting in `fp`'s buffer to be written (0 for a null stream or
/// one not writing).
#[inline(always)]
pub(super) fn pending(fp: *mut libc::FILE) -> usize {
    if fp.is_null() {
        return 0;
    }
    let f = fp.cast::<IoFile>();
    // SAFETY: a stream of the C library: a glibc `struct _IO_FILE`, whose
    // leading fields are `IoFile`'s (read, not written).
    let (flags, base, ptr) = unsafe { ((*f).flags, (*f).write_base, (*f).write_ptr) };
    if flags & CURRENTLY_PUTTING == 0 {
        return 0;
    }
    (ptr as usize).saturating_sub(base as usize)
}

/// The size of `fp`'s buffer and its mode (`_IOFBF`, `_IOLBF`, `_IONBF`).
pub(super) fn buffer(fp: *mut libc::FILE) -> (u64, c_int) {
    let f = fp.cast::<IoFile>();
    // SAFETY: as in `pending`.
    let (flags, base, end) = unsafe { ((*f).flags, (*f).buf_base, (*f).buf_end) };
    let size = (end as usize).saturating_sub(base as usize) as u64;
    let mode = if flags & UNBUFFERED != 0 {
        libc::_IONBF
    } else if flags & LINE_BUF != 0 {
        libc::_IOLBF
    } else {
        libc::_IOFBF
    };
    (size, mode)
}

/// How a call hands its bytes to the stream: `Piece` as one piece
/// (`fwrite`, `fputs`: what does not fit is written past the buffer, at
/// most one write for the buffer and one for the rest), `Pieces` in many
/// (`printf`: a write per buffer filled).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Given {
    Piece,
    Pieces,
}

/// The stdio call on `fp` between `t0` and `t1`, which found `before` bytes
/// waiting and was given `given` more, flushed what is no longer waiting.
#[inline]
pub(super) fn flushed(
    fp: *mut libc::FILE,
    before: usize,
    given: u64,
    how: Given,
    t0: u64,
    t1: u64,
) {
    let total = before as u64 + given;
    if total == 0 || fp.is_null() {
        return;
    }
    let after = pending(fp) as u64;
    if total > after {
        flush_cold(fp, total - after, how, t0, t1);
    }
}

#[inline(never)]
fn flush_cold(fp: *mut libc::FILE, bytes: u64, how: Given, t0: u64, t1: u64) {
    let (size, mode) = buffer(fp);
    let per = if mode == libc::_IONBF { 0 } else { size };
    let ops = if per == 0 || bytes <= per {
        1
    } else if how == Given::Piece {
        2
    } else {
        bytes.div_ceil(per)
    };
    let fd = fd_of(fp);
    if fd >= 0 {
        // (A stream on no descriptor — `fopencookie`, `open_memstream` —
        // writes through the program's own functions, or memory.)
        record(fd, Dir::Write, bytes, ops, Some((size, mode)), t0, t1);
    }
}

/// A stream on `fd` closed, its buffer `(size, mode)` from [`buffer`],
/// wrote the `bytes` it held (`fclose`).
pub(super) fn flushed_gone(fd: c_int, bytes: u64, buf: (u64, c_int), t0: u64, t1: u64) {
    record(fd, Dir::Write, bytes, 1, Some(buf), t0, t1);
}

/// `vdprintf` wrote `bytes` to `fd` through a stream of its own, a write
/// per block of the file (its buffer's size).
pub(super) fn wrote_through(fd: c_int, bytes: u64, t0: u64, t1: u64) {
    if bytes > 0 {
        record(fd, Dir::Write, bytes, bytes.div_ceil(4096), None, t0, t1);
    }
}

/// `ops` system writes (reads: refills) of `bytes` in all on `fd` (its
/// stream's buffer `(size, mode)` when known), within `t0..t1`.
fn record(fd: c_int, dir: Dir, bytes: u64, ops: u64, buf: Option<(u64, c_int)>, t0: u64, t1: u64) {
    let dt = t1.wrapping_sub(t0) / ops;
    let each = bytes / ops;
    let mut at = t0;
    for k in 0..ops {
        let n = if k + 1 == ops {
            bytes - each * (ops - 1)
        } else {
            each
        };
        let i = data_counts(fd, dir, n as isize, None, 0, at, at + dt);
        at += dt;
        if k + 1 == ops {
            let f = &FILES[i as usize];
            if dir == Dir::Write {
                add(f, c::STDIO_FLUSHES, ops);
                add(f, c::STDIO_FLUSH_BYTES, bytes);
            } else {
                add(f, c::STDIO_REFILLS, ops);
                add(f, c::STDIO_REFILL_BYTES, bytes);
            }
            if let Some((size, mode)) = buf {
                // The stream's buffer as it is (glibc ignores the size
                // given to `setvbuf` with no buffer of the program's own).
                f.0[c::STDIO_BUF1].store(size + 1, Ordering::Relaxed);
                f.0[c::STDIO_MODE1].store(mode as u64 + 1, Ordering::Relaxed);
            }
            if f.0[c::FILE_ALIGNMENT].load(Ordering::Relaxed) == 0 {
                // A descriptor the program did not open through us
                // (a redirected standard stream): its block size, once.
                // SAFETY: plain data written by fstat.
                let mut st: libc::stat = unsafe { std::mem::zeroed() };
                // SAFETY: the system call directly (no wrapper of ours).
                if unsafe { libc::syscall(libc::SYS_fstat, fd, &mut st) } == 0 && st.st_blksize > 0
                {
                    f.0[c::FILE_ALIGNMENT].store(st.st_blksize as u64, Ordering::Relaxed);
                }
            }
        }
    }
}

/// Every open stream's waiting bytes, as flushed now (the final flush of
/// `exit`, or `fflush(NULL)`), within `t0..t1`.
pub(super) fn flush_all(t0: u64, t1: u64) {
    #[cfg(target_env = "gnu")]
    {
        // SAFETY: glibc's list of streams, read without its lock (at
        // `exit`, or before an `fflush(NULL)` that takes it); bounded
        // against a list another thread is changing.
        let mut f = unsafe { std::ptr::addr_of!(_IO_list_all).read() };
        let mut n = 0;
        while !f.is_null() && n < 1 << 16 {
            let fp = f.cast::<libc::FILE>();
            let p = pending(fp) as u64;
            // SAFETY: a stream on glibc's list.
            let fd = unsafe { (*f).fileno };
            if p > 0 && fd >= 0 {
                record(fd, Dir::Write, p, 1, Some(buffer(fp)), t0, t1);
            }
            // SAFETY: as above.
            f = unsafe { (*f).chain };
            n += 1;
        }
    }
    #[cfg(not(target_env = "gnu"))]
    let _ = (t0, t1);
}

/// Where a stream's reading stands: `_IO_read_ptr`, `_IO_read_end`,
/// `_IO_read_base`.
#[inline(always)]
pub(super) fn read_at(fp: *mut libc::FILE) -> (usize, usize, usize) {
    if fp.is_null() {
        return (0, 0, 0);
    }
    let f = fp.cast::<IoFile>();
    // SAFETY: as in `pending`.
    unsafe {
        (
            (*f).read_ptr as usize,
            (*f).read_end as usize,
            (*f).read_base as usize,
        )
    }
}

/// The bytes a call consumed from `fp` that stood at `at` ([`read_at`])
/// before it: exact when the buffer was refilled at most once.
#[inline]
pub(super) fn consumed(fp: *mut libc::FILE, at: (usize, usize, usize)) -> u64 {
    let (p1, e1, b1) = read_at(fp);
    let (p0, e0, b0) = at;
    if b1 == b0 && e1 == e0 && p1 >= p0 {
        (p1 - p0) as u64
    } else {
        (e0.saturating_sub(p0) + p1.saturating_sub(b1)) as u64
    }
}

/// Where a stream's reading stands before a call: the bytes ready in its
/// buffer (`_IO_read_end - _IO_read_ptr`) and its flags.
#[derive(Clone, Copy)]
pub(super) struct ReadMark {
    ready: usize,
    flags: c_int,
}

/// `fp`'s [`ReadMark`] now.
#[inline(always)]
pub(super) fn read_mark(fp: *mut libc::FILE) -> ReadMark {
    let f = fp.cast::<IoFile>();
    // SAFETY: as in `pending` (the caller's stream is not null).
    let (flags, ptr, end) = unsafe { ((*f).flags, (*f).read_ptr, (*f).read_end) };
    ReadMark {
        ready: (end as usize).saturating_sub(ptr as usize),
        flags,
    }
}

/// The stdio call on `fp` between `t0` and `t1`, which found its reading
/// at `before` and consumed `taken` bytes from the stream, refilled the
/// buffer with what it holds more than before, less what it took: the
/// system reads stdio made (`_IO_file_underflow`'s, from inside the C
/// library). One read per buffer's worth (`Pieces`: through the buffer;
/// `Piece`, `fread`: a read past the buffer for a large piece and one
/// refill), and the read that found the end of the file (or failed) when
/// the call set the stream's end-of-file (or error) flag.
#[inline]
pub(super) fn refilled(
    fp: *mut libc::FILE,
    before: ReadMark,
    taken: u64,
    how: Given,
    t0: u64,
    t1: u64,
) {
    let after = read_mark(fp);
    let mode = CURRENTLY_PUTTING | IN_BACKUP;
    if (before.flags | after.flags) & mode != 0 {
        // Writing, or reading back what `ungetc` pushed: not a refill.
        return;
    }
    let bytes = (taken + after.ready as u64).saturating_sub(before.ready as u64);
    let ended = after.flags & !before.flags & (EOF_SEEN | ERR_SEEN) != 0;
    if bytes > 0 || ended {
        refill_cold(fp, bytes, ended, how, t0, t1);
    }
}

#[inline(never)]
fn refill_cold(fp: *mut libc::FILE, bytes: u64, ended: bool, how: Given, t0: u64, t1: u64) {
    let fd = fd_of(fp);
    if fd < 0 {
        return;
    }
    let (size, mode) = buffer(fp);
    let ops = if bytes == 0 {
        0
    } else if size == 0 || bytes <= size {
        1
    } else if how == Given::Piece {
        2
    } else {
        bytes.div_ceil(size)
    };
    let tm = if ended {
        t0 + t1.wrapping_sub(t0) / (ops + 1) * ops
    } else {
        t1
    };
    if ops > 0 {
        record(fd, Dir::Read, bytes, ops, Some((size, mode)), t0, tm);
    }
    if ended {
        record(fd, Dir::Read, 0, 1, Some((size, mode)), tm, t1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layout read is glibc's: a stream's waiting bytes and its
    /// descriptor, as the C library's own calls leave them.
    #[test]
    fn the_layout_is_glibcs() {
        // SAFETY: plain C library calls on a stream of our own.
        unsafe {
            let fp = libc::tmpfile();
            assert!(!fp.is_null());
            assert_eq!(pending(fp), 0);
            libc::fputs(c"hello\n".as_ptr(), fp);
            assert_eq!(pending(fp), 6);
            assert_eq!((*fp.cast::<IoFile>()).fileno, libc::fileno(fp));
            // Once a thread has been started, every stream needs its lock.
            std::thread::spawn(|| ()).join().unwrap();
            assert!(shared(fp));
            let (size, mode) = buffer(fp);
            assert!(size >= 512, "{size}");
            assert_eq!(mode, libc::_IOFBF);
            libc::fflush(fp);
            assert_eq!(pending(fp), 0);
            libc::fclose(fp);
        }
    }
}
