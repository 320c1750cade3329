//! One summary of a job's per-process reports (every rank of an MPI run,
//! every process of a `drhook run` tree): totals per file across the
//! processes, files used by several processes reduced as Darshan reduces
//! a shared record, per routine, per command and per process.
//!
//! The reduction of one path's records (Darshan 3.5's shared-record
//! reduction, `darshan-posix`; a process here is what Darshan calls a
//! rank):
//!
//! * summed: calls, bytes, times, the access counters (sequential,
//!   consecutive, read/write switches, alignment misses), the size
//!   histograms, renames, dups, mappings, stdio calls, seeks, syncs;
//! * largest: the highest byte read and written, the largest operation,
//!   the slowest read and write (with its size), the last use;
//! * smallest: the smallest operation, the first use (the smallest that
//!   is not 0);
//! * the four most common access sizes and strides: the counts of equal
//!   values added, then the four largest counts (ties: the smaller value
//!   first);
//! * the file alignment, `setvbuf` size and mode, the opener: the first
//!   process's that has one;
//! * for a file used by more than one process (`shared`; a grouped record
//!   such as `<stdout>` or `<system files>` is never shared): the fastest
//!   and the slowest process with its bytes and time (Darshan's
//!   `FASTEST_RANK`, `FASTEST_RANK_BYTES`, `F_FASTEST_RANK_TIME`, and
//!   the slowest's), and the variances across those processes of the time
//!   and of the bytes (`F_VARIANCE_RANK_TIME`, `F_VARIANCE_RANK_BYTES`:
//!   the population variance, the sum of squared deviations over n). A
//!   process's time on a file is its read, write, metadata, open and
//!   close time (Darshan's read + write + meta time); its bytes are read
//!   and written bytes, system calls and stdio together (one record per
//!   file here where Darshan has a POSIX and a STDIO record). Unlike
//!   Darshan, n is the number of processes that used the file, not every
//!   rank of the job.
//!
//! The first and last use (`first`, `last`) are seconds since each
//! process's own start: across processes they are the smallest and
//! largest of those, not times on one clock.

use std::collections::HashMap;

use serde::Serialize;

use super::read::{Aio, File, Report};
use super::reduce::reduce;
use super::tree::{parents, process_tasks, tree_order};

/// Value of the summary's `format` member.
pub const FORMAT: &str = "drhook-io-job";

/// The job summary (`drhook io --json` of several reports).
#[derive(Clone, Debug, Serialize)]
pub struct Summary {
    /// Always [`FORMAT`].
    pub format: &'static str,
    /// 1.
    pub version: u32,
    /// Distinct task numbers (MPI ranks + 1) among the reports.
    pub tasks: Vec<u32>,
    /// The whole job's I/O.
    pub totals: Totals,
    /// AIO of every process: counts, bytes and time summed, the largest
    /// queue depth.
    pub aio: Aio,
    /// Every file (by path) used by any process, most bytes first.
    pub files: Vec<JobFile>,
    /// Paths of the files with the most bytes, most first (at most
    /// `top`).
    pub top_by_bytes: Vec<String>,
    /// Paths of the files with the most time in their calls.
    pub top_by_time: Vec<String>,
    /// Bytes per routine over every file and process, most first.
    pub routines: Vec<RoutineTotal>,
    /// Bytes of routines the reports did not name (after a file's eighth).
    pub other_routines_bytes: u64,
    /// Per command (the program's name), most bytes first.
    pub commands: Vec<CommandTotal>,
    /// One per report, in tree order (a child after its parent: the
    /// report of its `ppid`) with its depth.
    pub processes: Vec<Process>,
    /// Files whose streams stdio flushed in writes below half the block
    /// size (ECIOPROF's "setvbuf omission"), most flushes first.
    pub small_flushes: Vec<SmallFlushes>,
}

/// A file flagged for small stdio flushes ([`File::small_flushes`]).
#[derive(Clone, Debug, Serialize)]
pub struct SmallFlushes {
    /// Its path.
    pub path: String,
    /// The writes stdio made for its streams.
    pub flushes: u64,
    /// Their mean bytes.
    pub mean_bytes: u64,
    /// The block size compared with.
    pub block_size: u64,
    /// The stream buffer, as seen at the flushes.
    pub buffer: Option<u64>,
}

/// Calls, bytes and times added up (a process's, a command's, the job's).
#[derive(Clone, Debug, Default, Serialize)]
#[allow(missing_docs)]
pub struct Totals {
    /// Distinct paths.
    pub files: u64,
    pub opens: u64,
    pub reads: u64,
    pub writes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub stdio_reads: u64,
    pub stdio_writes: u64,
    pub stdio_read_bytes: u64,
    pub stdio_write_bytes: u64,
    /// The writes stdio made for streams (in `writes`) and their bytes.
    pub stdio_flushes: u64,
    pub stdio_flush_bytes: u64,
    pub read_time: f64,
    pub write_time: f64,
    /// Metadata, open and close time on files.
    pub meta_time: f64,
    /// Metadata calls on paths (`stat`, `unlink`, ...).
    pub path_meta_ops: u64,
    pub path_meta_time: f64,
}

impl Totals {
    fn add_file(&mut self, f: &File) {
        self.opens += f.opens;
        self.reads += f.reads;
        self.writes += f.writes;
        self.read_bytes += f.read_bytes;
        self.write_bytes += f.write_bytes;
        self.stdio_reads += f.stdio_reads;
        self.stdio_writes += f.stdio_writes;
        self.stdio_read_bytes += f.stdio_read_bytes;
        self.stdio_write_bytes += f.stdio_write_bytes;
        self.stdio_flushes += f.stdio_flushes;
        self.stdio_flush_bytes += f.stdio_flush_bytes;
        self.read_time += f.read_time;
        self.write_time += f.write_time;
        self.meta_time += f.meta_time + f.open_time + f.close_time;
    }

    fn add(&mut self, o: &Totals) {
        self.opens += o.opens;
        self.reads += o.reads;
        self.writes += o.writes;
        self.read_bytes += o.read_bytes;
        self.write_bytes += o.write_bytes;
        self.stdio_reads += o.stdio_reads;
        self.stdio_writes += o.stdio_writes;
        self.stdio_read_bytes += o.stdio_read_bytes;
        self.stdio_write_bytes += o.stdio_write_bytes;
        self.stdio_flushes += o.stdio_flushes;
        self.stdio_flush_bytes += o.stdio_flush_bytes;
        self.read_time += o.read_time;
        self.write_time += o.write_time;
        self.meta_time += o.meta_time;
        self.path_meta_ops += o.path_meta_ops;
        self.path_meta_time += o.path_meta_time;
    }

    /// Bytes read (system calls and stdio).
    pub fn read(&self) -> u64 {
        self.read_bytes + self.stdio_read_bytes
    }

    /// Bytes written (system calls and stdio; stdio's bytes once, as the
    /// writes that flushed them where those were seen).
    pub fn written(&self) -> u64 {
        self.write_bytes + self.stdio_unflushed()
    }

    /// Bytes given to streams not counted in `write_bytes`.
    pub fn stdio_unflushed(&self) -> u64 {
        self.stdio_write_bytes
            .saturating_sub(self.stdio_flush_bytes)
    }

    /// Seconds in I/O calls on files and paths.
    pub fn time(&self) -> f64 {
        self.read_time + self.write_time + self.meta_time + self.path_meta_time
    }
}

/// One process's part in a shared file (Darshan's fastest/slowest rank).
#[derive(Clone, Debug, Serialize)]
pub struct ProcessIo {
    /// Its task (MPI rank + 1).
    pub task: u32,
    /// Its process id.
    pub pid: u32,
    /// Its command.
    pub command: String,
    /// Bytes it read and wrote on the file.
    pub bytes: u64,
    /// Seconds in its calls on the file (read, write, metadata, open,
    /// close).
    pub time: f64,
}

/// One file of the job: the records of every process that used it,
/// reduced (see the module documentation).
#[derive(Clone, Debug, Serialize)]
pub struct JobFile {
    /// The reduced counters, named as in the per-process reports.
    #[serde(flatten)]
    pub counters: File,
    /// How many processes used it (the images of a process that called
    /// `exec` count as one).
    pub processes: u64,
    /// Distinct tasks among them.
    pub tasks: u64,
    /// Used by more than one process (and not a grouped record).
    pub shared: bool,
    /// Bytes read and written (system calls and stdio).
    pub bytes: u64,
    /// Seconds in its calls (read, write, metadata, open, close).
    pub time: f64,
    /// The process with the least time on it (shared files).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fastest: Option<ProcessIo>,
    /// The process with the most time on it (shared files).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowest: Option<ProcessIo>,
    /// Variance of the processes' times, s² (shared files).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variance_time: Option<f64>,
    /// Variance of the processes' bytes, B² (shared files).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variance_bytes: Option<f64>,
}

/// Bytes a routine moved over the job.
#[derive(Clone, Debug, Serialize)]
pub struct RoutineTotal {
    /// `NAME` (threads added together).
    pub routine: String,
    /// Bytes.
    pub bytes: u64,
    /// Distinct files.
    pub files: u64,
    /// Processes in which it moved bytes.
    pub processes: u64,
}

/// The processes of one command.
#[derive(Clone, Debug, Serialize)]
pub struct CommandTotal {
    /// The command (the program's name).
    pub command: String,
    /// How many processes ran it.
    pub processes: u64,
    /// Their seconds, added.
    pub seconds: f64,
    /// Their I/O (`files`: distinct paths over them).
    pub totals: Totals,
}

/// One process (report).
#[derive(Clone, Debug, Serialize)]
pub struct Process {
    /// The report's file.
    pub report: String,
    /// Command.
    pub command: String,
    /// Process id.
    pub pid: u32,
    /// Parent's id.
    pub ppid: u32,
    /// Task.
    pub task: u32,
    /// Its depth in the process tree (0: no parent among the reports).
    pub depth: u32,
    /// `pid-command` of the processes above it, as the process saw them.
    pub ancestry: Vec<String>,
    /// How it ended (`return`, `exit`, ...).
    pub ending: String,
    /// Its status, when it has one.
    pub status: Option<i64>,
    /// Its life, seconds.
    pub seconds: f64,
    /// Its own I/O.
    pub totals: Totals,
    /// Its I/O and that of every process below it among the reports.
    pub with_children: Totals,
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

/// The summary of `reports` (`names`: the file each was read from);
/// `top` files by bytes and by time are named (0: all).
pub fn summarize(reports: &[Report], names: &[String], top: usize) -> Summary {
    summarize_with(reports, names, top, None)
}

/// [`summarize`], small stdio flushes compared with `block` bytes (None:
/// each file's own block size).
pub fn summarize_with(
    reports: &[Report],
    names: &[String],
    top: usize,
    block: Option<u64>,
) -> Summary {
    // Records by path, in the order paths were first met.
    let mut order: Vec<&str> = Vec::new();
    let mut by_path: HashMap<&str, Vec<(usize, &File)>> = HashMap::new();
    for (i, r) in reports.iter().enumerate() {
        for f in &r.files {
            by_path
                .entry(f.path.as_str())
                .or_insert_with(|| {
                    order.push(f.path.as_str());
                    Vec::new()
                })
                .push((i, f));
        }
    }
    let ptask = process_tasks(reports);
    let mut files: Vec<JobFile> = order
        .iter()
        .map(|p| reduce(&by_path[p], reports, &ptask))
        .collect();
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

    // Per process, own and with the processes below it (by `ppid`: a
    // shell keeps its own copy of the environment, so the ancestry its
    // children inherit through `exec` may miss a level).
    let own: Vec<Totals> = reports.iter().map(process_totals).collect();
    let parent = parents(reports, &ptask);
    let mut with_children = own.clone();
    let mut below: Vec<Vec<usize>> = (0..reports.len()).map(|i| vec![i]).collect();
    for i in 0..reports.len() {
        let mut k = parent[i];
        let mut steps = 0;
        while let Some(p) = k {
            if p == i || steps > reports.len() {
                break;
            }
            with_children[p].add(&own[i]);
            below[p].push(i);
            k = parent[p];
            steps += 1;
        }
    }
    // `files` of a subtree: distinct paths in it.
    for (wc, under) in with_children.iter_mut().zip(&below) {
        let mut paths: Vec<&str> = under
            .iter()
            .flat_map(|&i| reports[i].files.iter().map(|f| f.path.as_str()))
            .collect();
        paths.sort_unstable();
        paths.dedup();
        wc.files = paths.len() as u64;
    }
    let processes = tree_order(reports, &ptask, &parent)
        .into_iter()
        .map(|(i, depth)| Process {
            report: names.get(i).cloned().unwrap_or_default(),
            command: reports[i].command.clone(),
            pid: reports[i].pid,
            ppid: reports[i].ppid,
            task: reports[i].task,
            depth,
            ancestry: reports[i].ancestry.clone(),
            ending: reports[i].ending.clone(),
            status: reports[i].status,
            seconds: reports[i].seconds,
            totals: own[i].clone(),
            with_children: with_children[i].clone(),
        })
        .collect();

    // Per command.
    let mut commands: Vec<CommandTotal> = Vec::new();
    let mut cmd_paths: Vec<Vec<&str>> = Vec::new();
    for (i, r) in reports.iter().enumerate() {
        let k = match commands.iter().position(|c| c.command == r.command) {
            Some(k) => k,
            None => {
                commands.push(CommandTotal {
                    command: r.command.clone(),
                    processes: 0,
                    seconds: 0.0,
                    totals: Totals::default(),
                });
                cmd_paths.push(Vec::new());
                commands.len() - 1
            }
        };
        commands[k].processes += 1;
        commands[k].seconds += r.seconds;
        commands[k].totals.add(&own[i]);
        cmd_paths[k].extend(r.files.iter().map(|f| f.path.as_str()));
    }
    for (c, mut p) in commands.iter_mut().zip(cmd_paths) {
        p.sort_unstable();
        p.dedup();
        c.totals.files = p.len() as u64;
    }
    commands.sort_by(|a, b| {
        (b.totals.read() + b.totals.written())
            .cmp(&(a.totals.read() + a.totals.written()))
            .then_with(|| a.command.cmp(&b.command))
    });

    // Per routine.
    let mut routines: Vec<RoutineTotal> = Vec::new();
    let mut seen: HashMap<String, (Vec<&str>, Vec<usize>)> = HashMap::new();
    let mut other_routines_bytes = 0;
    for (i, r) in reports.iter().enumerate() {
        for f in &r.files {
            other_routines_bytes += f.other_routines_bytes;
            for rb in &f.routines {
                let k = match routines.iter().position(|x| x.routine == rb.routine) {
                    Some(k) => k,
                    None => {
                        routines.push(RoutineTotal {
                            routine: rb.routine.clone(),
                            bytes: 0,
                            files: 0,
                            processes: 0,
                        });
                        routines.len() - 1
                    }
                };
                routines[k].bytes += rb.bytes;
                let s = seen.entry(rb.routine.clone()).or_default();
                s.0.push(f.path.as_str());
                s.1.push(i);
            }
        }
    }
    for rt in &mut routines {
        if let Some((p, i)) = seen.get_mut(&rt.routine) {
            p.sort_unstable();
            p.dedup();
            i.sort_unstable();
            i.dedup();
            rt.files = p.len() as u64;
            rt.processes = i.len() as u64;
        }
    }
    routines.sort_by(|a, b| {
        b.bytes
            .cmp(&a.bytes)
            .then_with(|| a.routine.cmp(&b.routine))
    });

    let mut totals = Totals::default();
    for t in &own {
        totals.add(t);
    }
    totals.files = files.len() as u64;
    let mut aio = Aio::default();
    for r in reports {
        aio.reads += r.aio.reads;
        aio.writes += r.aio.writes;
        aio.completed += r.aio.completed;
        aio.bytes += r.aio.bytes;
        aio.time += r.aio.time;
        aio.max_queue_depth = aio.max_queue_depth.max(r.aio.max_queue_depth);
    }
    let mut tasks: Vec<u32> = reports.iter().map(|r| r.task).collect();
    tasks.sort_unstable();
    tasks.dedup();
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
        format: FORMAT,
        version: 1,
        tasks,
        totals,
        aio,
        files,
        top_by_bytes,
        top_by_time,
        routines,
        other_routines_bytes,
        commands,
        processes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
