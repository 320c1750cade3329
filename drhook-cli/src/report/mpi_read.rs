//! Reading the MPI profiles `drhook.prof.N-mpi` (`DR_HOOK_OPT=mpi`) for
//! `drhook merge`: per row, the MPI function's name (without its thread
//! and call path) and its columns in `drhook_merge::ColMerger::add`'s
//! order for [`drhook_merge::ColKind::Mpi`] — time, calls, bytes sent and
//! received, mean communicator size, the histogram's eight bins — as
//! printed.

use std::io::{BufRead, Read};
use std::path::Path;

use crate::error::{Error, Result};

/// The first line's start.
const FIRST: &str = "MPI-profiling information for program='";

/// Numbers before a row's name: #, MPI-%, time, calls, sent, received,
/// communicator size, eight bins.
const NUMBERS: usize = 15;

/// Whether the file at `path` is an MPI profile (its first line).
pub fn is_mpi_profile(path: &Path) -> bool {
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    let mut first = Vec::new();
    std::io::BufReader::new(f)
        .take(256)
        .read_until(b'\n', &mut first)
        .is_ok()
        && first.starts_with(FIRST.as_bytes())
}

/// One MPI profile: its task (`proc#`) and rows.
pub struct MpiProfile {
    /// The task.
    pub proc: u32,
    /// Per row: the function's name and its 13 values.
    pub rows: Vec<(String, [f64; 13])>,
}

/// Reads the MPI profile at `path`.
pub fn read(path: &Path) -> Result<MpiProfile> {
    let text = std::fs::read(path).map_err(|e| Error::file(path, e.to_string()))?;
    let text = String::from_utf8(text)
        .map_err(|_| Error::file(path, "not UTF-8 text: not a Dr.Hook MPI profile"))?;
    let mut lines = text.lines().enumerate();
    let bad = |n: usize, what: &str| Error::file(path, format!("line {}: {what}", n + 1));
    let (n, first) = lines
        .next()
        .ok_or_else(|| Error::file(path, "empty file: not a Dr.Hook MPI profile"))?;
    let proc = first
        .strip_prefix(FIRST)
        .and_then(|r| r.rsplit_once("', proc#"))
        .and_then(|(_, p)| p.strip_suffix(':')?.parse::<u32>().ok())
        .ok_or_else(|| {
            bad(
                n,
                "expected \"MPI-profiling information for program='NAME', proc#N:\"",
            )
        })?;
    // The header's lines, a blank line, the column header.
    for (n, l) in lines.by_ref() {
        if l.is_empty() {
            break;
        }
        if !l.starts_with('\t') {
            return Err(bad(n, "unexpected line in the header"));
        }
    }
    match lines.next() {
        Some((_, l)) if l.trim_start().starts_with("#    MPI-%") => {}
        Some((n, _)) => return Err(bad(n, "expected the column header \"#    MPI-% ...\"")),
        None => return Err(Error::file(path, "truncated: no column header")),
    }
    let mut rows = Vec::new();
    for (n, l) in lines {
        let toks: Vec<&str> = l.split_whitespace().collect();
        if toks.len() <= 1 {
            // A blank line or a caller's name (call paths not packed).
            continue;
        }
        if toks.len() != NUMBERS + 1 {
            return Err(bad(n, "malformed row: expected 15 numbers and a name"));
        }
        let mut v = [0f64; 13];
        for (k, t) in toks[2..NUMBERS].iter().enumerate() {
            v[k] = t
                .parse()
                .map_err(|_| bad(n, &format!("malformed row: \"{t}\" is not a number")))?;
        }
        // `[path/]NAME@THREAD`.
        let name = toks[NUMBERS];
        let name = name.rsplit_once('@').map_or(name, |(n, _)| n);
        let name = name.rsplit_once('/').map_or(name, |(_, n)| n);
        rows.push((name.to_string(), v));
    }
    Ok(MpiProfile { proc, rows })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_rows_with_and_without_call_paths() {
        let d = std::env::temp_dir().join(format!("drhook-mpi-read-{}", std::process::id()));
        let text = "MPI-profiling information for program='./a', proc#3:\n\
            \tMPI : 5 calls\n\n\
            \x20   #    MPI-%    Time(sec)      #Calls      Sent(bytes)      Recv(bytes)  Comm-size         0      1-64     65-1K    1K-16K  16K-256K   256K-4M    4M-64M      64M+   Routine@<thread-id>\n\n\
            \x20   1    75.71     0.002059           3                0                0        4.0         0         0         0         0         0         0         0         0   MPI_Barrier@1\n\
            \x20                                                                                                                       main\n\
            \x20   2     9.30     0.000253           2             2400                0        0.0         0         0         2         0         0         0         0         0   main/MPI_Send@2\n";
        std::fs::write(&d, text).unwrap();
        assert!(is_mpi_profile(&d));
        let p = read(&d).unwrap();
        std::fs::remove_file(&d).unwrap();
        assert_eq!(p.proc, 3);
        assert_eq!(p.rows.len(), 2);
        assert_eq!(p.rows[0].0, "MPI_Barrier");
        assert_eq!(p.rows[0].1[..5], [0.002059, 3.0, 0.0, 0.0, 4.0]);
        assert_eq!(p.rows[1].0, "MPI_Send");
        assert_eq!(p.rows[1].1[2], 2400.0);
        assert_eq!(p.rows[1].1[7], 2.0);
    }
}
