//! The POSIX AIO wrappers' bodies: `aio_read`/`aio_write` (issued),
//! `aio_return` (completed: bytes and time from issue to completion),
//! `aio_error`, `aio_suspend`; the queue depth.

use std::ffi::c_int;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use super::clock::ticks;
use super::guard;
use super::paths::{file_index, file_of};
use super::record::{other_event, pass_or_time, timed};
use super::recording;
use super::slots::{self as s, *};
use super::table::{FILES, ROUTINES, add, bin, c};
use crate::engine::hooks;
use crate::sys::{errno, set_errno};

/// Requests in flight: (aiocb address, issue ticks, write).
static AIO: Mutex<Vec<(usize, u64, bool)>> = Mutex::new(Vec::new());
/// Requests, bytes, completion ticks, maximum queue depth.
pub(super) static AIO_STATS: [AtomicU64; 6] = [const { AtomicU64::new(0) }; 6];
pub(super) const AIO_READS: usize = 0;
pub(super) const AIO_WRITES: usize = 1;
pub(super) const AIO_BYTES: usize = 2;
pub(super) const AIO_T: usize = 3;
pub(super) const AIO_DEPTH: usize = 4;
pub(super) const AIO_DONE: usize = 5;

/// `aio_read`, `aio_write`.
///
/// # Safety
/// The C contract.
pub unsafe fn aio_submit<S: Source>(
    which: &'static Slot,
    write: bool,
    cb: *mut libc::aiocb,
) -> c_int {
    let f = real!(S, *which, AiocbFn);
    let t0 = ticks();
    // SAFETY: the C contract.
    let r = unsafe { f(cb) };
    if r == 0 && recording() && !cb.is_null() {
        let e = errno();
        guard(|| {
            let mut q = AIO.lock().unwrap_or_else(|p| p.into_inner());
            q.retain(|x| x.0 != cb as usize);
            q.push((cb as usize, t0, write));
            let depth = q.len() as u64;
            if depth > AIO_STATS[AIO_DEPTH].load(Ordering::Relaxed) {
                AIO_STATS[AIO_DEPTH].store(depth, Ordering::Relaxed);
            }
        });
        AIO_STATS[if write { AIO_WRITES } else { AIO_READS }].fetch_add(1, Ordering::Relaxed);
        // SAFETY: the program's control block.
        let (fd, n) = unsafe { ((*cb).aio_fildes, (*cb).aio_nbytes) };
        let file = file_of(fd);
        add(file, if write { c::WRITES } else { c::READS }, 1);
        set_errno(e);
        let _ = n;
    }
    r
}

/// `aio_return`: the request completes (its bytes and its time from
/// issue to completion).
///
/// # Safety
/// The C contract.
pub unsafe fn aio_return<S: Source>(cb: *mut libc::aiocb) -> isize {
    let f = real!(S, s::AIO_RETURN, AioRetFn);
    // SAFETY: the C contract.
    let r = unsafe { f(cb) };
    if recording() && !cb.is_null() {
        let e = errno();
        let t1 = ticks();
        let found = guard(|| {
            let mut q = AIO.lock().unwrap_or_else(|p| p.into_inner());
            let i = q.iter().position(|x| x.0 == cb as usize)?;
            Some(q.swap_remove(i))
        })
        .flatten();
        if let Some((_, t0, write)) = found {
            let bytes = r.max(0) as u64;
            AIO_STATS[AIO_BYTES].fetch_add(bytes, Ordering::Relaxed);
            AIO_STATS[AIO_T].fetch_add(t1.wrapping_sub(t0), Ordering::Relaxed);
            AIO_STATS[AIO_DONE].fetch_add(1, Ordering::Relaxed);
            // SAFETY: the program's control block.
            let fd = unsafe { (*cb).aio_fildes };
            let fi = file_index(fd);
            let file = &FILES[fi as usize];
            add(
                file,
                if write { c::WRITE_BYTES } else { c::READ_BYTES },
                bytes,
            );
            add(
                file,
                (if write { c::HIST_WRITE } else { c::HIST_READ }) + bin(bytes),
                1,
            );
            let routine = (hooks().io_event)(write as u32, bytes, 0);
            if bytes != 0 {
                ROUTINES[fi as usize].add(routine, bytes);
            }
        }
        set_errno(e);
    }
    r
}

/// `aio_error` (passed through).
///
/// # Safety
/// The C contract.
pub unsafe fn aio_error<S: Source>(cb: *const libc::aiocb) -> c_int {
    let f = real!(S, s::AIO_ERROR, AioErrFn);
    // SAFETY: the C contract.
    unsafe { f(cb) }
}

/// `aio_suspend` (timed as an other operation).
///
/// # Safety
/// The C contract.
pub unsafe fn aio_suspend<S: Source>(
    l: *const *const libc::aiocb,
    n: c_int,
    t: *const libc::timespec,
) -> c_int {
    let f = real!(S, s::AIO_SUSPEND, AioSuspendFn);
    pass_or_time!(f(l, n, t), |_, a, b| other_event(a, b))
}
