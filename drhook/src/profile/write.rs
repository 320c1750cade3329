//! Writing the profile: collecting the live trees, formatting, atomic
//! writing (temporary file + rename), and the write at process exit — the
//! text profile, its JSON companion (`json`) and the timeline (`trace`).
//! A process's profile is ended exactly once ([`claim_end`]), whichever
//! way the process ends.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU8, Ordering};

use super::compute::{self, NodeFigures, Params, Summary};
use super::json::{self, TreeWriter};
use super::snapshot::{self, ThreadSnap};
use super::text::{Header, format_header, write_counters_csv, write_profile_text};
use crate::config::options::ProfileKind;
use crate::setup::Engine;
use crate::sys::clock::{self, ClockPair, ticks_per_second};
use crate::sys::sysinfo::{LocalTime, mem_usage};
use crate::tree::{site, thread};
use drhook_secure::file::NewFile;

/// Builds the header and rows from the live engine and hands them to
/// `write`. Each thread's tree is copied and reduced to its per-node
/// figures and rows before the next one is copied, so the write holds one
/// thread's copy at a time, plus the rows; `each_thread` sees every
/// thread's copy with its figures (the JSON tree is streamed from there),
/// and `write` streams the rows.
fn collect<R>(
    e: &Engine,
    mut each_thread: impl FnMut(&ThreadSnap, &NodeFigures, &Params<'_>),
    write: impl FnOnce(&Header, &Summary<'_>) -> R,
) -> R {
    let now = ClockPair::now(e.wall_source);
    let routines = site::routine_table();
    let o = &e.config.options;
    let kind = o.profile.unwrap_or(ProfileKind::Wall);
    let layout = crate::metrics::layout();
    let counters = layout.find("counters");
    // The live trees, the live threads without a tree, then the threads
    // that ended: a thread that ends or makes its tree meanwhile waits for
    // the locks, so it is seen once.
    let ended = super::ended::hold();
    let calls = calls_so_far(&ended);
    let params = Params {
        kind,
        self_mode: o.self_mode,
        callpath: o.callpath.then_some(e.config.callpath_depth),
        routine_names: &routines.names,
        ticks_per_sec: ticks_per_second(e.wall_source, e.start, now),
        overhead: measured_overhead(e, calls),
        aggs: &layout.aggs,
    };
    let mut rows = compute::Builder::new(&params);
    let mut add = |snap: &ThreadSnap| {
        let figures = NodeFigures::of(snap, &params);
        each_thread(snap, &figures, &params);
        rows.add_thread_with(snap, &figures);
    };
    let of_site = &routines.routine_of_site;
    thread::for_each_thread(|td| add(&snapshot::snapshot(td, of_site, now.ticks, e.mode)));
    super::ended::each_untreed(&ended, of_site, now.ticks, e.mode, &mut add);
    super::ended::each(&ended, of_site, &mut add);
    drop(ended);
    let mut summary = rows.finish();
    pad_thread_lines(&mut summary, crate::sys::sysinfo::thread_count_hint(), kind);
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
        elapsed_s: Some(crate::setup::elapsed_s(e, now.ns)),
    };
    write(&header, &summary)
}

/// Calls of every thread so far (what the measured overhead corrects).
fn calls_so_far(ended: &super::ended::Held) -> u64 {
    let mut calls = super::ended::calls(ended) + super::ended::untreed_calls(ended);
    thread::for_each_thread(|td| {
        calls += (1..td.arena.len())
            .filter_map(|i| td.arena.get(i))
            .map(|n| n.calls.load(Ordering::Relaxed))
            .sum::<u64>();
    });
    calls
}

/// The instrumentation's cost per call pair, measured at the first write
/// (said once, unless silent).
fn measured_overhead(e: &Engine, calls: u64) -> crate::tree::overhead::Overhead {
    let (o, fresh) = e.overhead(calls);
    if fresh && !e.config.silent && e.mode & (crate::tree::bits::WALL | crate::tree::bits::CPU) != 0
    {
        crate::diag!(
            "write_profile",
            "measured instrumentation cost per call pair: {}",
            o.describe()
        );
    }
    if fresh && crate::metrics::layout().find("counters").is_some() {
        counters_cost_warning(e, calls, &o);
    }
    o
}

/// With `hpmprof`, says (even when silent) when reading the counters took
/// a noticeable part of the run: the cost is removed from the times as
/// measured, but what a call really pays for its reads varies, and the
/// rest shows as the callers' self time.
fn counters_cost_warning(e: &Engine, calls: u64, o: &crate::tree::overhead::Overhead) {
    let pair_ns = o.wall_out * o.tick_ns;
    let cost_s = calls as f64 * pair_ns * 1e-9;
    let elapsed_s = crate::sys::clock::monotonic_ns().saturating_sub(e.start.ns) as f64 * 1e-9;
    if cost_s > 0.01 && cost_s > 0.05 * elapsed_s {
        crate::diag!(
            "write_profile",
            "Warning: hpmprof: the instrumentation with its counter reads cost about {cost_s:.2} s of this run's {elapsed_s:.2} s ({calls} calls, {:.2} us per call); that cost is subtracted from the times as measured, but routines that make many short calls may still show part of it as self time: take their times from a run without hpmprof",
            pair_ns / 1e3
        );
    }
}

/// The reference's header has one line per thread 1..N, N =
/// `omp_get_max_threads()` at start-up, used or not. When the program
/// declared such a count (`hint` > 0: C and Fortran programs with OpenMP),
/// adds a zero line for each thread number up to `max(hint, highest
/// number seen)` that made no call (at most 4096 of them). Without it
/// (Rust programs) the lines are the threads that made calls.
fn pad_thread_lines(s: &mut Summary<'_>, hint: u32, kind: ProfileKind) {
    if hint == 0 {
        return;
    }
    let highest = s.threads.iter().map(|t| t.tid).max().unwrap_or(0);
    let n = highest.max(hint);
    let missing = (n as usize).saturating_sub(s.threads.len());
    if missing == 0 || missing > 4096 {
        return;
    }
    for tid in 1..=n {
        if !s.threads.iter().any(|t| t.tid == tid) {
            s.threads.push(compute::ThreadLine {
                tid,
                secs: 0.0,
                pct: 0.0,
                self_ticks: (kind == ProfileKind::Wall).then_some(0),
                lifetime_ticks: 0,
                threads: 1,
                first_routine: 0,
            });
        }
    }
    s.threads.sort_by_key(|t| t.tid);
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

/// `DRHOOK_FSYNC=1`: files are made durable before they are renamed
/// into place (set at start-up).
static FSYNC: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes every file written from now on durable before its rename
/// (`DRHOOK_FSYNC`).
pub(crate) fn set_fsync(on: bool) {
    FSYNC.store(on, Ordering::Relaxed);
}

/// A file written through a temporary file in the same directory, created
/// exclusively under an unpredictable name (`.<name>.<random>.tmp`, see
/// [`drhook_secure::file`]) and renamed into place by
/// [`AtomicFile::commit`], so readers never see a partial file and a link
/// planted at either name is never written through; dropped without a
/// commit, the temporary file is removed. A directory another user could
/// have planted is refused ([`drhook_secure::dir::check_not_planted`]):
/// the writers then fall back to the working directory or `$TMPDIR`.
pub(crate) struct AtomicFile {
    path: PathBuf,
    out: Option<std::io::BufWriter<NewFile>>,
}

impl AtomicFile {
    /// Creates the temporary file for `path`.
    pub(crate) fn create(path: &Path) -> std::io::Result<AtomicFile> {
        drhook_secure::dir::check_not_planted(dir_of(path))?;
        let f = NewFile::create(path)?;
        Ok(AtomicFile {
            path: path.to_path_buf(),
            out: Some(std::io::BufWriter::with_capacity(1 << 16, f)),
        })
    }

    /// Where the file goes.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The buffered writer of the temporary file.
    pub(crate) fn writer(&mut self) -> &mut dyn std::io::Write {
        self.out.as_mut().expect("not committed yet")
    }

    /// Flushes and renames the file into place (after an `fsync` with
    /// `DRHOOK_FSYNC=1`: a rename alone already never shows a partial
    /// file, and a flush to disk costs a process's end milliseconds).
    pub(crate) fn commit(mut self) -> std::io::Result<()> {
        let out = self.out.take().expect("committed once");
        let f = out.into_inner().map_err(|e| e.into_error())?;
        f.commit(FSYNC.load(Ordering::Relaxed))
    }
}

/// Writes what `contents` writes (through a buffer) to `path` through a
/// temporary file in the same directory and a rename, so readers never see
/// a partial profile.
pub(crate) fn write_atomically(
    path: &Path,
    contents: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut f = AtomicFile::create(path)?;
    contents(f.writer())?;
    f.commit()
}

/// The first file of `path` and its [`fallback_paths`] that can be
/// created, or the error of `path` itself.
pub(crate) fn create_with_fallback(path: &Path) -> Result<AtomicFile, std::io::Error> {
    let first = match AtomicFile::create(path) {
        Ok(f) => return Ok(f),
        Err(e) => e,
    };
    for other in fallback_paths(path) {
        if let Ok(f) = AtomicFile::create(&other) {
            return Ok(f);
        }
    }
    Err(first)
}

/// The directory a profile path is written in.
fn dir_of(path: &Path) -> &Path {
    drhook_secure::file::dir_of(path)
}

/// Whether `dir` is a directory this process can create files in.
fn writable_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let meta = std::fs::metadata(dir)?;
    if !meta.is_dir() {
        return Err(std::io::Error::from_raw_os_error(libc::ENOTDIR));
    }
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: a NUL-terminated path; access only reads it.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Checks at start-up that the profile can be written where it is asked
/// for, so that a wrong path is reported at once rather than after a run
/// of hours; printed even with `DR_HOOK_SILENT` (a profile at risk is an
/// error). The write at exit falls back to another directory anyway.
///
/// A directory `prefix` (`DRHOOK_PROFILE_PREFIX` ending in `/`) is created
/// when the profile is written: missing now, it is no error when the
/// nearest directory above it that exists can be written in.
pub(crate) fn check_profile_dir(path: &str, prefix: Option<&str>) {
    let path = Path::new(path);
    let mut r = writable_dir(dir_of(path));
    if let (Err(e), Some(p)) = (&r, prefix.filter(|p| p.ends_with('/')))
        && e.kind() == std::io::ErrorKind::NotFound
        && dir_of(path).starts_with(p)
        && let Some(above) = Path::new(p)
            .ancestors()
            .skip(1)
            .find(|a| a.as_os_str().is_empty() || std::fs::symlink_metadata(a).is_ok())
    {
        r = writable_dir(if above.as_os_str().is_empty() {
            Path::new(".")
        } else {
            above
        });
    }
    if let Err(e) = r {
        crate::diag!(
            "drhook_init",
            "Error: the profile cannot be written to '{}' (directory '{}': {e}); unless that is fixed before the end of the run, it will be written to the working directory or $TMPDIR instead",
            path.display(),
            dir_of(path).display()
        );
    }
}

/// Where a profile goes when its own path cannot be written: the same file
/// name in the working directory, then in `$TMPDIR` (or `/tmp`).
fn fallback_paths(path: &Path) -> Vec<PathBuf> {
    let name = path
        .file_name()
        .map_or_else(|| "drhook.prof".into(), |n| n.to_os_string());
    let mut out = Vec::new();
    if let Ok(cwd) = std::env::current_dir() {
        out.push(cwd.join(&name));
    }
    let tmp = std::env::var_os("TMPDIR")
        .filter(|t| !t.is_empty())
        .map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
    out.push(tmp.join(&name));
    out.retain(|p| p != path);
    out.dedup();
    out
}

static WRITE_LOCK: Mutex<()> = Mutex::new(());

/// Holds the profile writer's lock across a `fork`, so that the child does
/// not inherit it locked by a thread it does not have.
pub(crate) fn lock_for_fork() -> std::sync::MutexGuard<'static, ()> {
    WRITE_LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// Writes this task's profile now (`DR_HOOK_OPT=prof` or `cpuprof`), with
/// the numbers so far, and with `json` its JSON companion, with `trace`
/// the timeline; the write at process exit still happens, with the final
/// numbers. Returns the path of the profile written, or `None` when
/// Dr.Hook is off, no profile was asked for, or `DR_HOOK_PROFILE_PROC`
/// selects another task. A failure is also reported once on stderr,
/// naming the path.
/// In a dump's copy of the process (`crash::dump`): the profile goes to
/// `<profile>.partial`, without its JSON companion and timeline.
static PARTIAL: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Makes this process's profile writes partial ones (see [`PARTIAL`]).
pub(crate) fn set_partial() {
    PARTIAL.store(true, std::sync::atomic::Ordering::Relaxed);
}

fn partial() -> bool {
    PARTIAL.load(std::sync::atomic::Ordering::Relaxed)
}

pub(crate) fn write_profile() -> Result<Option<PathBuf>, ProfileError> {
    write_now(false)
}

/// [`write_profile`]; at the end of the process (`at_end`) with the
/// summary (`DR_HOOK_OPT=summary`).
fn write_now(at_end: bool) -> Result<Option<PathBuf>, ProfileError> {
    let Some(e) = crate::setup::engine_if_ready() else {
        return Ok(None);
    };
    let _serial = WRITE_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    let _own = thread::internal_work();
    // A file-size limit or a closed pipe fails the write (reported), and
    // raises no signal that would end the program.
    let _held = crate::sys::held::OwnWrites::hold();
    let summary = at_end && super::summary::wanted(e);
    let result = if super::name::writes_profile(e) {
        write_profile_and_json(e, summary)
    } else {
        if summary {
            let tree = std::cell::RefCell::new(super::summary::CallTree::new());
            collect(
                e,
                |snap, figures, _| tree.borrow_mut().add(snap, figures),
                |header, rows| {
                    let t = tree.replace(super::summary::CallTree::new());
                    super::summary::write(e, t, header, rows.names);
                },
            );
        }
        Ok(None)
    };
    if e.config.writes_trace() && !partial() {
        super::trace::write_trace(e);
    }
    result
}

fn write_profile_and_json(e: &Engine, summary: bool) -> Result<Option<PathBuf>, ProfileError> {
    let mut path = super::name::profile_path(e);
    if partial() {
        path = suffixed(&path, ".partial");
    }
    if let Some(dir) = e
        .config
        .profile_prefix
        .as_deref()
        .filter(|p| p.ends_with('/'))
        && let Err(err) = drhook_secure::dir::create_dir_all(Path::new(dir))
    {
        // The write below then falls back to the working directory or
        // $TMPDIR, unless the directory is usable after all.
        crate::diag!(
            "write_profile",
            "Error: the profile directory '{dir}' (DRHOOK_PROFILE_PREFIX) cannot be used: {err}"
        );
    }
    // The other processes of a run (fork children, programs started by the
    // instrumented one) write their profiles without a word.
    let silent = e.config.silent || !crate::setup::is_main();
    let json =
        std::cell::RefCell::new((e.config.writes_json() && !partial()).then(|| JsonOut::open(e)));
    let tree = std::cell::RefCell::new(summary.then(super::summary::CallTree::new));
    collect(
        e,
        |snap, figures, params| {
            if let Some(j) = json.borrow_mut().as_mut() {
                j.thread(snap, figures, params);
            }
            if let Some(t) = tree.borrow_mut().as_mut() {
                t.add(snap, figures);
            }
        },
        |header, summary| {
            if let Some(t) = tree.borrow_mut().take() {
                super::summary::write(e, t, header, summary.names);
            }
            let mut what = What {
                prof: e.config.options.profile.is_some() && super::reduce::per_rank_files(e),
                io_at: e
                    .config
                    .options
                    .io
                    .then(|| crate::metrics::layout().find("io").map(|m| m.offset))
                    .flatten(),
                mpi_at: e
                    .config
                    .options
                    .mpi
                    .then(|| crate::metrics::layout().find("mpi").map(|m| m.offset))
                    .flatten(),
                mem_at: e
                    .config
                    .options
                    .mem
                    .memprof
                    .then(|| crate::metrics::layout().find("memory").map(|m| m.offset))
                    .flatten(),
            };
            super::reduce::keep(header, summary, what.mem_at, what.io_at, what.mpi_at);
            if !super::reduce::per_rank_files(e) {
                // Reduced into <profile>-mem.job, -io.job and -mpi.job.
                (what.mem_at, what.io_at, what.mpi_at) = (None, None, None);
            }
            let r = write_collected(path, header, summary, silent, what);
            if let Some(j) = json.borrow_mut().take() {
                j.finish(header, summary, silent);
            }
            r
        },
    )
}

/// The JSON companion being written (`DR_HOOK_OPT=json`): the first error
/// stops it and is reported at the end.
struct JsonOut {
    /// The path asked for (`<profile>.json`).
    wanted: PathBuf,
    myproc: u32,
    state: Result<(AtomicFile, TreeWriter), std::io::Error>,
}

impl JsonOut {
    /// Creates the file (or a fallback) and writes the document's head.
    fn open(e: &Engine) -> JsonOut {
        let wanted = super::name::json_path(e);
        let o = &e.config.options;
        let counters = crate::metrics::layout().find("counters");
        let events: Vec<&str> = match counters {
            Some(_) => crate::metrics::counters::events()
                .iter()
                .map(|ev| ev.name.as_str())
                .collect(),
            None => Vec::new(),
        };
        let started = LocalTime::from_unix(crate::setup::start_unix(e)).stamp();
        let task = crate::setup::task(e);
        let head = json::Head {
            program: &e.program,
            proc: task.myproc,
            nprocs: task.nproc,
            kind: json::kind_name(o.profile.unwrap_or(ProfileKind::Wall)),
            started: &started,
            columns: if events.is_empty() {
                "per_call"
            } else {
                "counters"
            },
            counters: &events,
            clusterinfo: o.clusterinfo,
            sizeinfo: !o.nosize,
            metadata: json::Metadata {
                host: crate::sys::sysinfo::hostname(),
                pid: std::process::id(),
                // SAFETY: getppid has no preconditions and cannot fail.
                ppid: unsafe { libc::getppid() } as u32,
                args: crate::sys::sysinfo::command_line(),
                options: &e.config.meta.options,
                start_unix: crate::setup::start_unix(e),
                user: e
                    .config
                    .meta
                    .pairs
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_str()))
                    .collect(),
            },
        };
        let state = create_with_fallback(&wanted).and_then(|mut f| {
            let tw = TreeWriter::begin(
                f.writer(),
                &head,
                counters.map(|c| (c.offset, events.len())),
            )?;
            Ok((f, tw))
        });
        JsonOut {
            wanted,
            myproc: task.myproc,
            state,
        }
    }

    fn thread(&mut self, snap: &ThreadSnap, figures: &NodeFigures, params: &Params<'_>) {
        if let Ok((f, tw)) = &mut self.state
            && let Err(err) = tw.thread(f.writer(), snap, figures, params)
        {
            self.state = Err(err);
        }
    }

    /// Completes the document and renames it into place; says where.
    fn finish(self, header: &Header, summary: &Summary<'_>, silent: bool) {
        let f = "write_profile";
        let written = self.state.and_then(|(mut file, tw)| {
            tw.finish(file.writer(), header, summary)?;
            let at = file.path().to_path_buf();
            file.commit()?;
            Ok(at)
        });
        match written {
            Ok(at) if at == self.wanted => {
                if !silent {
                    crate::diag!(
                        f,
                        "Writing the JSON profile of proc#{} into file '{}'",
                        self.myproc,
                        at.display()
                    );
                }
            }
            Ok(at) => crate::diag!(
                f,
                "Error: unable to write the JSON profile to '{}'; it was written to '{}' instead",
                self.wanted.display(),
                at.display()
            ),
            Err(err) => crate::diag!(
                f,
                "Error: unable to write the JSON profile to '{}': {err}",
                self.wanted.display()
            ),
        }
    }
}

/// Writes the collected profile (and its counters CSV) to `path`; says so
/// on stderr (with the header block on task 1) unless `silent`. Errors are
/// printed either way.
/// Which files a write makes.
#[derive(Clone, Copy)]
struct What {
    /// The profile itself (a profile token was given).
    prof: bool,
    /// The memory profile `<profile>-mem` (`memprof`), from the memory
    /// words at this offset.
    mem_at: Option<usize>,
    /// The I/O profile `<profile>-io` (`io`), from the I/O words at this
    /// offset.
    io_at: Option<usize>,
    /// The MPI profile `<profile>-mpi` (`mpi`), from the MPI words at
    /// this offset.
    mpi_at: Option<usize>,
}

fn write_collected(
    path: PathBuf,
    header: &Header,
    summary: &Summary<'_>,
    silent: bool,
    what: What,
) -> Result<Option<PathBuf>, ProfileError> {
    let f = "write_profile";
    if !silent && what.io_at.is_some() {
        crate::diag!(
            f,
            "Writing I/O-profiling information of proc#{} into file '{}-io'",
            header.myproc,
            path.display()
        );
    }
    if !silent && what.mem_at.is_some() {
        crate::diag!(
            f,
            "Writing memory-profiling information of proc#{} into file '{}-mem'",
            header.myproc,
            path.display()
        );
    }
    if !what.prof {
        return write_mem_only(path, header, summary, what);
    }
    if !silent {
        crate::diag!(
            f,
            "Writing profiling information of proc#{} into file '{}'",
            header.myproc,
            path.display()
        );
        if header.myproc == 1 {
            crate::diag::raw_line(format_header(header, summary, false).trim_end_matches('\n'));
        }
    }
    let written = write_to(&path, header, summary, what);
    let source = match written {
        Ok(()) => return Ok(Some(path)),
        Err(source) => source,
    };
    let err = ProfileError { path, source };
    // Never lose a profile: try the working directory, then $TMPDIR.
    for other in fallback_paths(&err.path) {
        if write_to(&other, header, summary, what).is_ok() {
            crate::diag!(
                f,
                "Error: {err}; the profile was written to '{}' instead",
                other.display()
            );
            return Ok(Some(other));
        }
    }
    crate::diag!(
        f,
        "Error: {err}; nor could it be written to the working directory or $TMPDIR"
    );
    Err(err)
}

/// `<path>-mem`.
fn mem_path(path: &Path) -> PathBuf {
    suffixed(path, "-mem")
}

fn suffixed(path: &Path, suffix: &str) -> PathBuf {
    let mut p = path.to_path_buf().into_os_string();
    p.push(suffix);
    PathBuf::from(p)
}

/// Writes the memory profile (`memprof`) and the I/O profile (`io`)
/// beside `path`.
fn write_siblings(
    path: &Path,
    header: &Header,
    summary: &Summary<'_>,
    what: What,
) -> std::io::Result<()> {
    if let Some(at) = what.mem_at {
        let m = super::mem::header_figures(summary, at);
        write_atomically(&mem_path(path), |w| {
            super::mem::write_mem_text(w, header, summary, at, &m)
        })?;
    }
    if let Some(at) = what.io_at {
        write_atomically(&suffixed(path, "-io"), |w| {
            super::io::write_io_text(w, header, summary, at)
        })?;
    }
    if let Some(at) = what.mpi_at.filter(|&at| super::mpi::has_rows(summary, at)) {
        write_atomically(&suffixed(path, "-mpi"), |w| {
            super::mpi::write_mpi_text(w, header, summary, at)
        })?;
    }
    super::gpu::write_beside(path, header)?;
    super::sample::write_beside(path, header)
}

/// `memprof` or `io` without a profile token: only `<path>-mem` and
/// `<path>-io` (as the reference for `memprof`), with the same fallbacks
/// as the profile.
fn write_mem_only(
    path: PathBuf,
    header: &Header,
    summary: &Summary<'_>,
    what: What,
) -> Result<Option<PathBuf>, ProfileError> {
    if what.mem_at.is_none() && what.io_at.is_none() {
        return Ok(None);
    }
    let name = |p: &Path| {
        if what.mem_at.is_some() {
            mem_path(p)
        } else {
            suffixed(p, "-io")
        }
    };
    let source = match write_siblings(&path, header, summary, what) {
        Ok(()) => return Ok(Some(name(&path))),
        Err(e) => e,
    };
    let err = ProfileError {
        path: name(&path),
        source,
    };
    for other in fallback_paths(&path) {
        if write_siblings(&other, header, summary, what).is_ok() {
            crate::diag!(
                "write_profile",
                "Error: {err}; it was written to '{}' instead",
                name(&other).display()
            );
            return Ok(Some(name(&other)));
        }
    }
    crate::diag!(
        "write_profile",
        "Error: {err}; nor could it be written to the working directory or $TMPDIR"
    );
    Err(err)
}

/// Writes the profile and, with counters, its CSV beside it; with
/// `memprof` and `io` the memory and I/O profiles too.
fn write_to(
    path: &Path,
    header: &Header,
    summary: &Summary<'_>,
    what: What,
) -> std::io::Result<()> {
    write_atomically(path, |w| write_profile_text(w, header, summary))
        .and_then(|()| {
            if header.counters.is_empty() {
                return Ok(());
            }
            let mut csv = path.to_path_buf().into_os_string();
            csv.push(".csv");
            write_atomically(Path::new(&csv), |w| write_counters_csv(w, header, summary))
        })
        .and_then(|()| write_siblings(path, header, summary, what))
}

static EXIT_WRITE_CANCELLED: std::sync::atomic::AtomicBool =
    std::sync::atomic::AtomicBool::new(false);

/// The write at exit will not happen (the reference's `c_drhook_prof_`
/// writes the profile and turns the one at exit off).
pub(crate) fn cancel_write_at_exit() {
    EXIT_WRITE_CANCELLED.store(true, Ordering::Release);
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
    // No sample is taken from here on.
    crate::sample::stop();
    // A `fork` child that ran nothing instrumented (a shell's or a
    // server's child that does its work in plain code and `_exit`s) has
    // only its parent's open routines to show: no time profile, as for a
    // child that `exec`s. Its memory and I/O profiles are its own.
    // A child whose threads were sampled has a profile of its own (its
    // samples).
    if !e.config.options.io
        && !e.config.options.mem.memprof
        && is_fresh_child()
        && !crate::sample::has_samples()
    {
        return None;
    }
    // A SIGTERM (a pool's workers are ended that way), SIGINT or alarm
    // that arrives during the write waits for its end on this thread, and
    // a Dr.Hook handler on another thread waits for it too
    // ([`wait_for_end_write`]): the profile is renamed into place first,
    // then the signal takes effect as it would have.
    let _deferred = crate::sys::held::Deferred::hold();
    // A program that ends with all the descriptors it may have open, or
    // its memory limit just above its use.
    let _room = crate::sys::held::MoreRoom::hold();
    super::reduce::say_if_unreduced(e);
    // SAFETY: gettid has no preconditions.
    END_WRITER.store(unsafe { libc::gettid() }, Ordering::Release);
    let written = write_now(true).ok().flatten();
    END_WRITER.store(0, Ordering::Release);
    // A Dr.Hook handler that waited for the write ends the process by its
    // signal, as the signal would have: this thread must not end it with
    // the exit status meanwhile.
    let mut waited = 0;
    while SIGNAL_WAITING.load(Ordering::Acquire) && waited < 60_000 {
        sleep_1ms();
        waited += 1;
    }
    written
}

/// A signal handler waited for the end's write ([`wait_for_end_write`])
/// and will end the process.
static SIGNAL_WAITING: AtomicBool = AtomicBool::new(false);

fn sleep_1ms() {
    let ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 1_000_000,
    };
    // SAFETY: a valid timespec; nanosleep is async-signal-safe.
    unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) };
}

/// The kernel thread id of the thread writing the profile at the
/// process's end (0: none).
static END_WRITER: AtomicI32 = AtomicI32::new(0);

/// In a signal handler that will end the process: if another thread is
/// writing the profile at the process's end, waits (up to `max_ms`) for it
/// to finish, so that the signal's effect does not cut the write short;
/// the writer then leaves the end of the process to this handler.
/// Async-signal-safe.
pub(crate) fn wait_for_end_write(max_ms: u64) {
    // SAFETY: gettid has no preconditions.
    let me = unsafe { libc::gettid() };
    let mut waited = 0;
    loop {
        let w = END_WRITER.load(Ordering::Acquire);
        if w == 0 || w == me || waited >= max_ms {
            return;
        }
        SIGNAL_WAITING.store(true, Ordering::Release);
        sleep_1ms();
        waited += 1;
    }
}

/// Set in a `fork` child until it has run anything instrumented.
static FRESH_CHILD: AtomicBool = AtomicBool::new(false);

/// In a `fork` child, at the fork.
pub(crate) fn mark_fresh_child() {
    FRESH_CHILD.store(true, Ordering::Release);
}

/// Whether this process is a `fork` child that has run nothing
/// instrumented since the fork (no call, no new thread): its profile would
/// only repeat the stack it inherited.
pub(crate) fn is_fresh_child() -> bool {
    if !FRESH_CHILD.load(Ordering::Acquire) {
        return false;
    }
    let mut fresh = true;
    let mut n = 0;
    thread::for_each_thread(|td| {
        n += 1;
        fresh &= td.calls_are_only_open_activations();
    });
    let fresh = fresh && n <= 1;
    if !fresh {
        FRESH_CHILD.store(false, Ordering::Release);
    }
    fresh
}

extern "C" fn write_profile_at_exit(status: libc::c_int, _arg: *mut libc::c_void) {
    if EXIT_WRITE_CANCELLED.load(Ordering::Acquire) {
        return;
    }
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
        write_atomically(&p, |w| w.write_all(b"hello")).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "hello");
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            1,
            "no temporary file left behind"
        );
        let bad = dir.join("no/such/dir/prof.1");
        assert!(write_atomically(&bad, |w| w.write_all(b"x")).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
