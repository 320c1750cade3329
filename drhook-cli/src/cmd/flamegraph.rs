//! `drhook flamegraph`: an SVG flame graph (inferno) or folded stacks.

use std::path::PathBuf;

use super::{EXIT_OK, Global, emit, load_all, warn};
use crate::error::{Error, Result};
use crate::report::folded;

/// Arguments of `drhook flamegraph`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Profiles (text or JSON) or directories of them.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Write to this file instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Write the folded stacks (`frame;frame count`) instead of the SVG.
    #[arg(long)]
    pub folded: bool,
    /// Only this thread (default: every thread, one flame each).
    #[arg(long, value_name = "N")]
    pub thread: Option<u32>,
    /// Title of the graph (default: the file name).
    #[arg(long)]
    pub title: Option<String>,
    /// Width of the SVG in pixels (default: inferno's, 1200).
    #[arg(long, value_name = "PIXELS")]
    pub width: Option<usize>,
}

/// Runs the command.
pub fn run(a: &Args, g: &Global) -> Result<u8> {
    let profiles = load_all(&a.files, g)?;
    if let Some(p) = profiles.iter().find(|p| !p.header.kind.has_times()) {
        return Err(Error::msg(format!(
            "{}: a memory or I/O profile has no times for a flame graph",
            p.source.as_deref().unwrap_or("input")
        )));
    }
    if !profiles.iter().any(|p| p.tree.is_some()) {
        warn("no call paths in the profile (DR_HOOK_OPT=callpath): one frame per routine");
    }
    let lines = folded::folded(&profiles, a.thread);
    if lines.is_empty() {
        let what = a
            .thread
            .map_or(String::new(), |t| format!(" on thread {t}"));
        return Err(Error::msg(format!(
            "no routine with self time{what}: nothing to draw"
        )));
    }
    if a.folded {
        let mut s = lines.join("\n");
        s.push('\n');
        emit(a.output.as_deref(), s.as_bytes())?;
        return Ok(EXIT_OK);
    }
    let mut opt = inferno::flamegraph::Options::default();
    opt.title = a.title.clone().unwrap_or_else(|| {
        let names: Vec<&str> = a.files.iter().filter_map(|f| f.to_str()).collect();
        format!("Dr.Hook profile {}", names.join(" "))
    });
    opt.count_name = "us self".into();
    opt.name_type = "Routine:".into();
    opt.hash = true;
    opt.deterministic = true;
    opt.image_width = a.width;
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut opt, lines.iter().map(String::as_str), &mut svg)
        .map_err(|e| Error::msg(format!("drawing the flame graph: {e}")))?;
    emit(a.output.as_deref(), &svg)?;
    Ok(EXIT_OK)
}
