//! # drhook-merge
//!
//! Statistics of routines across tasks (MPI ranks), shared by the
//! `drhook merge` command, which reads per-rank profile files, and the
//! in-job reduction of the preload library (`DR_HOOK_OPT=reduce`), which
//! combines the same accumulators over MPI inside `MPI_Finalize`: the
//! job profile and the offline merge are made by this code, so they agree
//! by construction.
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
//! self time. The task and thread of the maximum are those of the smallest
//! task number (`proc#`) that reached it.
//!
//! Sums are exact (integer nanoseconds and calls), so the statistics do
//! not depend on the order in which tasks are combined: a file-by-file
//! merge and a reduction tree give the same numbers, bit for bit.
//!
//! With call paths (rows printed with their callers), a second table has
//! the same statistics per call path, a path named by its text
//! ([`path_text`]): routine ids differ across ranks, names do not.
//! [`ColMerger`] does the same for the memory and I/O profiles' columns.
//!
//! Memory: one accumulator per distinct routine (and call path) plus one
//! per (routine, thread) of the current task and the current task's call
//! path rows; rows of earlier tasks are never kept.

mod columns;
pub mod io;
mod text;
mod wire;

pub use columns::{ColKind, ColMerger, ColRow, ColStats, ColTable, as_printed_6, col_text, mixed};
pub use text::{Align, merge_text, printable, proc_range, render};

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

/// What the times of the profiles merged measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Wall-clock profiles (`DR_HOOK_OPT=prof`).
    Wall,
    /// CPU-time profiles (`cpuprof`).
    Cpu,
}

impl Kind {
    /// `wall-clock` or `CPU-time`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Wall => "wall-clock",
            Kind::Cpu => "CPU-time",
        }
    }
}

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
    /// `proc#` of each task, in increasing order.
    pub procs: Vec<u32>,
    /// Routines by decreasing maximum self time.
    pub routines: Vec<Merged>,
    /// The job's elapsed time: the longest task's `Elapsed time is`
    /// (`None` when a task's profile does not say it: the reference's).
    pub elapsed_s: Option<f64>,
    /// Per call path (profiles written with `callpath`), the same
    /// statistics, `routine` holding the path from the outermost caller
    /// ([`path_text`]); empty when no task had call paths.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub paths: Vec<Merged>,
}

/// A call path as the merge names it: the callers from the outermost,
/// then the routine, joined by ` > ` (`callers` nearest first, as a
/// profile prints them under the row).
pub fn path_text<S: AsRef<str>>(routine: &str, callers: &[S]) -> String {
    let mut o = String::new();
    for c in callers.iter().rev() {
        o.push_str(c.as_ref());
        o.push_str(" > ");
    }
    o.push_str(routine);
    o
}

/// Nanoseconds per second: times are summed as integer nanoseconds.
const NS: f64 = 1e9;

/// One measure of one routine over the tasks so far.
#[derive(Clone, Copy, Default, Debug, PartialEq)]
pub(crate) struct Acc {
    /// Sum of the values, in units (ns or calls): exact.
    pub(crate) sum: i128,
    /// Sum of the squares of the units (saturating).
    pub(crate) sumsq: u128,
    pub(crate) min: f64,
    pub(crate) max: f64,
    /// (task, thread, order) of the maximum.
    pub(crate) max_task: u32,
    pub(crate) max_thread: u32,
    pub(crate) max_order: u64,
}

impl Acc {
    fn units(v: f64, scale: f64) -> i128 {
        (v * scale).round() as i128
    }

    fn add(&mut self, v: f64, scale: f64, first: bool, task: u32, thread: u32, order: u64) {
        let u = Self::units(v, scale);
        self.sum = self.sum.saturating_add(u);
        self.sumsq = self
            .sumsq
            .saturating_add(u.unsigned_abs().saturating_mul(u.unsigned_abs()));
        if first || v < self.min {
            self.min = v;
        }
        if first
            || v > self.max
            || (v == self.max && (task, order) < (self.max_task, self.max_order))
        {
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
        self.sum = self.sum.saturating_add(o.sum);
        self.sumsq = self.sumsq.saturating_add(o.sumsq);
        self.min = self.min.min(o.min);
        if o.max > self.max
            || (o.max == self.max && (o.max_task, o.max_order) < (self.max_task, self.max_order))
        {
            self.max = o.max;
            self.max_task = o.max_task;
            self.max_thread = o.max_thread;
            self.max_order = o.max_order;
        }
    }

    fn stats(&self, present: u32, n: u32, scale: f64) -> Stats {
        let nf = f64::from(n.max(1));
        let mean = self.sum as f64 / nf / scale;
        let meansq = self.sumsq as f64 / nf / (scale * scale);
        let var = (meansq - mean * mean).max(0.0);
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

#[derive(Clone, Copy, Default, Debug, PartialEq)]
pub(crate) struct RoutineAcc {
    pub(crate) present: u32,
    pub(crate) calls: Acc,
    pub(crate) self_s: Acc,
    pub(crate) total_s: Acc,
}

/// Per (routine, thread) of the current task.
#[derive(Clone, Copy, Default, Debug)]
struct ThreadVals {
    calls: u64,
    self_s: f64,
    total_s: f64,
}

/// A row of the current task kept for the call paths: path (or routine
/// id), thread, calls, self, total.
type PathRow<K> = (K, u32, u64, f64, f64);

/// Two kinds of profiles met: the kind merged so far, the one offered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MixedKinds {
    /// The kind of the tasks merged so far.
    pub so_far: Kind,
    /// The kind of the task (or merger) offered.
    pub offered: Kind,
}

/// Accumulates tasks one at a time, and combines with other mergers.
#[derive(Default, Debug)]
pub struct Merger {
    pub(crate) kind: Option<Kind>,
    pub(crate) names: Vec<Box<str>>,
    ids: HashMap<Box<str>, u32>,
    pub(crate) accs: Vec<RoutineAcc>,
    pub(crate) procs: Vec<u32>,
    /// Order of the current task among all tasks (for ties of the max).
    pub(crate) order: u64,
    cur: HashMap<(u32, u32), ThreadVals>,
    cur_proc: u32,
    cur_kind: Option<Kind>,
    /// The longest elapsed time of the tasks so far; whether a task had none.
    pub(crate) elapsed: (f64, bool),
    /// Per call path: a merger whose routines are the paths' texts, over
    /// the same tasks (made at the first task with call paths; the tasks
    /// before count 0 there).
    pub(crate) paths: Option<Box<Merger>>,
    /// The current task's rows with callers (path, thread, calls, self,
    /// total), and those without (routine id instead of the path: no
    /// allocation while no row had callers).
    cur_paths: Vec<PathRow<Box<str>>>,
    cur_roots: Vec<PathRow<u32>>,
}

impl Merger {
    /// An empty merger.
    pub fn new() -> Merger {
        Merger::default()
    }

    pub(crate) fn id(&mut self, name: &str) -> u32 {
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

    /// The kind of the tasks merged so far.
    pub fn kind(&self) -> Option<Kind> {
        self.kind
    }

    /// Starts task `proc`.
    pub fn begin_task(&mut self, kind: Kind, proc: u32) -> Result<(), MixedKinds> {
        if let Some(k) = self.kind
            && k != kind
        {
            return Err(MixedKinds {
                so_far: k,
                offered: kind,
            });
        }
        self.kind = Some(kind);
        self.cur_kind = Some(kind);
        self.cur_proc = proc;
        self.cur.clear();
        self.cur_paths.clear();
        self.cur_roots.clear();
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
        self.add_id(id, thread, calls, self_s, total_s);
    }

    fn add_id(&mut self, id: u32, thread: u32, calls: u64, self_s: f64, total_s: f64) {
        let v = self.cur.entry((id, thread)).or_default();
        v.calls += calls;
        v.self_s += self_s;
        v.total_s += total_s;
    }

    /// Adds a row as a profile prints it: `path` is its callers (with
    /// call paths), and the total counts only for outermost calls.
    pub fn add_row<S: AsRef<str>>(
        &mut self,
        routine: &str,
        path: &[S],
        thread: u32,
        calls: u64,
        self_s: f64,
        total_s: f64,
    ) {
        let total = if path.iter().any(|p| p.as_ref() == routine) {
            0.0
        } else {
            total_s
        };
        let id = self.id(routine);
        self.add_id(id, thread, calls, self_s, total);
        if path.is_empty() {
            self.cur_roots.push((id, thread, calls, self_s, total_s));
        } else {
            let p = path_text(routine, path).into();
            self.cur_paths.push((p, thread, calls, self_s, total_s));
        }
    }

    /// An empty merger of the same tasks as `self` so far (for the call
    /// paths, made when the first task with call paths comes).
    fn same_tasks(&self) -> Box<Merger> {
        Box::new(Merger {
            kind: self.kind,
            procs: self.procs.clone(),
            order: self.order,
            ..Merger::default()
        })
    }

    /// Folds the current task's call paths (a task without any counts 0
    /// on every path, once some task had them).
    fn end_task_paths(&mut self) {
        let has = !self.cur_paths.is_empty();
        if has && self.paths.is_none() {
            self.paths = Some(self.same_tasks());
        }
        if let (Some(p), Some(kind)) = (self.paths.as_deref_mut(), self.cur_kind)
            && p.begin_task(kind, self.cur_proc).is_ok()
        {
            if has {
                for &(id, thread, calls, self_s, total_s) in &self.cur_roots {
                    p.add(&self.names[id as usize], thread, calls, self_s, total_s);
                }
                for (path, thread, calls, self_s, total_s) in &self.cur_paths {
                    p.add(path, *thread, *calls, *self_s, *total_s);
                }
            }
            p.end_task();
        }
        self.cur_paths.clear();
        self.cur_roots.clear();
    }

    /// Ends the current task: folds its values into the statistics.
    pub fn end_task(&mut self) {
        self.end_task_paths();
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
            let first = a.present == 0;
            a.calls.add(calls as f64, 1.0, first, proc, 0, order);
            a.self_s.add(s, NS, first, proc, best_self.1, order);
            a.total_s.add(t, NS, first, proc, best_total.1, order);
            a.present += 1;
            i = j;
        }
        self.procs.push(proc);
        self.order += 1;
        self.cur.clear();
    }

    /// Folds another merger (of later tasks) into this one.
    pub fn combine(&mut self, other: Merger) -> Result<(), MixedKinds> {
        if let (Some(a), Some(b)) = (self.kind, other.kind)
            && a != b
        {
            return Err(MixedKinds {
                so_far: a,
                offered: b,
            });
        }
        let mut other = other;
        match (self.paths.is_some(), other.paths.take()) {
            (_, Some(op)) => {
                if self.paths.is_none() {
                    self.paths = Some(self.same_tasks());
                }
                if let Some(p) = self.paths.as_deref_mut() {
                    p.combine(*op)?;
                }
            }
            (true, None) => {
                let op = other.same_tasks();
                if let Some(p) = self.paths.as_deref_mut() {
                    p.combine(*op)?;
                }
            }
            (false, None) => {}
        }
        self.kind = self.kind.or(other.kind);
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

    /// Number of distinct routines so far.
    pub fn nroutines(&self) -> usize {
        self.names.len()
    }

    /// The table, routines by decreasing maximum self time (then name).
    pub fn finish(mut self) -> Table {
        let paths = self.paths.take().map(|p| p.finish().routines);
        let n = self.procs.len() as u32;
        let mut routines: Vec<Merged> = self
            .names
            .iter()
            .zip(&self.accs)
            .map(|(name, a)| {
                let self_s = a.self_s.stats(a.present, n, NS);
                let mut calls = a.calls.stats(a.present, n, 1.0);
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
                    total_s: a.total_s.stats(a.present, n, NS),
                }
            })
            .collect();
        routines.sort_by(|a, b| {
            b.self_s
                .max
                .total_cmp(&a.self_s.max)
                .then_with(|| a.routine.cmp(&b.routine))
        });
        let mut procs = self.procs;
        procs.sort_unstable();
        Table {
            kind: self.kind.unwrap_or(Kind::Wall),
            ntasks: n,
            elapsed_s: (!self.elapsed.1 && n > 0).then_some(self.elapsed.0),
            procs,
            routines,
            paths: paths.unwrap_or_default(),
        }
    }
}

/// A time as a profile prints it (`{:.3}` seconds) and a reader reads it
/// back: what the in-job reduction feeds, so that it sees the numbers of
/// the per-rank files.
pub fn as_printed_3(v: f64) -> f64 {
    format!("{v:.3}").parse().unwrap_or(v)
}

#[cfg(test)]
mod tests;
