//! `drhook report`: one self-contained HTML page of a run or a job.

use std::path::PathBuf;

use super::{EXIT_OK, Global, emit};
use crate::error::{Error, Result};
use crate::profile::input;
use crate::report::html::{Inputs, render};

/// Arguments of `drhook report`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Profiles (text or JSON; wall or CPU, memory `-mem`, I/O `-io`),
    /// per-file I/O reports (`drhook.io.*`), or directories of them (a
    /// job's tasks).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The HTML file to write (default: stdout).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

fn is_io_report(p: &std::path::Path) -> bool {
    p.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with("drhook.io."))
}

/// Memory and I/O profiles of a directory (`*-mem`, `*-io`), which the
/// time-profile expansion leaves out.
fn siblings(dir: &std::path::Path) -> Result<Vec<PathBuf>> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).map_err(|e| Error::io(dir, &e))? {
        let p = e.map_err(|e| Error::io(dir, &e))?.path();
        let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
        if p.is_file() && name.is_some_and(|n| n.ends_with("-mem") || n.ends_with("-io")) {
            v.push(p);
        }
    }
    v.sort_by_key(|p| input::natural_key_str(&p.to_string_lossy()));
    Ok(v)
}

/// Runs the command.
pub fn run(a: &Args, g: &Global) -> Result<u8> {
    let mut inp = Inputs::default();
    let mut profiles = Vec::new();
    let mut io_reports = Vec::new();
    for f in &a.files {
        if f.is_dir() {
            // A directory: its time profiles, memory and I/O profiles and
            // I/O reports (none of them need be there, but something must).
            let time = input::expand(std::slice::from_ref(f)).unwrap_or_default();
            let other = siblings(f)?;
            let io = crate::cmd::io::read::expand(std::slice::from_ref(f)).unwrap_or_default();
            if time.is_empty() && other.is_empty() && io.is_empty() {
                return Err(Error::file(
                    f,
                    "no profiles or I/O reports in this directory",
                ));
            }
            profiles.extend(time);
            profiles.extend(other);
            io_reports.extend(io);
        } else if is_io_report(f) {
            io_reports.push(f.clone());
        } else {
            profiles.push(f.clone());
        }
    }
    for p in &profiles {
        for prof in input::load(p, g.read_options())? {
            inp.add(prof);
        }
        inp.files.push(p.display().to_string());
    }
    for p in &io_reports {
        inp.io_reports.push(crate::cmd::io::read::load(p)?);
        inp.files.push(p.display().to_string());
    }
    emit(a.output.as_deref(), render(&inp).as_bytes())?;
    Ok(EXIT_OK)
}
