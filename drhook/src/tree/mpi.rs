//! MPI events for the MPI metric (`metrics::mpi`), from the preload
//! library's PMPI wrappers: one call per MPI call, while its row is the
//! top of the calling thread's stack; no lock, no allocation.

use std::sync::atomic::Ordering;

use super::io::bump;
use super::thread;
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
    let off = OFFSET.load(Ordering::Relaxed);
    if off == usize::MAX {
        return;
    }
    let td = thread::current();
    if td.is_null() {
        return;
    }
    // SAFETY: the calling thread's own tree (freed only once the thread ended it).
    let td = unsafe { &*td };
    let Some(w) = td.current_row().and_then(|r| r.get(off..off + WORDS)) else {
        return;
    };
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
