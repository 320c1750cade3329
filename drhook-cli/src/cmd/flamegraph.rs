//! `drhook flamegraph`: an SVG flame graph (inferno) or folded stacks, of
//! one run or the difference of two.

use std::path::PathBuf;

use super::{EXIT_OK, Global, emit, warn};
use crate::error::{Error, Result};
use crate::profile::Profile;
use crate::profile::input::{self, Format};
use crate::report::{folded, job_elapsed_words};

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
    /// One flame for all threads of a task (their times summed).
    #[arg(long)]
    pub merge_threads: bool,
    /// One flame for all tasks (their times summed).
    #[arg(long)]
    pub merge_tasks: bool,
    /// A differential flame graph: the FILES are the new run, these
    /// profiles the base; frames are as wide as in the new run and coloured
    /// by their change (red grew, blue shrank).
    #[arg(long, value_name = "BASE", num_args = 1..)]
    pub diff: Vec<PathBuf>,
    /// Read text profiles as given even when their JSON companion
    /// (`P.json`, times in µs) is beside them.
    #[arg(long)]
    pub no_companion: bool,
    /// Title of the graph (default: the file name).
    #[arg(long)]
    pub title: Option<String>,
    /// Width of the SVG in pixels (default: inferno's, 1200).
    #[arg(long, value_name = "PIXELS")]
    pub width: Option<usize>,
}

/// Reads the profiles for a flame graph: a text profile whose JSON
/// companion `P.json` is beside it is read from the companion (its times
/// are microseconds, the text's are rounded to 1 ms), saying so; text read
/// as it is gets a warning when its frames are rounded.
fn load(files: &[PathBuf], g: &Global, no_companion: bool) -> Result<Vec<Profile>> {
    let mut out = Vec::new();
    for f in input::expand(files)? {
        let mut path = f.clone();
        let format = input::sniff(&f)?;
        if format == Format::Text && !no_companion {
            let mut c = f.as_os_str().to_owned();
            c.push(".json");
            let c = PathBuf::from(c);
            if c.is_file() && input::sniff(&c)? == Format::Json {
                eprintln!(
                    "drhook: reading {} (the JSON companion of {}: times in microseconds)",
                    c.display(),
                    f.display()
                );
                path = c;
            }
        }
        let ps = input::load(&path, g.read_options())?;
        if path == f && format == Format::Text {
            let tree_like = ps.iter().any(|p| p.tree.is_some());
            warn(&format!(
                "{}: a text profile's times are rounded to 1 ms: {} under 1 ms have no width{}; write DR_HOOK_OPT=json for the JSON companion (microseconds)",
                f.display(),
                if tree_like {
                    "call paths (recursive levels included)"
                } else {
                    "routines"
                },
                if no_companion {
                    ""
                } else {
                    " (none beside it)"
                }
            ));
        }
        out.extend(ps);
    }
    if let Some(p) = out.iter().find(|p| !p.header.kind.has_times()) {
        return Err(Error::msg(format!(
            "{}: a memory or I/O profile has no times for a flame graph",
            p.source.as_deref().unwrap_or("input")
        )));
    }
    if !out.iter().any(|p| p.tree.is_some()) {
        warn("no call paths in the profile (DR_HOOK_OPT=callpath): one frame per routine");
    }
    Ok(out)
}

/// The sampled profiles (`<profile>-sample.json`) among `files`: None
/// when there is none, an error when they are mixed with other profiles.
fn sampled_docs(files: &[PathBuf]) -> Result<Option<Vec<serde_json::Value>>> {
    let mut docs = Vec::new();
    let mut others = 0;
    for f in files {
        if f.is_dir() {
            others += 1;
            continue;
        }
        let text = std::fs::read_to_string(f).unwrap_or_default();
        if folded::is_sampled(&text) {
            docs.push(
                serde_json::from_str(&text)
                    .map_err(|e| Error::msg(format!("{}: {e}", f.display())))?,
            );
        } else {
            others += 1;
        }
    }
    match (docs.is_empty(), others) {
        (true, _) => Ok(None),
        (false, 0) => Ok(Some(docs)),
        _ => Err(Error::msg(
            "sampled profiles (-sample.json) and other profiles: draw them apart",
        )),
    }
}

/// A flame graph of sampled stacks: a frame's width is its samples.
fn draw_sampled(a: &Args, docs: &[serde_json::Value]) -> Result<u8> {
    let lines = folded::sampled(docs, a.thread);
    if lines.is_empty() {
        return Err(Error::msg("no samples: nothing to draw"));
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
        format!("Dr.Hook sampled profile {}", names.join(" "))
    });
    opt.count_name = "samples".into();
    opt.name_type = "Function:".into();
    opt.hash = true;
    opt.deterministic = true;
    opt.image_width = a.width;
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut opt, lines.iter().map(String::as_str), &mut svg)
        .map_err(|e| Error::msg(format!("drawing the flame graph: {e}")))?;
    emit(a.output.as_deref(), &svg)?;
    Ok(EXIT_OK)
}

/// Runs the command.
pub fn run(a: &Args, g: &Global) -> Result<u8> {
    if let Some(docs) = sampled_docs(&a.files)? {
        return draw_sampled(a, &docs);
    }
    let profiles = load(&a.files, g, a.no_companion)?;
    let o = folded::Options {
        thread: a.thread,
        merge_threads: a.merge_threads,
        merge_tasks: a.merge_tasks,
    };
    let base = if a.diff.is_empty() {
        None
    } else {
        Some(load(&a.diff, g, a.no_companion)?)
    };
    let lines = match &base {
        None => folded::folded(&profiles, o),
        Some(b) => folded::differential(b, &profiles, o),
    };
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
        match &base {
            None => format!("Dr.Hook profile {}", names.join(" ")),
            Some(_) => {
                let b: Vec<&str> = a.diff.iter().filter_map(|f| f.to_str()).collect();
                format!(
                    "Dr.Hook profile {} against {}",
                    names.join(" "),
                    b.join(" ")
                )
            }
        }
    });
    // A frame's count is the sum over the stacks under it: its inclusive
    // time; its self time is the part no child covers.
    opt.count_name = "µs inclusive".into();
    let elapsed = match &base {
        None => job_elapsed_words(&profiles),
        Some(b) => format!(
            "{}, base {}",
            job_elapsed_words(&profiles),
            job_elapsed_words(b)
        ),
    };
    opt.subtitle = Some(format!(
        "width = inclusive time (self time: the part no callee covers); {elapsed}{}",
        if base.is_some() {
            "; red grew, blue shrank"
        } else {
            ""
        }
    ));
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
