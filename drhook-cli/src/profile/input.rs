//! Where profiles come from: files and directories given on the command
//! line, text (`drhook.prof.N`) or JSON (`drhook-profile` documents).

use std::io::Read as _;
use std::path::{Path, PathBuf};

use super::Profile;
use super::text::{self, ReadOptions, RowReader};
use crate::error::{Error, Result};

/// What a file holds, judged from its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// A wall or CPU profile (`Profiling information for program=`).
    Text,
    /// A memory profile (`Memory-profiling information for program=`).
    MemoryText,
    /// An I/O profile (`I/O-profiling information for program=`).
    IoText,
    /// A `drhook-profile` JSON document.
    Json,
    /// Anything else.
    Other,
}

/// Reads the first bytes of `path` and says what it holds.
pub fn sniff(path: &Path) -> Result<Format> {
    let mut f = std::fs::File::open(path).map_err(|e| Error::io(path, &e))?;
    let mut head = [0u8; 512];
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(path, &e)),
        }
    }
    Ok(sniff_bytes(&head[..n]))
}

/// [`sniff`] on bytes already read.
pub fn sniff_bytes(head: &[u8]) -> Format {
    if head.starts_with(b"Profiling information for program=") {
        return Format::Text;
    }
    if head.starts_with(b"Memory-profiling information for program=") {
        return Format::MemoryText;
    }
    if head.starts_with(b"I/O-profiling information for program=") {
        return Format::IoText;
    }
    let t = head.trim_ascii_start();
    if t.first() == Some(&b'{') && t.windows(16).any(|w| w == b"\"drhook-profile\"") {
        return Format::Json;
    }
    Format::Other
}

/// Expands the command-line arguments into profile files: files are taken
/// as given (and must exist); a directory gives its time profiles and JSON
/// documents (not memory or I/O profiles, not other files), in natural order
/// (`drhook.prof.2` before `drhook.prof.10`). A text profile whose JSON
/// companion (`drhook.prof.N.json`) is also an input is read from the
/// companion only.
pub fn expand(args: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for a in args {
        let md = std::fs::metadata(a).map_err(|e| Error::io(a, &e))?;
        if md.is_dir() {
            let mut found = Vec::new();
            let rd = std::fs::read_dir(a).map_err(|e| Error::io(a, &e))?;
            for entry in rd {
                let entry = entry.map_err(|e| Error::io(a, &e))?;
                let p = entry.path();
                if !p.is_file() {
                    continue;
                }
                if matches!(sniff(&p)?, Format::Text | Format::Json) {
                    found.push(p);
                }
            }
            if found.is_empty() {
                return Err(Error::file(
                    a,
                    "no profiles in this directory (files starting with \"Profiling information for program=\" or drhook-profile JSON documents)",
                ));
            }
            found.sort_by_key(|x| natural_key(x));
            out.extend(found);
        } else {
            out.push(a.clone());
        }
    }
    if out.is_empty() {
        return Err(Error::msg("no profile files given"));
    }
    Ok(without_companions(out))
}

/// Drops a text profile `P` when its JSON companion `P.json` (written by
/// the engine with `DR_HOOK_OPT=json`: the same task, with the full tree)
/// is among the inputs too, so that `drhook merge drhook.prof.*` counts
/// each task once.
fn without_companions(files: Vec<PathBuf>) -> Vec<PathBuf> {
    let names: std::collections::HashSet<std::ffi::OsString> =
        files.iter().map(|f| f.as_os_str().to_owned()).collect();
    files
        .iter()
        .filter(|f| {
            let mut json = f.as_os_str().to_owned();
            json.push(".json");
            !names.contains(&json)
        })
        .cloned()
        .collect()
}

/// Sort key: the name with its digit runs compared as numbers.
fn natural_key(p: &Path) -> Vec<(String, u128)> {
    natural_key_str(&p.to_string_lossy())
}

/// [`natural_key`] of a text (`drhook.prof.2` before `drhook.prof.10`).
pub(crate) fn natural_key_str(s: &str) -> Vec<(String, u128)> {
    let mut v = Vec::new();
    let mut text = String::new();
    let mut num: Option<u128> = None;
    for c in s.chars() {
        if let Some(d) = c.to_digit(10) {
            num = Some(
                num.unwrap_or(0)
                    .saturating_mul(10)
                    .saturating_add(u128::from(d)),
            );
        } else {
            if let Some(n) = num.take() {
                v.push((std::mem::take(&mut text), n));
            }
            text.push(c);
        }
    }
    v.push((text, num.map_or(0, |n| n + 1)));
    v
}

/// Reads every task of one file (a text profile is one task; a JSON
/// document may hold several).
pub fn load(path: &Path, options: ReadOptions) -> Result<Vec<Profile>> {
    match sniff(path)? {
        Format::Text | Format::MemoryText | Format::IoText => Ok(vec![text::read(path, options)?]),
        Format::Json => {
            let s = std::fs::read_to_string(path).map_err(|e| Error::io(path, &e))?;
            super::json::parse(&s, path)
        }
        Format::Other => {
            // Let the text reader say precisely what is wrong (empty file,
            // binary data, first line).
            text::read(path, options).map(|p| vec![p])
        }
    }
}

/// One file opened for streaming: text rows one at a time, or the tasks of
/// a JSON document.
pub enum Source {
    /// A text profile.
    Text(Box<RowReader<std::io::BufReader<std::fs::File>>>),
    /// The tasks of a JSON document.
    Json(Vec<Profile>),
}

/// Opens a file for streaming.
pub fn open(path: &Path, options: ReadOptions) -> Result<Source> {
    match sniff(path)? {
        Format::Json => {
            let s = std::fs::read_to_string(path).map_err(|e| Error::io(path, &e))?;
            Ok(Source::Json(super::json::parse(&s, path)?))
        }
        _ => Ok(Source::Text(Box::new(RowReader::open(path, options)?))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn natural_order() {
        let mut v: Vec<PathBuf> = ["d/drhook.prof.10", "d/drhook.prof.2", "d/drhook.prof.1"]
            .iter()
            .map(PathBuf::from)
            .collect();
        v.sort_by_key(|x| natural_key(x));
        assert_eq!(
            v,
            ["d/drhook.prof.1", "d/drhook.prof.2", "d/drhook.prof.10"]
                .iter()
                .map(PathBuf::from)
                .collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_json_companion_replaces_its_text_profile() {
        let v: Vec<PathBuf> = [
            "d/drhook.prof.1",
            "d/drhook.prof.1.json",
            "d/drhook.prof.2",
            "e/drhook.prof.3.json",
            "drhook.prof.3",
        ]
        .iter()
        .map(PathBuf::from)
        .collect();
        let kept: Vec<String> = without_companions(v)
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        assert_eq!(
            kept,
            [
                "d/drhook.prof.1.json",
                "d/drhook.prof.2",
                "e/drhook.prof.3.json",
                "drhook.prof.3"
            ]
        );
    }

    #[test]
    fn sniffing() {
        assert_eq!(
            sniff_bytes(b"Profiling information for program='x', proc#1:\n"),
            Format::Text
        );
        assert_eq!(
            sniff_bytes(b"  {\"format\": \"drhook-profile\", \"version\": 1"),
            Format::Json
        );
        assert_eq!(sniff_bytes(b"{\"a\": 1}"), Format::Other);
        assert_eq!(sniff_bytes(b"\x7fELF"), Format::Other);
    }
}
