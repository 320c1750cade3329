//! The text report of one process: its totals, then one line per file
//! (most bytes first) with its size histograms and routines.

use std::fmt::Write as _;

use super::read::{BINS, File, Report, human};

/// The text report of one process, its names and paths made printable
/// ([`crate::report::table::printable`]).
pub fn render(r: &Report) -> String {
    render_with(r, None)
}

/// [`render`], streams flagged for small flushes against `block` bytes
/// (None: each file's own block size).
pub fn render_with(r: &Report, block: Option<u64>) -> String {
    crate::report::table::printable(&render_raw(r, block)).into_owned()
}

fn render_raw(r: &Report, block: Option<u64>) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "I/O of {} (pid {}, task {}, {:.3} s, ended: {})",
        r.command,
        r.pid,
        r.task,
        r.seconds,
        r.ended()
    );
    if !r.ancestry.is_empty() {
        let _ = writeln!(o, "  started by: {}", r.ancestry.join(" -> "));
    }
    let tot = |f: &dyn Fn(&File) -> u64| r.files.iter().map(f).sum::<u64>();
    let _ = writeln!(
        o,
        "  {} files; read {} in {} calls, wrote {} in {} calls; stdio: {} read, {} written; {} metadata calls on paths",
        r.files.len(),
        human(tot(&|f| f.read_bytes)),
        tot(&|f| f.reads),
        human(tot(&|f| f.write_bytes)),
        tot(&|f| f.writes),
        human(tot(&|f| f.stdio_read_bytes)),
        human(tot(&|f| f.stdio_write_bytes)),
        r.path_meta_ops
    );
    if r.aio.reads + r.aio.writes > 0 {
        let _ = writeln!(
            o,
            "  AIO: {} reads, {} writes, {} completed, {}, {:.6} s issue to completion, max queue depth {}",
            r.aio.reads,
            r.aio.writes,
            r.aio.completed,
            human(r.aio.bytes),
            r.aio.time,
            r.aio.max_queue_depth
        );
    }
    o.push('\n');
    let _ = writeln!(
        o,
        "{:>6} {:>8} {:>12} {:>8} {:>12} {:>10} {:>10} {:>10} {:>9} {:>9}  {:<12} path (opened by)",
        "opens",
        "reads",
        "read",
        "writes",
        "written",
        "read s",
        "write s",
        "meta s",
        "seq %",
        "buffer",
        "stdio"
    );
    let mut files: Vec<&File> = r.files.iter().collect();
    files.sort_by(|a, b| {
        (b.read_bytes + b.write_bytes + b.stdio_read_bytes + b.stdio_write_bytes)
            .cmp(&(a.read_bytes + a.write_bytes + a.stdio_read_bytes + a.stdio_write_bytes))
            .then_with(|| a.path.cmp(&b.path))
    });
    for f in files {
        let ops = f.reads + f.writes;
        let seq = if ops > 0 {
            format!(
                "{:.0}",
                100.0 * (f.seq_reads + f.seq_writes) as f64 / ops as f64
            )
        } else {
            "-".into()
        };
        // The buffer the stream had, else the one `setvbuf` asked for.
        let buf = match (
            &f.stdio_buffer,
            &f.stdio_buffer_mode,
            &f.bufsize,
            &f.bufmode,
        ) {
            (Some(s), Some(m), _, _) | (None, _, Some(s), Some(m)) => format!("{s}/{m}"),
            _ => "-".into(),
        };
        let stdio = if f.stdio_reads + f.stdio_writes > 0 {
            format!("{}r/{}w", f.stdio_reads, f.stdio_writes)
        } else {
            "-".into()
        };
        let _ = writeln!(
            o,
            "{:>6} {:>8} {:>12} {:>8} {:>12} {:>10.6} {:>10.6} {:>10.6} {:>9} {:>9}  {:<12} {}{}",
            f.opens,
            f.reads,
            human(f.read_bytes + f.stdio_unrefilled()),
            f.writes,
            human(f.write_bytes + f.stdio_unflushed()),
            f.read_time,
            f.write_time,
            f.meta_time + f.open_time + f.close_time,
            seq,
            buf,
            stdio,
            f.path,
            if f.opened_by.is_empty() {
                String::new()
            } else {
                format!(" ({})", f.opened_by)
            }
        );
        let hist = |h: &[u64]| -> String {
            h.iter()
                .zip(BINS)
                .filter(|(n, _)| **n > 0)
                .map(|(n, b)| format!("{b}:{n}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        if f.read_hist.iter().any(|&n| n > 0) {
            let _ = writeln!(o, "{:>8}read sizes  {}", "", hist(&f.read_hist));
        }
        if f.write_hist.iter().any(|&n| n > 0) {
            let _ = writeln!(o, "{:>8}write sizes {}", "", hist(&f.write_hist));
        }
        if f.mpiio_opens + f.mpiio_reads + f.mpiio_writes + f.mpiio_other > 0 {
            let _ = writeln!(
                o,
                "{:>8}MPI-IO      {} opens, {} read in {} calls, {} written in {} calls, {} other calls",
                "",
                f.mpiio_opens,
                human(f.mpiio_read_bytes),
                f.mpiio_reads,
                human(f.mpiio_write_bytes),
                f.mpiio_writes,
                f.mpiio_other
            );
        }
        if f.stdio_flushes > 0 {
            let _ = writeln!(
                o,
                "{:>8}stdio       {} written in {} calls, flushed in {} writes of {} mean{}",
                "",
                human(f.stdio_write_bytes),
                f.stdio_writes,
                f.stdio_flushes,
                human(f.stdio_flush_bytes / f.stdio_flushes),
                match (&f.bufsize, &f.stdio_buffer) {
                    (Some(asked), Some(had)) if asked != had => {
                        format!(" (setvbuf asked for {asked}, the buffer had {had})")
                    }
                    _ => String::new(),
                }
            );
        }
        if f.stdio_refills > 0 {
            let _ = writeln!(
                o,
                "{:>8}stdio       {} read in {} calls, refilled in {} reads of {} mean",
                "",
                human(f.stdio_read_bytes),
                f.stdio_reads,
                f.stdio_refills,
                human(f.stdio_refill_bytes / f.stdio_refills),
            );
        }
        if let Some((mean, blk)) = f.small_flushes(block) {
            let _ = writeln!(
                o,
                "{:>8}SMALL FLUSHES: {} per write, below half the block size {}: a larger stream buffer (setvbuf)",
                "",
                human(mean),
                human(blk)
            );
        }
        if !f.routines.is_empty() {
            let mut parts: Vec<String> = f
                .routines
                .iter()
                .map(|r| format!("{} {}", r.routine, human(r.bytes)))
                .collect();
            if f.other_routines_bytes > 0 {
                parts.push(format!("others {}", human(f.other_routines_bytes)));
            }
            let _ = writeln!(o, "{:>8}by routine  {}", "", parts.join(", "));
        }
    }
    o
}
