//! `drhook run`'s output directory (the default; `--out-dir=DIR` names
//! it, `--no-out-dir`, `--prefix` or a profile name do without): one per
//! invocation, named
//! after the command and the time (`drhook.<command>.<YYYYMMDD-HHMMSS>`),
//! anchored at the launch directory, so that every process of the run
//! (whatever its working directory: `make -C dir`) writes there as
//! `<command>.<pid>.<file>` (`DRHOOK_PROFILE_PREFIX` set to the absolute
//! path), with JSON companions (their `metadata` has each process's pid,
//! parent pid and command line: `drhook procs` makes the index of the
//! process tree from them).

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// `YYYYMMDD-HHMMSS`, local time, of now.
fn stamp() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as libc::time_t;
    // SAFETY: an all-zero `tm` is a valid value of this plain C struct.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    // SAFETY: both pointers are valid for the call; localtime_r is
    // thread-safe and writes only `tm`.
    if unsafe { libc::localtime_r(&now, &mut tm) }.is_null() {
        return now.to_string();
    }
    format!(
        "{:04}{:02}{:02}-{:02}{:02}{:02}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec
    )
}

/// The command's name for a file name: the file name of `program`, with
/// anything but letters, digits, `.`, `_`, `-`, `+` as `_`.
fn command_name(program: &OsStr) -> String {
    let base = Path::new(program)
        .file_name()
        .map_or_else(|| program.as_bytes(), |n| n.as_bytes());
    let s: String = String::from_utf8_lossy(base)
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-+".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.is_empty() { "program".into() } else { s }
}

/// Creates the run's directory (`dir`, or the default name in the working
/// directory; made absolute) and returns it; only names it unless `make`
/// (`--dry-run`). The default name gets `.2`, `.3`, ... when a run of the
/// same command started in the same second.
pub fn create(dir: Option<&Path>, program: &OsStr, make: bool) -> Result<PathBuf> {
    let cwd =
        std::env::current_dir().map_err(|e| Error::msg(format!("the working directory: {e}")))?;
    if let Some(d) = dir {
        let d = cwd.join(d);
        if make {
            drhook_secure::dir::create_dir_all(&d).map_err(|e| Error::io(&d, &e))?;
        }
        return Ok(d);
    }
    let base = format!("drhook.{}.{}", command_name(program), stamp());
    for n in 1..1000 {
        let d = if n == 1 {
            cwd.join(&base)
        } else {
            cwd.join(format!("{base}.{n}"))
        };
        if !make {
            if d.symlink_metadata().is_err() {
                return Ok(d);
            }
            continue;
        }
        match std::fs::create_dir(&d) {
            Ok(()) => return Ok(d),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(Error::io(&d, &e)),
        }
    }
    Err(Error::msg(format!("{base}: too many runs in one second")))
}

/// The variables that send every process's files to `dir`: the prefix
/// (`dir/`) and `json` among the options (`opt`: what `DR_HOOK_OPT` will
/// be), unless it is there.
pub fn variables(dir: &Path, opt: Option<&OsStr>) -> Vec<(String, OsString)> {
    let mut prefix = dir.as_os_str().to_owned();
    prefix.push("/");
    let mut v = vec![("DRHOOK_PROFILE_PREFIX".to_string(), prefix)];
    let opt = opt.unwrap_or(OsStr::new("prof"));
    let has_json = opt
        .as_bytes()
        .split(|b| b",/ \t".contains(b))
        .any(|t| t.eq_ignore_ascii_case(b"json"));
    if !has_json {
        let mut o = opt.to_owned();
        o.push(if opt.is_empty() { "json" } else { ",json" });
        v.push(("DR_HOOK_OPT".into(), o));
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_variables() {
        assert_eq!(command_name(OsStr::new("/usr/bin/c++")), "c++");
        assert_eq!(command_name(OsStr::new("a b")), "a_b");
        let v = variables(Path::new("/r/d"), Some(OsStr::new("cpuprof")));
        assert_eq!(v[0].1, "/r/d/");
        assert_eq!(v[1], ("DR_HOOK_OPT".into(), "cpuprof,json".into()));
        assert_eq!(
            variables(Path::new("/d"), Some(OsStr::new("prof,JSON"))).len(),
            1
        );
    }
}
