//! `drhook top`: a profile as a readable tree (or table) in the terminal
//! (an I/O profile `drhook.prof.N-io` as a table by I/O time).

use std::io::IsTerminal;
use std::path::PathBuf;

use super::{EXIT_OK, Global, emit};
use crate::error::{Error, Result};
use crate::profile::input;
use crate::report::top::{TopOptions, render};

/// When to colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Color {
    /// When stdout is a terminal and NO_COLOR is not set.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// Arguments of `drhook top`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// A profile (text or JSON; wall, CPU or I/O `-io`).
    pub file: PathBuf,
    /// Only this thread.
    #[arg(long, value_name = "N")]
    pub thread: Option<u32>,
    /// At most N lines per thread (0 = all; default: the terminal's height,
    /// or all when stdout is not a terminal).
    #[arg(short = 'n', long, value_name = "N")]
    pub limit: Option<usize>,
    /// Tree depth shown (0 = all).
    #[arg(long, value_name = "D", default_value_t = 0)]
    pub depth: usize,
    /// The flat table even when the profile has call paths.
    #[arg(long)]
    pub flat: bool,
    /// Line width (default: the terminal's, else $COLUMNS, else 120).
    #[arg(long, value_name = "COLUMNS")]
    pub width: Option<usize>,
    /// Colours.
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    pub color: Color,
    /// Which task when the file is a JSON document of several (proc#).
    #[arg(long, value_name = "PROC")]
    pub task: Option<u32>,
    /// One tree for all threads (and all tasks of a JSON document): nodes
    /// with the same call path summed.
    #[arg(long, conflicts_with_all = ["thread", "task"])]
    pub merge: bool,
}

/// Runs the command.
pub fn run(a: &Args, g: &Global) -> Result<u8> {
    let mut tasks = input::load(&a.file, g.read_options())?;
    let p = match a.task {
        None if a.merge => crate::profile::tree::merge_all(&tasks)
            .ok_or_else(|| Error::file(&a.file, "no task in this file"))?,
        Some(t) => tasks
            .into_iter()
            .find(|p| p.header.proc == t)
            .ok_or_else(|| Error::file(&a.file, format!("no task proc#{t} in this file")))?,
        None if tasks.len() == 1 => tasks.remove(0),
        None => {
            return Err(Error::file(
                &a.file,
                format!("{} tasks in this file: choose one with --task", tasks.len()),
            ));
        }
    };
    if p.header.kind == crate::profile::Kind::Memory {
        return Err(Error::file(
            &a.file,
            "a memory profile: top shows wall, CPU and I/O profiles",
        ));
    }
    if let Some(t) = a.thread {
        let ids = p.thread_ids();
        if !ids.contains(&t) {
            let ids: Vec<String> = ids.iter().map(u32::to_string).collect();
            return Err(Error::file(
                &a.file,
                format!(
                    "no thread {t} in this profile (threads: {})",
                    ids.join(", ")
                ),
            ));
        }
    }
    let tty = std::io::stdout().is_terminal();
    let size = terminal_size::terminal_size();
    let width = a
        .width
        .or_else(|| tty.then(|| size.map(|(w, _)| usize::from(w.0))).flatten())
        .or_else(|| std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()))
        .unwrap_or(120)
        .max(40);
    let limit = a.limit.unwrap_or_else(|| {
        if tty {
            size.map_or(0, |(_, h)| usize::from(h.0).saturating_sub(8).max(10))
        } else {
            0
        }
    });
    let color = match a.color {
        Color::Always => true,
        Color::Never => false,
        Color::Auto => tty && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    };
    let o = TopOptions {
        width,
        color,
        thread: a.thread,
        limit,
        depth: a.depth,
        flat: a.flat,
    };
    emit(None, render(&p, &o).as_bytes())?;
    Ok(EXIT_OK)
}
