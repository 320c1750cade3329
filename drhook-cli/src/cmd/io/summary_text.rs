//! The job summary as text: the job's totals, the top files by bytes and
//! by time, the shared files with their reduction, routines, commands and
//! the process tree.

use std::fmt::Write as _;

use super::read::{BINS, human};
use super::summary::{JobFile, Summary, Totals};

/// The text of a job summary, its names and paths made printable
/// ([`crate::report::table::printable`]).
pub fn render(s: &Summary, top: usize) -> String {
    crate::report::table::printable(&render_raw(s, top)).into_owned()
}

/// `1 task`, `4 tasks`.
fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn calls(t: &Totals) -> String {
    format!(
        "read {} in {} calls, wrote {} in {} calls (stdio: {} reads, {} writes)",
        human(t.read()),
        t.reads,
        human(t.written()),
        t.writes,
        t.stdio_reads,
        t.stdio_writes
    )
}

fn list(tasks: &[u32]) -> String {
    // Runs of consecutive numbers as `a-b`.
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < tasks.len() {
        let mut j = i;
        while j + 1 < tasks.len() && tasks[j + 1] == tasks[j] + 1 {
            j += 1;
        }
        parts.push(if j > i {
            format!("{}-{}", tasks[i], tasks[j])
        } else {
            tasks[i].to_string()
        });
        i = j + 1;
    }
    parts.join(",")
}

fn file_line(o: &mut String, f: &JobFile) {
    let _ = writeln!(
        o,
        "{:>6} {:>12} {:>12} {:>11.6}  {}",
        f.processes,
        human(f.counters.read_bytes + f.counters.stdio_read_bytes),
        human(f.counters.write_bytes + f.counters.stdio_unflushed()),
        f.time,
        f.counters.path
    );
}

fn files_table(o: &mut String, title: &str, paths: &[String], s: &Summary) {
    if paths.is_empty() {
        return;
    }
    let _ = writeln!(o, "\n{title}");
    let _ = writeln!(
        o,
        "{:>6} {:>12} {:>12} {:>11}  path",
        "procs", "read", "written", "time s"
    );
    for p in paths {
        if let Some(f) = s.files.iter().find(|f| &f.counters.path == p) {
            file_line(o, f);
        }
    }
}

fn hist(h: &[u64]) -> String {
    h.iter()
        .zip(BINS)
        .filter(|(n, _)| **n > 0)
        .map(|(n, b)| format!("{b}:{n}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn shared(o: &mut String, s: &Summary, top: usize) {
    let shared: Vec<&JobFile> = s.files.iter().filter(|f| f.shared).collect();
    if shared.is_empty() {
        return;
    }
    let n = if top == 0 {
        shared.len()
    } else {
        top.min(shared.len())
    };
    let _ = writeln!(
        o,
        "\nShared files ({} used by more than one process{}), reduced across processes",
        shared.len(),
        if n < shared.len() {
            format!(", the {n} with most bytes")
        } else {
            String::new()
        }
    );
    for f in &shared[..n] {
        let c = &f.counters;
        let _ = writeln!(
            o,
            "  {}: {} ({}), read {} in {} calls, wrote {} in {} calls, {:.6} s",
            c.path,
            count(f.processes, "process", "processes"),
            count(f.tasks, "task", "tasks"),
            human(c.read_bytes + c.stdio_read_bytes),
            c.reads + c.stdio_reads,
            human(c.write_bytes + c.stdio_unflushed()),
            c.writes + c.stdio_writes,
            f.time
        );
        if let (Some(lo), Some(hi)) = (&f.fastest, &f.slowest) {
            let _ = writeln!(
                o,
                "    fastest: task {} pid {} ({}) {} in {:.6} s; slowest: task {} pid {} ({}) {} in {:.6} s",
                lo.task,
                lo.pid,
                lo.command,
                human(lo.bytes),
                lo.time,
                hi.task,
                hi.pid,
                hi.command,
                human(hi.bytes),
                hi.time
            );
        }
        if let (Some(vt), Some(vb)) = (f.variance_time, f.variance_bytes) {
            let _ = writeln!(
                o,
                "    variance across processes: time {vt:.4e} s², bytes {vb:.4e} B²"
            );
        }
        let _ = writeln!(
            o,
            "    opens {}, seq/consec reads {}/{}, writes {}/{}, rw switches {}, highest byte read {}, written {}",
            c.opens,
            c.seq_reads,
            c.consec_reads,
            c.seq_writes,
            c.consec_writes,
            c.rw_switches,
            c.max_byte_read,
            c.max_byte_written
        );
        if c.read_hist.iter().any(|&x| x > 0) {
            let _ = writeln!(o, "    read sizes  {}", hist(&c.read_hist));
        }
        if c.write_hist.iter().any(|&x| x > 0) {
            let _ = writeln!(o, "    write sizes {}", hist(&c.write_hist));
        }
        if !c.common_access_sizes.is_empty() {
            let v: Vec<String> = c
                .common_access_sizes
                .iter()
                .map(|(v, n)| format!("{v} x{n}"))
                .collect();
            let _ = writeln!(o, "    common access sizes {}", v.join(", "));
        }
        if c.max_read_time > 0.0 || c.max_write_time > 0.0 {
            let _ = writeln!(
                o,
                "    slowest read {:.6} s ({} B), slowest write {:.6} s ({} B)",
                c.max_read_time, c.max_read_time_size, c.max_write_time, c.max_write_time_size
            );
        }
    }
}

fn render_raw(s: &Summary, top: usize) -> String {
    let mut o = String::new();
    let t = &s.totals;
    let nshared = s.files.iter().filter(|f| f.shared).count();
    let _ = writeln!(
        o,
        "I/O of a job: {} ({}; {} {}), {} ({} shared)",
        count(s.processes.len() as u64, "process", "processes"),
        count(s.commands.len() as u64, "command", "commands"),
        if s.tasks.len() == 1 { "task" } else { "tasks" },
        list(&s.tasks),
        count(s.files.len() as u64, "file", "files"),
        nshared
    );
    let _ = writeln!(
        o,
        "  {}; {:.6} s in I/O calls; {} metadata calls on paths",
        calls(t),
        t.time(),
        t.path_meta_ops
    );
    if s.aio.reads + s.aio.writes > 0 {
        let _ = writeln!(
            o,
            "  AIO: {} reads, {} writes, {} completed, {}, {:.6} s issue to completion, max queue depth {}",
            s.aio.reads,
            s.aio.writes,
            s.aio.completed,
            human(s.aio.bytes),
            s.aio.time,
            s.aio.max_queue_depth
        );
    }
    files_table(&mut o, "Top files by bytes", &s.top_by_bytes, s);
    files_table(&mut o, "Top files by time", &s.top_by_time, s);
    shared(&mut o, s, top);
    if !s.small_flushes.is_empty() {
        let _ = writeln!(
            o,
            "\nSmall stdio flushes (mean write below half the block size: a larger stream buffer, setvbuf)"
        );
        let _ = writeln!(
            o,
            "{:>8} {:>10} {:>10} {:>10}  path",
            "writes", "mean", "block", "buffer"
        );
        for f in &s.small_flushes {
            let _ = writeln!(
                o,
                "{:>8} {:>10} {:>10} {:>10}  {}",
                f.flushes,
                human(f.mean_bytes),
                human(f.block_size),
                f.buffer.map_or("-".into(), human),
                f.path
            );
        }
    }
    if !s.routines.is_empty() {
        let _ = writeln!(o, "\nRoutines (bytes moved, every file and process)");
        let _ = writeln!(o, "{:>12} {:>6} {:>6}  routine", "bytes", "files", "procs");
        for r in &s.routines {
            let _ = writeln!(
                o,
                "{:>12} {:>6} {:>6}  {}",
                human(r.bytes),
                r.files,
                r.processes,
                r.routine
            );
        }
        if s.other_routines_bytes > 0 {
            let _ = writeln!(
                o,
                "{:>12} {:>6} {:>6}  (routines not named: after a file's eighth)",
                human(s.other_routines_bytes),
                "",
                ""
            );
        }
    }
    let _ = writeln!(o, "\nCommands");
    let _ = writeln!(
        o,
        "{:>6} {:>10} {:>6} {:>12} {:>12} {:>11}  command",
        "procs", "seconds", "files", "read", "written", "I/O s"
    );
    for c in &s.commands {
        let _ = writeln!(
            o,
            "{:>6} {:>10.3} {:>6} {:>12} {:>12} {:>11.6}  {}",
            c.processes,
            c.seconds,
            c.totals.files,
            human(c.totals.read()),
            human(c.totals.written()),
            c.totals.time(),
            c.command
        );
    }
    processes(&mut o, s);
    o
}

/// The processes as a tree (a child under its parent), each with its own
/// I/O and that of the processes below it.
fn processes(o: &mut String, s: &Summary) {
    let _ = writeln!(o, "\nProcesses (own I/O; with the processes below it)");
    let _ = writeln!(
        o,
        "{:>8} {:>5} {:>10} {:>12} {:>12} {:>11} {:>12}  process",
        "pid", "task", "seconds", "read", "written", "I/O s", "with below"
    );
    for p in &s.processes {
        let below = p.with_children.read() + p.with_children.written();
        let ended = match p.status {
            Some(st) => format!("{} {st}", p.ending),
            None => p.ending.clone(),
        };
        let _ = writeln!(
            o,
            "{:>8} {:>5} {:>10.3} {:>12} {:>12} {:>11.6} {:>12}  {}{} (ended: {})",
            p.pid,
            p.task,
            p.seconds,
            human(p.totals.read()),
            human(p.totals.written()),
            p.totals.time(),
            human(below),
            "  ".repeat(p.depth as usize),
            p.command,
            ended
        );
    }
}

#[cfg(test)]
mod tests {
    use super::list;

    #[test]
    fn task_lists() {
        assert_eq!(list(&[1, 2, 3, 5, 7, 8]), "1-3,5,7-8");
        assert_eq!(list(&[1]), "1");
        assert_eq!(list(&[]), "");
    }
}
