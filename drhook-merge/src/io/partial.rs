//! A job summary in the making ([`Partial`]): what some processes' reports
//! add up to, combinable with another's (the processes after them), and
//! finished into the [`Summary`] (`drhook io`'s job document). `drhook io`
//! folds its reports through it; the preload library's reduction inside
//! `MPI_Finalize` (`DR_HOOK_OPT=io,reduce`) combines the ranks' partials
//! along a binomial tree: the two make the same document by construction
//! (sums of floats up to their order of addition).
//!
//! Its size grows with the distinct files, routines and commands, and by
//! one row per process ([`Summary::processes`]: its totals, not its
//! report).

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use super::counters::{FileAcc, TaskSet, reduce_counters};
use super::model::{Aio, File, Report};
use super::summary::{
    CommandTotal, FORMAT, JobFile, Process, RoutineTotal, SmallFlushes, Summary, Totals,
};
use super::tree::{Node, parents, tree_order};

/// One process's row, before the tree is known.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Row {
    report: String,
    command: String,
    pid: u32,
    ppid: u32,
    task: u32,
    /// The task of its process (that of the last image after an `exec`).
    ptask: u32,
    ancestry: Vec<String>,
    ending: String,
    status: Option<i64>,
    seconds: f64,
    totals: Totals,
    /// Its distinct paths (for the files of a subtree; not sent: a rank of
    /// an MPI job has no children among the ranks).
    #[serde(skip)]
    paths: Vec<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct CommandAcc {
    processes: u64,
    seconds: f64,
    totals: Totals,
    paths: BTreeSet<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct RoutineAcc {
    bytes: u64,
    paths: BTreeSet<String>,
    processes: u64,
}

/// The job summary of some processes, so far.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Partial {
    files: BTreeMap<String, FileAcc>,
    rows: Vec<Row>,
    commands: BTreeMap<String, CommandAcc>,
    routines: BTreeMap<String, RoutineAcc>,
    other_routines_bytes: u64,
    totals: Totals,
    aio: Aio,
    tasks: TaskSet,
}

/// A process's own totals.
fn process_totals(r: &Report) -> Totals {
    let mut t = Totals::default();
    for f in &r.files {
        t.add_file(f);
    }
    t.files = r.files.len() as u64;
    t.path_meta_ops = r.path_meta_ops;
    t.path_meta_time = r.path_meta_time;
    t
}

impl Partial {
    /// The partial of one process's report (`name`: its file), each of its
    /// paths one process's record.
    pub fn of_report(name: &str, r: &Report) -> Partial {
        let mut p = Partial::default();
        p.add_report(name, r, r.task);
        let mut by_path: BTreeMap<&str, Vec<&File>> = BTreeMap::new();
        for f in &r.files {
            by_path.entry(f.path.as_str()).or_default().push(f);
        }
        for (path, v) in by_path {
            p.add_file(
                path,
                FileAcc::unit(r.task, r.pid, &r.command, reduce_counters(&v)),
            );
        }
        p
    }

    /// Adds a report's process row, command, routines, totals and AIO
    /// (not its files: [`Partial::add_file`]); `ptask`: the task of its
    /// process.
    fn add_report(&mut self, name: &str, r: &Report, ptask: u32) {
        let own = process_totals(r);
        let mut paths: Vec<String> = r.files.iter().map(|f| f.path.clone()).collect();
        paths.sort_unstable();
        paths.dedup();
        let c = self.commands.entry(r.command.clone()).or_default();
        c.processes += 1;
        c.seconds += r.seconds;
        c.totals.add(&own);
        c.paths.extend(paths.iter().cloned());
        let mut mine: BTreeSet<&str> = BTreeSet::new();
        for f in &r.files {
            self.other_routines_bytes += f.other_routines_bytes;
            for rb in &f.routines {
                let a = self.routines.entry(rb.routine.clone()).or_default();
                a.bytes += rb.bytes;
                a.paths.insert(f.path.clone());
                if mine.insert(rb.routine.as_str()) {
                    a.processes += 1;
                }
            }
        }
        self.totals.add(&own);
        let a = &mut self.aio;
        a.reads += r.aio.reads;
        a.writes += r.aio.writes;
        a.completed += r.aio.completed;
        a.bytes += r.aio.bytes;
        a.time += r.aio.time;
        a.max_queue_depth = a.max_queue_depth.max(r.aio.max_queue_depth);
        self.tasks.union(&TaskSet::one(r.task));
        self.rows.push(Row {
            report: name.to_string(),
            command: r.command.clone(),
            pid: r.pid,
            ppid: r.ppid,
            task: r.task,
            ptask,
            ancestry: r.ancestry.clone(),
            ending: r.ending.clone(),
            status: r.status,
            seconds: r.seconds,
            totals: own,
            paths,
        });
    }

    /// Adds processes' records of `path` (later than those it has).
    fn add_file(&mut self, path: &str, acc: FileAcc) {
        match self.files.get_mut(path) {
            Some(a) => a.combine(acc),
            None => {
                self.files.insert(path.to_string(), acc);
            }
        }
    }

    /// Adds `o`, the partial of processes after this one's.
    pub fn combine(&mut self, o: Partial) {
        for (path, acc) in o.files {
            self.add_file(&path, acc);
        }
        self.rows.extend(o.rows);
        for (k, c) in o.commands {
            let m = self.commands.entry(k).or_default();
            m.processes += c.processes;
            m.seconds += c.seconds;
            m.totals.add(&c.totals);
            m.paths.extend(c.paths);
        }
        for (k, r) in o.routines {
            let m = self.routines.entry(k).or_default();
            m.bytes += r.bytes;
            m.paths.extend(r.paths);
            m.processes += r.processes;
        }
        self.other_routines_bytes += o.other_routines_bytes;
        self.totals.add(&o.totals);
        let (a, b) = (&mut self.aio, &o.aio);
        a.reads += b.reads;
        a.writes += b.writes;
        a.completed += b.completed;
        a.bytes += b.bytes;
        a.time += b.time;
        a.max_queue_depth = a.max_queue_depth.max(b.max_queue_depth);
        self.tasks.union(&o.tasks);
    }

    /// The partial as bytes (to send to another rank).
    pub fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).unwrap_or_default()
    }

    /// The partial of [`Partial::encode`]'s bytes (None: damaged).
    pub fn decode(b: &[u8]) -> Option<Partial> {
        serde_json::from_slice(b).ok()
    }

    /// Processes so far.
    pub fn processes(&self) -> usize {
        self.rows.len()
    }

    /// The job summary: `top` files by bytes and by time named (0: all),
    /// small stdio flushes compared with `block` bytes (None: each file's
    /// own block size).
    pub fn finish(self, top: usize, block: Option<u64>) -> Summary {
        let mut files: Vec<JobFile> = self.files.into_values().map(FileAcc::finish).collect();
        files.sort_by(|a, b| {
            b.bytes
                .cmp(&a.bytes)
                .then(b.time.total_cmp(&a.time))
                .then_with(|| a.counters.path.cmp(&b.counters.path))
        });
        let n = if top == 0 {
            files.len()
        } else {
            top.min(files.len())
        };
        let top_by_bytes = files
            .iter()
            .filter(|f| f.bytes > 0)
            .take(n)
            .map(|f| f.counters.path.clone())
            .collect();
        let mut by_time: Vec<&JobFile> = files.iter().filter(|f| f.time > 0.0).collect();
        by_time.sort_by(|a, b| {
            b.time
                .total_cmp(&a.time)
                .then_with(|| a.counters.path.cmp(&b.counters.path))
        });
        let top_by_time = by_time
            .iter()
            .take(n)
            .map(|f| f.counters.path.clone())
            .collect();
        let processes = tree_rows(&self.rows);
        let mut commands: Vec<CommandTotal> = self
            .commands
            .into_iter()
            .map(|(command, c)| {
                let mut totals = c.totals;
                totals.files = c.paths.len() as u64;
                CommandTotal {
                    command,
                    processes: c.processes,
                    seconds: c.seconds,
                    totals,
                }
            })
            .collect();
        commands.sort_by(|a, b| {
            (b.totals.read() + b.totals.written())
                .cmp(&(a.totals.read() + a.totals.written()))
                .then_with(|| a.command.cmp(&b.command))
        });
        let mut routines: Vec<RoutineTotal> = self
            .routines
            .into_iter()
            .map(|(routine, r)| RoutineTotal {
                routine,
                bytes: r.bytes,
                files: r.paths.len() as u64,
                processes: r.processes,
            })
            .collect();
        routines.sort_by(|a, b| {
            b.bytes
                .cmp(&a.bytes)
                .then_with(|| a.routine.cmp(&b.routine))
        });
        let mut totals = self.totals;
        totals.files = files.len() as u64;
        let mut small_flushes: Vec<SmallFlushes> = files
            .iter()
            .filter_map(|f| {
                let c = &f.counters;
                c.small_flushes(block).map(|(mean, blk)| SmallFlushes {
                    path: c.path.clone(),
                    flushes: c.stdio_flushes,
                    mean_bytes: mean,
                    block_size: blk,
                    buffer: c.stdio_buffer,
                })
            })
            .collect();
        small_flushes.sort_by(|a, b| b.flushes.cmp(&a.flushes).then(a.path.cmp(&b.path)));
        Summary {
            small_flushes,
            format: FORMAT.into(),
            version: 1,
            tasks: self.tasks.to_vec(),
            totals,
            aio: self.aio,
            files,
            top_by_bytes,
            top_by_time,
            routines,
            other_routines_bytes: self.other_routines_bytes,
            commands,
            processes,
        }
    }
}

/// The rows in tree order, each with its totals and those of the
/// processes below it (by `ppid`: a shell keeps its own copy of the
/// environment, so the ancestry its children inherit through `exec` may
/// miss a level).
fn tree_rows(rows: &[Row]) -> Vec<Process> {
    let nodes: Vec<Node> = rows
        .iter()
        .map(|r| Node::new(r.pid, r.ppid, r.task, &r.ending))
        .collect();
    let ptask: Vec<u32> = rows.iter().map(|r| r.ptask).collect();
    let parent = parents(&nodes, &ptask);
    let mut with_children: Vec<Totals> = rows.iter().map(|r| r.totals.clone()).collect();
    let mut below: Vec<Vec<usize>> = (0..rows.len()).map(|i| vec![i]).collect();
    for i in 0..rows.len() {
        let mut k = parent[i];
        let mut steps = 0;
        while let Some(p) = k {
            if p == i || steps > rows.len() {
                break;
            }
            with_children[p].add(&rows[i].totals);
            below[p].push(i);
            k = parent[p];
            steps += 1;
        }
    }
    // `files` of a subtree: distinct paths in it.
    for (wc, under) in with_children.iter_mut().zip(&below) {
        if under.len() > 1 {
            let mut paths: Vec<&str> = under
                .iter()
                .flat_map(|&i| rows[i].paths.iter().map(String::as_str))
                .collect();
            paths.sort_unstable();
            paths.dedup();
            wc.files = paths.len() as u64;
        }
    }
    tree_order(&nodes, &ptask, &parent)
        .into_iter()
        .map(|(i, depth)| {
            let r = &rows[i];
            Process {
                report: r.report.clone(),
                command: r.command.clone(),
                pid: r.pid,
                ppid: r.ppid,
                task: r.task,
                depth,
                ancestry: r.ancestry.clone(),
                ending: r.ending.clone(),
                status: r.status,
                seconds: r.seconds,
                totals: r.totals.clone(),
                with_children: with_children[i].clone(),
            }
        })
        .collect()
}

/// The summary of `reports` (`names`: the file each was read from; `top`
/// and `block` as in [`Partial::finish`]): the reports folded into one
/// [`Partial`] in their order, a path's records of one process (the images
/// of a process that called `exec`: one pid, several reports) first added
/// into one.
pub fn summarize_with(
    reports: &[Report],
    names: &[String],
    top: usize,
    block: Option<u64>,
) -> Summary {
    let nodes: Vec<Node> = reports
        .iter()
        .map(|r| Node::new(r.pid, r.ppid, r.task, &r.ending))
        .collect();
    let ptask = super::tree::process_tasks(&nodes);
    let mut p = Partial::default();
    for (i, r) in reports.iter().enumerate() {
        p.add_report(names.get(i).map_or("", String::as_str), r, ptask[i]);
    }
    // Records by path, then per process (task, pid) in the order met.
    let mut by_path: BTreeMap<&str, Vec<(usize, &File)>> = BTreeMap::new();
    for (i, r) in reports.iter().enumerate() {
        for f in &r.files {
            by_path.entry(f.path.as_str()).or_default().push((i, f));
        }
    }
    for (path, parts) in by_path {
        let mut units: Vec<((u32, u32), Vec<&File>)> = Vec::new();
        for &(i, f) in &parts {
            let key = (ptask[i], reports[i].pid);
            match units.iter_mut().find(|(k, _)| *k == key) {
                Some((_, v)) => v.push(f),
                None => units.push((key, vec![f])),
            }
        }
        let mut acc: Option<FileAcc> = None;
        for ((t, pid), v) in units {
            // The command of a process: that of its last report with the
            // file.
            let command = parts
                .iter()
                .rev()
                .find(|&&(i, _)| ptask[i] == t && reports[i].pid == pid)
                .map(|&(i, _)| reports[i].command.as_str())
                .unwrap_or_default();
            let u = FileAcc::unit(t, pid, command, reduce_counters(&v));
            match acc.as_mut() {
                Some(a) => a.combine(u),
                None => acc = Some(u),
            }
        }
        if let Some(a) = acc {
            p.add_file(path, a);
        }
    }
    p.finish(top, block)
}

/// [`summarize_with`], each file's own block size.
pub fn summarize(reports: &[Report], names: &[String], top: usize) -> Summary {
    summarize_with(reports, names, top, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::model::{File, Report, RoutineBytes};

    fn file(path: &str, bytes: u64, time: f64) -> File {
        File {
            path: path.into(),
            writes: 1,
            write_bytes: bytes,
            write_time: time,
            max_write: bytes,
            min_write: Some(bytes),
            first: 0.5,
            last: 1.0,
            write_hist: vec![0; 10],
            read_hist: vec![0; 10],
            ..File::default()
        }
    }

    fn report(pid: u32, task: u32, files: Vec<File>) -> Report {
        Report {
            format: "drhook-io".into(),
            command: "w".into(),
            pid,
            task,
            ending: "return".into(),
            status: Some(0),
            files,
            ..Report::default()
        }
    }

    #[test]
    fn shared_file_reduction() {
        let mut a = file("/d/shared", 100, 0.25);
        a.max_write_time = 0.2;
        a.max_write_time_size = 100;
        a.common_access_sizes = vec![(100, 1)];
        a.max_byte_written = 99;
        let mut b = file("/d/shared", 300, 0.75);
        b.max_write_time = 0.5;
        b.max_write_time_size = 300;
        b.common_access_sizes = vec![(300, 1), (100, 2)];
        b.max_byte_written = 399;
        b.first = 0.1;
        b.min_write = Some(50);
        let reps = vec![
            report(10, 1, vec![a, file("/d/own1", 7, 0.0)]),
            report(11, 2, vec![b, file("<stdout>", 1, 0.0)]),
            report(12, 3, vec![file("<stdout>", 2, 0.0)]),
        ];
        let s = summarize(&reps, &[], 10);
        let sh = s
            .files
            .iter()
            .find(|f| f.counters.path == "/d/shared")
            .unwrap();
        assert!(sh.shared);
        assert_eq!((sh.processes, sh.tasks, sh.bytes), (2, 2, 400));
        assert_eq!(sh.counters.writes, 2);
        assert_eq!(sh.counters.max_byte_written, 399);
        assert_eq!(
            (sh.counters.max_write_time, sh.counters.max_write_time_size),
            (0.5, 300)
        );
        assert_eq!(sh.counters.common_access_sizes, vec![(100, 3), (300, 1)]);
        assert_eq!(sh.counters.first, 0.1);
        assert_eq!(sh.counters.min_write, Some(50));
        assert_eq!(sh.fastest.as_ref().unwrap().pid, 10);
        assert_eq!(sh.slowest.as_ref().unwrap().bytes, 300);
        assert_eq!(sh.variance_time, Some(0.0625));
        assert_eq!(sh.variance_bytes, Some(10000.0));
        let out = s
            .files
            .iter()
            .find(|f| f.counters.path == "<stdout>")
            .unwrap();
        assert!(!out.shared && out.fastest.is_none());
        assert_eq!(out.processes, 2);
        assert_eq!(s.totals.files, 3);
        assert_eq!(s.totals.write_bytes, 410);
        assert_eq!(s.top_by_bytes[0], "/d/shared");
        assert_eq!(s.tasks, vec![1, 2, 3]);
    }

    #[test]
    fn process_tree_totals() {
        let mut child = report(20, 1, vec![file("/x", 5, 0.0)]);
        child.ppid = 10;
        child.command = "c".into();
        let mut grandchild = report(30, 1, vec![file("/y", 7, 0.0)]);
        grandchild.ppid = 20;
        grandchild.command = "c".into();
        // The image of 20 before it called exec: a sibling, first.
        let mut image = report(20, 1, vec![file("/x", 100, 0.0)]);
        image.ppid = 10;
        image.ending = "exec".into();
        let reps = vec![
            grandchild,
            report(10, 1, vec![file("/x", 1, 0.0)]),
            child,
            image,
        ];
        let s = summarize(&reps, &[], 0);
        let order: Vec<(u32, u32, &str)> = s
            .processes
            .iter()
            .map(|p| (p.pid, p.depth, p.ending.as_str()))
            .collect();
        assert_eq!(
            order,
            [
                (10, 0, "return"),
                (20, 1, "exec"),
                (20, 1, "return"),
                (30, 2, "return")
            ]
        );
        assert_eq!(s.processes[0].with_children.write_bytes, 113);
        assert_eq!(s.processes[0].with_children.files, 2);
        assert_eq!(s.processes[2].with_children.write_bytes, 12);
        assert_eq!(s.processes[3].with_children.write_bytes, 7);
        // The two images of 20 are one process of /x.
        let x = s.files.iter().find(|f| f.counters.path == "/x").unwrap();
        assert_eq!((x.processes, x.bytes), (2, 106));
        let c = s.commands.iter().find(|c| c.command == "c").unwrap();
        assert_eq!(
            (c.processes, c.totals.write_bytes, c.totals.files),
            (2, 12, 2)
        );
        let w = s.commands.iter().find(|c| c.command == "w").unwrap();
        assert_eq!((w.processes, w.totals.write_bytes), (2, 101));
    }

    #[test]
    fn a_tree_of_partials_makes_the_fold_s_summary() {
        let mut reps = Vec::new();
        for k in 0..5u32 {
            let mut sh = file(
                "/d/shared",
                100 * u64::from(k + 1),
                0.125 * f64::from(k + 1),
            );
            sh.common_access_sizes = vec![(u64::from(k % 2 + 1) * 100, 1)];
            sh.routines = vec![RoutineBytes {
                routine: format!("R{}", k % 2),
                bytes: 10,
            }];
            reps.push(report(
                100 + k,
                k + 1,
                vec![sh, file(&format!("/d/own{k}"), 7, 0.5)],
            ));
        }
        let names: Vec<String> = (1..=5).map(|t| format!("drhook.io.{t}")).collect();
        let fold = summarize(&reps, &names, 0);
        // Ranks 0-4 as the reduction combines them: (0 1) (2 3), then 4.
        let part = |i: usize| Partial::of_report(&names[i], &reps[i]);
        let (mut a, mut b) = (part(0), part(2));
        a.combine(part(1));
        b.combine(part(3));
        a.combine(b);
        a.combine(part(4));
        let a = Partial::decode(&a.encode()).unwrap();
        let tree = a.finish(0, None);
        assert_eq!(tree.to_json(), fold.to_json());
        let sh = &tree.files[0];
        assert_eq!((sh.processes, sh.tasks, sh.bytes), (5, 5, 1500));
        assert_eq!(sh.counters.common_access_sizes, [(100, 3), (200, 2)]);
        assert_eq!(sh.variance_bytes, Some(20000.0));
        assert_eq!(tree.routines[0].processes, 3);
    }
}
