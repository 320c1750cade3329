//! Statistics of routines across tasks, computed while the files stream by.
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

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::{Error, Result};
use crate::profile::input::{self, Source};
use crate::profile::text::ReadOptions;
use crate::profile::{Kind, Profile, Row};

/// Min, mean, max, standard deviation of one measure.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Stats {
    /// Smallest per-task value (0 when the routine is missing on a task).
    pub min: f64,
    /// Mean over all tasks merged.
    pub mean: f64,
    /// Largest per-task value.
    pub max: f64,
    /// Population standard deviation over all tasks merged.
    pub stddev: f64,
    /// Task (`proc#`) of the maximum.
    pub max_task: u32,
    /// Thread of the maximum (`None` for calls, which add up over a
    /// task's threads: no one thread has them).
    pub max_thread: Option<u32>,
}

/// One routine across tasks.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Merged {
    /// Routine name.
    pub routine: String,
    /// Number of tasks where the routine appears.
    pub tasks: u32,
    /// Number of tasks merged.
    pub ntasks: u32,
    /// Calls per task.
    pub calls: Stats,
    /// Self seconds per task.
    pub self_s: Stats,
    /// Total seconds per task.
    pub total_s: Stats,
    /// max / mean of the self time over tasks (`None` when the mean is 0):
    /// 1 is balanced, N is one task of N doing everything.
    pub imbalance: Option<f64>,
    /// The reference's `Imbal-%` (fiat's `drhook_merge_walltime.pl`):
    /// 100·(max − min) / max of the self time over tasks (`None` when the
    /// max is 0): 0 is balanced, 100 a task without the routine.
    pub imbalance_pct: Option<f64>,
}

/// The merged table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Table {
    /// Wall or CPU.
    pub kind: Kind,
    /// Number of tasks merged.
    pub ntasks: u32,
    /// `proc#` of each task, in input order.
    pub procs: Vec<u32>,
    /// Routines by decreasing maximum self time.
    pub routines: Vec<Merged>,
    /// The job's elapsed time: the longest task's `Elapsed time is`
    /// (`None` when a task's profile does not say it: the reference's).
    pub elapsed_s: Option<f64>,
}

#[derive(Clone, Copy, Default)]
struct Acc {
    sum: f64,
    sumsq: f64,
    min: f64,
    max: f64,
    max_task: u32,
    max_thread: u32,
    max_order: u64,
}

impl Acc {
    fn add(&mut self, v: f64, present_before: u32, task: u32, thread: u32, order: u64) {
        self.sum += v;
        self.sumsq += v * v;
        if present_before == 0 || v < self.min {
            self.min = v;
        }
        if present_before == 0 || v > self.max || (v == self.max && order < self.max_order) {
            self.max = v;
            self.max_task = task;
            self.max_thread = thread;
            self.max_order = order;
        }
    }

    fn combine(&mut self, o: &Acc, self_present: u32, other_present: u32) {
        if other_present == 0 {
            return;
        }
        if self_present == 0 {
            *self = *o;
            return;
        }
        self.sum += o.sum;
        self.sumsq += o.sumsq;
        self.min = self.min.min(o.min);
        if o.max > self.max || (o.max == self.max && o.max_order < self.max_order) {
            self.max = o.max;
            self.max_task = o.max_task;
            self.max_thread = o.max_thread;
            self.max_order = o.max_order;
        }
    }

    fn stats(&self, present: u32, n: u32) -> Stats {
        let nf = f64::from(n.max(1));
        let mean = self.sum / nf;
        let var = (self.sumsq / nf - mean * mean).max(0.0);
        Stats {
            min: if present < n {
                self.min.min(0.0)
            } else {
                self.min
            },
            mean,
            max: if present < n {
                self.max.max(0.0)
            } else {
                self.max
            },
            stddev: var.sqrt(),
            max_task: self.max_task,
            max_thread: Some(self.max_thread),
        }
    }
}

#[derive(Clone, Default)]
struct RoutineAcc {
    present: u32,
    calls: Acc,
    self_s: Acc,
    total_s: Acc,
}

/// Per (routine, thread) of the current task.
#[derive(Clone, Copy, Default)]
struct ThreadVals {
    calls: u64,
    self_s: f64,
    total_s: f64,
}

/// Accumulates tasks one at a time.
#[derive(Default)]
pub struct Merger {
    kind: Option<Kind>,
    names: Vec<Box<str>>,
    ids: HashMap<Box<str>, u32>,
    accs: Vec<RoutineAcc>,
    procs: Vec<u32>,
    /// Order of the current task among all tasks (for ties of the max).
    order: u64,
    cur: HashMap<(u32, u32), ThreadVals>,
    cur_proc: u32,
    cur_kind: Option<Kind>,
    /// The first file merged (named in errors about mixed kinds).
    first: Option<PathBuf>,
    /// The longest elapsed time of the tasks so far; whether a task had none.
    elapsed: (f64, bool),
}

impl Merger {
    /// An empty merger.
    pub fn new() -> Merger {
        Merger::default()
    }

    fn id(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.ids.get(name) {
            return i;
        }
        let i = self.names.len() as u32;
        let b: Box<str> = name.into();
        self.names.push(b.clone());
        self.ids.insert(b, i);
        self.accs.push(RoutineAcc::default());
        i
    }

    /// Starts a task; `what` names it in errors.
    pub fn begin_task(&mut self, kind: Kind, proc: u32, what: &Path) -> Result<()> {
        if !kind.has_times() {
            return Err(Error::file(
                what,
                "a memory or I/O profile has no times to merge (merge, diff and flamegraph read wall and CPU profiles)",
            ));
        }
        if let Some(k) = self.kind
            && k != kind
        {
            return Err(Error::file(
                what,
                format!(
                    "a {} profile cannot be merged with {} profiles",
                    kind_name(kind),
                    kind_name(k)
                ),
            ));
        }
        self.kind = Some(kind);
        if self.first.is_none() {
            self.first = Some(what.to_path_buf());
        }
        self.cur_kind = Some(kind);
        self.cur_proc = proc;
        self.cur.clear();
        Ok(())
    }

    /// The current task's elapsed time (`Elapsed time is`), if known.
    pub fn task_elapsed(&mut self, elapsed_s: Option<f64>) {
        match elapsed_s {
            Some(e) => self.elapsed.0 = self.elapsed.0.max(e),
            None => self.elapsed.1 = true,
        }
    }

    /// Adds one row of the current task. `total_s` must be 0 for a call
    /// path where the routine calls itself (only outermost calls count).
    pub fn add(&mut self, routine: &str, thread: u32, calls: u64, self_s: f64, total_s: f64) {
        let id = self.id(routine);
        let v = self.cur.entry((id, thread)).or_default();
        v.calls += calls;
        v.self_s += self_s;
        v.total_s += total_s;
    }

    /// Adds a row as printed (with call paths: total only for outermost calls).
    pub fn add_row(&mut self, r: &Row) {
        let total = if r.path.contains(&r.routine) {
            0.0
        } else {
            r.total_s
        };
        self.add(&r.routine, r.thread, r.calls, r.self_s, total);
    }

    /// Ends the current task: folds its values into the statistics.
    pub fn end_task(&mut self) {
        let wall = self.cur_kind == Some(Kind::Wall);
        let mut keys: Vec<(u32, u32)> = self.cur.keys().copied().collect();
        keys.sort_unstable();
        let order = self.order;
        let proc = self.cur_proc;
        let mut i = 0;
        while i < keys.len() {
            let id = keys[i].0;
            let mut j = i;
            // (value, thread) of the busiest thread, and sums.
            let mut calls = 0u64;
            let (mut best_self, mut best_total) = ((f64::MIN, 0u32), (f64::MIN, 0u32));
            let (mut sum_self, mut sum_total) = (0.0, 0.0);
            while j < keys.len() && keys[j].0 == id {
                let thread = keys[j].1;
                let v = self.cur[&keys[j]];
                calls += v.calls;
                sum_self += v.self_s;
                sum_total += v.total_s;
                if v.self_s > best_self.0 {
                    best_self = (v.self_s, thread);
                }
                if v.total_s > best_total.0 {
                    best_total = (v.total_s, thread);
                }
                j += 1;
            }
            let (s, t) = if wall {
                (best_self.0, best_total.0)
            } else {
                (sum_self, sum_total)
            };
            let a = &mut self.accs[id as usize];
            let p = a.present;
            a.calls.add(calls as f64, p, proc, 0, order);
            a.self_s.add(s, p, proc, best_self.1, order);
            a.total_s.add(t, p, proc, best_total.1, order);
            a.present += 1;
            i = j;
        }
        self.procs.push(proc);
        self.order += 1;
        self.cur.clear();
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
        if let (Some(a), Some(b)) = (self.kind, other.kind)
            && a != b
        {
            let what = other.first.clone().unwrap_or_default();
            return Err(Error::file(
                &what,
                format!(
                    "a {} profile cannot be merged with {} profiles",
                    kind_name(b),
                    kind_name(a)
                ),
            ));
        }
        self.kind = self.kind.or(other.kind);
        if self.first.is_none() {
            self.first = other.first.clone();
        }
        let shift = self.order;
        for (name, acc) in other.names.iter().zip(other.accs) {
            let id = self.id(name);
            let a = &mut self.accs[id as usize];
            let mut acc = acc;
            for x in [&mut acc.calls, &mut acc.self_s, &mut acc.total_s] {
                x.max_order += shift;
            }
            a.calls.combine(&acc.calls, a.present, acc.present);
            a.self_s.combine(&acc.self_s, a.present, acc.present);
            a.total_s.combine(&acc.total_s, a.present, acc.present);
            a.present += acc.present;
        }
        self.procs.extend(other.procs);
        self.order += other.order;
        self.elapsed = (
            self.elapsed.0.max(other.elapsed.0),
            self.elapsed.1 || other.elapsed.1,
        );
        Ok(())
    }

    /// Number of tasks so far.
    pub fn ntasks(&self) -> usize {
        self.procs.len()
    }

    /// The table, routines by decreasing maximum self time (then name).
    pub fn finish(self) -> Table {
        let n = self.procs.len() as u32;
        let mut routines: Vec<Merged> = self
            .names
            .iter()
            .zip(&self.accs)
            .map(|(name, a)| {
                let self_s = a.self_s.stats(a.present, n);
                let mut calls = a.calls.stats(a.present, n);
                calls.max_thread = None;
                Merged {
                    routine: name.to_string(),
                    tasks: a.present,
                    ntasks: n,
                    calls,
                    imbalance: (self_s.mean > 0.0).then(|| self_s.max / self_s.mean),
                    imbalance_pct: (self_s.max > 0.0)
                        .then(|| 100.0 * (self_s.max - self_s.min) / self_s.max),
                    self_s,
                    total_s: a.total_s.stats(a.present, n),
                }
            })
            .collect();
        routines.sort_by(|a, b| {
            b.self_s
                .max
                .total_cmp(&a.self_s.max)
                .then_with(|| a.routine.cmp(&b.routine))
        });
        Table {
            kind: self.kind.unwrap_or(Kind::Wall),
            ntasks: n,
            elapsed_s: (!self.elapsed.1 && n > 0).then_some(self.elapsed.0),
            procs: self.procs,
            routines,
        }
    }
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Wall => "wall-clock",
        Kind::Cpu => "CPU-time",
        Kind::Memory => "memory",
        Kind::Io => "I/O",
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

    fn task(m: &mut Merger, kind: Kind, proc: u32, rows: &[(&str, u32, u64, f64, f64)]) {
        m.begin_task(kind, proc, Path::new("t")).unwrap();
        for &(r, t, c, s, tot) in rows {
            m.add(r, t, c, s, tot);
        }
        m.end_task();
    }

    #[test]
    fn wall_takes_the_busiest_thread_and_missing_counts_as_zero() {
        let mut m = Merger::new();
        task(
            &mut m,
            Kind::Wall,
            1,
            &[
                ("A", 1, 10, 1.0, 2.0),
                ("A", 2, 5, 3.0, 3.0),
                ("B", 1, 1, 1.0, 1.0),
            ],
        );
        task(&mut m, Kind::Wall, 2, &[("A", 1, 4, 2.0, 2.5)]);
        let t = m.finish();
        assert_eq!(t.ntasks, 2);
        let a = &t.routines[0];
        assert_eq!(a.routine, "A");
        assert_eq!(a.tasks, 2);
        assert_eq!((a.calls.min, a.calls.max, a.calls.mean), (4.0, 15.0, 9.5));
        assert_eq!(
            (a.self_s.max, a.self_s.max_task, a.self_s.max_thread),
            (3.0, 1, Some(2))
        );
        assert_eq!(a.self_s.min, 2.0);
        assert_eq!(a.self_s.mean, 2.5);
        assert!((a.self_s.stddev - 0.5).abs() < 1e-12);
        assert_eq!(a.total_s.max, 3.0);
        assert_eq!(a.imbalance, Some(1.2));
        let b = &t.routines[1];
        assert_eq!(
            (b.tasks, b.self_s.min, b.self_s.mean, b.self_s.max),
            (1, 0.0, 0.5, 1.0)
        );
        assert_eq!(b.self_s.stddev, 0.5);
    }

    #[test]
    fn cpu_adds_threads() {
        let mut m = Merger::new();
        task(
            &mut m,
            Kind::Cpu,
            1,
            &[("A", 1, 1, 1.0, 2.0), ("A", 2, 1, 3.0, 3.0)],
        );
        let t = m.finish();
        let a = &t.routines[0];
        assert_eq!((a.self_s.max, a.self_s.max_thread), (4.0, Some(2)));
        assert_eq!(a.total_s.max, 5.0);
        assert_eq!(a.calls.max, 2.0);
    }

    #[test]
    fn combining_halves_equals_one_pass() {
        let rows = |p: u32| {
            vec![
                ("A", 1u32, u64::from(p), f64::from(p), f64::from(p) * 2.0),
                ("B", 1, 1, 0.5, 0.5),
            ]
        };
        let mut one = Merger::new();
        for p in 1..=6 {
            task(&mut one, Kind::Wall, p, &rows(p));
        }
        let mut a = Merger::new();
        let mut b = Merger::new();
        for p in 1..=3 {
            task(&mut a, Kind::Wall, p, &rows(p));
        }
        for p in 4..=6 {
            task(&mut b, Kind::Wall, p, &rows(p));
        }
        a.combine(b).unwrap();
        assert_eq!(a.finish(), one.finish());
    }

    #[test]
    fn kinds_do_not_mix() {
        let mut m = Merger::new();
        task(&mut m, Kind::Wall, 1, &[]);
        let e = m.begin_task(Kind::Cpu, 2, Path::new("x")).unwrap_err();
        assert!(e.to_string().contains("cannot be merged"), "{e}");
        assert!(m.begin_task(Kind::Memory, 2, Path::new("x")).is_err());
    }
}
