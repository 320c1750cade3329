//! Statistics across tasks of the memory (`-mem`), I/O (`-io`) and MPI
//! (`-mpi`) profiles: per routine, each column of the profile (bytes, counts, I/O
//! seconds) across the tasks, shared by `drhook merge` (reading the
//! per-rank files) and the in-job reduction (`DR_HOOK_OPT=reduce`), as
//! [`crate::Merger`] is for the time profiles.
//!
//! Per task, a routine's value of a column adds up its rows (threads and,
//! with `callpath`, call paths), except the memory profile's `Heap` and
//! `Max.Stack`, levels rather than amounts, and the MPI profile's
//! `Comm-size`, a mean, where it is the largest row's.
//! Across the N tasks: sum (the job's), max and its task, mean, min and
//! standard deviation, a task without the routine counting 0 there. Sums
//! are exact (integers: bytes, counts, microseconds), so the order in
//! which tasks are combined does not change a number.

use std::collections::HashMap;

use serde::Serialize;

use crate::Acc;
use crate::text::{Align, proc_range, render};
use crate::wire::{In, Out};

/// Which profile the columns are those of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ColKind {
    /// `drhook.prof.N-mem` (`DR_HOOK_OPT=mem`).
    Memory,
    /// `drhook.prof.N-io` (`DR_HOOK_OPT=io`).
    Io,
    /// `drhook.prof.N-mpi` (`DR_HOOK_OPT=mpi`): an MPI function's row.
    Mpi,
}

/// One column: its heading, how a task's rows combine, its unit's scale
/// (values are summed as integers of `1/scale`) and decimals.
struct Column {
    name: &'static str,
    largest: bool,
    scale: f64,
    decimals: usize,
}

const fn col(name: &'static str, largest: bool, scale: f64, decimals: usize) -> Column {
    Column {
        name,
        largest,
        scale,
        decimals,
    }
}

/// The memory profile's columns, in the order [`ColMerger::add`] takes them.
const MEMORY: [Column; 9] = [
    col("Self-alloc", false, 1.0, 0),
    col("Children", false, 1.0, 0),
    col("Leaked", false, 1.0, 0),
    col("Heap", true, 1.0, 0),
    col("Max.Stack", true, 1.0, 0),
    col("Paging", false, 1.0, 0),
    col("Calls", false, 1.0, 0),
    col("Allocs", false, 1.0, 0),
    col("Frees", false, 1.0, 0),
];

/// The I/O profile's columns (seconds as printed, to the microsecond).
const IO: [Column; 8] = [
    col("Self(s)", false, 1e6, 6),
    col("I/O(s)", false, 1e6, 6),
    col("Compute(s)", false, 1e6, 6),
    col("Read", false, 1.0, 0),
    col("Written", false, 1.0, 0),
    col("Reads", false, 1.0, 0),
    col("Writes", false, 1.0, 0),
    col("Other", false, 1.0, 0),
];

/// The MPI profile's columns: time to the microsecond as printed, the
/// mean communicator size to a tenth, the histogram's bins.
const MPI: [Column; 13] = [
    col("Time(s)", false, 1e6, 6),
    col("Calls", false, 1.0, 0),
    col("Sent", false, 1.0, 0),
    col("Recv", false, 1.0, 0),
    col("Comm-size", true, 10.0, 1),
    col("0", false, 1.0, 0),
    col("1-64", false, 1.0, 0),
    col("65-1K", false, 1.0, 0),
    col("1K-16K", false, 1.0, 0),
    col("16K-256K", false, 1.0, 0),
    col("256K-4M", false, 1.0, 0),
    col("4M-64M", false, 1.0, 0),
    col("64M+", false, 1.0, 0),
];

impl ColKind {
    fn columns(self) -> &'static [Column] {
        match self {
            ColKind::Memory => &MEMORY,
            ColKind::Io => &IO,
            ColKind::Mpi => &MPI,
        }
    }

    /// Number of values per row.
    pub fn width(self) -> usize {
        self.columns().len()
    }

    /// `memory` or `I/O`.
    pub fn name(self) -> &'static str {
        match self {
            ColKind::Memory => "memory",
            ColKind::Io => "I/O",
            ColKind::Mpi => "MPI",
        }
    }

    fn code(self) -> u8 {
        match self {
            ColKind::Memory => 1,
            ColKind::Io => 2,
            ColKind::Mpi => 3,
        }
    }

    /// The column the rows are sorted by (largest max first): `Self-alloc`,
    /// `I/O(s)` or `Time(s)`.
    fn sort_by(self) -> usize {
        match self {
            ColKind::Memory | ColKind::Mpi => 0,
            ColKind::Io => 1,
        }
    }
}

/// Accumulates the tasks' memory or I/O profiles, one task at a time, and
/// combines with other such mergers. Memory: one accumulator per distinct
/// routine and column, plus the current task's values per routine.
#[derive(Debug)]
pub struct ColMerger {
    kind: ColKind,
    names: Vec<Box<str>>,
    ids: HashMap<Box<str>, u32>,
    /// Per routine: tasks where it appears, then one accumulator per column.
    accs: Vec<(u32, Vec<Acc>)>,
    procs: Vec<u32>,
    order: u64,
    cur: HashMap<u32, Vec<f64>>,
    cur_proc: u32,
}

/// One column of one routine across tasks.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ColStats {
    /// The job's sum (all tasks).
    pub sum: f64,
    /// Smallest per-task value (0 when the routine is missing on a task).
    pub min: f64,
    /// Mean over all tasks merged.
    pub mean: f64,
    /// Largest per-task value.
    pub max: f64,
    /// Population standard deviation over all tasks.
    pub stddev: f64,
    /// Task (`proc#`) of the maximum (the smallest on ties).
    pub max_task: u32,
}

/// One routine's columns across tasks.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ColRow {
    /// Routine name.
    pub routine: String,
    /// Tasks where it appears.
    pub tasks: u32,
    /// One per column, in the profile's order.
    pub columns: Vec<ColStats>,
}

/// The merged memory or I/O table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ColTable {
    /// Memory or I/O.
    pub kind: ColKind,
    /// The columns' names, in the order of each row's `columns`.
    pub column_names: Vec<&'static str>,
    /// Tasks merged.
    pub ntasks: u32,
    /// Their `proc#`, increasing.
    pub procs: Vec<u32>,
    /// Routines by decreasing max of the sort column, then name.
    pub routines: Vec<ColRow>,
}

impl ColMerger {
    /// An empty merger of `kind` profiles.
    pub fn new(kind: ColKind) -> ColMerger {
        ColMerger {
            kind,
            names: Vec::new(),
            ids: HashMap::new(),
            accs: Vec::new(),
            procs: Vec::new(),
            order: 0,
            cur: HashMap::new(),
            cur_proc: 0,
        }
    }

    /// The kind of profiles merged.
    pub fn kind(&self) -> ColKind {
        self.kind
    }

    fn id(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.ids.get(name) {
            return i;
        }
        let i = self.names.len() as u32;
        let b: Box<str> = name.into();
        self.names.push(b.clone());
        self.ids.insert(b, i);
        self.accs.push((0, vec![Acc::default(); self.kind.width()]));
        i
    }

    /// Starts task `proc`.
    pub fn begin_task(&mut self, proc: u32) {
        self.cur_proc = proc;
        self.cur.clear();
    }

    /// Adds one row of the current task: `values` in the profile's column
    /// order (memory: self-alloc, children, leaked, heap, max.stack,
    /// paging, calls, allocs, frees; I/O: self, I/O and compute seconds,
    /// bytes read and written, reads, writes, other calls; MPI: time,
    /// calls, bytes sent and received, mean communicator size, the eight
    /// bins of the histogram), as printed.
    pub fn add(&mut self, routine: &str, values: &[f64]) {
        let id = self.id(routine);
        let cols = self.kind.columns();
        let v = self.cur.entry(id).or_insert_with(|| vec![0.0; cols.len()]);
        for ((acc, c), &x) in v.iter_mut().zip(cols).zip(values) {
            if c.largest {
                *acc = acc.max(x);
            } else {
                *acc += x;
            }
        }
    }

    /// Ends the current task.
    pub fn end_task(&mut self) {
        let cols = self.kind.columns();
        let mut ids: Vec<u32> = self.cur.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            let v = &self.cur[&id];
            let (present, accs) = &mut self.accs[id as usize];
            let first = *present == 0;
            for ((a, c), &x) in accs.iter_mut().zip(cols).zip(v) {
                a.add(x, c.scale, first, self.cur_proc, 0, self.order);
            }
            *present += 1;
        }
        self.procs.push(self.cur_proc);
        self.order += 1;
        self.cur.clear();
    }

    /// Folds another merger (of later tasks) into this one.
    pub fn combine(&mut self, other: ColMerger) -> Result<(), ColKind> {
        if other.kind != self.kind {
            return Err(other.kind);
        }
        let shift = self.order;
        for (name, (present, accs)) in other.names.iter().zip(other.accs) {
            let id = self.id(name);
            let (p, mine) = &mut self.accs[id as usize];
            for (a, mut o) in mine.iter_mut().zip(accs) {
                o.max_order += shift;
                a.combine(&o, *p, present);
            }
            *p += present;
        }
        self.procs.extend(other.procs);
        self.order += other.order;
        Ok(())
    }

    /// Tasks so far.
    pub fn ntasks(&self) -> usize {
        self.procs.len()
    }

    /// Distinct routines so far.
    pub fn nroutines(&self) -> usize {
        self.names.len()
    }

    /// The table.
    pub fn finish(self) -> ColTable {
        let n = self.procs.len() as u32;
        let cols = self.kind.columns();
        let mut routines: Vec<ColRow> = self
            .names
            .iter()
            .zip(&self.accs)
            .map(|(name, (present, accs))| ColRow {
                routine: name.to_string(),
                tasks: *present,
                columns: accs
                    .iter()
                    .zip(cols)
                    .map(|(a, c)| {
                        let s = a.stats(*present, n, c.scale);
                        ColStats {
                            sum: a.sum as f64 / c.scale,
                            min: s.min,
                            mean: s.mean,
                            max: s.max,
                            stddev: s.stddev,
                            max_task: s.max_task,
                        }
                    })
                    .collect(),
            })
            .collect();
        let k = self.kind.sort_by();
        routines.sort_by(|a, b| {
            b.columns[k]
                .max
                .total_cmp(&a.columns[k].max)
                .then_with(|| a.routine.cmp(&b.routine))
        });
        let mut procs = self.procs;
        procs.sort_unstable();
        ColTable {
            kind: self.kind,
            column_names: cols.iter().map(|c| c.name).collect(),
            ntasks: n,
            procs,
            routines,
        }
    }

    /// The merger as bytes ([`ColMerger::decode`] reads them back).
    pub fn encode(&self) -> Vec<u8> {
        let mut o = Out(Vec::with_capacity(64 + self.names.len() * 600));
        o.0.extend_from_slice(MAGIC);
        o.0.push(self.kind.code());
        o.u64(self.order);
        o.u32(self.procs.len() as u32);
        for &p in &self.procs {
            o.u32(p);
        }
        o.u32(self.names.len() as u32);
        for (name, (present, accs)) in self.names.iter().zip(&self.accs) {
            o.u32(name.len() as u32);
            o.0.extend_from_slice(name.as_bytes());
            o.u32(*present);
            for a in accs {
                o.acc(a);
            }
        }
        o.0
    }

    /// Reads [`ColMerger::encode`]'s bytes; `None` when they are not such.
    pub fn decode(b: &[u8]) -> Option<ColMerger> {
        let mut i = In(b);
        if i.take(MAGIC.len())? != MAGIC {
            return None;
        }
        let kind = match i.take(1)?[0] {
            1 => ColKind::Memory,
            2 => ColKind::Io,
            3 => ColKind::Mpi,
            _ => return None,
        };
        let mut m = ColMerger::new(kind);
        m.order = i.u64()?;
        let nprocs = i.u32()? as usize;
        if nprocs > i.0.len() / 4 {
            return None;
        }
        m.procs = (0..nprocs).map(|_| i.u32()).collect::<Option<_>>()?;
        for _ in 0..i.u32()? {
            let len = i.u32()? as usize;
            let name = std::str::from_utf8(i.take(len)?).ok()?;
            let present = i.u32()?;
            let accs = (0..kind.width())
                .map(|_| i.acc())
                .collect::<Option<Vec<_>>>()?;
            let id = m.id(name);
            m.accs[id as usize] = (present, accs);
        }
        i.0.is_empty().then_some(m)
    }
}

const MAGIC: &[u8; 8] = b"DRHKCOL1";

/// Two mergers of different kinds met (a `-mem` and an `-io` profile).
pub fn mixed(so_far: ColKind, offered: ColKind) -> String {
    format!(
        "a {} profile cannot be merged with {} profiles",
        offered.name(),
        so_far.name()
    )
}

fn value(v: f64, decimals: usize) -> String {
    if decimals == 0 && v.fract() == 0.0 && v.abs() < 1e18 {
        format!("{v:.0}")
    } else {
        format!("{v:.prec$}", prec = decimals.max(1))
    }
}

/// The merged memory or I/O table as text: per column its job sum, max
/// (and task), mean, min and standard deviation.
pub fn col_text(t: &ColTable, limit: Option<usize>) -> String {
    let cols = t.kind.columns();
    let mut o = format!(
        "{} task{} merged ({} profiles, {}), {} routines; per task a routine's rows add up over threads and call paths{}; a routine missing on a task counts 0 there; Sum is the job's\n\n",
        t.ntasks,
        if t.ntasks == 1 { "" } else { "s" },
        t.kind.name(),
        proc_range(&t.procs),
        t.routines.len(),
        match t.kind {
            ColKind::Memory => " (Heap and Max.Stack: the largest row)",
            ColKind::Mpi => " (Comm-size: the largest row)",
            ColKind::Io => "",
        }
    );
    let mut heads: Vec<String> = vec!["#".into()];
    for c in cols {
        for s in ["sum", "max", "task", "mean", "min", "sdev"] {
            heads.push(if s == "task" {
                "task".into()
            } else {
                format!("{} {s}", c.name)
            });
        }
    }
    heads.push("Tasks".into());
    heads.push("Routine".into());
    let headers: Vec<(&str, Align)> = heads
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let a = if i + 1 == heads.len() {
                Align::Left
            } else {
                Align::Right
            };
            (h.as_str(), a)
        })
        .collect();
    let n = limit.unwrap_or(usize::MAX).min(t.routines.len());
    let rows: Vec<Vec<String>> = t.routines[..n]
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut v = vec![(i + 1).to_string()];
            for (s, c) in r.columns.iter().zip(cols) {
                let d = c.decimals;
                v.push(value(s.sum, d));
                v.push(value(s.max, d));
                v.push(s.max_task.to_string());
                v.push(format!("{:.prec$}", s.mean, prec = d.max(1)));
                v.push(value(s.min, d));
                v.push(format!("{:.prec$}", s.stddev, prec = d.max(1)));
            }
            v.push(format!("{}/{}", r.tasks, t.ntasks));
            v.push(r.routine.clone());
            v
        })
        .collect();
    o.push_str(&render(&headers, &rows));
    if n < t.routines.len() {
        o.push_str(&format!(
            "({} more routines; --limit 0 shows all)\n",
            t.routines.len() - n
        ));
    }
    o
}

/// A value as an I/O profile prints its seconds (`{:.6}`) and a reader
/// reads it back.
pub fn as_printed_6(v: f64) -> f64 {
    format!("{v:.6}").parse().unwrap_or(v)
}
