//! One summary of a job's per-process reports (every rank of an MPI run,
//! every process of a `drhook run` tree): totals per file across the
//! processes, files used by several processes reduced as Darshan reduces
//! a shared record, per routine, per command and per process.
//!
//! The reduction of one path's records (Darshan 3.5's shared-record
//! reduction, `darshan-posix`; a process here is what Darshan calls a
//! rank):
//!
//! * summed: calls, bytes, times, the access counters (sequential,
//!   consecutive, read/write switches, alignment misses), the size
//!   histograms, renames, dups, mappings, stdio calls, seeks, syncs;
//! * largest: the highest byte read and written, the largest operation,
//!   the slowest read and write (with its size), the last use;
//! * smallest: the smallest operation, the first use (the smallest that
//!   is not 0);
//! * the four most common access sizes and strides: the counts of equal
//!   values added, then the four largest counts (ties: the smaller value
//!   first);
//! * the file alignment, `setvbuf` size and mode, the opener: the first
//!   process's that has one;
//! * for a file used by more than one process (`shared`; a grouped record
//!   such as `<stdout>` or `<system files>` is never shared): the fastest
//!   and the slowest process with its bytes and time (Darshan's
//!   `FASTEST_RANK`, `FASTEST_RANK_BYTES`, `F_FASTEST_RANK_TIME`, and
//!   the slowest's), and the variances across those processes of the time
//!   and of the bytes (`F_VARIANCE_RANK_TIME`, `F_VARIANCE_RANK_BYTES`:
//!   the population variance, the sum of squared deviations over n). A
//!   process's time on a file is its read, write, metadata, open and
//!   close time (Darshan's read + write + meta time); its bytes are read
//!   and written bytes, system calls and stdio together (one record per
//!   file here where Darshan has a POSIX and a STDIO record). Unlike
//!   Darshan, n is the number of processes that used the file, not every
//!   rank of the job.
//!
//! The first and last use (`first`, `last`) are seconds since each
//! process's own start: across processes they are the smallest and
//! largest of those, not times on one clock.

use serde::{Deserialize, Serialize};

use super::model::{Aio, File};

/// Value of the summary's `format` member.
pub const FORMAT: &str = "drhook-io-job";

/// The job summary (`drhook io --json` of several reports; the `drhook.io.job` file of
/// `DR_HOOK_OPT=io,reduce`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Summary {
    /// Always [`FORMAT`].
    pub format: String,
    /// 1.
    pub version: u32,
    /// Distinct task numbers (MPI ranks + 1) among the reports.
    pub tasks: Vec<u32>,
    /// The whole job's I/O.
    pub totals: Totals,
    /// AIO of every process: counts, bytes and time summed, the largest
    /// queue depth.
    pub aio: Aio,
    /// Every file (by path) used by any process, most bytes first.
    pub files: Vec<JobFile>,
    /// Paths of the files with the most bytes, most first (at most
    /// `top`).
    pub top_by_bytes: Vec<String>,
    /// Paths of the files with the most time in their calls.
    pub top_by_time: Vec<String>,
    /// Bytes per routine over every file and process, most first.
    pub routines: Vec<RoutineTotal>,
    /// Bytes of routines the reports did not name (after a file's eighth).
    pub other_routines_bytes: u64,
    /// Per command (the program's name), most bytes first.
    pub commands: Vec<CommandTotal>,
    /// One per report, in tree order (a child after its parent: the
    /// report of its `ppid`) with its depth.
    pub processes: Vec<Process>,
    /// Files whose streams stdio flushed in writes below half the block
    /// size (ECIOPROF's "setvbuf omission"), most flushes first.
    pub small_flushes: Vec<SmallFlushes>,
}

/// A file flagged for small stdio flushes ([`File::small_flushes`]).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SmallFlushes {
    /// Its path.
    pub path: String,
    /// The writes stdio made for its streams.
    pub flushes: u64,
    /// Their mean bytes.
    pub mean_bytes: u64,
    /// The block size compared with.
    pub block_size: u64,
    /// The stream buffer, as seen at the flushes.
    pub buffer: Option<u64>,
}

/// Calls, bytes and times added up (a process's, a command's, the job's).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[allow(missing_docs)]
pub struct Totals {
    /// Distinct paths.
    pub files: u64,
    pub opens: u64,
    pub reads: u64,
    pub writes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub stdio_reads: u64,
    pub stdio_writes: u64,
    pub stdio_read_bytes: u64,
    pub stdio_write_bytes: u64,
    /// The writes stdio made for streams (in `writes`) and their bytes.
    pub stdio_flushes: u64,
    pub stdio_flush_bytes: u64,
    pub read_time: f64,
    pub write_time: f64,
    /// Metadata, open and close time on files.
    pub meta_time: f64,
    /// Metadata calls on paths (`stat`, `unlink`, ...).
    pub path_meta_ops: u64,
    pub path_meta_time: f64,
}

impl Totals {
    pub(crate) fn add_file(&mut self, f: &File) {
        self.opens += f.opens;
        self.reads += f.reads;
        self.writes += f.writes;
        self.read_bytes += f.read_bytes;
        self.write_bytes += f.write_bytes;
        self.stdio_reads += f.stdio_reads;
        self.stdio_writes += f.stdio_writes;
        self.stdio_read_bytes += f.stdio_read_bytes;
        self.stdio_write_bytes += f.stdio_write_bytes;
        self.stdio_flushes += f.stdio_flushes;
        self.stdio_flush_bytes += f.stdio_flush_bytes;
        self.read_time += f.read_time;
        self.write_time += f.write_time;
        self.meta_time += f.meta_time + f.open_time + f.close_time;
    }

    pub(crate) fn add(&mut self, o: &Totals) {
        self.opens += o.opens;
        self.reads += o.reads;
        self.writes += o.writes;
        self.read_bytes += o.read_bytes;
        self.write_bytes += o.write_bytes;
        self.stdio_reads += o.stdio_reads;
        self.stdio_writes += o.stdio_writes;
        self.stdio_read_bytes += o.stdio_read_bytes;
        self.stdio_write_bytes += o.stdio_write_bytes;
        self.stdio_flushes += o.stdio_flushes;
        self.stdio_flush_bytes += o.stdio_flush_bytes;
        self.read_time += o.read_time;
        self.write_time += o.write_time;
        self.meta_time += o.meta_time;
        self.path_meta_ops += o.path_meta_ops;
        self.path_meta_time += o.path_meta_time;
    }

    /// Bytes read (system calls and stdio).
    pub fn read(&self) -> u64 {
        self.read_bytes + self.stdio_read_bytes
    }

    /// Bytes written (system calls and stdio; stdio's bytes once, as the
    /// writes that flushed them where those were seen).
    pub fn written(&self) -> u64 {
        self.write_bytes + self.stdio_unflushed()
    }

    /// Bytes given to streams not counted in `write_bytes`.
    pub fn stdio_unflushed(&self) -> u64 {
        self.stdio_write_bytes
            .saturating_sub(self.stdio_flush_bytes)
    }

    /// Seconds in I/O calls on files and paths.
    pub fn time(&self) -> f64 {
        self.read_time + self.write_time + self.meta_time + self.path_meta_time
    }
}

/// One process's part in a shared file (Darshan's fastest/slowest rank).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ProcessIo {
    /// Its task (MPI rank + 1).
    pub task: u32,
    /// Its process id.
    pub pid: u32,
    /// Its command.
    pub command: String,
    /// Bytes it read and wrote on the file.
    pub bytes: u64,
    /// Seconds in its calls on the file (read, write, metadata, open,
    /// close).
    pub time: f64,
}

/// One file of the job: the records of every process that used it,
/// reduced (see the module documentation).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JobFile {
    /// The reduced counters, named as in the per-process reports.
    #[serde(flatten)]
    pub counters: File,
    /// How many processes used it (the images of a process that called
    /// `exec` count as one).
    pub processes: u64,
    /// Distinct tasks among them.
    pub tasks: u64,
    /// Used by more than one process (and not a grouped record).
    pub shared: bool,
    /// Bytes read and written (system calls and stdio).
    pub bytes: u64,
    /// Seconds in its calls (read, write, metadata, open, close).
    pub time: f64,
    /// The process with the least time on it (shared files).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fastest: Option<ProcessIo>,
    /// The process with the most time on it (shared files).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowest: Option<ProcessIo>,
    /// Variance of the processes' times, s² (shared files).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variance_time: Option<f64>,
    /// Variance of the processes' bytes, B² (shared files).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variance_bytes: Option<f64>,
}

/// Bytes a routine moved over the job.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RoutineTotal {
    /// `NAME` (threads added together).
    pub routine: String,
    /// Bytes.
    pub bytes: u64,
    /// Distinct files.
    pub files: u64,
    /// Processes in which it moved bytes.
    pub processes: u64,
}

/// The processes of one command.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CommandTotal {
    /// The command (the program's name).
    pub command: String,
    /// How many processes ran it.
    pub processes: u64,
    /// Their seconds, added.
    pub seconds: f64,
    /// Their I/O (`files`: distinct paths over them).
    pub totals: Totals,
}

/// One process (report).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Process {
    /// The report's file.
    pub report: String,
    /// Command.
    pub command: String,
    /// Process id.
    pub pid: u32,
    /// Parent's id.
    pub ppid: u32,
    /// Task.
    pub task: u32,
    /// Its depth in the process tree (0: no parent among the reports).
    pub depth: u32,
    /// `pid-command` of the processes above it, as the process saw them.
    pub ancestry: Vec<String>,
    /// How it ended (`return`, `exit`, ...).
    pub ending: String,
    /// Its status, when it has one.
    pub status: Option<i64>,
    /// Its life, seconds.
    pub seconds: f64,
    /// Its own I/O.
    pub totals: Totals,
    /// Its I/O and that of every process below it among the reports.
    pub with_children: Totals,
}
