//! `drhook io`: the per-file I/O reports of processes (`drhook.io.*`
//! files written under `DR_HOOK_OPT=io`, see `drhook run`): one
//! process's report as a table, or several processes' (a directory of
//! them, the ranks of an MPI run, the processes of a tree) as one job
//! summary; text or JSON.
//!
//! * [`read`]: the reports (serde), directories of them;
//! * [`process`]: the table of one process;
//! * [`summary`]: the job summary (Darshan's shared-record reduction, in
//!   `reduce.rs`; the process tree in `tree.rs`);
//! * [`summary_text`]: the job summary as text.

pub mod process;
pub use crate::report::io_read as read;
mod reduce;
pub mod summary;
pub mod summary_text;
mod tree;

use std::path::PathBuf;

pub use process::render;
pub use read::{Aio, BINS, File, Report, RoutineBytes, load};

use super::EXIT_OK;
use crate::error::{Error, Result};

/// Arguments of `drhook io`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// `drhook.io.*` files (one per process) or directories of them.
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

/// Runs the command.
pub fn run(a: &Args) -> Result<u8> {
    let paths = read::expand(&a.files)?;
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
