//! `drhook merge`: one table over all tasks.

use std::path::PathBuf;

use super::{EXIT_OK, Global, emit, warn};
use crate::error::Result;
use crate::profile::input;
use crate::report::{merge, table};

/// Arguments of `drhook merge`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Profiles (drhook.prof.N text or drhook-profile JSON) or directories of them.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Write CSV (every statistic, one line per routine).
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
    /// Write JSON.
    #[arg(long)]
    pub json: bool,
    /// Write to this file instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Show only the first N routines of the text table (0 = all).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub limit: usize,
    /// Files read in parallel (default: the number of CPUs).
    #[arg(short, long, value_name = "N")]
    pub jobs: Option<usize>,
}

/// Runs the command.
pub fn run(a: &Args, g: &Global) -> Result<u8> {
    let files = input::expand(&a.files)?;
    let jobs = a
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let t = match merge::merge_any(&files, g.read_options(), jobs)? {
        merge::Output::Time(t) => t,
        merge::Output::Columns(t) => {
            let out = if a.csv {
                return Err(crate::error::Error::msg(
                    "--csv: memory and I/O profiles merge to text or --json",
                ));
            } else if a.json {
                let mut s = serde_json::to_string_pretty(&t)
                    .map_err(|e| crate::error::Error::msg(e.to_string()))?;
                s.push('\n');
                s
            } else {
                drhook_merge::col_text(&t, (a.limit > 0).then_some(a.limit))
            };
            emit(a.output.as_deref(), out.as_bytes())?;
            return Ok(EXIT_OK);
        }
    };
    let dups = merge::duplicate_procs(&t);
    if !dups.is_empty() {
        warn(&format!(
            "proc# {dups:?} appear in more than one file (profiles of different runs?)"
        ));
    }
    let out = if a.csv {
        table::merge_csv(&t)?
    } else if a.json {
        table::merge_json(&t)?
    } else {
        table::merge_text(&t, (a.limit > 0).then_some(a.limit))
    };
    emit(a.output.as_deref(), out.as_bytes())?;
    Ok(EXIT_OK)
}
