//! Statistics of routines across tasks, computed while the files stream by
//! (the statistics are the `drhook-merge` crate's, shared with the
//! in-job reduction of `DR_HOOK_OPT=reduce`).
//!
//! Per task, a routine has one value of each measure:
//!
//! * **calls**: the sum over its threads (and call paths);
//! * **self** and **total** time: for wall-clock profiles the value of the
//!   busiest thread (the row Dr.Hook stars: threads run at the same time,
//!   so the task waits for the slowest), for CPU profiles the sum over
//!   threads. With call paths, a thread's self time is the sum over the
//!   routine's paths and its total the sum over the paths where it does not
//!   call itself (outermost calls only).
//!
//! Across the N tasks merged, a task where the routine does not appear
//! counts as 0 (so `min` is 0 and the mean is over all N tasks), and
//! `tasks` says on how many it appeared. `stddev` is the population
//! standard deviation over the N tasks; `imbalance` is max / mean of the
//! self time. The task and thread of the maximum are those of the first
//! task (in input order) that reached it.
//!
//! Memory: one accumulator per distinct routine plus one per (routine,
//! thread) of the current task; rows are never kept.

use std::path::{Path, PathBuf};

pub use drhook_merge::{Merged, Stats, Table};

use crate::error::{Error, Result};
use crate::profile::input::{self, Source};
use crate::profile::text::ReadOptions;
use crate::profile::{Kind, Profile, Row};

/// Accumulates tasks one at a time (the `drhook-merge` crate's merger, fed
/// from files, with the files named in errors).
#[derive(Default)]
pub struct Merger {
    inner: drhook_merge::Merger,
    /// The first file merged (named in errors about mixed kinds).
    first: Option<PathBuf>,
}

fn merge_kind(kind: Kind, what: &Path) -> Result<drhook_merge::Kind> {
    match kind {
        Kind::Wall => Ok(drhook_merge::Kind::Wall),
        Kind::Cpu => Ok(drhook_merge::Kind::Cpu),
        Kind::Memory | Kind::Io => Err(Error::file(
            what,
            "a memory or I/O profile has no times to merge (merge, diff and flamegraph read wall and CPU profiles)",
        )),
    }
}

fn mixed(what: &Path, m: drhook_merge::MixedKinds) -> Error {
    Error::file(
        what,
        format!(
            "a {} profile cannot be merged with {} profiles",
            m.offered.name(),
            m.so_far.name()
        ),
    )
}

impl Merger {
    /// An empty merger.
    pub fn new() -> Merger {
        Merger::default()
    }

    /// Starts a task; `what` names it in errors.
    pub fn begin_task(&mut self, kind: Kind, proc: u32, what: &Path) -> Result<()> {
        let k = merge_kind(kind, what)?;
        self.inner.begin_task(k, proc).map_err(|m| mixed(what, m))?;
        if self.first.is_none() {
            self.first = Some(what.to_path_buf());
        }
        Ok(())
    }

    /// The current task's elapsed time (`Elapsed time is`), if known.
    pub fn task_elapsed(&mut self, elapsed_s: Option<f64>) {
        self.inner.task_elapsed(elapsed_s);
    }

    /// Adds one row of the current task. `total_s` must be 0 for a call
    /// path where the routine calls itself (only outermost calls count).
    pub fn add(&mut self, routine: &str, thread: u32, calls: u64, self_s: f64, total_s: f64) {
        self.inner.add(routine, thread, calls, self_s, total_s);
    }

    /// Adds a row as printed (with call paths: total only for outermost calls).
    pub fn add_row(&mut self, r: &Row) {
        self.inner
            .add_row(&r.routine, &r.path, r.thread, r.calls, r.self_s, r.total_s);
    }

    /// Ends the current task: folds its values into the statistics.
    pub fn end_task(&mut self) {
        self.inner.end_task();
    }

    /// Adds every row (or tree node) of a whole profile as one task.
    pub fn add_profile(&mut self, p: &Profile, what: &Path) -> Result<()> {
        self.begin_task(p.header.kind, p.header.proc, what)?;
        self.task_elapsed(p.header.elapsed_s);
        match &p.tree {
            Some(nodes) if p.rows.is_empty() || !p.has_callpaths() => {
                let paths = crate::profile::tree::paths(nodes);
                for (n, path) in nodes.iter().zip(&paths) {
                    let recursive = path[..path.len() - 1].contains(&n.routine.as_str());
                    let total = if recursive { 0.0 } else { n.total_s };
                    self.add(&n.routine, n.thread, n.calls, n.self_s, total);
                }
            }
            _ => {
                for r in &p.rows {
                    self.add_row(r);
                }
            }
        }
        self.end_task();
        Ok(())
    }

    /// Streams one file (text row by row; JSON task by task).
    pub fn add_file(&mut self, path: &Path, options: ReadOptions) -> Result<()> {
        match input::open(path, options)? {
            Source::Text(mut reader) => {
                let h = reader.header();
                self.begin_task(h.kind, h.proc, path)?;
                let elapsed = h.elapsed_s;
                self.task_elapsed(elapsed);
                let mut row = Row::empty();
                while reader.next_into(&mut row)? {
                    self.add_row(&row);
                }
                self.end_task();
            }
            Source::Json(tasks) => {
                for t in &tasks {
                    self.add_profile(t, path)?;
                }
            }
        }
        Ok(())
    }

    /// Folds another merger (of later tasks) into this one.
    pub fn combine(&mut self, other: Merger) -> Result<()> {
        let what = other.first.clone().unwrap_or_default();
        self.inner
            .combine(other.inner)
            .map_err(|m| mixed(&what, m))?;
        if self.first.is_none() {
            self.first = other.first;
        }
        Ok(())
    }

    /// Number of tasks so far.
    pub fn ntasks(&self) -> usize {
        self.inner.ntasks()
    }

    /// The table, routines by decreasing maximum self time (then name).
    pub fn finish(self) -> Table {
        self.inner.finish()
    }
}

/// Files per block: each block is merged in order by one thread, and
/// blocks are combined in input order, so the floating-point sums (and the
/// table) are the same whatever the number of threads.
pub const BLOCK: usize = 32;

/// Merges files with up to `jobs` threads.
pub fn merge_files(files: &[PathBuf], options: ReadOptions, jobs: usize) -> Result<Table> {
    use std::collections::BTreeMap;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};

    struct Combined {
        next: usize,
        waiting: BTreeMap<usize, Merger>,
        all: Merger,
        /// The error of the earliest block that failed.
        error: Option<(usize, Error)>,
    }
    let blocks: Vec<&[PathBuf]> = files.chunks(BLOCK).collect();
    let jobs = jobs.clamp(1, blocks.len().max(1));
    let next_block = AtomicUsize::new(0);
    let state = Mutex::new(Combined {
        next: 0,
        waiting: BTreeMap::new(),
        all: Merger::new(),
        error: None,
    });
    let work = || {
        loop {
            let i = next_block.fetch_add(1, Ordering::Relaxed);
            if i >= blocks.len() {
                return;
            }
            let mut m = Merger::new();
            let r = blocks[i].iter().try_for_each(|f| m.add_file(f, options));
            let mut st = state.lock().unwrap_or_else(|p| p.into_inner());
            if let Err(e) = r {
                if st.error.as_ref().is_none_or(|(k, _)| i < *k) {
                    st.error = Some((i, e));
                }
                next_block.store(blocks.len(), Ordering::Relaxed);
                return;
            }
            st.waiting.insert(i, m);
            while let Some(m) = {
                let k = st.next;
                st.waiting.remove(&k)
            } {
                let k = st.next;
                st.next += 1;
                if let Err(e) = st.all.combine(m)
                    && st.error.as_ref().is_none_or(|(j, _)| k < *j)
                {
                    st.error = Some((k, e));
                }
            }
        }
    };
    std::thread::scope(|s| {
        for _ in 1..jobs {
            s.spawn(work);
        }
        work();
    });
    let st = state.into_inner().unwrap_or_else(|p| p.into_inner());
    if let Some((_, e)) = st.error {
        return Err(e);
    }
    Ok(st.all.finish())
}

/// What `drhook merge` made of its files: the time table, or the table
/// of memory (`-mem`), I/O (`-io`) or MPI (`-mpi`) profiles.
pub enum Output {
    /// Wall-clock or CPU-time profiles.
    Time(Table),
    /// Memory, I/O or MPI profiles.
    Columns(drhook_merge::ColTable),
}

/// The memory or I/O profile kind of a text file, if it is one.
fn column_kind(path: &Path, options: ReadOptions) -> Result<Option<drhook_merge::ColKind>> {
    Ok(match input::open(path, options)? {
        Source::Text(r) => match r.header().kind {
            Kind::Memory => Some(drhook_merge::ColKind::Memory),
            Kind::Io => Some(drhook_merge::ColKind::Io),
            _ => None,
        },
        Source::Json(_) => None,
    })
}

/// The values of a memory or I/O row, in `drhook_merge::ColMerger::add`'s
/// order.
fn column_values(r: &Row, into: &mut Vec<f64>) {
    into.clear();
    if let Some(m) = &r.memory {
        into.extend([
            m.self_alloc as f64,
            m.children_alloc as f64,
            m.self_leaked as f64,
            m.heap as f64,
            m.max_stack as f64,
            m.paging as f64,
            r.calls as f64,
            m.allocs as f64,
            m.frees as f64,
        ]);
    } else if let Some(io) = &r.io {
        into.extend([
            r.self_s,
            io.io_s,
            io.compute_s,
            io.read_bytes as f64,
            io.write_bytes as f64,
            io.reads as f64,
            io.writes as f64,
            io.other as f64,
        ]);
    }
}

/// Merges memory or I/O profiles (`kind`), file after file.
fn merge_columns(
    files: &[PathBuf],
    options: ReadOptions,
    kind: drhook_merge::ColKind,
) -> Result<drhook_merge::ColTable> {
    let mut m = drhook_merge::ColMerger::new(kind);
    let mut values = Vec::new();
    for f in files {
        let Source::Text(mut reader) = input::open(f, options)? else {
            return Err(Error::file(
                f,
                format!(
                    "a JSON profile cannot be merged with {} profiles",
                    kind.name()
                ),
            ));
        };
        let h = reader.header();
        let k = match h.kind {
            Kind::Memory => drhook_merge::ColKind::Memory,
            Kind::Io => drhook_merge::ColKind::Io,
            _ => {
                return Err(Error::file(
                    f,
                    format!(
                        "a time profile cannot be merged with {} profiles",
                        kind.name()
                    ),
                ));
            }
        };
        if k != kind {
            return Err(Error::file(f, drhook_merge::mixed(kind, k)));
        }
        m.begin_task(h.proc);
        let mut row = Row::empty();
        while reader.next_into(&mut row)? {
            column_values(&row, &mut values);
            m.add(&row.routine, &values);
        }
        m.end_task();
    }
    Ok(m.finish())
}

/// Merges MPI profiles (`-mpi`) file after file.
fn merge_mpi(files: &[PathBuf]) -> Result<drhook_merge::ColTable> {
    let kind = drhook_merge::ColKind::Mpi;
    let mut m = drhook_merge::ColMerger::new(kind);
    for f in files {
        if !super::mpi_read::is_mpi_profile(f) {
            return Err(Error::file(
                f,
                "not an MPI profile: MPI profiles (-mpi) are merged only with each other",
            ));
        }
        let p = super::mpi_read::read(f)?;
        m.begin_task(p.proc);
        for (name, v) in &p.rows {
            m.add(name, v);
        }
        m.end_task();
    }
    Ok(m.finish())
}

/// Merges time profiles (with up to `jobs` threads), or memory, I/O or
/// MPI profiles when the first file is one.
pub fn merge_any(files: &[PathBuf], options: ReadOptions, jobs: usize) -> Result<Output> {
    if files
        .first()
        .is_some_and(|f| super::mpi_read::is_mpi_profile(f))
    {
        return Ok(Output::Columns(merge_mpi(files)?));
    }
    match files.first() {
        Some(f) => match column_kind(f, options)? {
            Some(k) => Ok(Output::Columns(merge_columns(files, options, k)?)),
            None => Ok(Output::Time(merge_files(files, options, jobs)?)),
        },
        None => Ok(Output::Time(merge_files(files, options, jobs)?)),
    }
}

/// Warnings about the set of tasks: a `proc#` seen more than once.
pub fn duplicate_procs(t: &Table) -> Vec<u32> {
    let mut v = t.procs.clone();
    v.sort_unstable();
    let mut d: Vec<u32> = v
        .windows(2)
        .filter(|w| w[0] == w[1])
        .map(|w| w[0])
        .collect();
    d.dedup();
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_do_not_mix() {
        let mut m = Merger::new();
        m.begin_task(Kind::Wall, 1, Path::new("t")).unwrap();
        m.end_task();
        let e = m.begin_task(Kind::Cpu, 2, Path::new("x")).unwrap_err();
        assert!(e.to_string().contains("cannot be merged"), "{e}");
        assert!(m.begin_task(Kind::Memory, 2, Path::new("x")).is_err());
    }
}
