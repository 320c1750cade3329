//! `drhook io`: the per-file I/O report of one or more processes
//! (`drhook.io.*` files written under `DR_HOOK_OPT=io`, see `drhook run`),
//! as a text table per process or as one JSON document.

use std::fmt::Write as _;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::EXIT_OK;
use crate::error::{Error, Result};

/// Arguments of `drhook io`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// `drhook.io.*` files (one per process).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The reports as one JSON array instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Where to write (default: stdout).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

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

/// One file of a process.
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
    pub read_hist: Vec<u64>,
    pub write_hist: Vec<u64>,
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
    pub ancestry: Vec<String>,
    pub ending: String,
    pub seconds: f64,
    pub path_meta_ops: u64,
    pub path_meta_time: f64,
    pub aio: Aio,
    pub files: Vec<File>,
}

/// Darshan's access-size bins.
pub const BINS: [&str; 10] = [
    "0-100", "100-1K", "1K-10K", "10K-100K", "100K-1M", "1M-4M", "4M-10M", "10M-100M", "100M-1G",
    "1G+",
];

/// Reads a `drhook.io.*` file.
pub fn load(path: &std::path::Path) -> Result<Report> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, &e))?;
    let r: Report = serde_json::from_str(&text)
        .map_err(|e| Error::file(path, format!("not a drhook-io report: {e}")))?;
    if r.format != "drhook-io" {
        return Err(Error::file(path, "not a drhook-io report (format)"));
    }
    Ok(r)
}

fn human(b: u64) -> String {
    const U: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut x = b as f64;
    let mut i = 0;
    while x >= 1024.0 && i < U.len() - 1 {
        x /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{b} B")
    } else {
        format!("{x:.1} {}", U[i])
    }
}

/// The text report of one process, its names and paths made printable
/// ([`crate::report::table::printable`]).
pub fn render(r: &Report) -> String {
    crate::report::table::printable(&render_raw(r)).into_owned()
}

fn render_raw(r: &Report) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "I/O of {} (pid {}, task {}, {:.3} s, ended {})",
        r.command, r.pid, r.task, r.seconds, r.ending
    );
    if !r.ancestry.is_empty() {
        let _ = writeln!(o, "  started by: {}", r.ancestry.join(" -> "));
    }
    let tot = |f: &dyn Fn(&File) -> u64| r.files.iter().map(f).sum::<u64>();
    let _ = writeln!(
        o,
        "  {} files; read {} in {} calls, wrote {} in {} calls; stdio: {} read, {} written; {} metadata calls on paths",
        r.files.len(),
        human(tot(&|f| f.read_bytes)),
        tot(&|f| f.reads),
        human(tot(&|f| f.write_bytes)),
        tot(&|f| f.writes),
        human(tot(&|f| f.stdio_read_bytes)),
        human(tot(&|f| f.stdio_write_bytes)),
        r.path_meta_ops
    );
    if r.aio.reads + r.aio.writes > 0 {
        let _ = writeln!(
            o,
            "  AIO: {} reads, {} writes, {} completed, {}, {:.6} s issue to completion, max queue depth {}",
            r.aio.reads,
            r.aio.writes,
            r.aio.completed,
            human(r.aio.bytes),
            r.aio.time,
            r.aio.max_queue_depth
        );
    }
    o.push('\n');
    let _ = writeln!(
        o,
        "{:>6} {:>8} {:>12} {:>8} {:>12} {:>10} {:>10} {:>10} {:>9} {:>9}  {:<12} path (opened by)",
        "opens",
        "reads",
        "read",
        "writes",
        "written",
        "read s",
        "write s",
        "meta s",
        "seq %",
        "buffer",
        "stdio"
    );
    let mut files: Vec<&File> = r.files.iter().collect();
    files.sort_by(|a, b| {
        (b.read_bytes + b.write_bytes + b.stdio_read_bytes + b.stdio_write_bytes)
            .cmp(&(a.read_bytes + a.write_bytes + a.stdio_read_bytes + a.stdio_write_bytes))
            .then_with(|| a.path.cmp(&b.path))
    });
    for f in files {
        let ops = f.reads + f.writes;
        let seq = if ops > 0 {
            format!(
                "{:.0}",
                100.0 * (f.seq_reads + f.seq_writes) as f64 / ops as f64
            )
        } else {
            "-".into()
        };
        let buf = match (&f.bufsize, &f.bufmode) {
            (Some(s), Some(m)) => format!("{s}/{m}"),
            _ => "-".into(),
        };
        let stdio = if f.stdio_reads + f.stdio_writes > 0 {
            format!("{}r/{}w", f.stdio_reads, f.stdio_writes)
        } else {
            "-".into()
        };
        let _ = writeln!(
            o,
            "{:>6} {:>8} {:>12} {:>8} {:>12} {:>10.6} {:>10.6} {:>10.6} {:>9} {:>9}  {:<12} {}{}",
            f.opens,
            f.reads,
            human(f.read_bytes + f.stdio_read_bytes),
            f.writes,
            human(f.write_bytes + f.stdio_write_bytes),
            f.read_time,
            f.write_time,
            f.meta_time + f.open_time + f.close_time,
            seq,
            buf,
            stdio,
            f.path,
            if f.opened_by.is_empty() {
                String::new()
            } else {
                format!(" ({})", f.opened_by)
            }
        );
        let hist = |h: &[u64]| -> String {
            h.iter()
                .zip(BINS)
                .filter(|(n, _)| **n > 0)
                .map(|(n, b)| format!("{b}:{n}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        if f.read_hist.iter().any(|&n| n > 0) {
            let _ = writeln!(o, "{:>8}read sizes  {}", "", hist(&f.read_hist));
        }
        if f.write_hist.iter().any(|&n| n > 0) {
            let _ = writeln!(o, "{:>8}write sizes {}", "", hist(&f.write_hist));
        }
        if !f.routines.is_empty() {
            let mut parts: Vec<String> = f
                .routines
                .iter()
                .map(|r| format!("{} {}", r.routine, human(r.bytes)))
                .collect();
            if f.other_routines_bytes > 0 {
                parts.push(format!("others {}", human(f.other_routines_bytes)));
            }
            let _ = writeln!(o, "{:>8}by routine  {}", "", parts.join(", "));
        }
    }
    o
}

/// Runs the command.
pub fn run(a: &Args) -> Result<u8> {
    let reports: Vec<Report> = a.files.iter().map(|f| load(f)).collect::<Result<_>>()?;
    let out = if a.json {
        serde_json::to_string_pretty(&reports).map_err(|e| Error::msg(e.to_string()))? + "\n"
    } else {
        reports.iter().map(render).collect::<Vec<_>>().join("\n")
    };
    super::emit(a.output.as_deref(), out.as_bytes())?;
    Ok(EXIT_OK)
}
