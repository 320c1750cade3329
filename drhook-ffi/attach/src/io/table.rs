//! The I/O profile's tables, fixed and lock-free: the counters of each file
//! ([`FILES`], indices in [`c`]), the bytes each routine moved per file
//! ([`ROUTINES`]), the file each descriptor refers to with its position
//! ([`FD_FILE`], [`FD_POS`]), and the process-wide metadata
//! calls on paths.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// Counters of one file, by index (their names in the report: [`c::NAMES`]).
#[allow(missing_docs)]
pub mod c {
    pub const OPENS: usize = 0;
    pub const CLOSES: usize = 1;
    pub const READS: usize = 2;
    pub const WRITES: usize = 3;
    pub const READ_BYTES: usize = 4;
    pub const WRITE_BYTES: usize = 5;
    pub const READ_T: usize = 6;
    pub const WRITE_T: usize = 7;
    pub const META_OPS: usize = 8;
    pub const META_T: usize = 9;
    pub const OPEN_T: usize = 10;
    pub const CLOSE_T: usize = 11;
    pub const SEQ_READS: usize = 12;
    pub const SEQ_WRITES: usize = 13;
    pub const CONSEC_READS: usize = 14;
    pub const CONSEC_WRITES: usize = 15;
    pub const MAX_READ: usize = 16;
    pub const MAX_WRITE: usize = 17;
    /// Smallest operation + 1 (0: none yet).
    pub const MIN_READ1: usize = 18;
    pub const MIN_WRITE1: usize = 19;
    pub const FIRST_T: usize = 20;
    pub const LAST_T: usize = 21;
    pub const MMAPS: usize = 22;
    pub const STDIO_READS: usize = 23;
    pub const STDIO_WRITES: usize = 24;
    pub const STDIO_READ_BYTES: usize = 25;
    pub const STDIO_WRITE_BYTES: usize = 26;
    pub const STDIO_OTHER: usize = 27;
    /// `setvbuf` size + 1 (0: never called).
    pub const BUFSIZE1: usize = 28;
    pub const BUFMODE: usize = 29;
    pub const SEEKS: usize = 30;
    pub const SYNCS: usize = 31;
    pub const HIST_READ: usize = 32;
    pub const HIST_WRITE: usize = 42;
    /// Darshan's `MAX_BYTE_READ` + 1: the end of the highest byte read.
    pub const MAX_BYTE_READ1: usize = 52;
    /// Darshan's `MAX_BYTE_WRITTEN` + 1.
    pub const MAX_BYTE_WRITTEN1: usize = 53;
    /// Darshan's `RW_SWITCHES`: a read after a write or a write after a
    /// read, on the file.
    pub const RW_SWITCHES: usize = 54;
    /// Darshan's `last_byte_read` of the file (as `i64` bits; 0 at first).
    pub const LAST_BYTE_READ: usize = 55;
    /// Darshan's `last_byte_written` (as `i64` bits; 0 at first).
    pub const LAST_BYTE_WRITTEN: usize = 56;
    /// The last access: 0 none, 1 read, 2 write.
    pub const LAST_IO: usize = 57;
    /// Darshan's `MEM_NOT_ALIGNED`: accesses whose buffer is not aligned
    /// to `MEM_ALIGNMENT` (8) bytes.
    pub const MEM_NOT_ALIGNED: usize = 58;
    /// Darshan's `FILE_NOT_ALIGNED`: accesses whose offset is not a
    /// multiple of the file's alignment ([`FILE_ALIGNMENT`]).
    pub const FILE_NOT_ALIGNED: usize = 59;
    /// Darshan's `FILE_ALIGNMENT`: the file's `st_blksize` at its open.
    pub const FILE_ALIGNMENT: usize = 60;
    /// Darshan's `RENAME_SOURCES` and `RENAME_TARGETS`: renames of the
    /// file to another name, of another name to it.
    pub const RENAMES_FROM: usize = 61;
    pub const RENAMES_TO: usize = 62;
    /// Darshan's `DUPS`: descriptors duplicated from one of the file's.
    pub const DUPS: usize = 63;
    /// Darshan's `F_MAX_READ_TIME` (ticks) and `MAX_READ_TIME_SIZE`: the
    /// slowest single read and its bytes; the same for writes.
    pub const MAX_READ_T: usize = 64;
    pub const MAX_READ_T_SIZE: usize = 65;
    pub const MAX_WRITE_T: usize = 66;
    pub const MAX_WRITE_T_SIZE: usize = 67;
    /// The system writes stdio made for the file's streams (inferred from
    /// the buffer: `io::stream`), also counted in `WRITES`, and their bytes.
    pub const STDIO_FLUSHES: usize = 68;
    pub const STDIO_FLUSH_BYTES: usize = 69;
    /// The buffer stdio used for the file's streams, size + 1 and mode + 1
    /// as `BUFSIZE1`/`BUFMODE` (0: no flush seen): what the stream has,
    /// where `setvbuf`'s are what the program asked for.
    pub const STDIO_BUF1: usize = 70;
    pub const STDIO_MODE1: usize = 71;
    /// The system reads stdio made to refill the file's streams (inferred
    /// from the buffer: `io::stream`), also counted in `READS`, and their
    /// bytes.
    pub const STDIO_REFILLS: usize = 72;
    pub const STDIO_REFILL_BYTES: usize = 73;
    /// The MPI-IO level (`MPI_File_*` of C, `io::mpiio`): opens, reads
    /// and writes with their bytes (count × type size), other calls on
    /// the file's handles; the POSIX calls the MPI library makes for them
    /// are counted at the POSIX level as any others.
    pub const MPIIO_OPENS: usize = 74;
    pub const MPIIO_READS: usize = 75;
    pub const MPIIO_WRITES: usize = 76;
    pub const MPIIO_READ_BYTES: usize = 77;
    pub const MPIIO_WRITE_BYTES: usize = 78;
    pub const MPIIO_OTHER: usize = 79;
    pub const N: usize = 80;
    /// Names in the report of the counters after the histograms that are
    /// reported as they are, from [`MAX_BYTE_READ1`] (the internal ones,
    /// the times, apart).
    pub const LATER_NAMES: [(usize, &str); 20] = [
        (MAX_BYTE_READ1, "max_byte_read"),
        (MAX_BYTE_WRITTEN1, "max_byte_written"),
        (RW_SWITCHES, "rw_switches"),
        (MEM_NOT_ALIGNED, "mem_not_aligned"),
        (FILE_NOT_ALIGNED, "file_not_aligned"),
        (FILE_ALIGNMENT, "file_alignment"),
        (RENAMES_FROM, "renames_from"),
        (RENAMES_TO, "renames_to"),
        (DUPS, "dups"),
        (MAX_READ_T_SIZE, "max_read_time_size"),
        (STDIO_FLUSHES, "stdio_flushes"),
        (STDIO_FLUSH_BYTES, "stdio_flush_bytes"),
        (STDIO_REFILLS, "stdio_refills"),
        (STDIO_REFILL_BYTES, "stdio_refill_bytes"),
        (MPIIO_OPENS, "mpiio_opens"),
        (MPIIO_READS, "mpiio_reads"),
        (MPIIO_WRITES, "mpiio_writes"),
        (MPIIO_READ_BYTES, "mpiio_read_bytes"),
        (MPIIO_WRITE_BYTES, "mpiio_write_bytes"),
        (MPIIO_OTHER, "mpiio_other"),
    ];
    /// Names in the report, by index (histograms apart).
    pub const NAMES: [&str; 32] = [
        "opens",
        "closes",
        "reads",
        "writes",
        "read_bytes",
        "write_bytes",
        "read_time",
        "write_time",
        "meta_ops",
        "meta_time",
        "open_time",
        "close_time",
        "seq_reads",
        "seq_writes",
        "consec_reads",
        "consec_writes",
        "max_read",
        "max_write",
        "min_read",
        "min_write",
        "first",
        "last",
        "mmaps",
        "stdio_reads",
        "stdio_writes",
        "stdio_read_bytes",
        "stdio_write_bytes",
        "stdio_other",
        "bufsize",
        "bufmode",
        "seeks",
        "syncs",
    ];
}

/// Darshan's default memory alignment (`MEM_ALIGNMENT`): 8 bytes.
pub const MEM_ALIGNMENT: u64 = 8;

/// Distinct values tracked per file for Darshan's four most common
/// access sizes and strides (the first ones seen, as Darshan's runtime
/// tracks its first 32; more are not counted).
pub(super) const COMMON_SLOTS: usize = 32;

/// Per file: the most common values of one kind (access sizes, strides),
/// a slot claimed by one compare-and-swap of `value + 1`.
pub(super) struct Common {
    pub(super) values: [AtomicU64; COMMON_SLOTS],
    pub(super) counts: [AtomicU64; COMMON_SLOTS],
}

impl Common {
    const fn new() -> Self {
        Common {
            values: [const { AtomicU64::new(0) }; COMMON_SLOTS],
            counts: [const { AtomicU64::new(0) }; COMMON_SLOTS],
        }
    }

    /// One more access of value `v`.
    #[inline]
    pub(super) fn add(&self, v: u64) {
        let key = v.wrapping_add(1);
        for k in 0..COMMON_SLOTS {
            let s = self.values[k].load(Ordering::Relaxed);
            let mine = s == key
                || (s == 0
                    && match self.values[k].compare_exchange(
                        0,
                        key,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    ) {
                        Ok(_) => true,
                        Err(now) => now == key,
                    });
            if mine {
                self.counts[k].fetch_add(1, Ordering::Relaxed);
                return;
            }
        }
    }

    /// The four most common `(value, count)` as Darshan reports them: most
    /// first, ties with the larger value first, the value 0 never (a zero
    /// size or stride is not among Darshan's common values).
    pub(super) fn top4(&self) -> Vec<(u64, u64)> {
        let mut v: Vec<(u64, u64)> = (0..COMMON_SLOTS)
            .filter_map(|k| {
                let key = self.values[k].load(Ordering::Relaxed);
                (key > 1).then(|| (key - 1, self.counts[k].load(Ordering::Relaxed)))
            })
            .collect();
        v.sort_by(|a, b| b.1.cmp(&a.1).then(b.0.cmp(&a.0)));
        v.truncate(4);
        v
    }

    pub(super) fn clear(&self) {
        for k in 0..COMMON_SLOTS {
            self.values[k].store(0, Ordering::Relaxed);
            self.counts[k].store(0, Ordering::Relaxed);
        }
    }
}

/// Per file: Darshan's common access sizes and strides.
pub(super) static SIZES: [Common; MAX_FILES] = [const { Common::new() }; MAX_FILES];
pub(super) static STRIDES: [Common; MAX_FILES] = [const { Common::new() }; MAX_FILES];

/// Files tracked by path (more go to the "other files" entry).
pub(crate) const MAX_FILES: usize = 4096;
/// Descriptors tracked (larger ones go to the "other files" entry).
pub(super) const MAX_FD: usize = 1 << 16;

/// Routines counted per file by name (the bytes of the others are added
/// together).
pub(super) const ROUTINE_SLOTS: usize = 8;

/// Per file: the bytes each routine moved — the first [`ROUTINE_SLOTS`]
/// routines to move any (their identity from the engine's `io_event`),
/// then all others together. No lock: a slot is claimed by one
/// compare-and-swap.
pub(super) struct RoutineBytes {
    pub(super) ids: [AtomicUsize; ROUTINE_SLOTS],
    pub(super) bytes: [AtomicU64; ROUTINE_SLOTS],
    pub(super) others: AtomicU64,
}

impl RoutineBytes {
    const fn new() -> Self {
        RoutineBytes {
            ids: [const { AtomicUsize::new(0) }; ROUTINE_SLOTS],
            bytes: [const { AtomicU64::new(0) }; ROUTINE_SLOTS],
            others: AtomicU64::new(0),
        }
    }

    /// `bytes` moved by routine `id` (0: no routine).
    #[inline]
    pub(super) fn add(&self, id: usize, bytes: u64) {
        self.add_as(id, bytes, false)
    }

    /// [`add`](Self::add), `alone` as [`bump`]'s.
    #[inline]
    pub(super) fn add_as(&self, id: usize, bytes: u64, alone: bool) {
        if id != 0 {
            for k in 0..ROUTINE_SLOTS {
                let s = self.ids[k].load(Ordering::Acquire);
                let mine = s == id
                    || (s == 0
                        && match self.ids[k].compare_exchange(
                            0,
                            id,
                            Ordering::AcqRel,
                            Ordering::Acquire,
                        ) {
                            Ok(_) => true,
                            Err(now) => now == id,
                        });
                if mine {
                    bump(&self.bytes[k], bytes, alone);
                    return;
                }
            }
        }
        bump(&self.others, bytes, alone);
    }

    pub(super) fn clear(&self) {
        for k in 0..ROUTINE_SLOTS {
            self.ids[k].store(0, Ordering::Relaxed);
            self.bytes[k].store(0, Ordering::Relaxed);
        }
        self.others.store(0, Ordering::Relaxed);
    }
}

pub(super) static ROUTINES: [RoutineBytes; MAX_FILES] = [const { RoutineBytes::new() }; MAX_FILES];

pub(super) struct FileStats(pub(super) [AtomicU64; c::N]);

pub(super) static FILES: [FileStats; MAX_FILES] =
    [const { FileStats([const { AtomicU64::new(0) }; c::N]) }; MAX_FILES];
/// The file of each descriptor (0: not known yet).
pub(super) static FD_FILE: [AtomicU32; MAX_FD] = [const { AtomicU32::new(0) }; MAX_FD];
/// Each descriptor's implicit position (see [`pos_of`]).
pub(super) static FD_POS: [AtomicU64; MAX_FD] = [const { AtomicU64::new(0) }; MAX_FD];
/// The descriptor whose [`FD_POS`] a descriptor uses, + 1 (0: its own): a
/// duplicate shares its original's open file description, and so its
/// position. (A duplicate whose original is closed and whose number is
/// then opened again follows the new file's position: rare, and only the
/// offsets of the access counters are wrong then.)
pub(super) static FD_POS_AT: [AtomicU32; MAX_FD] = [const { AtomicU32::new(0) }; MAX_FD];

/// The position of descriptor `fd` (< [`MAX_FD`]).
#[inline]
pub(super) fn pos_of(fd: usize) -> &'static AtomicU64 {
    match FD_POS_AT[fd].load(Ordering::Relaxed) {
        0 => &FD_POS[fd],
        at => &FD_POS[(at - 1) as usize % MAX_FD],
    }
}

/// Entries 1.. of the file table; entry 1 is "other files".
pub(super) const OTHER_FILES: u32 = 1;
/// Entry 2: the system files, together (`io::pattern::EXCLUDE`).
pub(super) const SYSTEM_FILES: u32 = 2;

/// Metadata calls on paths (stat, access, unlink, rename, ...): count and
/// ticks, process-wide.
pub(super) static PATH_META: [AtomicU64; 2] = [const { AtomicU64::new(0) }; 2];

#[inline]
pub(super) fn add(f: &FileStats, k: usize, v: u64) {
    f.0[k].fetch_add(v, Ordering::Relaxed);
}

/// Adds `v` to `w`: when the process has a single thread (`alone`: stdio's
/// own test, `stream::shared`), a plain load and store rather than a
/// locked instruction, which costs more than the rest of the addition (a
/// signal handler recording I/O on a stream between the two could lose
/// its addition).
#[inline(always)]
pub(super) fn bump(w: &AtomicU64, v: u64, alone: bool) {
    if alone {
        w.store(w.load(Ordering::Relaxed).wrapping_add(v), Ordering::Relaxed);
    } else {
        w.fetch_add(v, Ordering::Relaxed);
    }
}

#[inline]
pub(super) fn raise(f: &FileStats, k: usize, v: u64) {
    if v > f.0[k].load(Ordering::Relaxed) {
        f.0[k].fetch_max(v, Ordering::Relaxed);
    }
}

#[inline]
pub(super) fn lower1(f: &FileStats, k: usize, v: u64) {
    let cur = f.0[k].load(Ordering::Relaxed);
    if cur == 0 || v + 1 < cur {
        f.0[k].store(v + 1, Ordering::Relaxed);
    }
}

/// Darshan's access-size bins, each including its upper edge (as
/// `DARSHAN_BUCKET_INC`): 0-100, 101-1K, 1K+1-10K, 10K+1-100K, 100K+1-1M,
/// 1M+1-4M, 4M+1-10M, 10M+1-100M, 100M+1-1G, above 1G.
#[inline]
pub fn bin(n: u64) -> usize {
    const EDGES: [u64; 9] = [
        100,
        1024,
        10 * 1024,
        100 * 1024,
        1024 * 1024,
        4 * 1024 * 1024,
        10 * 1024 * 1024,
        100 * 1024 * 1024,
        1024 * 1024 * 1024,
    ];
    EDGES.iter().position(|&e| n <= e).unwrap_or(9)
}

#[inline]
pub(super) fn stamp(f: &FileStats, t1: u64) {
    if f.0[c::FIRST_T].load(Ordering::Relaxed) == 0 {
        let _ = f.0[c::FIRST_T].compare_exchange(0, t1, Ordering::Relaxed, Ordering::Relaxed);
    }
    // A plain store, not `raise`'s `fetch_max` (a locked instruction on
    // every call): two threads stamping the file at once may leave the
    // earlier of their two stamps, a few nanoseconds off.
    if t1 > f.0[c::LAST_T].load(Ordering::Relaxed) {
        f.0[c::LAST_T].store(t1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_include_their_upper_edge_as_darshans() {
        const K: u64 = 1024;
        let edges = [
            100,
            K,
            10 * K,
            100 * K,
            K * K,
            4 * K * K,
            10 * K * K,
            100 * K * K,
            K * K * K,
        ];
        assert_eq!(bin(0), 0);
        for (i, e) in edges.into_iter().enumerate() {
            assert_eq!(bin(e - 1), i, "{e} - 1");
            assert_eq!(bin(e), i, "{e}");
            assert_eq!(bin(e + 1), i + 1, "{e} + 1");
        }
        assert_eq!(bin(u64::MAX), 9);
    }
}
