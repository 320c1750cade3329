//! The stdio wrappers' bodies: `fopen`, `fdopen`, `freopen`, `fclose`,
//! `fread`/`fwrite` (`__fread_chk`), `fputs`, `fgets` (`__fgets_chk`),
//! `fputc`, `fgetc`/`getc`, `getline`/`getdelim`, `fflush`, `fseek`, `ftell`, `rewind`,
//! `setvbuf`, `setbuf`. A stream's bytes are counted as the program passed
//! them (stdio level), and the writes the C library made to flush them
//! (system level), inferred from the stream's buffer (`stream.rs`).
//! The `printf` family and `puts`/`putc`/`putchar`: [`super::printf`].

use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::atomic::Ordering;

use super::clock::interval_ns;
use super::paths::{file_index, file_of};
use super::record::{closing, opened, other_event, pass_or_time, timed};
use super::recording;
use super::slots::{self as s, *};
use super::stream::{Given, flush_all, flushed, pending, read_mark, refilled, shared};
use super::table::{FILES, MAX_FD, ROUTINES, add, bump, c, stamp};
use super::{guard, trace};
use crate::engine::hooks;
use crate::sys::{errno, set_errno};

#[inline(always)]
pub(super) fn fileno(fp: *mut libc::FILE) -> c_int {
    super::stream::fd_of(fp)
}

/// `fopen`, `fopen64`.
///
/// # Safety
/// The C contract.
pub unsafe fn fopen<S: Source>(
    which: &'static Slot,
    p: *const c_char,
    m: *const c_char,
) -> *mut libc::FILE {
    let f = real!(S, *which, FopenFn);
    if !recording() || p.is_null() {
        // SAFETY: the C contract.
        return unsafe { f(p, m) };
    }
    // SAFETY: the C contract; `p` a C string.
    timed(
        || unsafe { f(p, m) },
        |r, a, b| {
            if r.is_null() {
                other_event(a, b)
            } else {
                opened(
                    fileno(r),
                    // SAFETY: a C string (the C contract).
                    Some(unsafe { CStr::from_ptr(p) }),
                    libc::AT_FDCWD,
                    0,
                    a,
                    b,
                )
            }
        },
    )
}

/// `fdopen`: the stream on a descriptor already known.
///
/// # Safety
/// The C contract.
pub unsafe fn fdopen<S: Source>(fd: c_int, m: *const c_char) -> *mut libc::FILE {
    let f = real!(S, s::FDOPEN, FdopenFn);
    // SAFETY: the C contract.
    unsafe { f(fd, m) }
}

/// `freopen`: the stream's old file is closed, the new one opened.
///
/// # Safety
/// The C contract.
pub unsafe fn freopen<S: Source>(
    p: *const c_char,
    m: *const c_char,
    fp: *mut libc::FILE,
) -> *mut libc::FILE {
    let f = real!(S, s::FREOPEN, FreopenFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(p, m, fp) };
    }
    let old = fileno(fp);
    // SAFETY: the C contract.
    timed(
        || unsafe { f(p, m, fp) },
        |r, a, b| {
            if old >= 0 && (old as usize) < MAX_FD {
                closing(old, a, a);
            }
            if !r.is_null() && !p.is_null() {
                // SAFETY: `p` is a C string.
                opened(
                    fileno(r),
                    // SAFETY: a C string (the C contract).
                    Some(unsafe { CStr::from_ptr(p) }),
                    libc::AT_FDCWD,
                    0,
                    a,
                    b,
                )
            }
        },
    )
}

/// `fclose` (its `close` is the C library's own: counted here).
///
/// # Safety
/// The C contract.
pub unsafe fn fclose<S: Source>(fp: *mut libc::FILE) -> c_int {
    let f = real!(S, s::FCLOSE, FileFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(fp) };
    }
    let fd = fileno(fp);
    let before = pending(fp);
    let buf = if before > 0 {
        super::stream::buffer(fp)
    } else {
        (0, 0)
    };
    // SAFETY: the C contract.
    timed(
        || unsafe { f(fp) },
        |_, a, b| {
            if before > 0 {
                // The stream is gone: what it held was written.
                super::stream::flushed_gone(fd, before as u64, buf, a, b);
            }
            closing(fd, a, b)
        },
    )
}

unsafe extern "C" {
    fn flockfile(fp: *mut libc::FILE);
    fn funlockfile(fp: *mut libc::FILE);
}

/// A stdio call on `fp` that moves bytes (`bytes(r)` of them for its
/// result `r`; written when `write`), recording on: counted at the stdio
/// level, and the flushes and refills it made (the stream locked around it, as the
/// call itself locks it, so that another thread's call on the stream
/// cannot fall between the two looks at its buffer).
#[inline(always)]
pub(super) fn data_call<R: Copy>(
    fp: *mut libc::FILE,
    write: bool,
    how: Given,
    f: impl FnOnce() -> R,
    bytes: impl FnOnce(R) -> u64,
) -> R {
    if fp.is_null() {
        return timed(f, |r, a, t| stdio_data(fp, write, bytes(r), a, t));
    }
    // (Locked only when another thread may use it: a process that never
    // started one has no other call that could fall between the looks.)
    let lock = shared(fp);
    if lock {
        // SAFETY: a stream of the C library (the call's own contract).
        unsafe { flockfile(fp) };
    }
    let before = pending(fp);
    let mark = if write { None } else { Some(read_mark(fp)) };
    let r = timed(f, |r, a, t| {
        let n = bytes(r);
        stdio_data(fp, write, n, a, t);
        flushed(fp, before, if write { n } else { 0 }, how, a, t);
        if let Some(m) = mark {
            refilled(fp, m, n, how, a, t);
        }
    });
    if lock {
        // SAFETY: locked above, by this thread.
        unsafe { funlockfile(fp) };
    }
    r
}

/// A stdio call on `fp` that moves no bytes but may flush (`fflush`,
/// `fseek`, `rewind`), recording on.
#[inline(always)]
fn other_call<R: Copy>(fp: *mut libc::FILE, f: impl FnOnce() -> R) -> R {
    if fp.is_null() {
        return timed(f, |_, a, t| stdio_other(fp, a, t));
    }
    let lock = shared(fp);
    if lock {
        // SAFETY: as in `data_call`.
        unsafe { flockfile(fp) };
    }
    let before = pending(fp);
    let r = timed(f, |_, a, t| {
        stdio_other(fp, a, t);
        flushed(fp, before, 0, Given::Piece, a, t);
    });
    if lock {
        // SAFETY: locked above, by this thread.
        unsafe { funlockfile(fp) };
    }
    r
}

#[inline]
pub(super) fn stdio_data(fp: *mut libc::FILE, write: bool, bytes: u64, t0: u64, t1: u64) {
    stdio_data_fd(fileno(fp), !shared(fp), write, bytes, t0, t1)
}

/// A stdio-level call on `fd` (`dprintf`: a stream of its own); `alone`:
/// the process has a single thread (its counters added without a locked
/// instruction: [`bump`]).
#[inline]
pub(super) fn stdio_data_fd(fd: c_int, alone: bool, write: bool, bytes: u64, t0: u64, t1: u64) {
    let i = file_index(fd);
    if trace::traced(i) {
        let op = if write { b'W' } else { b'R' };
        let _ = guard(|| trace::op(op, fd, bytes as isize, None, t0, t1));
    }
    let f = &FILES[i as usize];
    let (calls, b, t) = if write {
        (c::STDIO_WRITES, c::STDIO_WRITE_BYTES, c::WRITE_T)
    } else {
        (c::STDIO_READS, c::STDIO_READ_BYTES, c::READ_T)
    };
    bump(&f.0[calls], 1, alone);
    bump(&f.0[b], bytes, alone);
    bump(&f.0[t], t1.wrapping_sub(t0), alone);
    stamp(f, t1);
    let routine = (hooks().io_event)(write as u32, bytes, interval_ns(t0, t1));
    if bytes != 0 {
        ROUTINES[i as usize].add_as(routine, bytes, alone);
    }
}

#[inline]
fn stdio_other(fp: *mut libc::FILE, t0: u64, t1: u64) {
    let f = file_of(fileno(fp));
    add(f, c::STDIO_OTHER, 1);
    add(f, c::META_T, t1.wrapping_sub(t0));
    other_event(t0, t1);
}

/// `fread`, `fwrite`.
///
/// # Safety
/// The C contract.
#[inline(always)]
pub unsafe fn frw<S: Source>(
    which: &'static Slot,
    write: bool,
    b: *mut c_void,
    sz: usize,
    n: usize,
    fp: *mut libc::FILE,
) -> usize {
    let f = real!(S, *which, FrwFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(b, sz, n, fp) };
    }
    // SAFETY: the C contract.
    unsafe { frw_recorded(f, write, b, sz, n, fp) }
}

/// The recording part of [`frw`].
///
/// # Safety
/// The C contract.
#[inline(never)]
unsafe fn frw_recorded(
    f: FrwFn,
    write: bool,
    b: *mut c_void,
    sz: usize,
    n: usize,
    fp: *mut libc::FILE,
) -> usize {
    // SAFETY: the C contract.
    data_call(
        fp,
        write,
        Given::Piece,
        || unsafe { f(b, sz, n, fp) },
        |r| (r * sz) as u64,
    )
}

/// `fputs`.
///
/// # Safety
/// The C contract.
pub unsafe fn fputs<S: Source>(str: *const c_char, fp: *mut libc::FILE) -> c_int {
    let f = real!(S, s::FPUTS, FputsFn);
    if !recording() || str.is_null() {
        // SAFETY: the C contract.
        return unsafe { f(str, fp) };
    }
    // SAFETY: a C string.
    let n = unsafe { libc::strlen(str) } as u64;
    // SAFETY: the C contract.
    data_call(
        fp,
        true,
        Given::Piece,
        || unsafe { f(str, fp) },
        |r| if r >= 0 { n } else { 0 },
    )
}

/// `fgets`.
///
/// # Safety
/// The C contract.
pub unsafe fn fgets<S: Source>(b: *mut c_char, n: c_int, fp: *mut libc::FILE) -> *mut c_char {
    let f = real!(S, s::FGETS, FgetsFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(b, n, fp) };
    }
    // SAFETY: the C contract.
    data_call(fp, false, Given::Pieces, || unsafe { f(b, n, fp) }, got)
}

/// The bytes `fgets` read into the string `r` it returns.
pub(super) fn got(r: *mut c_char) -> u64 {
    if r.is_null() {
        0
    } else {
        // SAFETY: `fgets`'s result, a C string.
        unsafe { libc::strlen(r) as u64 }
    }
}

/// `fputc`.
///
/// # Safety
/// The C contract.
pub unsafe fn fputc<S: Source>(ch: c_int, fp: *mut libc::FILE) -> c_int {
    // SAFETY: the C contract.
    unsafe { fputc_as::<S>(&s::FPUTC, ch, fp) }
}

/// `fputc`, `putc`, `_IO_putc`.
///
/// # Safety
/// The C contract.
#[inline(always)]
pub unsafe fn fputc_as<S: Source>(which: &'static Slot, ch: c_int, fp: *mut libc::FILE) -> c_int {
    let f = real!(S, *which, FputcFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(ch, fp) };
    }
    // SAFETY: the C contract.
    data_call(
        fp,
        true,
        Given::Piece,
        || unsafe { f(ch, fp) },
        |r| (r >= 0) as u64,
    )
}

/// `fgetc`.
///
/// # Safety
/// The C contract.
pub unsafe fn fgetc<S: Source>(fp: *mut libc::FILE) -> c_int {
    // SAFETY: the C contract.
    unsafe { fgetc_as::<S>(&s::FGETC, fp) }
}

/// `fgetc`, `getc`, `_IO_getc`.
///
/// # Safety
/// The C contract.
pub unsafe fn fgetc_as<S: Source>(which: &'static Slot, fp: *mut libc::FILE) -> c_int {
    let f = real!(S, *which, FileFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(fp) };
    }
    // SAFETY: the C contract.
    data_call(
        fp,
        false,
        Given::Pieces,
        || unsafe { f(fp) },
        |r| (r >= 0) as u64,
    )
}

/// `getline`.
///
/// # Safety
/// The C contract.
pub unsafe fn getline<S: Source>(l: *mut *mut c_char, n: *mut usize, fp: *mut libc::FILE) -> isize {
    let f = real!(S, s::GETLINE, GetlineFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(l, n, fp) };
    }
    // SAFETY: the C contract.
    data_call(
        fp,
        false,
        Given::Pieces,
        || unsafe { f(l, n, fp) },
        |r| r.max(0) as u64,
    )
}

/// `getdelim`, `__getdelim`.
///
/// # Safety
/// The C contract.
pub unsafe fn getdelim<S: Source>(
    which: &'static Slot,
    l: *mut *mut c_char,
    n: *mut usize,
    d: c_int,
    fp: *mut libc::FILE,
) -> isize {
    let f = real!(S, *which, GetdelimFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(l, n, d, fp) };
    }
    // SAFETY: the C contract.
    data_call(
        fp,
        false,
        Given::Pieces,
        || unsafe { f(l, n, d, fp) },
        |r| r.max(0) as u64,
    )
}

/// `fflush` (NULL: every stream).
///
/// # Safety
/// The C contract.
pub unsafe fn fflush<S: Source>(fp: *mut libc::FILE) -> c_int {
    let f = real!(S, s::FFLUSH, FileFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(fp) };
    }
    if fp.is_null() {
        // Every stream: what each holds now is what this call writes
        // (its time not measured per stream).
        let e = errno();
        let t0 = super::clock::ticks();
        flush_all(t0, t0);
        set_errno(e);
        // SAFETY: the C contract.
        return unsafe { f(fp) };
    }
    // SAFETY: the C contract.
    other_call(fp, || unsafe { f(fp) })
}

/// `fseek`.
///
/// # Safety
/// The C contract.
pub unsafe fn fseek<S: Source>(fp: *mut libc::FILE, off: libc::c_long, wh: c_int) -> c_int {
    let f = real!(S, s::FSEEK, FseekFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(fp, off, wh) };
    }
    // SAFETY: the C contract.
    other_call(fp, || unsafe { f(fp, off, wh) })
}

/// `ftell`.
///
/// # Safety
/// The C contract.
pub unsafe fn ftell<S: Source>(fp: *mut libc::FILE) -> libc::c_long {
    let f = real!(S, s::FTELL, FtellFn);
    pass_or_time!(f(fp), |_, a, t| stdio_other(fp, a, t))
}

/// `rewind`.
///
/// # Safety
/// The C contract.
pub unsafe fn rewind<S: Source>(fp: *mut libc::FILE) {
    let f = real!(S, s::REWIND, RewindFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(fp) };
    }
    // SAFETY: the C contract.
    other_call(fp, || unsafe { f(fp) })
}

/// `setvbuf`: the buffer size and mode chosen are reported per file
/// (seed 001: buffers not tuned to the file system's block size).
///
/// # Safety
/// The C contract.
pub unsafe fn setvbuf<S: Source>(
    fp: *mut libc::FILE,
    b: *mut c_char,
    mode: c_int,
    size: usize,
) -> c_int {
    let f = real!(S, s::SETVBUF, SetvbufFn);
    // SAFETY: the C contract.
    let r = unsafe { f(fp, b, mode, size) };
    if r == 0 && recording() {
        let e = errno();
        let file = file_of(fileno(fp));
        file.0[c::BUFSIZE1].store(size as u64 + 1, Ordering::Relaxed);
        file.0[c::BUFMODE].store(mode as u64 + 1, Ordering::Relaxed);
        set_errno(e);
    }
    r
}

/// `setbuf` (`setvbuf` with `BUFSIZ`, or unbuffered for NULL).
///
/// # Safety
/// The C contract.
pub unsafe fn setbuf<S: Source>(fp: *mut libc::FILE, b: *mut c_char) {
    let f = real!(S, s::SETBUF, SetbufFn);
    // SAFETY: the C contract.
    unsafe { f(fp, b) };
    if recording() {
        let e = errno();
        let file = file_of(fileno(fp));
        let (size, mode) = if b.is_null() {
            (0, libc::_IONBF)
        } else {
            (libc::BUFSIZ as u64, libc::_IOFBF)
        };
        file.0[c::BUFSIZE1].store(size + 1, Ordering::Relaxed);
        file.0[c::BUFMODE].store(mode as u64 + 1, Ordering::Relaxed);
        set_errno(e);
    }
}
