//! Writing the profile: collecting the live trees, formatting, atomic
//! writing (temporary file + rename), and the write at process exit.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, Ordering};

use super::compute::Summary;
use super::compute::{self, Params};
use super::snapshot;
use super::text::{Header, format_counters_csv, format_header, format_profile};
use crate::config::options::ProfileKind;
use crate::setup::Engine;
use crate::sys::clock::{self, ClockPair, ticks_per_second};
use crate::sys::sysinfo::{LocalTime, mem_usage};
use crate::tree::{site, thread};

/// Builds the header and rows from the live engine.
fn collect(e: &Engine) -> (Header, Summary) {
    let now = ClockPair::now(e.wall_source);
    let routines = site::routine_table();
    let mut snaps = Vec::new();
    thread::for_each_thread(|td| {
        snaps.push(snapshot::snapshot(
            td,
            &routines.routine_of_site,
            now.ticks,
            e.mode,
        ))
    });
    snaps.sort_by_key(|t| t.tid);
    let o = &e.config.options;
    let kind = o.profile.unwrap_or(ProfileKind::Wall);
    let layout = crate::metrics::layout();
    let counters = layout.find("counters");
    let params = Params {
        kind,
        self_mode: o.self_mode,
        callpath: o.callpath.then_some(e.config.callpath_depth),
        routine_names: &routines.names,
        ticks_per_sec: ticks_per_second(e.wall_source, e.start, now),
        overhead: e.overhead,
        aggs: &layout.aggs,
    };
    let summary = compute::compute(&snaps, &params);
    let header = Header {
        program: e.program.clone(),
        myproc: crate::setup::task(e).myproc,
        nproc: crate::setup::task(e).nproc,
        started: LocalTime::from_unix(crate::setup::start_unix(e)).stamp(),
        ended: LocalTime::from_unix(clock::realtime().0).stamp(),
        mem: mem_usage(),
        kind,
        clusterinfo: o.clusterinfo,
        sizeinfo: !o.nosize,
        callpath_indent: e.config.callpath_indent,
        callpath_packed: e.config.callpath_packed,
        limit: e.config.profile_limit,
        counters: match counters {
            Some(_) => crate::metrics::counters::events().to_vec(),
            None => Vec::new(),
        },
        counters_at: counters.map_or(0, |c| c.offset),
    };
    (header, summary)
}

/// Why a profile could not be written.
#[derive(Debug)]
pub struct ProfileError {
    /// The profile path.
    pub path: PathBuf,
    /// The underlying error.
    pub source: std::io::Error,
}

impl std::fmt::Display for ProfileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "unable to write the profile to '{}': {}",
            self.path.display(),
            self.source
        )
    }
}

impl std::error::Error for ProfileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Writes `contents` to `path` through a temporary file in the same
/// directory and a rename, so readers never see a partial profile.
pub(crate) fn write_atomically(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let file_name = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{file_name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(contents)?;
        f.flush()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

static WRITE_LOCK: Mutex<()> = Mutex::new(());

/// Holds the profile writer's lock across a `fork`, so that the child does
/// not inherit it locked by a thread it does not have.
pub(crate) fn lock_for_fork() -> std::sync::MutexGuard<'static, ()> {
    WRITE_LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// Writes this task's profile now (`DR_HOOK_OPT=prof` or `cpuprof`), with
/// the numbers so far; the write at process exit still happens, with the
/// final numbers. Returns the path written, or `None` when Dr.Hook is off,
/// no profile was asked for, or `DR_HOOK_PROFILE_PROC` selects another task.
/// A failure is also reported once on stderr, naming the path.
pub(crate) fn write_profile() -> Result<Option<PathBuf>, ProfileError> {
    let Some(e) = crate::setup::engine_if_ready() else {
        return Ok(None);
    };
    if !super::name::writes_profile(e) {
        return Ok(None);
    }
    let _serial = WRITE_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let path = super::name::profile_path(e);
    if let Some(dir) = e
        .config
        .profile_prefix
        .as_deref()
        .filter(|p| p.ends_with('/'))
    {
        let _ = std::fs::create_dir_all(dir);
    }
    let (header, summary) = collect(e);
    let text = format_profile(&header, &summary);
    let f = "write_profile";
    // The other processes of a run (fork children, programs started by the
    // instrumented one) write their profiles without a word.
    if crate::setup::is_main() {
        crate::diag!(
            f,
            "Writing profiling information of proc#{} into file '{}'",
            header.myproc,
            path.display()
        );
        if header.myproc == 1 {
            crate::diag::raw_line(format_header(&header, &summary, false).trim_end_matches('\n'));
        }
    }
    let written = write_atomically(&path, text.as_bytes()).and_then(|()| {
        if header.counters.is_empty() {
            return Ok(());
        }
        let mut csv = path.clone().into_os_string();
        csv.push(".csv");
        write_atomically(
            Path::new(&csv),
            format_counters_csv(&header, &summary).as_bytes(),
        )
    });
    match written {
        Ok(()) => Ok(Some(path)),
        Err(source) => {
            let err = ProfileError { path, source };
            crate::diag!(f, "Error: {err}");
            Err(err)
        }
    }
}

/// 0 while the process runs; 1 once its profile has been written or
/// given up for good (see [`claim_end`]).
static ENDED: AtomicU8 = AtomicU8::new(0);

/// Claims the end of this process's profile: true for the first caller
/// only, so that of the paths that end a process (return from `main`,
/// `exit`, `_exit`, `abort`, a fatal signal, `exec`, `MPI_Finalize`) exactly
/// one writes it. Async-signal-safe.
pub(crate) fn claim_end() -> bool {
    ENDED
        .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
        .is_ok()
}

/// Makes the profile open again: after an `exec` that failed (the process
/// goes on, its profile will be written when it really ends), in a `fork`
/// child (a new process).
pub(crate) fn reopen() {
    ENDED.store(0, Ordering::Release);
}

/// Ends this process's profile: writes it unless it was already ended, or
/// `failure` (non-zero exit status, abort) and `DRHOOK_PROFILE_ON_FAILURE=0`.
/// Returns the path written.
pub(crate) fn end_profile(failure: bool) -> Option<PathBuf> {
    let e = crate::setup::engine_if_ready()?;
    if !claim_end() || (failure && !e.config.profile_on_failure) {
        return None;
    }
    write_profile().ok().flatten()
}

extern "C" fn write_profile_at_exit(status: libc::c_int, _arg: *mut libc::c_void) {
    // Never unwind into libc.
    let _ = std::panic::catch_unwind(|| end_profile(status != 0));
}

#[cfg(target_env = "gnu")]
unsafe extern "C" {
    fn on_exit(
        f: extern "C" fn(libc::c_int, *mut libc::c_void),
        arg: *mut libc::c_void,
    ) -> libc::c_int;
}

/// `atexit` with the exit status (glibc's `on_exit`), elsewhere `atexit`
/// with status 0.
fn register_exit_handler() -> libc::c_int {
    #[cfg(target_env = "gnu")]
    // SAFETY: registering a plain `extern "C"` function is always valid.
    unsafe {
        on_exit(write_profile_at_exit, std::ptr::null_mut())
    }
    #[cfg(not(target_env = "gnu"))]
    {
        extern "C" fn plain() {
            write_profile_at_exit(0, std::ptr::null_mut())
        }
        // SAFETY: as above.
        unsafe { libc::atexit(plain) }
    }
}

/// Registers the at-exit profile writer (once).
pub(crate) fn register_at_exit() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if register_exit_handler() != 0 {
            crate::diag!(
                "drhook_init",
                "Warning - atexit() failed: the profile will only be written by write_profile()"
            );
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_and_unwritable_path() {
        let dir = std::env::temp_dir().join(format!("drhook-write-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("prof.1");
        write_atomically(&p, b"hello").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "hello");
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            1,
            "no temporary file left behind"
        );
        let bad = dir.join("no/such/dir/prof.1");
        assert!(write_atomically(&bad, b"x").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
