//! The MPI profile `drhook.prof.N-mpi` (`DR_HOOK_OPT=mpi`, project
//! extension): one row per MPI call and thread (or call path), the rows
//! the preload library's PMPI wrappers made (`MPI_Send`, ...), with their
//! calls and time as in the profile, bytes sent and received, the mean
//! communicator size of the calls that named one, and the message-size
//! histogram. Rows sorted by time. The format is in the README.

use std::fmt::Write as _;

use super::compute::Summary;
use super::text::Header;
use crate::metrics::mpi::{
    BIN_LABELS, BINS, CALLS, COMM_CALLS, COMM_SIZES, HIST, RECV, SENT, WORDS,
};

/// Whether any row is an MPI call's (a process that made none, such as
/// the launcher, writes no MPI profile).
pub(crate) fn has_rows(s: &Summary, at: usize) -> bool {
    s.rows
        .iter()
        .any(|r| r.metric(at, WORDS).0.get(CALLS).is_some_and(|&c| c > 0))
}

/// The rows of the MPI profile with their words, unsorted.
fn mpi_rows<'s>(s: &'s Summary, at: usize) -> Vec<(&'s super::compute::Row, [u64; WORDS])> {
    s.rows
        .iter()
        .filter(|r| r.cluster != 0)
        .map(|r| {
            let (own, _) = r.metric(at, WORDS);
            let mut w = [0; WORDS];
            w[..own.len()].copy_from_slice(own);
            (r, w)
        })
        .filter(|(_, w)| w[CALLS] > 0)
        .collect()
}

/// The mean communicator size of a row's calls that named one.
fn comm_mean(w: &[u64; WORDS]) -> f64 {
    if w[COMM_CALLS] > 0 {
        w[COMM_SIZES] as f64 / w[COMM_CALLS] as f64
    } else {
        0.0
    }
}

/// `DR_HOOK_OPT=reduce`: the rows [`write_mpi_text`] prints, folded into a
/// `drhook_merge::ColMerger` as `drhook merge` reads them back from the
/// file (time and mean communicator size as printed), as bytes.
pub(crate) fn keep_mpi(h: &Header, s: &Summary, at: usize) -> Vec<u8> {
    let mut m = drhook_merge::ColMerger::new(drhook_merge::ColKind::Mpi);
    m.begin_task(h.myproc);
    let mut v = [0f64; 5 + BINS];
    for (r, w) in mpi_rows(s, at) {
        v[0] = drhook_merge::as_printed_6(r.self_s);
        v[1] = r.calls as f64;
        v[2] = w[SENT] as f64;
        v[3] = w[RECV] as f64;
        v[4] = format!("{:.1}", comm_mean(&w)).parse().unwrap_or(0.0);
        for b in 0..BINS {
            v[5 + b] = w[HIST + b] as f64;
        }
        m.add(s.row_name(r), &v);
    }
    m.end_task();
    m.encode()
}

/// Writes the MPI profile; `at` is the MPI words' offset in the rows.
pub(crate) fn write_mpi_text<W: std::io::Write + ?Sized>(
    o: &mut W,
    h: &Header,
    s: &Summary,
    at: usize,
) -> std::io::Result<()> {
    let mut rows = mpi_rows(s, at);
    let total_s: f64 = rows.iter().map(|(r, _)| r.self_s).sum();
    let sum = |k: usize| rows.iter().map(|(_, w)| w[k]).sum::<u64>();
    let mut head = String::new();
    super::text::first_lines(&mut head, "MPI-profiling", h, s);
    let _ = writeln!(
        head,
        "\tMPI : {} calls, {:.6} sec in MPI calls, {} bytes sent, {} bytes received",
        rows.iter().map(|(r, _)| r.calls).sum::<u64>(),
        total_s,
        sum(SENT),
        sum(RECV),
    );
    let _ = writeln!(
        head,
        "\tNo. of procs/threads: {} procs, {} threads",
        h.nproc,
        s.threads.len()
    );
    head.push('\n');
    let _ = write!(
        head,
        "    #    MPI-%    Time(sec)      #Calls      Sent(bytes)      Recv(bytes)  Comm-size"
    );
    for l in BIN_LABELS {
        let _ = write!(head, " {l:>9}");
    }
    head.push_str("   Routine@<thread-id>\n\n");
    o.write_all(head.as_bytes())?;
    rows.sort_by(|a, b| {
        b.0.self_s
            .total_cmp(&a.0.self_s)
            .then_with(|| s.row_name(a.0).cmp(s.row_name(b.0)))
            .then(a.0.tid.cmp(&b.0.tid))
            .then_with(|| a.0.path.cmp(&b.0.path))
    });
    let mut line = String::new();
    for (i, (r, w)) in rows.iter().enumerate() {
        let pct = if total_s > 0.0 {
            100.0 * r.self_s / total_s
        } else {
            0.0
        };
        line.clear();
        let comm = comm_mean(w);
        let _ = write!(
            line,
            "{:5} {:8.2} {:12.6} {:11} {:16} {:16} {:10.1}",
            i + 1,
            pct,
            r.self_s,
            r.calls,
            w[SENT],
            w[RECV],
            comm,
        );
        for b in 0..BINS {
            let _ = write!(line, " {:9}", w[HIST + b]);
        }
        line.push_str("   ");
        super::io::routine_and_path(&mut line, h, s, r);
        line.push('\n');
        o.write_all(line.as_bytes())?;
    }
    Ok(())
}
