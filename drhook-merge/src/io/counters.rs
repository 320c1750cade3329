//! The reduction of one path's records across processes (see
//! [`super::summary`] for the rules), as an accumulator that two partial
//! reductions combine into ([`FileAcc`]): sums, minima and maxima, the
//! counts of the common access sizes and strides (all values kept until
//! the end, so that the four most common are those of the whole job),
//! and (n, mean, M2) of the processes' times and bytes for the variances.
//! Combining `a` with `b`, `b` holding later processes, keeps `a`'s
//! firsts (opener, buffer, alignment; the first of equal fastest or
//! slowest times), so a left fold and an ordered tree give the same.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::model::{File, RoutineBytes};
use super::summary::{JobFile, ProcessIo};

/// Adds `(value, count)` pairs to a map, then keeps the four largest
/// counts (ties: the smaller value first).
fn common<T: Ord + Copy>(sets: &[&[(T, u64)]]) -> Vec<(T, u64)> {
    let mut m: BTreeMap<T, u64> = BTreeMap::new();
    for s in sets {
        for &(v, n) in s.iter() {
            *m.entry(v).or_default() += n;
        }
    }
    let mut v: Vec<(T, u64)> = m.into_iter().filter(|&(_, n)| n > 0).collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v.truncate(4);
    v
}

/// Adds `f`'s counters into `r` (all but `first`, the common values and
/// the routines: see [`reduce_counters`] and [`FileAcc`]).
fn add_counters(r: &mut File, f: &File) {
    r.closes += f.closes;
    r.opens += f.opens;
    r.reads += f.reads;
    r.writes += f.writes;
    r.read_bytes += f.read_bytes;
    r.write_bytes += f.write_bytes;
    r.read_time += f.read_time;
    r.write_time += f.write_time;
    r.meta_ops += f.meta_ops;
    r.meta_time += f.meta_time;
    r.open_time += f.open_time;
    r.close_time += f.close_time;
    r.seq_reads += f.seq_reads;
    r.seq_writes += f.seq_writes;
    r.consec_reads += f.consec_reads;
    r.consec_writes += f.consec_writes;
    r.max_read = r.max_read.max(f.max_read);
    r.max_write = r.max_write.max(f.max_write);
    r.min_read = min_opt(r.min_read, f.min_read);
    r.min_write = min_opt(r.min_write, f.min_write);
    r.last = r.last.max(f.last);
    r.mmaps += f.mmaps;
    r.stdio_reads += f.stdio_reads;
    r.stdio_writes += f.stdio_writes;
    r.stdio_read_bytes += f.stdio_read_bytes;
    r.stdio_write_bytes += f.stdio_write_bytes;
    r.stdio_other += f.stdio_other;
    r.stdio_flushes += f.stdio_flushes;
    r.stdio_flush_bytes += f.stdio_flush_bytes;
    r.stdio_refills += f.stdio_refills;
    r.stdio_refill_bytes += f.stdio_refill_bytes;
    r.mpiio_opens += f.mpiio_opens;
    r.mpiio_reads += f.mpiio_reads;
    r.mpiio_writes += f.mpiio_writes;
    r.mpiio_read_bytes += f.mpiio_read_bytes;
    r.mpiio_write_bytes += f.mpiio_write_bytes;
    r.mpiio_other += f.mpiio_other;
    if r.stdio_buffer.is_none() {
        r.stdio_buffer = f.stdio_buffer;
        r.stdio_buffer_mode.clone_from(&f.stdio_buffer_mode);
    }
    if r.bufsize.is_none() {
        r.bufsize = f.bufsize;
        r.bufmode.clone_from(&f.bufmode);
    }
    if r.opened_by.is_empty() {
        r.opened_by.clone_from(&f.opened_by);
    }
    r.seeks += f.seeks;
    r.syncs += f.syncs;
    r.max_byte_read = r.max_byte_read.max(f.max_byte_read);
    r.max_byte_written = r.max_byte_written.max(f.max_byte_written);
    r.rw_switches += f.rw_switches;
    if r.file_alignment == 0 {
        r.file_alignment = f.file_alignment;
    }
    r.mem_not_aligned += f.mem_not_aligned;
    r.file_not_aligned += f.file_not_aligned;
    r.renames_from += f.renames_from;
    r.renames_to += f.renames_to;
    r.dups += f.dups;
    if f.max_read_time > r.max_read_time {
        r.max_read_time = f.max_read_time;
        r.max_read_time_size = f.max_read_time_size;
    }
    if f.max_write_time > r.max_write_time {
        r.max_write_time = f.max_write_time;
        r.max_write_time_size = f.max_write_time_size;
    }
    r.other_routines_bytes += f.other_routines_bytes;
    add_hist(&mut r.read_hist, &f.read_hist);
    add_hist(&mut r.write_hist, &f.write_hist);
}

/// The smallest first use that is not 0 (0: none).
fn first_of(a: f64, b: f64) -> f64 {
    match (a > 0.0, b > 0.0) {
        (true, true) => a.min(b),
        (true, false) => a,
        (false, _) => b,
    }
}

/// Routines' bytes added up, most first (ties: by name).
fn sorted_routines(m: BTreeMap<String, u64>) -> Vec<RoutineBytes> {
    let mut v: Vec<RoutineBytes> = m
        .into_iter()
        .map(|(routine, bytes)| RoutineBytes { routine, bytes })
        .collect();
    v.sort_by(|a, b| {
        b.bytes
            .cmp(&a.bytes)
            .then_with(|| a.routine.cmp(&b.routine))
    });
    v
}

fn add_routines(m: &mut BTreeMap<String, u64>, rs: &[RoutineBytes]) {
    for rb in rs {
        *m.entry(rb.routine.clone()).or_default() += rb.bytes;
    }
}

/// The counters of `parts` reduced into one record (the records of one
/// process: the images of a process that called `exec`), in their order.
pub(crate) fn reduce_counters(parts: &[&File]) -> File {
    let mut r = parts[0].clone();
    for f in &parts[1..] {
        add_counters(&mut r, f);
    }
    r.first = parts.iter().fold(0.0, |m, f| first_of(m, f.first));
    let sizes: Vec<&[(u64, u64)]> = parts
        .iter()
        .map(|f| f.common_access_sizes.as_slice())
        .collect();
    r.common_access_sizes = common(&sizes);
    let strides: Vec<&[(i64, u64)]> = parts.iter().map(|f| f.common_strides.as_slice()).collect();
    r.common_strides = common(&strides);
    let mut by_routine = BTreeMap::new();
    for f in parts {
        add_routines(&mut by_routine, &f.routines);
    }
    r.routines = sorted_routines(by_routine);
    r
}

/// The population variance of `xs` (two passes).
fn variance(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n
}

/// (n, mean, M2) of a value over processes (Welford; Chan et al. to
/// combine two).
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Moments {
    n: u64,
    mean: f64,
    m2: f64,
}

impl Moments {
    fn one(x: f64) -> Moments {
        Moments {
            n: 1,
            mean: x,
            m2: 0.0,
        }
    }

    fn combine(&mut self, o: &Moments) {
        if o.n == 0 {
            return;
        }
        if self.n == 0 {
            *self = *o;
            return;
        }
        let (na, nb) = (self.n as f64, o.n as f64);
        let n = na + nb;
        let delta = o.mean - self.mean;
        self.mean += delta * nb / n;
        self.m2 += o.m2 + delta * delta * na * nb / n;
        self.n += o.n;
    }

    /// The population variance (M2 / n).
    fn variance(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.m2 / self.n as f64
        }
    }
}

/// Sorted, disjoint, inclusive ranges of task numbers: the tasks of a file
/// used by contiguous ranks take one pair, whatever their number.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct TaskSet(Vec<(u32, u32)>);

impl TaskSet {
    pub(crate) fn one(t: u32) -> TaskSet {
        TaskSet(vec![(t, t)])
    }

    pub(crate) fn union(&mut self, o: &TaskSet) {
        let mut all: Vec<(u32, u32)> = self.0.iter().chain(&o.0).copied().collect();
        all.sort_unstable();
        let mut out: Vec<(u32, u32)> = Vec::with_capacity(all.len());
        for (lo, hi) in all {
            match out.last_mut() {
                Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
                _ => out.push((lo, hi)),
            }
        }
        self.0 = out;
    }

    pub(crate) fn len(&self) -> u64 {
        self.0.iter().map(|&(lo, hi)| u64::from(hi - lo) + 1).sum()
    }

    pub(crate) fn to_vec(&self) -> Vec<u32> {
        self.0.iter().flat_map(|&(lo, hi)| lo..=hi).collect()
    }
}

/// One path's records over some processes, reduced so far.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct FileAcc {
    /// The counters (its common values and routines in the maps below).
    counters: File,
    sizes: BTreeMap<u64, u64>,
    strides: BTreeMap<i64, u64>,
    routines: BTreeMap<String, u64>,
    processes: u64,
    tasks: TaskSet,
    fastest: ProcessIo,
    slowest: ProcessIo,
    time: Moments,
    bytes: Moments,
    /// Each process's (time, bytes) while every one is here (`drhook io`
    /// folding its reports: the variances then by two passes over them,
    /// as before the partials; not sent, so a reduction across ranks uses
    /// the moments, equal to rounding).
    #[serde(skip)]
    values: Vec<(f64, f64)>,
}

impl FileAcc {
    /// The record of one process (`f`: its records already reduced into
    /// one, [`reduce_counters`]).
    pub(crate) fn unit(task: u32, pid: u32, command: &str, mut f: File) -> FileAcc {
        let io = ProcessIo {
            task,
            pid,
            command: command.to_string(),
            bytes: f.bytes(),
            time: f.time(),
        };
        let mut sizes = BTreeMap::new();
        for &(v, n) in &f.common_access_sizes {
            *sizes.entry(v).or_default() += n;
        }
        let mut strides = BTreeMap::new();
        for &(v, n) in &f.common_strides {
            *strides.entry(v).or_default() += n;
        }
        let mut routines = BTreeMap::new();
        add_routines(&mut routines, &f.routines);
        f.common_access_sizes.clear();
        f.common_strides.clear();
        f.routines.clear();
        FileAcc {
            counters: f,
            sizes,
            strides,
            routines,
            processes: 1,
            tasks: TaskSet::one(task),
            time: Moments::one(io.time),
            bytes: Moments::one(io.bytes as f64),
            values: vec![(io.time, io.bytes as f64)],
            fastest: io.clone(),
            slowest: io,
        }
    }

    /// Adds `o` (later processes) into `self`.
    pub(crate) fn combine(&mut self, o: FileAcc) {
        add_counters(&mut self.counters, &o.counters);
        self.counters.first = first_of(self.counters.first, o.counters.first);
        for (v, n) in o.sizes {
            *self.sizes.entry(v).or_default() += n;
        }
        for (v, n) in o.strides {
            *self.strides.entry(v).or_default() += n;
        }
        for (r, b) in o.routines {
            *self.routines.entry(r).or_default() += b;
        }
        self.processes += o.processes;
        self.tasks.union(&o.tasks);
        if o.fastest.time < self.fastest.time {
            self.fastest = o.fastest;
        }
        if o.slowest.time > self.slowest.time {
            self.slowest = o.slowest;
        }
        self.time.combine(&o.time);
        self.bytes.combine(&o.bytes);
        self.values.extend(o.values);
    }

    /// The job's record of the path.
    pub(crate) fn finish(self) -> JobFile {
        let mut r = self.counters;
        let sizes: Vec<(u64, u64)> = self.sizes.into_iter().collect();
        r.common_access_sizes = common(&[sizes.as_slice()]);
        let strides: Vec<(i64, u64)> = self.strides.into_iter().collect();
        r.common_strides = common(&[strides.as_slice()]);
        r.routines = sorted_routines(self.routines);
        let shared = self.processes > 1 && !r.is_group();
        let (vt, vb) = if self.values.len() as u64 == self.processes {
            let times: Vec<f64> = self.values.iter().map(|v| v.0).collect();
            let bytes: Vec<f64> = self.values.iter().map(|v| v.1).collect();
            (variance(&times), variance(&bytes))
        } else {
            (self.time.variance(), self.bytes.variance())
        };
        JobFile {
            bytes: r.bytes(),
            time: r.time(),
            counters: r,
            processes: self.processes,
            tasks: self.tasks.len(),
            shared,
            fastest: shared.then_some(self.fastest),
            slowest: shared.then_some(self.slowest),
            variance_time: shared.then_some(vt),
            variance_bytes: shared.then_some(vb),
        }
    }
}

fn min_opt(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, None) => x,
        (None, y) => y,
    }
}

fn add_hist(to: &mut Vec<u64>, from: &[u64]) {
    if to.len() < from.len() {
        to.resize(from.len(), 0);
    }
    for (a, b) in to.iter_mut().zip(from) {
        *a += b;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn var(xs: &[f64]) -> f64 {
        let mut m = Moments::default();
        for &x in xs {
            m.combine(&Moments::one(x));
        }
        m.variance()
    }

    #[test]
    fn variance_is_the_population_variance() {
        assert_eq!(var(&[1.0, 3.0]), 1.0);
        assert_eq!(var(&[2.0]), 0.0);
        assert_eq!(var(&[]), 0.0);
        // Combined in a tree, as a fold.
        let (mut a, mut b) = (Moments::one(1.0), Moments::one(5.0));
        a.combine(&Moments::one(2.0));
        b.combine(&Moments::one(8.0));
        a.combine(&b);
        assert!((a.variance() - var(&[1.0, 2.0, 5.0, 8.0])).abs() < 1e-12);
        assert!((a.variance() - variance(&[1.0, 2.0, 5.0, 8.0])).abs() < 1e-12);
    }

    #[test]
    fn most_common_values() {
        let a: &[(i64, u64)] = &[(8, 3), (-4, 1), (16, 1)];
        let b: &[(i64, u64)] = &[(16, 2), (32, 1), (64, 1)];
        assert_eq!(common(&[a, b]), [(8, 3), (16, 3), (-4, 1), (32, 1)]);
    }

    #[test]
    fn task_ranges() {
        let mut s = TaskSet::one(3);
        s.union(&TaskSet::one(1));
        s.union(&TaskSet::one(2));
        s.union(&TaskSet::one(7));
        assert_eq!(s.0, [(1, 3), (7, 7)]);
        assert_eq!((s.len(), s.to_vec()), (4, vec![1, 2, 3, 7]));
    }
}
