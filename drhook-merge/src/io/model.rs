//! The per-process report `drhook.io.<task>[.<command>.<pid>]` as the
//! preload library writes it (`drhook-ffi/attach/src/io/report.rs`), read
//! with serde: reports of every version so far (members added later take
//! their default when absent; the old `"ending": "Return(0)"` text is
//! read as the word and status of the current reports).

use serde::{Deserialize, Serialize};

/// The AIO summary of a process.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[allow(missing_docs)]
pub struct Aio {
    pub reads: u64,
    pub writes: u64,
    pub completed: u64,
    pub bytes: u64,
    pub time: f64,
    pub max_queue_depth: u64,
}

/// One file of a process (or, in a job summary, of every process that
/// used it: [`super::JobFile`]).
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[allow(missing_docs)]
pub struct File {
    pub path: String,
    pub opened_by: String,
    /// The routines that moved its bytes, most first (the first 8 to move
    /// any; the others' bytes in `other_routines_bytes`). Absent in
    /// reports of older versions.
    #[serde(default)]
    pub routines: Vec<RoutineBytes>,
    #[serde(default)]
    pub other_routines_bytes: u64,
    pub opens: u64,
    pub closes: u64,
    pub reads: u64,
    pub writes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub read_time: f64,
    pub write_time: f64,
    pub meta_ops: u64,
    pub meta_time: f64,
    pub open_time: f64,
    pub close_time: f64,
    pub seq_reads: u64,
    pub seq_writes: u64,
    pub consec_reads: u64,
    pub consec_writes: u64,
    pub max_read: u64,
    pub max_write: u64,
    pub min_read: Option<u64>,
    pub min_write: Option<u64>,
    pub first: f64,
    pub last: f64,
    pub mmaps: u64,
    pub stdio_reads: u64,
    pub stdio_writes: u64,
    pub stdio_read_bytes: u64,
    pub stdio_write_bytes: u64,
    pub stdio_other: u64,
    pub bufsize: Option<u64>,
    pub bufmode: Option<String>,
    pub seeks: u64,
    pub syncs: u64,
    /// Darshan's `MAX_BYTE_READ`: the highest byte read (0 when none).
    #[serde(default)]
    pub max_byte_read: u64,
    /// Darshan's `MAX_BYTE_WRITTEN`.
    #[serde(default)]
    pub max_byte_written: u64,
    /// Darshan's `RW_SWITCHES`.
    #[serde(default)]
    pub rw_switches: u64,
    /// Darshan's `FILE_ALIGNMENT` (the file system's block size).
    #[serde(default)]
    pub file_alignment: u64,
    /// Darshan's `MEM_NOT_ALIGNED`.
    #[serde(default)]
    pub mem_not_aligned: u64,
    /// Darshan's `FILE_NOT_ALIGNED`.
    #[serde(default)]
    pub file_not_aligned: u64,
    /// Darshan's `ACCESS1..4`: `[size, count]`, most frequent first.
    #[serde(default)]
    pub common_access_sizes: Vec<(u64, u64)>,
    /// Darshan's `STRIDE1..4`: `[stride, count]`, most frequent first.
    #[serde(default)]
    pub common_strides: Vec<(i64, u64)>,
    /// Darshan's `RENAME_SOURCES`.
    #[serde(default)]
    pub renames_from: u64,
    /// Darshan's `RENAME_TARGETS`.
    #[serde(default)]
    pub renames_to: u64,
    /// Darshan's `DUPS`.
    #[serde(default)]
    pub dups: u64,
    /// Darshan's `F_MAX_READ_TIME`: the slowest read (seconds).
    #[serde(default)]
    pub max_read_time: f64,
    /// Darshan's `MAX_READ_TIME_SIZE`: its size.
    #[serde(default)]
    pub max_read_time_size: u64,
    /// Darshan's `F_MAX_WRITE_TIME`.
    #[serde(default)]
    pub max_write_time: f64,
    /// Darshan's `MAX_WRITE_TIME_SIZE`.
    #[serde(default)]
    pub max_write_time_size: u64,
    /// The system writes stdio made for the file's streams (inferred
    /// from their buffers; also in `writes`) and their bytes.
    #[serde(default)]
    pub stdio_flushes: u64,
    #[serde(default)]
    pub stdio_flush_bytes: u64,
    /// The system reads stdio made to refill the file's streams
    /// (inferred from their buffers; also in `reads`) and their bytes.
    #[serde(default)]
    pub stdio_refills: u64,
    #[serde(default)]
    pub stdio_refill_bytes: u64,
    /// The buffer the streams had at their flushes (`bufsize`/`bufmode`
    /// are what `setvbuf` asked for).
    #[serde(default)]
    pub stdio_buffer: Option<u64>,
    #[serde(default)]
    pub stdio_buffer_mode: Option<String>,
    /// The MPI-IO level (`MPI_File_*` calls of C on the file, with
    /// `DR_HOOK_OPT=io,mpi`): opens, reads and writes with their bytes,
    /// other calls (close, sync, seek, view...). The MPI library's own
    /// POSIX calls are in the counters above.
    #[serde(default)]
    pub mpiio_opens: u64,
    #[serde(default)]
    pub mpiio_reads: u64,
    #[serde(default)]
    pub mpiio_writes: u64,
    #[serde(default)]
    pub mpiio_read_bytes: u64,
    #[serde(default)]
    pub mpiio_write_bytes: u64,
    #[serde(default)]
    pub mpiio_other: u64,
    pub read_hist: Vec<u64>,
    pub write_hist: Vec<u64>,
}

impl File {
    /// Bytes read and written, system calls and stdio together (the
    /// stdio bytes not yet counted as the writes that flushed them).
    pub fn bytes(&self) -> u64 {
        self.read_bytes
            .saturating_add(self.write_bytes)
            .saturating_add(self.stdio_unrefilled())
            .saturating_add(self.stdio_unflushed())
    }

    /// The bytes written to streams not counted in `write_bytes` (reports
    /// written before stdio's flushes were seen: all of them).
    pub fn stdio_unflushed(&self) -> u64 {
        self.stdio_write_bytes
            .saturating_sub(self.stdio_flush_bytes)
    }

    /// The bytes read from streams not counted in `read_bytes` (reports
    /// written before stdio's refills were seen: all of them).
    pub fn stdio_unrefilled(&self) -> u64 {
        self.stdio_read_bytes
            .saturating_sub(self.stdio_refill_bytes)
    }

    /// ECIOPROF's "setvbuf omission" as a number: the mean bytes of the
    /// writes stdio made for the file's streams, when it is below half of
    /// `block` (the file system's block size, `st_blksize`, when None) and
    /// there were at least two of them (a single last flush is not one).
    pub fn small_flushes(&self, block: Option<u64>) -> Option<(u64, u64)> {
        let block = block.unwrap_or(self.file_alignment);
        if self.stdio_flushes < 2 || block == 0 {
            return None;
        }
        let mean = self.stdio_flush_bytes / self.stdio_flushes;
        (mean < block / 2).then_some((mean, block))
    }

    /// Seconds in its calls: reads, writes, metadata, opens and closes
    /// (Darshan's read + write + meta time: its meta time holds opens
    /// and closes).
    pub fn time(&self) -> f64 {
        self.read_time + self.write_time + self.meta_time + self.open_time + self.close_time
    }

    /// A grouped record (`<stdout>`, `<pipes>`, `<system files>`, ...),
    /// not one file.
    pub fn is_group(&self) -> bool {
        self.path.starts_with('<')
    }
}

/// Bytes a routine moved to or from one file.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[allow(missing_docs)]
pub struct RoutineBytes {
    pub routine: String,
    pub bytes: u64,
}

/// The report of one process (`drhook.io.*`).
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[allow(missing_docs)]
pub struct Report {
    pub format: String,
    pub version: u32,
    pub program: String,
    pub command: String,
    pub pid: u32,
    pub ppid: u32,
    pub task: u32,
    /// `pid-command` of each process above this one, the first started
    /// first.
    pub ancestry: Vec<String>,
    /// How the process ended: `return`, `exit`, `_exit`, `abort`, `exec`
    /// or `mpi_finalize` (reports before these words said `Return(0)`,
    /// `MpiFinalize`...: [`parse_report`] turns them into these words).
    pub ending: String,
    /// The status of `return`, `exit` and `_exit`.
    #[serde(default)]
    pub status: Option<i64>,
    pub seconds: f64,
    pub path_meta_ops: u64,
    pub path_meta_time: f64,
    pub aio: Aio,
    pub files: Vec<File>,
}

impl Report {
    /// `return 0`, `abort`, ...
    pub fn ended(&self) -> String {
        match self.status {
            Some(s) => format!("{} {s}", self.ending),
            None => self.ending.clone(),
        }
    }

    /// `pid-command`, as in the ancestry of its children.
    pub fn id(&self) -> String {
        format!("{}-{}", self.pid, self.command)
    }
}

/// The ending word and status of a report's `"ending"` text: the words of
/// the current reports as they are, the `Debug` text of the first
/// reports (`Return(0)`, `UnderscoreExit(1)`, `MpiFinalize`) translated.
pub fn ending_of(text: &str, status: Option<i64>) -> (String, Option<i64>) {
    let (name, arg) = match text.split_once('(') {
        Some((n, rest)) => (n, rest.strip_suffix(')').and_then(|s| s.parse().ok())),
        None => (text, None),
    };
    let word = match name {
        "Return" => "return",
        "Exit" => "exit",
        "UnderscoreExit" => "_exit",
        "Abort" => "abort",
        "Exec" => "exec",
        "MpiFinalize" => "mpi_finalize",
        _ => return (text.to_string(), status),
    };
    (word.to_string(), status.or(arg))
}

/// Darshan's access-size bins (each includes its upper edge).
pub const BINS: [&str; 10] = [
    "0-100", "100-1K", "1K-10K", "10K-100K", "100K-1M", "1M-4M", "4M-10M", "10M-100M", "100M-1G",
    "1G+",
];

/// Parses the text of a report (`Err`: why it is not one).
pub fn parse_report(text: &str) -> Result<Report, String> {
    let mut r: Report =
        serde_json::from_str(text).map_err(|e| format!("not a drhook-io report: {e}"))?;
    if r.format != "drhook-io" {
        return Err("not a drhook-io report (format)".into());
    }
    (r.ending, r.status) = ending_of(&r.ending, r.status);
    Ok(r)
}

/// `b` bytes in binary units: the value and the unit's power of 1024
/// (0 to 4, bytes to TiB).
pub fn binary_units(b: u64) -> (f64, usize) {
    let mut x = b as f64;
    let mut i = 0;
    while x >= 1024.0 && i < 4 {
        x /= 1024.0;
        i += 1;
    }
    (x, i)
}

/// `1.5 KiB`: bytes in binary units, one decimal.
pub fn human(b: u64) -> String {
    const U: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let (x, i) = binary_units(b);
    if i == 0 {
        format!("{b} B")
    } else {
        format!("{x:.1} {}", U[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endings_old_and_new() {
        assert_eq!(ending_of("Return(0)", None), ("return".into(), Some(0)));
        assert_eq!(
            ending_of("UnderscoreExit(3)", None),
            ("_exit".into(), Some(3))
        );
        assert_eq!(ending_of("Exit(-1)", None), ("exit".into(), Some(-1)));
        assert_eq!(
            ending_of("MpiFinalize", None),
            ("mpi_finalize".into(), None)
        );
        assert_eq!(ending_of("Abort", None), ("abort".into(), None));
        assert_eq!(ending_of("exit", Some(2)), ("exit".into(), Some(2)));
        assert_eq!(ending_of("exec", None), ("exec".into(), None));
    }

    const OLD: &str = r#"{"format": "drhook-io", "version": 1, "program": "./p",
        "command": "p", "pid": 7, "ppid": 1, "task": 1, "ancestry": [],
        "ending": "Return(0)", "seconds": 0.5, "path_meta_ops": 0,
        "path_meta_time": 0.0, "aio": {"reads": 0, "writes": 0, "completed": 0,
        "bytes": 0, "time": 0.0, "max_queue_depth": 0}, "files": [
        {"path": "/d/x", "opened_by": "main@1", "opens": 1, "closes": 1,
        "reads": 0, "writes": 1, "read_bytes": 0, "write_bytes": 10,
        "read_time": 0.0, "write_time": 0.1, "meta_ops": 0, "meta_time": 0.0,
        "open_time": 0.0, "close_time": 0.0, "seq_reads": 0, "seq_writes": 0,
        "consec_reads": 0, "consec_writes": 0, "max_read": 0, "max_write": 10,
        "min_read": null, "min_write": 10, "first": 0.1, "last": 0.2,
        "mmaps": 0, "stdio_reads": 0, "stdio_writes": 0, "stdio_read_bytes": 0,
        "stdio_write_bytes": 0, "stdio_other": 0, "bufsize": null,
        "bufmode": null, "seeks": 0, "syncs": 0,
        "read_hist": [0,0,0,0,0,0,0,0,0,0], "write_hist": [1,0,0,0,0,0,0,0,0,0]}]}"#;

    #[test]
    fn old_reports_read_with_defaults() {
        let r = parse_report(OLD).unwrap();
        assert_eq!(r.ended(), "return 0");
        let f = &r.files[0];
        assert_eq!((f.max_byte_written, f.rw_switches, f.dups), (0, 0, 0));
        assert!(f.common_access_sizes.is_empty() && f.routines.is_empty());
    }

    #[test]
    fn new_reports_read_whole() {
        let new = OLD
            .replace(
                r#""ending": "Return(0)""#,
                r#""ending": "exit", "status": 3"#,
            )
            .replace(
                r#""syncs": 0,"#,
                r#""syncs": 0, "max_byte_read": 0, "max_byte_written": 9,
                "rw_switches": 2, "file_alignment": 4096, "mem_not_aligned": 1,
                "file_not_aligned": 1, "common_access_sizes": [[10, 1]],
                "common_strides": [[-20, 2], [0, 1]], "renames_from": 1,
                "renames_to": 0, "dups": 2, "max_read_time": 0.0,
                "max_read_time_size": 0, "max_write_time": 0.1,
                "max_write_time_size": 10,"#,
            );
        let r = parse_report(&new).unwrap();
        assert_eq!(r.ended(), "exit 3");
        let f = &r.files[0];
        assert_eq!(f.common_strides, [(-20, 2), (0, 1)]);
        assert_eq!(f.common_access_sizes, [(10, 1)]);
        assert_eq!(
            (f.file_alignment, f.dups, f.max_write_time_size),
            (4096, 2, 10)
        );
        assert_eq!(f.max_write_time, 0.1);
    }
}
