//! `drhook procs`: the processes of a `drhook run` directory (one per run,
//! made by default).
//!
//! Every process of such a run writes `<command>.<pid>.<file>` there, and
//! its JSON companion's `metadata` says its pid, parent pid and command
//! line. This command reads the companions and names the files of each
//! process (by the `<command>.<pid>.` prefix): the process tree (children
//! under their parent; a process whose parent is not in the directory is a
//! root), and the processes rolled up by command (how many, their elapsed
//! and instrumented time), the question "how much in cc1 vs as vs ld".

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;

use serde::Serialize;

use super::{EXIT_OK, Global, emit};
use crate::error::{Error, Result};
use crate::profile::input::{self, Format};
use crate::report::table::{Align, render};

/// Arguments of `drhook procs`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The directory of a `drhook run` run (drhook.COMMAND.YYYYMMDD-HHMMSS).
    pub dir: PathBuf,
    /// JSON (`processes` with `children` nested, `by_command`).
    #[arg(long)]
    pub json: bool,
    /// Write to this file instead of stdout (e.g. DIR/index.json).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// One process of the run.
#[derive(Clone, Debug, Serialize)]
pub struct Proc {
    /// Process id.
    pub pid: u32,
    /// Parent's process id.
    pub ppid: u32,
    /// Command (the file names' first part).
    pub command: String,
    /// Command line, when recorded.
    pub args: Vec<String>,
    /// Elapsed seconds of the process's instrumentation.
    pub elapsed_s: Option<f64>,
    /// Seconds in instrumented routines (Σ self of every thread).
    pub busy_s: f64,
    /// The process's files in the directory.
    pub files: Vec<String>,
    /// Processes it started (in the JSON).
    pub children: Vec<Proc>,
}

/// A command's processes added up.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ByCommand {
    /// Command.
    pub command: String,
    /// Number of processes.
    pub processes: u32,
    /// Σ elapsed seconds.
    pub elapsed_s: f64,
    /// Longest elapsed seconds of one process.
    pub max_elapsed_s: f64,
    /// Σ seconds in instrumented routines.
    pub busy_s: f64,
}

fn read(a: &Args, g: &Global) -> Result<Vec<Proc>> {
    let rd = std::fs::read_dir(&a.dir).map_err(|e| Error::io(&a.dir, &e))?;
    let mut names: Vec<String> = Vec::new();
    for e in rd {
        let e = e.map_err(|e| Error::io(&a.dir, &e))?;
        names.push(e.file_name().to_string_lossy().into_owned());
    }
    names.sort_by_key(|n| input::natural_key_str(n));
    let mut procs = Vec::new();
    for n in &names {
        let path = a.dir.join(n);
        if !n.ends_with(".json") || input::sniff(&path)? != Format::Json {
            continue;
        }
        for p in input::load(&path, g.read_options())? {
            let Some(md) = p.header.metadata.as_ref() else {
                continue;
            };
            let num = |k: &str| md.get(k).and_then(|v| v.as_u64()).unwrap_or(0) as u32;
            let pid = num("pid");
            // `<command>.<pid>.<file>`: the command is what precedes `.<pid>.`.
            let tag = format!(".{pid}.");
            let Some(at) = n.find(&tag) else { continue };
            let prefix = &n[..at + tag.len()];
            procs.push(Proc {
                pid,
                ppid: num("ppid"),
                command: n[..at].to_string(),
                args: md
                    .get("args")
                    .and_then(|v| v.as_array())
                    .map(|v| {
                        v.iter()
                            .filter_map(|s| s.as_str().map(String::from))
                            .collect()
                    })
                    .unwrap_or_default(),
                elapsed_s: p.header.elapsed_s,
                busy_s: p.header.threads.iter().map(|t| t.time_s).sum(),
                files: names
                    .iter()
                    .filter(|f| f.starts_with(prefix))
                    .cloned()
                    .collect(),
                children: Vec::new(),
            });
        }
    }
    if procs.is_empty() {
        return Err(Error::file(
            &a.dir,
            "no JSON companions with process metadata here (a directory of a drhook run, made by default)",
        ));
    }
    Ok(procs)
}

/// The processes as a forest: each under its parent when the parent is
/// among them, by pid.
fn forest(mut procs: Vec<Proc>) -> Vec<Proc> {
    procs.sort_by_key(|p| p.pid);
    let pids: HashMap<u32, usize> = procs.iter().enumerate().map(|(i, p)| (p.pid, i)).collect();
    let parent: Vec<Option<usize>> = procs
        .iter()
        .map(|p| {
            pids.get(&p.ppid)
                .copied()
                .filter(|&i| procs[i].pid != p.pid)
        })
        .collect();
    // Children before parents: attach from the deepest up.
    let depth = |mut i: usize| {
        let mut d = 0;
        while let Some(p) = parent[i] {
            i = p;
            d += 1;
            if d > procs.len() {
                break; // a pid loop (pid reuse): stop
            }
        }
        d
    };
    let mut order: Vec<usize> = (0..procs.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(depth(i)));
    let mut slots: Vec<Option<Proc>> = procs.into_iter().map(Some).collect();
    let mut roots = Vec::new();
    for i in order {
        let Some(p) = slots[i].take() else { continue };
        match parent[i].filter(|&k| slots[k].is_some()) {
            Some(k) => slots[k].as_mut().expect("checked").children.insert(0, p),
            None => roots.push(p),
        }
    }
    roots.sort_by_key(|p| p.pid);
    for r in &mut roots {
        sort_children(r);
    }
    roots
}

fn sort_children(p: &mut Proc) {
    p.children.sort_by_key(|c| c.pid);
    for c in &mut p.children {
        sort_children(c);
    }
}

fn by_command(procs: &[Proc]) -> Vec<ByCommand> {
    let mut m: BTreeMap<&str, ByCommand> = BTreeMap::new();
    for p in procs {
        let e = m.entry(&p.command).or_insert_with(|| ByCommand {
            command: p.command.clone(),
            ..ByCommand::default()
        });
        e.processes += 1;
        let el = p.elapsed_s.unwrap_or(0.0);
        e.elapsed_s += el;
        e.max_elapsed_s = e.max_elapsed_s.max(el);
        e.busy_s += p.busy_s;
    }
    let mut v: Vec<ByCommand> = m.into_values().collect();
    v.sort_by(|a, b| b.elapsed_s.total_cmp(&a.elapsed_s));
    v
}

fn lines(p: &Proc, depth: usize, out: &mut Vec<Vec<String>>) {
    out.push(vec![
        p.pid.to_string(),
        p.ppid.to_string(),
        p.elapsed_s.map_or("-".into(), |e| format!("{e:.3}")),
        format!("{}{}", "  ".repeat(depth), p.command),
        p.files.join(" "),
    ]);
    for c in &p.children {
        lines(c, depth + 1, out);
    }
}

/// Runs the command.
pub fn run(a: &Args, g: &Global) -> Result<u8> {
    let procs = read(a, g)?;
    let by = by_command(&procs);
    let n = procs.len();
    let tree = forest(procs);
    let out = if a.json {
        let mut s = serde_json::to_string_pretty(&serde_json::json!({
            "dir": a.dir.display().to_string(),
            "processes": tree,
            "by_command": by,
        }))
        .map_err(|e| Error::msg(e.to_string()))?;
        s.push('\n');
        s
    } else {
        use Align::*;
        let mut rows = Vec::new();
        for r in &tree {
            lines(r, 0, &mut rows);
        }
        let mut s = format!("{}: {n} processes\n\n", a.dir.display());
        s.push_str(&render(
            &[
                ("PID", Right),
                ("PPID", Right),
                ("Elapsed(s)", Right),
                ("Command", Left),
                ("Files", Left),
            ],
            &rows,
        ));
        s.push_str("\nBy command (elapsed: Σ over its processes, max: the longest; instrumented: Σ self time):\n");
        let rows: Vec<Vec<String>> = by
            .iter()
            .map(|b| {
                vec![
                    b.command.clone(),
                    b.processes.to_string(),
                    format!("{:.3}", b.elapsed_s),
                    format!("{:.3}", b.max_elapsed_s),
                    format!("{:.3}", b.busy_s),
                ]
            })
            .collect();
        s.push_str(&render(
            &[
                ("Command", Left),
                ("Processes", Right),
                ("Elapsed(s)", Right),
                ("Max(s)", Right),
                ("Instrumented(s)", Right),
            ],
            &rows,
        ));
        s
    };
    emit(a.output.as_deref(), out.as_bytes())?;
    Ok(EXIT_OK)
}
