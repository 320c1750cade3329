//! The POSIX AIO wrappers' bodies: `aio_read`/`aio_write` (issued),
//! `aio_return` (completed: bytes and time from issue to completion),
//! `aio_error`, `aio_suspend`; the queue depth.

use std::ffi::c_int;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use super::clock::ticks;
use super::paths::{file_index, file_of};
use super::record::{other_event, pass_or_time, timed};
use super::recording;
use super::slots::{self as s, *};
use super::table::{FILES, ROUTINES, add, bin, c};
use crate::engine::hooks;
use crate::sys::{errno, set_errno};

/// Requests in flight, at most this many timed (more are counted, not
/// timed).
const IN_FLIGHT: usize = 1024;
/// Requests in flight: the control block's address (0: a free slot), and
/// its issue ticks shifted left once with the write bit. No lock (a `fork`
/// child must never find one held): a slot is claimed and released by a
/// compare-and-swap of its address.
static AIO_CB: [AtomicUsize; IN_FLIGHT] = [const { AtomicUsize::new(0) }; IN_FLIGHT];
static AIO_ISSUE: [AtomicU64; IN_FLIGHT] = [const { AtomicU64::new(0) }; IN_FLIGHT];
/// Slots ever used (the scans stop there) and requests in flight.
static AIO_SLOTS_USED: AtomicUsize = AtomicUsize::new(0);
static AIO_QUEUE: AtomicU64 = AtomicU64::new(0);
/// Requests, bytes, completion ticks, maximum queue depth.
pub(super) static AIO_STATS: [AtomicU64; 6] = [const { AtomicU64::new(0) }; 6];
pub(super) const AIO_READS: usize = 0;
pub(super) const AIO_WRITES: usize = 1;
pub(super) const AIO_BYTES: usize = 2;
pub(super) const AIO_T: usize = 3;
pub(super) const AIO_DEPTH: usize = 4;
pub(super) const AIO_DONE: usize = 5;

/// Request `cb` issued at `t0` (a control block issued again replaces its
/// entry).
fn issued(cb: usize, t0: u64, write: bool) {
    let stamp = t0 << 1 | write as u64;
    let used = AIO_SLOTS_USED.load(Ordering::Acquire);
    for k in 0..used {
        if AIO_CB[k].load(Ordering::Acquire) == cb {
            AIO_ISSUE[k].store(stamp, Ordering::Release);
            return;
        }
    }
    let mut k = 0;
    loop {
        if k == AIO_SLOTS_USED.load(Ordering::Acquire) {
            // No free slot below: one more (none left: not timed).
            let Ok(n) = AIO_SLOTS_USED.fetch_update(Ordering::AcqRel, Ordering::Acquire, |u| {
                (u < IN_FLIGHT).then_some(u + 1)
            }) else {
                return;
            };
            k = n;
        }
        if AIO_CB[k]
            .compare_exchange(0, cb, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            AIO_ISSUE[k].store(stamp, Ordering::Release);
            let depth = AIO_QUEUE.fetch_add(1, Ordering::AcqRel) + 1;
            AIO_STATS[AIO_DEPTH].fetch_max(depth, Ordering::Relaxed);
            return;
        }
        k += 1;
    }
}

/// Request `cb` completed: its issue ticks and whether it wrote (None:
/// not in flight).
fn completed(cb: usize) -> Option<(u64, bool)> {
    let used = AIO_SLOTS_USED.load(Ordering::Acquire);
    for k in 0..used {
        if AIO_CB[k].load(Ordering::Acquire) == cb {
            let stamp = AIO_ISSUE[k].load(Ordering::Acquire);
            if AIO_CB[k]
                .compare_exchange(cb, 0, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                AIO_QUEUE.fetch_sub(1, Ordering::AcqRel);
                return Some((stamp >> 1, stamp & 1 != 0));
            }
        }
    }
    None
}

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
        issued(cb as usize, t0, write);
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
        if let Some((t0, write)) = completed(cb as usize) {
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
