//! The one error type of the command: what went wrong, in which file and
//! on which line.

use std::fmt;
use std::path::{Path, PathBuf};

/// An error reading or writing a profile or a report.
///
/// Displayed as `file:line: message` (or `file: message`, or just the
/// message), the way compilers name a place in a file.
#[derive(Debug)]
pub struct Error {
    /// The file concerned, if any.
    pub path: Option<PathBuf>,
    /// The 1-based line in that file, if known.
    pub line: Option<usize>,
    /// What went wrong.
    pub message: String,
}

impl Error {
    /// An error with a message only.
    pub fn msg(message: impl Into<String>) -> Error {
        Error {
            path: None,
            line: None,
            message: message.into(),
        }
    }

    /// An error about a file.
    pub fn file(path: &Path, message: impl Into<String>) -> Error {
        Error {
            path: Some(path.to_path_buf()),
            line: None,
            message: message.into(),
        }
    }

    /// An I/O error on a file.
    pub fn io(path: &Path, e: &std::io::Error) -> Error {
        if e.kind() == std::io::ErrorKind::IsADirectory || path.is_dir() {
            return Error::file(
                path,
                "a directory, not a profile file (merge and diff read the profiles of a directory)",
            );
        }
        Error::file(path, e.to_string())
    }

    /// Sets the file if it is not known yet.
    pub fn in_file(mut self, path: &Path) -> Error {
        if self.path.is_none() {
            self.path = Some(path.to_path_buf());
        }
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.path, self.line) {
            (Some(p), Some(l)) => write!(f, "{}:{l}: {}", p.display(), self.message),
            (Some(p), None) => write!(f, "{}: {}", p.display(), self.message),
            (None, Some(l)) => write!(f, "line {l}: {}", self.message),
            (None, None) => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for Error {}

/// Result with [`Error`].
pub type Result<T> = std::result::Result<T, Error>;
