//! `drhook trace merge`: the per-task timelines of a run
//! (`DR_HOOK_OPT=trace`, `drhook.trace.N.json`) as one Chrome/Perfetto
//! trace, each task a process.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use super::{EXIT_OK, Global, warn};
use crate::error::{Error, Result};
use crate::report::trace;

/// Arguments of `drhook trace`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// What to do with traces.
    #[command(subcommand)]
    pub command: TraceCommand,
}

/// Subcommands of `drhook trace`.
#[derive(Debug, clap::Subcommand)]
pub enum TraceCommand {
    /// One trace of several tasks: each task (MPI rank) a process, on one
    /// time axis (the tasks' start times), for ui.perfetto.dev.
    Merge(MergeArgs),
}

/// Arguments of `drhook trace merge`.
#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    /// Trace files (drhook.trace.N.json) or directories of them.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Write to this file instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Keep each activation as a begin (`B`) and an end (`E`) event
    /// instead of one complete (`X`) event with its duration (the default:
    /// about half the size).
    #[arg(long)]
    pub begin_end: bool,
}

/// Inputs from this size on (both passes together) get a progress bar on
/// a terminal.
const PROGRESS_FROM_BYTES: u64 = 16 << 20;

/// A progress bar over `bytes` read, on stderr when it is a terminal and
/// the work is long.
fn progress(bytes: u64) -> Option<indicatif::ProgressBar> {
    if bytes < PROGRESS_FROM_BYTES || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::with_draw_target(
        Some(bytes),
        indicatif::ProgressDrawTarget::stderr(),
    );
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "drhook trace merge: [{bar:30}] {binary_bytes}/{binary_total_bytes} ({eta} left)",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    Some(bar)
}

/// Runs the command.
pub fn run(a: &Args, _g: &Global) -> Result<u8> {
    match &a.command {
        TraceCommand::Merge(m) => merge(m),
    }
}

/// The trace files of the arguments: files as given, and in a directory
/// the `drhook.trace.*.json` files, in natural order.
fn expand(args: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for a in args {
        let md = std::fs::metadata(a).map_err(|e| Error::io(a, &e))?;
        if !md.is_dir() {
            out.push(a.clone());
            continue;
        }
        let mut found: Vec<(u64, PathBuf)> = Vec::new();
        for entry in std::fs::read_dir(a).map_err(|e| Error::io(a, &e))? {
            let p = entry.map_err(|e| Error::io(a, &e))?.path();
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if let Some(n) = name
                .strip_prefix("drhook.trace.")
                .and_then(|r| r.strip_suffix(".json"))
                .and_then(|n| n.parse::<u64>().ok())
            {
                found.push((n, p));
            }
        }
        if found.is_empty() {
            return Err(Error::file(
                a,
                "no drhook.trace.N.json files in this directory",
            ));
        }
        found.sort();
        out.extend(found.into_iter().map(|(_, p)| p));
    }
    Ok(out)
}

fn merge(a: &MergeArgs) -> Result<u8> {
    let files = expand(&a.files)?;
    // Read twice: the heads, then the events.
    let bytes: u64 = files
        .iter()
        .map(|f| std::fs::metadata(f).map_or(0, |m| m.len()))
        .sum::<u64>()
        * 2;
    let bar = progress(bytes);
    let opts = trace::Options {
        complete: !a.begin_end,
        progress: bar.as_ref(),
    };
    let summary = match a.output.as_deref() {
        Some(p) if p != std::path::Path::new("-") => {
            let f = drhook_secure::file::NewFile::create_output(p).map_err(|e| Error::io(p, &e))?;
            let mut w = std::io::BufWriter::with_capacity(1 << 16, f);
            let s = trace::merge(&files, &mut w, &opts)?;
            let f = w.into_inner().map_err(|e| Error::io(p, e.error()))?;
            f.commit(false).map_err(|e| Error::io(p, &e))?;
            s
        }
        _ => {
            let mut w = std::io::BufWriter::new(std::io::stdout().lock());
            let s = trace::merge(&files, &mut w, &opts)?;
            match w.flush() {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    return Err(Error::msg(format!("writing to stdout: {e}")));
                }
                _ => {}
            }
            s
        }
    };
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let missing: Vec<String> = summary
        .inputs
        .iter()
        .filter(|(h, _)| h.start_ns().is_none())
        .map(|(h, _)| h.path.display().to_string())
        .collect();
    if !missing.is_empty() && summary.inputs.len() > 1 {
        warn(&format!(
            "no start time (otherData.start_unix_ns) in {}: its times are kept as they are",
            missing.join(", ")
        ));
    }
    for (h, _) in &summary.inputs {
        if let Some(d) = h
            .other
            .as_ref()
            .and_then(|o| o.dropped_activations.as_deref())
            .filter(|d| *d != "0")
        {
            warn(&format!(
                "{}: {d} activations were not recorded (the trace buffer was full: DR_HOOK_TRACE_EVENTS)",
                h.path.display()
            ));
        }
    }
    Ok(EXIT_OK)
}
