//! MPI events for the MPI metric (`metrics::mpi`), from the preload
//! library's PMPI wrappers: one call per MPI call, while its row is the
//! top of the calling thread's stack; no lock, no allocation.

use std::sync::atomic::{AtomicU64, Ordering};

use super::bits;
use super::io::bump;
use super::thread::{self, ThreadData};
use crate::metrics::mpi::{
    CALLS, COMM_CALLS, COMM_SIZES, DATA_CALLS, HIST, OFFSET, RECV, SENT, WORDS, bin,
};

/// Adds an MPI call's figures to the calling thread's current routine (the
/// call's own row): `sent` and `recv` bytes, whether it had a data buffer
/// (`data`: counted in the histogram by its larger direction), and the
/// size of the communicator it named (0: none). Nothing when the metric
/// is off or the thread has no calling tree.
#[inline]
pub fn record(sent: u64, recv: u64, data: bool, comm_size: u64) {
    let td = thread::current();
    if td.is_null() {
        return;
    }
    // SAFETY: the calling thread's own tree (freed only once the thread ended it).
    let td = unsafe { &*td };
    // SAFETY: the top of the stack is a node of this arena.
    let index = unsafe { (*td.current()).index };
    add(td, index, sent, recv, data, comm_size);
}

/// The MPI call of 64-bit `handle` (not 0) ends, when it is the top of
/// the calling thread's stack and its mode takes the call-free exit:
/// leaves it and adds its figures to its row as [`record`] does, with
/// one look at the thread's tree. False, with nothing done, otherwise
/// (the caller then records and exits the long way).
#[inline(always)]
pub fn exit_recorded(handle: u64, sent: u64, recv: u64, data: bool, comm_size: u64) -> bool {
    let td = thread::current();
    if td.is_null() {
        return false;
    }
    // SAFETY: the calling thread's own tree.
    let td = unsafe { &*td };
    let mode = td.mode();
    if mode & (bits::SYSCALL_CLOCKS | bits::STRICT) != 0 {
        return false;
    }
    // SAFETY: owner thread; `handle` is not 0 (the caller's contract),
    // and is only compared.
    unsafe {
        td.exit_handle_fast_then(handle, true, mode, |n| {
            add(td, n.index, sent, recv, data, comm_size)
        })
    }
}

/// Adds an MPI call's figures to row `index` of `td` (out of line: the
/// exit's tail call, so that the exit itself needs no stack frame).
#[inline(never)]
fn add(td: &ThreadData, index: u32, sent: u64, recv: u64, data: bool, comm_size: u64) {
    let (last, words) = &td.mpi_row;
    let w = if last.load(Ordering::Relaxed) == index {
        words.load(Ordering::Relaxed)
    } else {
        let off = OFFSET.load(Ordering::Relaxed);
        if off == usize::MAX {
            return;
        }
        let Some(w) = td.rows.get(index).and_then(|r| r.get(off..off + WORDS)) else {
            return;
        };
        let w = w.as_ptr() as *mut AtomicU64;
        words.store(w, Ordering::Relaxed);
        last.store(index, Ordering::Relaxed);
        w
    };
    // SAFETY: the `WORDS` words of the metric in row `index`, checked when
    // remembered (the metric's offset is placed once, before any row;
    // rows never move nor are freed while their thread runs).
    let w = unsafe { &*(w as *const [AtomicU64; WORDS]) };
    bump(&w[CALLS], 1);
    if sent != 0 {
        bump(&w[SENT], sent);
    }
    if recv != 0 {
        bump(&w[RECV], recv);
    }
    if data {
        bump(&w[DATA_CALLS], 1);
        bump(&w[HIST + bin(sent.max(recv))], 1);
    }
    if comm_size != 0 {
        bump(&w[COMM_CALLS], 1);
        bump(&w[COMM_SIZES], comm_size);
    }
}
