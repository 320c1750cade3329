//! The layer's own descriptors (the I/O trace), kept out of the program's
//! way: placed high, close-on-exec, checked to be still ours before each
//! use, and never made with a wrapped function (raw system calls: no
//! interposer, ours included, sees them).
//!
//! Where: a descriptor number is below the soft `RLIMIT_NOFILE` when it is
//! made, and the limit is on the numbers, not on how many are open. When
//! the hard limit allows it, [`place_high`] raises the soft limit for the
//! instant of one `fcntl(F_DUPFD_CLOEXEC)` and puts it back, so that the
//! descriptor sits at or above the program's limit: it never takes a number
//! the program could get, so it never counts against the program's limit,
//! not even for a program that opens files until `EMFILE`, and a close loop
//! up to `getdtablesize()` leaves it alone. That instant is the only moment
//! the program could see another limit (`getrlimit` on another thread). A
//! soft limit above 4096 (or one equal to the hard limit) is not raised:
//! the descriptor then goes just below 4096 (or below the limit), above
//! the numbers programs use (`select`'s 1024 included), and counts only for
//! a program that opens every descriptor its limit allows. (A higher number
//! would make every `fork` copy a larger descriptor table.)

use std::ffi::c_int;

/// The highest descriptor number aimed at when the soft limit is large.
const CEILING: libc::rlim_t = 4096;
/// Room for the layer's descriptors above the aim.
const ROOM: libc::rlim_t = 16;

fn dup_at_least(fd: c_int, min: libc::rlim_t) -> c_int {
    // SAFETY: fcntl on a descriptor of ours; the system call directly.
    unsafe { libc::syscall(libc::SYS_fcntl, fd, libc::F_DUPFD_CLOEXEC, min as c_int) as c_int }
}

/// Moves `fd` (one of ours, just made) to a high number, close-on-exec, and
/// closes the original; `fd` itself if it cannot move (see the module).
pub(crate) fn place_high(fd: c_int) -> c_int {
    if fd < 0 {
        return fd;
    }
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: a valid pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return fd;
    }
    let (soft, hard) = (lim.rlim_cur, lim.rlim_max);
    let mut new = -1;
    if soft <= CEILING && (hard == libc::RLIM_INFINITY || hard >= soft + ROOM) {
        let raised = libc::rlimit {
            rlim_cur: soft + ROOM,
            rlim_max: lim.rlim_max,
        };
        // SAFETY: valid pointers; the limit is put back at once.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            new = dup_at_least(fd, soft);
            // SAFETY: as above.
            unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) };
        }
    }
    if new < 0 {
        let top = soft.min(CEILING);
        new = dup_at_least(fd, top.saturating_sub(ROOM).max(3));
    }
    if new < 0 {
        return fd;
    }
    // SAFETY: the original, ours; the system call directly.
    unsafe { libc::syscall(libc::SYS_close, fd) };
    new
}

/// The identity of the file `fd` refers to (device, inode); None when
/// `fd` is not open.
pub(crate) fn identity(fd: c_int) -> Option<(u64, u64)> {
    // SAFETY: plain data written by the call.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid pointer; the system call directly (not a wrapper).
    let r = unsafe { libc::syscall(libc::SYS_fstat, fd, &mut st) };
    (r == 0).then_some((st.st_dev as u64, st.st_ino as u64))
}
