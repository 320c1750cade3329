//! The I/O profile `drhook.prof.N-io` (`DR_HOOK_OPT=io`, project
//! extension): per routine and thread (or call path), the I/O the
//! preload library's interposers saw while it was the top of its stack,
//! and its self time split into time inside I/O calls and the rest.
//! Rows sorted by I/O time.

use std::fmt::Write as _;

use super::compute::Summary;
use super::text::Header;
use crate::metrics::io::{NANOS, OTHER, READ_BYTES, READS, WORDS, WRITE_BYTES, WRITES};

/// Writes the I/O profile; `at` is the I/O words' offset in the rows.
pub(crate) fn write_io_text<W: std::io::Write + ?Sized>(
    o: &mut W,
    h: &Header,
    s: &Summary,
    at: usize,
) -> std::io::Result<()> {
    let mut rows: Vec<(&super::compute::Row, [u64; WORDS])> = s
        .rows
        .iter()
        .filter(|r| r.cluster != 0)
        .map(|r| {
            let (own, _) = r.metric(at, WORDS);
            let mut w = [0; WORDS];
            w[..own.len()].copy_from_slice(own);
            (r, w)
        })
        .collect();
    let sum = |k: usize| rows.iter().map(|(_, w)| w[k]).sum::<u64>();
    let total_ns = sum(NANOS);
    let mut head = String::new();
    super::text::first_lines(&mut head, "I/O-profiling", h, s);
    let _ = writeln!(
        head,
        "\tI/O : {} bytes read in {} calls, {} bytes written in {} calls, {} other calls, {:.6} sec in I/O calls",
        sum(READ_BYTES),
        sum(READS),
        sum(WRITE_BYTES),
        sum(WRITES),
        sum(OTHER),
        total_ns as f64 * 1e-9
    );
    let _ = writeln!(
        head,
        "\tNo. of procs/threads: {} procs, {} threads",
        h.nproc,
        s.threads.len()
    );
    head.push('\n');
    head.push_str("    #    I/O-%    Self(sec)     I/O(sec) Compute(sec)      Read(bytes)   Written(bytes)    #Reads   #Writes    #Other   Routine@<thread-id>\n\n");
    o.write_all(head.as_bytes())?;
    rows.sort_by(|a, b| {
        b.1[NANOS]
            .cmp(&a.1[NANOS])
            .then(
                b.1[READ_BYTES]
                    .saturating_add(b.1[WRITE_BYTES])
                    .cmp(&a.1[READ_BYTES].saturating_add(a.1[WRITE_BYTES])),
            )
            .then_with(|| s.row_name(a.0).cmp(s.row_name(b.0)))
            .then(a.0.tid.cmp(&b.0.tid))
    });
    let mut line = String::new();
    for (i, (r, w)) in rows.iter().enumerate() {
        let io_s = w[NANOS] as f64 * 1e-9;
        let pct = if total_ns > 0 {
            100.0 * w[NANOS] as f64 / total_ns as f64
        } else {
            0.0
        };
        if pct < h.limit {
            break;
        }
        line.clear();
        let _ = write!(
            line,
            "{:5} {:8.2} {:12.6} {:12.6} {:12.6} {:16} {:16} {:9} {:9} {:9}    {}",
            i + 1,
            pct,
            r.self_s,
            io_s,
            (r.self_s - io_s).max(0.0),
            w[READ_BYTES],
            w[WRITE_BYTES],
            w[READS],
            w[WRITES],
            w[OTHER],
            if r.star { '*' } else { ' ' }
        );
        routine_and_path(&mut line, h, s, r);
        line.push('\n');
        o.write_all(line.as_bytes())?;
    }
    Ok(())
}

/// `NAME@tid` of a row, its callers packed before it
/// (`DR_HOOK_CALLPATH_PACKED`) or one per line after it (`callpath`): the
/// routine column of the I/O and MPI profiles.
pub(crate) fn routine_and_path(
    line: &mut String,
    h: &Header,
    s: &Summary,
    r: &super::compute::Row,
) {
    if h.callpath_packed && !r.path.is_empty() {
        for &anc in r.path.iter().rev() {
            let _ = write!(line, "{}/", s.name(anc));
        }
    }
    let _ = write!(line, "{}@{}", s.row_name(r), r.tid);
    if !h.callpath_packed {
        for &anc in r.path.iter() {
            let _ = write!(line, "\n{:>120}{}", "", s.name(anc));
        }
    }
}
