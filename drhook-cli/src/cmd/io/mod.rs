//! `drhook io`: the per-file I/O reports of processes (`drhook.io.*`
//! files written under `DR_HOOK_OPT=io`, see `drhook run`): one
//! process's report as a table, or several processes' (a directory of
//! them, the ranks of an MPI run, the processes of a tree) as one job
//! summary; text or JSON.
//!
//! * [`read`]: the reports (serde), directories of them;
//! * [`process`]: the table of one process;
//! * [`summary`]: the job summary (the `drhook-merge` crate's
//!   `io` module: Darshan's shared-record reduction through a combinable
//!   partial summary, shared with `DR_HOOK_OPT=io,reduce`);
//! * [`summary_text`]: the job summary as text.

pub mod process;
pub use crate::report::io_read as read;
pub mod summary;
pub mod summary_text;

use std::path::PathBuf;

pub use process::render;
pub use read::{Aio, BINS, File, Report, RoutineBytes, load};

use super::EXIT_OK;
use crate::error::{Error, Result};

/// Arguments of `drhook io`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// `drhook.io.*` files (one per process) or directories of them, or
    /// one job summary (`drhook.io.job` of `DR_HOOK_OPT=io,reduce`).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// JSON instead of text: the job summary's document, or with
    /// --per-process (and for one report) the reports as one array.
    #[arg(long)]
    pub json: bool,
    /// One table per process, even for several reports (the default for
    /// one report).
    #[arg(long, conflicts_with = "summary")]
    pub per_process: bool,
    /// The job summary, even for one report (the default for several).
    #[arg(long)]
    pub summary: bool,
    /// Files named in the summary's top lists and shared files shown in
    /// text (0: all).
    #[arg(long, value_name = "N", default_value_t = 10)]
    pub top: usize,
    /// The block size stdio's flushes are compared with (default: each
    /// file's own, `st_blksize` at its open): a stream whose writes are
    /// below half of it on average is flagged (small flushes).
    #[arg(long, value_name = "BYTES")]
    pub block_size: Option<u64>,
    /// Where to write (default: stdout).
    #[arg(short, long)]
    pub output: Option<PathBuf>,
}

/// The job summary `path` holds, when it is one (`drhook.io.job`, written
/// by `DR_HOOK_OPT=io,reduce`: a `drhook-io-job` document, the one
/// `drhook io --json --top 0` prints for the ranks' reports).
fn job_document(path: &std::path::Path) -> Result<Option<summary::Summary>> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, &e))?;
    if !text.contains("\"drhook-io-job\"") {
        return Ok(None);
    }
    summary::Summary::parse(&text)
        .map(Some)
        .map_err(|e| Error::file(path, e))
}

/// Runs the command.
pub fn run(a: &Args) -> Result<u8> {
    let paths = read::expand(&a.files)?;
    let job_doc = match paths.as_slice() {
        [one] => job_document(one)?,
        _ => None,
    };
    if let Some(mut s) = job_doc {
        // The document names every file in its top lists (`--top 0`).
        if a.top > 0 {
            s.top_by_bytes.truncate(a.top);
            s.top_by_time.truncate(a.top);
        }
        let out = if a.json {
            s.to_json()
        } else {
            summary_text::render(&s, a.top)
        };
        super::emit(a.output.as_deref(), out.as_bytes())?;
        return Ok(EXIT_OK);
    }
    let reports: Vec<Report> = paths.iter().map(|f| load(f)).collect::<Result<_>>()?;
    let job = a.summary || (!a.per_process && reports.len() > 1);
    let out = if job {
        let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        let s = summary::summarize_with(&reports, &names, a.top, a.block_size);
        if a.json {
            serde_json::to_string_pretty(&s).map_err(|e| Error::msg(e.to_string()))? + "\n"
        } else {
            summary_text::render(&s, a.top)
        }
    } else if a.json {
        serde_json::to_string_pretty(&reports).map_err(|e| Error::msg(e.to_string()))? + "\n"
    } else {
        reports
            .iter()
            .map(|r| process::render_with(r, a.block_size))
            .collect::<Vec<_>>()
            .join("\n")
    };
    super::emit(a.output.as_deref(), out.as_bytes())?;
    Ok(EXIT_OK)
}
