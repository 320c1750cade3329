//! The reduction of one path's records across processes (see
//! [`super::summary`]'s documentation for the rules).

use std::collections::BTreeMap;

use super::read::{File, Report, RoutineBytes};
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

/// The population variance of `xs` (two passes).
pub(super) fn variance(xs: &[f64]) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n
}

/// The counters of `parts` reduced into one record (see the module
/// documentation), in their order.
fn reduce_counters(parts: &[&File]) -> File {
    let mut r = parts[0].clone();
    for f in &parts[1..] {
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
    // The smallest first use that is not 0 (0: none in that process).
    r.first = parts
        .iter()
        .map(|f| f.first)
        .filter(|&t| t > 0.0)
        .fold(None, |m: Option<f64>, t| Some(m.map_or(t, |m| m.min(t))))
        .unwrap_or(0.0);
    let sizes: Vec<&[(u64, u64)]> = parts
        .iter()
        .map(|f| f.common_access_sizes.as_slice())
        .collect();
    r.common_access_sizes = common(&sizes);
    let strides: Vec<&[(i64, u64)]> = parts.iter().map(|f| f.common_strides.as_slice()).collect();
    r.common_strides = common(&strides);
    let mut by_routine: Vec<RoutineBytes> = Vec::new();
    for f in parts {
        for rb in &f.routines {
            match by_routine.iter_mut().find(|x| x.routine == rb.routine) {
                Some(x) => x.bytes += rb.bytes,
                None => by_routine.push(rb.clone()),
            }
        }
    }
    by_routine.sort_by(|a, b| {
        b.bytes
            .cmp(&a.bytes)
            .then_with(|| a.routine.cmp(&b.routine))
    });
    r.routines = by_routine;
    r
}

/// Reduces one path's records (`parts`: each with its report's index).
/// The records of one process (the images of a process that called
/// `exec`: one pid, several reports) are first added into one.
pub(super) fn reduce(parts: &[(usize, &File)], reports: &[Report], ptask: &[u32]) -> JobFile {
    // Per process (task, pid), in the order met.
    let mut units: Vec<((u32, u32), Vec<&File>)> = Vec::new();
    for &(i, f) in parts {
        let key = (ptask[i], reports[i].pid);
        match units.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => v.push(f),
            None => units.push((key, vec![f])),
        }
    }
    let per: Vec<((u32, u32), File)> = units
        .iter()
        .map(|(k, v)| (*k, reduce_counters(v)))
        .collect();
    let all: Vec<&File> = per.iter().map(|(_, f)| f).collect();
    let r = reduce_counters(&all);
    let mut tasks: Vec<u32> = per.iter().map(|((t, _), _)| *t).collect();
    tasks.sort_unstable();
    tasks.dedup();
    let shared = per.len() > 1 && !r.is_group();
    // The command of a process: that of its last report with the file.
    let command = |&(t, p): &(u32, u32)| {
        parts
            .iter()
            .rev()
            .find(|&&(i, _)| ptask[i] == t && reports[i].pid == p)
            .map(|&(i, _)| reports[i].command.clone())
            .unwrap_or_default()
    };
    let io = |(k, f): &((u32, u32), File)| ProcessIo {
        task: k.0,
        pid: k.1,
        command: command(k),
        bytes: f.bytes(),
        time: f.time(),
    };
    let (mut fastest, mut slowest, mut vt, mut vb) = (None, None, None, None);
    if shared {
        // The first of equal times, in report order.
        let mut lo = &per[0];
        let mut hi = &per[0];
        for p in &per[1..] {
            if p.1.time() < lo.1.time() {
                lo = p;
            }
            if p.1.time() > hi.1.time() {
                hi = p;
            }
        }
        fastest = Some(io(lo));
        slowest = Some(io(hi));
        let times: Vec<f64> = per.iter().map(|(_, f)| f.time()).collect();
        let bytes: Vec<f64> = per.iter().map(|(_, f)| f.bytes() as f64).collect();
        vt = Some(variance(&times));
        vb = Some(variance(&bytes));
    }
    JobFile {
        bytes: r.bytes(),
        time: r.time(),
        counters: r,
        processes: per.len() as u64,
        tasks: tasks.len() as u64,
        shared,
        fastest,
        slowest,
        variance_time: vt,
        variance_bytes: vb,
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

    #[test]
    fn variance_is_the_population_variance() {
        assert_eq!(variance(&[1.0, 3.0]), 1.0);
        assert_eq!(variance(&[2.0]), 0.0);
        assert_eq!(variance(&[]), 0.0);
    }

    #[test]
    fn most_common_values() {
        let a: &[(i64, u64)] = &[(8, 3), (-4, 1), (16, 1)];
        let b: &[(i64, u64)] = &[(16, 2), (32, 1), (64, 1)];
        assert_eq!(common(&[a, b]), [(8, 3), (16, 3), (-4, 1), (32, 1)]);
    }
}
