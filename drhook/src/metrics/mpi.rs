//! MPI per routine (`DR_HOOK_OPT=mpi`): what the preload library's PMPI
//! wrappers (`drhook-attach`'s `mpi_calls` tool) add to the row of each
//! MPI call (`MPI_Send`, `MPI_Allreduce`, ...), a routine of the calling
//! tree under the routine that called it: bytes sent and received (count ×
//! type size of the call's buffers), the calls that moved data, a
//! message-size histogram, and the communicator sizes of the calls that
//! name one. Event words only: the enter/exit path pays nothing.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::{Agg, Metric, Word};

/// MPI calls recorded (what makes a row an MPI call's).
pub(crate) const CALLS: usize = 0;
/// Bytes sent (written, for `MPI_File_*`).
pub(crate) const SENT: usize = 1;
/// Bytes received (read, for `MPI_File_*`).
pub(crate) const RECV: usize = 2;
/// Calls with a data buffer (the histogram's total).
pub(crate) const DATA_CALLS: usize = 3;
/// Calls that named a communicator.
pub(crate) const COMM_CALLS: usize = 4;
/// Σ of their communicators' sizes.
pub(crate) const COMM_SIZES: usize = 5;
/// The message-size histogram: [`BINS`] words from here.
pub(crate) const HIST: usize = 6;
/// Bins of the histogram (see [`bin`]).
pub const BINS: usize = 8;
/// Words per node.
pub(crate) const WORDS: usize = HIST + BINS;

/// The histogram's bins' labels (bytes: 0, 1–64, 65–1024, ..., > 64 MiB).
pub const BIN_LABELS: [&str; BINS] = [
    "0", "1-64", "65-1K", "1K-16K", "16K-256K", "256K-4M", "4M-64M", "64M+",
];

/// The bin of a message of `bytes` bytes: 0 for none, 1 up to 64 bytes,
/// then one bin per factor 16 (up to 1 KiB, 16 KiB, ..., 64 MiB), the last
/// one above.
pub const fn bin(bytes: u64) -> usize {
    if bytes == 0 {
        0
    } else if bytes <= 64 {
        1
    } else {
        let log2 = 63 - (bytes - 1).leading_zeros() as usize;
        let b = 2 + (log2 - 6) / 4;
        if b < BINS { b } else { BINS - 1 }
    }
}

/// The offset of the metric's words, `usize::MAX` until installed.
pub(crate) static OFFSET: AtomicUsize = AtomicUsize::new(usize::MAX);

/// The MPI metric.
pub(crate) struct Mpi {
    words: Vec<Word>,
}

static METRIC: OnceLock<Mpi> = OnceLock::new();

/// Creates the metric (`runtime`, with `mpi`).
pub(crate) fn init() -> &'static dyn Metric {
    METRIC.get_or_init(|| {
        let w = |name: String| Word {
            name,
            agg: Agg::Event,
        };
        let mut words: Vec<Word> = [
            "mpi_calls",
            "mpi_sent_bytes",
            "mpi_recv_bytes",
            "mpi_data_calls",
            "mpi_comm_calls",
            "mpi_comm_sizes",
        ]
        .iter()
        .map(|n| w(n.to_string()))
        .collect();
        words.extend(BIN_LABELS.iter().map(|l| w(format!("mpi_msgs_{l}"))));
        Mpi { words }
    })
}

/// Records the metric's place in the rows.
pub(crate) fn placed(offset: usize) {
    OFFSET.store(offset, Ordering::Release);
}

impl Metric for Mpi {
    fn name(&self) -> &'static str {
        "mpi"
    }
    fn words(&self) -> &[Word] {
        &self.words
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_split_at_64_bytes_then_every_factor_16() {
        let cases = [
            (0, 0),
            (1, 1),
            (64, 1),
            (65, 2),
            (1024, 2),
            (1025, 3),
            (16384, 3),
            (16385, 4),
            (1 << 22, 5),
            ((1 << 22) + 1, 6),
            (1 << 26, 6),
            ((1 << 26) + 1, 7),
            (u64::MAX, 7),
        ];
        for (bytes, b) in cases {
            assert_eq!(bin(bytes), b, "{bytes}");
        }
    }
}
