//! The per-process report `drhook.io.<task>[.<command>.<pid>]` as the
//! preload library writes it (`drhook-ffi/attach/src/io/report.rs`), read
//! with serde: reports of every version so far (members added later take
//! their default when absent; the old `"ending": "Return(0)"` text is
//! read as the word and status of the current reports).

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::profile::input::natural_key_str as natural_key;

pub use drhook_merge::io::model::*;

/// Reads a `drhook.io.*` file.
pub fn load(path: &Path) -> Result<Report> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, &e))?;
    parse(&text, path)
}

/// Parses the text of a report; `path` names it in errors.
pub fn parse(text: &str, path: &Path) -> Result<Report> {
    parse_report(text).map_err(|e| Error::file(path, e))
}

/// The reports named on the command line: files as given, and every
/// `drhook.io.*` file of a directory but `drhook.io.job` (in natural order: `drhook.io.2`
/// before `drhook.io.10`), each with the path it was read from.
pub fn expand(args: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for a in args {
        let md = std::fs::metadata(a).map_err(|e| Error::io(a, &e))?;
        if !md.is_dir() {
            out.push(a.clone());
            continue;
        }
        let mut found = Vec::new();
        for entry in std::fs::read_dir(a).map_err(|e| Error::io(a, &e))? {
            let p = entry.map_err(|e| Error::io(a, &e))?.path();
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            // Not the job summary (`drhook.io.job`) beside the reports.
            let report = name.is_some_and(|n| n.starts_with("drhook.io.") && !n.ends_with(".job"));
            if report && p.is_file() {
                found.push(p);
            }
        }
        if found.is_empty() {
            return Err(Error::file(
                a,
                "no I/O reports (drhook.io.*) in this directory",
            ));
        }
        found.sort_by_key(|p| natural_key(&p.to_string_lossy()));
        out.extend(found);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order() {
        let mut v = ["d/drhook.io.10", "d/drhook.io.2", "d/drhook.io.1.sh.7"];
        v.sort_by_key(|s| natural_key(s));
        assert_eq!(v, ["d/drhook.io.1.sh.7", "d/drhook.io.2", "d/drhook.io.10"]);
    }
}
