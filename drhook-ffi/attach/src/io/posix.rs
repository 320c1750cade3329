//! The POSIX wrappers' bodies: `open*` (and the fortified `__open*_2`),
//! `close`, `read`/`write` and their positioned and vectored forms
//! (`__read_chk`, `__pread_chk` too), `copy_file_range`, `sendfile`,
//! `lseek`, `fsync`/`fdatasync`, `ftruncate`, `fstat`, `stat`/`lstat`,
//! `access`, `unlink`, `rename`, `dup*`, `fcntl(F_DUPFD*)` and `mmap`.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::atomic::Ordering;

use super::paths::file_of;
use super::record::{
    Dir, closing, data, duplicated, meta, opened, other_event, pass_or_time, path_meta, renamed,
    timed,
};
use super::recording;
use super::slots::{self as s, *};
use super::stdio::data_call;
use super::stream::Given;
use super::table::{MAX_FD, add, c, pos_of};
use crate::sys::{errno, set_errno};

/// `open`, `open64` (`which`: the slot).
///
/// # Safety
/// The C contract.
pub unsafe fn open<S: Source>(
    which: &'static Slot,
    p: *const c_char,
    fl: c_int,
    m: libc::mode_t,
) -> c_int {
    let f = real!(S, *which, OpenFn);
    if !recording() || p.is_null() {
        // SAFETY: the C contract.
        return unsafe { f(p, fl, m) };
    }
    // SAFETY: the C contract; `p` is a C string.
    timed(
        || unsafe { f(p, fl, m) },
        |r, a, b| {
            opened(
                r,
                // SAFETY: a C string (the C contract).
                Some(unsafe { CStr::from_ptr(p) }),
                libc::AT_FDCWD,
                fl,
                a,
                b,
            )
        },
    )
}

/// `openat`, `openat64`.
///
/// # Safety
/// The C contract.
pub unsafe fn openat<S: Source>(
    which: &'static Slot,
    d: c_int,
    p: *const c_char,
    fl: c_int,
    m: libc::mode_t,
) -> c_int {
    let f = real!(S, *which, OpenatFn);
    if !recording() || p.is_null() {
        // SAFETY: the C contract.
        return unsafe { f(d, p, fl, m) };
    }
    // SAFETY: the C contract; `p` is a C string.
    timed(
        || unsafe { f(d, p, fl, m) },
        // SAFETY: a C string (the C contract).
        |r, a, b| opened(r, Some(unsafe { CStr::from_ptr(p) }), d, fl, a, b),
    )
}

/// `creat`, `creat64`.
///
/// # Safety
/// The C contract.
pub unsafe fn creat<S: Source>(which: &'static Slot, p: *const c_char, m: libc::mode_t) -> c_int {
    let f = real!(S, *which, CreatFn);
    if !recording() || p.is_null() {
        // SAFETY: the C contract.
        return unsafe { f(p, m) };
    }
    // SAFETY: the C contract; `p` is a C string.
    timed(
        || unsafe { f(p, m) },
        |r, a, b| {
            opened(
                r,
                // SAFETY: a C string (the C contract).
                Some(unsafe { CStr::from_ptr(p) }),
                libc::AT_FDCWD,
                0,
                a,
                b,
            )
        },
    )
}

/// `__open_2`, `__open64_2` (`open` of programs built with
/// `_FORTIFY_SOURCE`).
///
/// # Safety
/// The C contract.
pub unsafe fn open_2<S: Source>(which: &'static Slot, p: *const c_char, fl: c_int) -> c_int {
    let f = real!(S, *which, Open2Fn);
    if !recording() || p.is_null() {
        // SAFETY: the C contract.
        return unsafe { f(p, fl) };
    }
    // SAFETY: the C contract.
    timed(
        || unsafe { f(p, fl) },
        // SAFETY: a C string (the C contract).
        |r, a, b| {
            opened(
                r,
                // SAFETY: a C string (the C contract).
                Some(unsafe { CStr::from_ptr(p) }),
                libc::AT_FDCWD,
                fl,
                a,
                b,
            )
        },
    )
}

/// `__openat_2`, `__openat64_2`.
///
/// # Safety
/// The C contract.
pub unsafe fn openat_2<S: Source>(
    which: &'static Slot,
    d: c_int,
    p: *const c_char,
    fl: c_int,
) -> c_int {
    let f = real!(S, *which, Openat2Fn);
    if !recording() || p.is_null() {
        // SAFETY: the C contract.
        return unsafe { f(d, p, fl) };
    }
    // SAFETY: the C contract.
    timed(
        || unsafe { f(d, p, fl) },
        // SAFETY: a C string (the C contract).
        |r, a, b| opened(r, Some(unsafe { CStr::from_ptr(p) }), d, fl, a, b),
    )
}

/// `__read_chk`.
///
/// # Safety
/// The C contract.
pub unsafe fn read_chk<S: Source>(fd: c_int, b: *mut c_void, n: usize, len: usize) -> isize {
    let f = real!(S, s::READ_CHK, ReadChkFn);
    pass_or_time!(f(fd, b, n, len), |r, a, t| data(
        fd,
        Dir::Read,
        r,
        None,
        b as usize,
        a,
        t
    ))
}

/// `__pread_chk`, `__pread64_chk`.
///
/// # Safety
/// The C contract.
pub unsafe fn pread_chk<S: Source>(
    which: &'static Slot,
    fd: c_int,
    b: *mut c_void,
    n: usize,
    off: libc::off_t,
    len: usize,
) -> isize {
    let f = real!(S, *which, PreadChkFn);
    pass_or_time!(f(fd, b, n, off, len), |r, a, t| data(
        fd,
        Dir::Read,
        r,
        Some(off.max(0) as u64),
        b as usize,
        a,
        t
    ))
}

/// `__fread_chk`.
///
/// # Safety
/// The C contract.
pub unsafe fn fread_chk<S: Source>(
    b: *mut c_void,
    len: usize,
    sz: usize,
    n: usize,
    fp: *mut libc::FILE,
) -> usize {
    let f = real!(S, s::FREAD_CHK, FreadChkFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(b, len, sz, n, fp) };
    }
    // SAFETY: the C contract.
    data_call(
        fp,
        false,
        Given::Piece,
        || unsafe { f(b, len, sz, n, fp) },
        |r| (r * sz) as u64,
    )
}

/// `__fgets_chk`.
///
/// # Safety
/// The C contract.
pub unsafe fn fgets_chk<S: Source>(
    b: *mut c_char,
    len: usize,
    n: c_int,
    fp: *mut libc::FILE,
) -> *mut c_char {
    let f = real!(S, s::FGETS_CHK, FgetsChkFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(b, len, n, fp) };
    }
    // SAFETY: the C contract.
    data_call(
        fp,
        false,
        Given::Pieces,
        || unsafe { f(b, len, n, fp) },
        super::stdio::got,
    )
}

/// `copy_file_range`: the bytes are read from one file and written to the
/// other (one operation each).
///
/// # Safety
/// The C contract.
pub unsafe fn copy_file_range<S: Source>(
    i: c_int,
    io: *mut i64,
    o: c_int,
    oo: *mut i64,
    n: usize,
    fl: libc::c_uint,
) -> isize {
    let f = real!(S, s::COPY_FILE_RANGE, CopyRangeFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(i, io, o, oo, n, fl) };
    }
    // SAFETY: the offsets are null or the caller's.
    let (ai, ao) = unsafe {
        (
            io.as_ref().map(|x| *x as u64),
            oo.as_ref().map(|x| *x as u64),
        )
    };
    // SAFETY: the C contract.
    timed(
        || unsafe { f(i, io, o, oo, n, fl) },
        |r, a, t| {
            data(i, Dir::Read, r, ai, 0, a, t);
            data(o, Dir::Write, r, ao, 0, a, a);
        },
    )
}

/// `sendfile` (+64): read from `in`, written to `out`.
///
/// # Safety
/// The C contract.
pub unsafe fn sendfile<S: Source>(
    which: &'static Slot,
    o: c_int,
    i: c_int,
    off: *mut libc::off_t,
    n: usize,
) -> isize {
    let f = real!(S, *which, SendfileFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(o, i, off, n) };
    }
    // SAFETY: the offset is null or the caller's.
    let at = unsafe { off.as_ref().map(|x| *x as u64) };
    // SAFETY: the C contract.
    timed(
        || unsafe { f(o, i, off, n) },
        |r, a, t| {
            data(i, Dir::Read, r, at, 0, a, t);
            data(o, Dir::Write, r, None, 0, a, a);
        },
    )
}

/// `close`.
///
/// # Safety
/// The C contract.
pub unsafe fn close<S: Source>(fd: c_int) -> c_int {
    let f = real!(S, s::CLOSE, FdFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(fd) };
    }
    // Counted whatever the result (a close of a descriptor the program
    // never opened is the program's business: it fails as it would).
    // SAFETY: the C contract.
    timed(
        || unsafe { f(fd) },
        |r, a, b| {
            if r == 0 {
                closing(fd, a, b)
            } else {
                other_event(a, b)
            }
        },
    )
}

/// `read`, `write` (`dir`), through `which`.
///
/// # Safety
/// The C contract.
#[inline(always)]
pub unsafe fn rw<S: Source>(
    which: &'static Slot,
    write: bool,
    fd: c_int,
    b: *mut c_void,
    n: usize,
) -> isize {
    let f = real!(S, *which, RwFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(fd, b, n) };
    }
    // SAFETY: the C contract.
    unsafe { rw_recorded(f, write, fd, b, n) }
}

/// The recording part of [`rw`], out of line so that the pass-through
/// stays a few instructions.
///
/// # Safety
/// The C contract.
#[inline(never)]
unsafe fn rw_recorded(f: RwFn, write: bool, fd: c_int, b: *mut c_void, n: usize) -> isize {
    let dir = if write { Dir::Write } else { Dir::Read };
    // SAFETY: the C contract.
    timed(
        || unsafe { f(fd, b, n) },
        |r, a, t| data(fd, dir, r, None, b as usize, a, t),
    )
}

/// `pread`, `pwrite` (+64).
///
/// # Safety
/// The C contract.
pub unsafe fn prw<S: Source>(
    which: &'static Slot,
    write: bool,
    fd: c_int,
    b: *mut c_void,
    n: usize,
    off: libc::off_t,
) -> isize {
    let f = real!(S, *which, PrwFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(fd, b, n, off) };
    }
    let dir = if write { Dir::Write } else { Dir::Read };
    // SAFETY: the C contract.
    timed(
        || unsafe { f(fd, b, n, off) },
        |r, a, t| data(fd, dir, r, Some(off.max(0) as u64), b as usize, a, t),
    )
}

/// `readv`, `writev`.
///
/// # Safety
/// The C contract.
pub unsafe fn rwv<S: Source>(
    which: &'static Slot,
    write: bool,
    fd: c_int,
    v: *const libc::iovec,
    n: c_int,
) -> isize {
    let f = real!(S, *which, VFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(fd, v, n) };
    }
    let dir = if write { Dir::Write } else { Dir::Read };
    // SAFETY: the C contract.
    timed(
        || unsafe { f(fd, v, n) },
        |r, a, t| data(fd, dir, r, None, 0, a, t),
    )
}

/// `preadv`, `pwritev`.
///
/// # Safety
/// The C contract.
pub unsafe fn prwv<S: Source>(
    which: &'static Slot,
    write: bool,
    fd: c_int,
    v: *const libc::iovec,
    n: c_int,
    off: libc::off_t,
) -> isize {
    let f = real!(S, *which, PvFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(fd, v, n, off) };
    }
    let dir = if write { Dir::Write } else { Dir::Read };
    // SAFETY: the C contract.
    timed(
        || unsafe { f(fd, v, n, off) },
        |r, a, t| data(fd, dir, r, Some(off.max(0) as u64), 0, a, t),
    )
}

/// `lseek`, `lseek64`.
///
/// # Safety
/// The C contract.
pub unsafe fn lseek<S: Source>(
    which: &'static Slot,
    fd: c_int,
    off: libc::off_t,
    wh: c_int,
) -> libc::off_t {
    let f = real!(S, *which, SeekFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(fd, off, wh) };
    }
    // SAFETY: the C contract.
    timed(
        || unsafe { f(fd, off, wh) },
        |r, a, b| {
            if r >= 0 && fd >= 0 && (fd as usize) < MAX_FD {
                pos_of(fd as usize).store(r as u64, Ordering::Relaxed);
            }
            meta(fd, Some(c::SEEKS), a, b)
        },
    )
}

/// `fsync`, `fdatasync`.
///
/// # Safety
/// The C contract.
pub unsafe fn sync<S: Source>(which: &'static Slot, fd: c_int) -> c_int {
    let f = real!(S, *which, FdFn);
    pass_or_time!(f(fd), |_, a, b| meta(fd, Some(c::SYNCS), a, b))
}

/// `ftruncate` (+64).
///
/// # Safety
/// The C contract.
pub unsafe fn ftruncate<S: Source>(which: &'static Slot, fd: c_int, len: libc::off_t) -> c_int {
    let f = real!(S, *which, TruncFn);
    pass_or_time!(f(fd, len), |_, a, b| meta(fd, None, a, b))
}

/// `fstat`.
///
/// # Safety
/// The C contract.
pub unsafe fn fstat<S: Source>(fd: c_int, st: *mut libc::stat) -> c_int {
    let f = real!(S, s::FSTAT, FstatFn);
    pass_or_time!(f(fd, st), |_, a, b| meta(fd, None, a, b))
}

/// `stat`, `lstat`.
///
/// # Safety
/// The C contract.
pub unsafe fn stat<S: Source>(
    which: &'static Slot,
    p: *const c_char,
    st: *mut libc::stat,
) -> c_int {
    let f = real!(S, *which, StatFn);
    pass_or_time!(f(p, st), |_, a, b| path_meta(a, b))
}

/// `access`.
///
/// # Safety
/// The C contract.
pub unsafe fn access<S: Source>(p: *const c_char, m: c_int) -> c_int {
    let f = real!(S, s::ACCESS, AccessFn);
    pass_or_time!(f(p, m), |_, a, b| path_meta(a, b))
}

/// `unlink`.
///
/// # Safety
/// The C contract.
pub unsafe fn unlink<S: Source>(p: *const c_char) -> c_int {
    let f = real!(S, s::UNLINK, PathFn);
    pass_or_time!(f(p), |_, a, b| path_meta(a, b))
}

/// `rename`.
///
/// # Safety
/// The C contract.
pub unsafe fn rename<S: Source>(p: *const c_char, q: *const c_char) -> c_int {
    let f = real!(S, s::RENAME, RenameFn);
    pass_or_time!(f(p, q), |r, a, b| {
        path_meta(a, b);
        if r == 0 {
            // SAFETY: C strings (the C contract).
            renamed(libc::AT_FDCWD, unsafe { CStr::from_ptr(p) }, unsafe {
                CStr::from_ptr(q)
            });
        }
    })
}

/// `dup`.
///
/// # Safety
/// The C contract.
pub unsafe fn dup<S: Source>(fd: c_int) -> c_int {
    let f = real!(S, s::DUP, FdFn);
    // SAFETY: the C contract.
    let r = unsafe { f(fd) };
    if recording() {
        let e = errno();
        duplicated(fd, r);
        set_errno(e);
    }
    r
}

/// `dup2`.
///
/// # Safety
/// The C contract.
pub unsafe fn dup2<S: Source>(fd: c_int, to: c_int) -> c_int {
    let f = real!(S, s::DUP2, Dup2Fn);
    // SAFETY: the C contract.
    let r = unsafe { f(fd, to) };
    if recording() && r >= 0 && r != fd {
        let e = errno();
        duplicated(fd, r);
        set_errno(e);
    }
    r
}

/// `dup3`.
///
/// # Safety
/// The C contract.
pub unsafe fn dup3<S: Source>(fd: c_int, to: c_int, fl: c_int) -> c_int {
    let f = real!(S, s::DUP3, Dup3Fn);
    // SAFETY: the C contract.
    let r = unsafe { f(fd, to, fl) };
    if recording() && r >= 0 {
        let e = errno();
        duplicated(fd, r);
        set_errno(e);
    }
    r
}

/// `fcntl` (+64): `F_DUPFD` and `F_DUPFD_CLOEXEC` duplicate. The third
/// argument is passed on as a word (every `fcntl` command takes an
/// integer or a pointer there).
///
/// # Safety
/// The C contract.
pub unsafe fn fcntl<S: Source>(which: &'static Slot, fd: c_int, cmd: c_int, arg: usize) -> c_int {
    let f = real!(S, *which, FcntlFn);
    // SAFETY: the C contract.
    let r = unsafe { f(fd, cmd, arg) };
    if (cmd == libc::F_DUPFD || cmd == libc::F_DUPFD_CLOEXEC) && recording() {
        let e = errno();
        duplicated(fd, r);
        set_errno(e);
    }
    r
}

/// `mmap` (+64): a mapping of a file is counted for the file (not as
/// bytes).
///
/// # Safety
/// The C contract.
pub unsafe fn mmap<S: Source>(
    which: &'static Slot,
    a: *mut c_void,
    n: usize,
    p: c_int,
    fl: c_int,
    fd: c_int,
    off: libc::off_t,
) -> *mut c_void {
    let f = real!(S, *which, MmapFn);
    // SAFETY: the C contract.
    let r = unsafe { f(a, n, p, fl, fd, off) };
    if fd >= 0 && fl & libc::MAP_ANONYMOUS == 0 && r != libc::MAP_FAILED && recording() {
        let e = errno();
        add(file_of(fd), c::MMAPS, 1);
        set_errno(e);
    }
    r
}
