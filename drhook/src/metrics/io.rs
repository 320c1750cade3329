//! I/O per routine (`DR_HOOK_OPT=io`): what the I/O interposers of the
//! preload library (`drhook-attach`'s `io` module) saw while each routine
//! was the top of its thread's stack — bytes and operations read and
//! written, other I/O operations (open, close, seek, sync, metadata), and
//! the time spent inside I/O calls, so that a routine's self time splits
//! into compute and I/O. Event words only: the enter/exit path pays
//! nothing.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::{Agg, Metric, Word};

/// Bytes read.
pub(crate) const READ_BYTES: usize = 0;
/// Bytes written.
pub(crate) const WRITE_BYTES: usize = 1;
/// Read operations.
pub(crate) const READS: usize = 2;
/// Write operations.
pub(crate) const WRITES: usize = 3;
/// Other I/O operations (open, close, seek, sync, stat, ...).
pub(crate) const OTHER: usize = 4;
/// Nanoseconds inside I/O calls.
pub(crate) const NANOS: usize = 5;
/// Words per node.
pub(crate) const WORDS: usize = 6;

/// Kinds of event ([`crate::tree::io::record`]).
pub const READ: u32 = 0;
/// A write.
pub const WRITE: u32 = 1;
/// Anything else.
pub const OTHER_OP: u32 = 2;

/// The offset of the metric's words, `usize::MAX` until installed.
pub(crate) static OFFSET: AtomicUsize = AtomicUsize::new(usize::MAX);

/// The I/O metric.
pub(crate) struct Io {
    words: Vec<Word>,
}

static METRIC: OnceLock<Io> = OnceLock::new();

/// Creates the metric (`runtime`, with `io`).
pub(crate) fn init() -> &'static dyn Metric {
    METRIC.get_or_init(|| {
        let w = |name: &str| Word {
            name: name.to_string(),
            agg: Agg::Event,
        };
        Io {
            words: vec![
                w("read_bytes"),
                w("write_bytes"),
                w("reads"),
                w("writes"),
                w("other_io_ops"),
                w("io_ns"),
            ],
        }
    })
}

/// Records the metric's place in the rows.
pub(crate) fn placed(offset: usize) {
    OFFSET.store(offset, Ordering::Release);
}

impl Metric for Io {
    fn name(&self) -> &'static str {
        "io"
    }
    fn words(&self) -> &[Word] {
        &self.words
    }
}
