//! One module per subcommand: its arguments (clap) and `run`. The shared
//! parts are here: options every command takes, where output goes, and
//! exit statuses.

pub mod diff;
pub mod dump;
pub mod flamegraph;
pub mod io;
pub mod json;
pub mod merge;
pub mod procs;
pub mod report;
pub mod run;
pub mod top;
pub mod trace;
pub mod wrap;

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::profile::text::ReadOptions;
use crate::profile::{Profile, input};

/// Exit status: success.
pub const EXIT_OK: u8 = 0;
/// Exit status of `drhook diff --threshold` when a routine grew too much.
pub const EXIT_REGRESSION: u8 = 1;
/// Exit status for bad input, bad arguments or failed output.
pub const EXIT_ERROR: u8 = 2;

/// Options of every command.
#[derive(Clone, Debug, Default, clap::Args)]
pub struct Global {
    /// Routine names are packed call paths `ROOT/.../NAME`
    /// (profiles written with DR_HOOK_CALLPATH_PACKED=1).
    #[arg(long, global = true)]
    pub packed_callpath: bool,
}

impl Global {
    /// Reader options.
    pub fn read_options(&self) -> ReadOptions {
        ReadOptions {
            packed_callpath: self.packed_callpath,
        }
    }
}

/// Reads every task of every file (directories expanded).
pub fn load_all(args: &[PathBuf], g: &Global) -> Result<Vec<Profile>> {
    let mut out = Vec::new();
    for f in input::expand(args)? {
        out.extend(input::load(&f, g.read_options())?);
    }
    Ok(out)
}

/// Writes `bytes` to `path` (created exclusively under a temporary name and
/// renamed into place: a link another user planted there is replaced,
/// never written through; see [`drhook_secure::file::NewFile::create_output`]),
/// or to stdout when `path` is `None` or `-`.
/// A closed stdout (`| head`) is not an error.
pub fn emit(path: Option<&Path>, bytes: &[u8]) -> Result<()> {
    match path {
        Some(p) if p != Path::new("-") => {
            drhook_secure::file::write_output(p, bytes).map_err(|e| Error::io(p, &e))
        }
        _ => {
            let mut out = std::io::stdout().lock();
            match out.write_all(bytes).and_then(|()| out.flush()) {
                Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                    Err(Error::msg(format!("writing to stdout: {e}")))
                }
                _ => Ok(()),
            }
        }
    }
}

/// Warns on stderr.
pub fn warn(msg: &str) {
    eprintln!("drhook: warning: {msg}");
}
