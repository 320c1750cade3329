//! The memory profile `drhook.prof.N-mem` (`DR_HOOK_OPT=memprof`), in the
//! reference's layout (compat §3.3) — with its allocation columns filled:
//! the reference feeds them only from `c_drhook_memcounter_`, which nothing
//! calls, so they are always 0 there.
//!
//! Per row (routine and thread, or call path): `Memory-%` = the row's
//! self-allocated bytes in % of all rows'; `Self-alloc` = bytes allocated
//! while the routine was the top of its stack; `+ Children` = bytes its
//! callees allocated; `Self-Leaked` = bytes it allocated that nobody freed
//! by the time of the write; `Heap` = the process heap (tracked blocks) at
//! its highest while the routine was active; `Max.Stack` = its deepest
//! stack; `Paging` = page faults while active (`paging` only); `#Allocs` /
//! `#Frees` made there, a `*` between them when they differ.

use std::fmt::Write as _;

use super::compute::{Row, Summary};
use super::text::Header;
use crate::metrics::mem::{ALLOC, HEAP, LIVE, NALLOC, NFREE, PAGING, STACK, WORDS};

/// Process-wide figures of the header's memory line.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct MemHeader {
    /// Highest process heap seen by the allocator wrappers (bytes).
    pub max_seen: u64,
    /// Bytes allocated by instrumented routines and not freed.
    pub leaked: u64,
    /// Heap obtained from the system (glibc `mallinfo2`).
    pub heap: u64,
    /// `ru_maxrss` in bytes.
    pub max_rss: u64,
    /// Deepest stack over all routines (bytes).
    pub max_stack: u64,
    /// `VmPeak` in bytes.
    pub vmpeak: u64,
    /// Major page faults of the process.
    pub paging: u64,
    /// Allocations and frees outside any routine (no line when all 0).
    pub outside: Outside,
}

/// The header's "Outside any routine" figures (`metrics::mem::Outside`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct Outside {
    pub allocs: u64,
    pub bytes: u64,
    pub frees: u64,
    pub freed: u64,
    /// Of `allocs` and `bytes`, those made before Dr.Hook started.
    pub allocs_before: u64,
    pub bytes_before: u64,
}

impl Outside {
    fn now() -> Self {
        let o = &crate::metrics::mem::OUTSIDE;
        let l = |a: &std::sync::atomic::AtomicU64| a.load(std::sync::atomic::Ordering::Relaxed);
        Self {
            allocs: l(&o.allocs),
            bytes: l(&o.bytes),
            frees: l(&o.frees),
            freed: l(&o.freed),
            allocs_before: l(&o.allocs_at_start),
            bytes_before: l(&o.bytes_at_start),
        }
    }
}

const MB: u64 = 1024 * 1024;

pub(crate) struct MemRow<'r> {
    pub(crate) row: &'r Row,
    pub(crate) own: [u64; WORDS],
    pub(crate) total: [u64; WORDS],
}

pub(crate) fn mem_rows<'r>(s: &'r Summary<'_>, at: usize) -> Vec<MemRow<'r>> {
    s.rows
        .iter()
        .filter(|r| r.cluster != 0)
        .map(|row| {
            let (o, t) = row.metric(at, WORDS);
            let mut own = [0; WORDS];
            let mut total = [0; WORDS];
            own[..o.len()].copy_from_slice(o);
            total[..t.len()].copy_from_slice(t);
            MemRow { row, own, total }
        })
        .collect()
}

/// The header's figures from the rows and the process.
pub(crate) fn header_figures(s: &Summary<'_>, at: usize) -> MemHeader {
    let rows = mem_rows(s, at);
    let t = &crate::metrics::mem::TOTALS;
    let mu = &crate::sys::sysinfo::mem_usage();
    // SAFETY: plain data written by getrusage.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    MemHeader {
        max_seen: t.peak.load(std::sync::atomic::Ordering::Relaxed),
        leaked: rows.iter().map(|r| r.own[LIVE] as i64).sum::<i64>().max(0) as u64,
        heap: mu.heap,
        max_rss: ru.ru_maxrss as u64 * 1024,
        max_stack: rows.iter().map(|r| r.total[STACK]).max().unwrap_or(0),
        vmpeak: mu.vmpeak,
        paging: mu.paging,
        outside: Outside::now(),
    }
}

/// Writes the memory profile; `at` is the memory words' offset in the rows.
pub(crate) fn write_mem_text<W: std::io::Write + ?Sized>(
    o: &mut W,
    h: &Header,
    s: &Summary,
    at: usize,
    m: &MemHeader,
) -> std::io::Result<()> {
    let mut head = String::new();
    super::text::first_lines(&mut head, "Memory-profiling", h, s);
    let _ = writeln!(
        head,
        "\tMemory usage : {} MB (max.seen), {} MB (leaked), {} MB (heap), {} MB (max.rss), {} MB (max.stack), {} MB (vmpeak), {} (paging)",
        m.max_seen / MB,
        m.leaked / MB,
        m.heap / MB,
        m.max_rss / MB,
        m.max_stack / MB,
        m.vmpeak / MB,
        m.paging
    );
    let out = &m.outside;
    if out.allocs + out.frees > 0 {
        // Not in the reference (whose allocation columns are always 0).
        let _ = writeln!(
            head,
            "\tOutside any routine : {} allocations of {} bytes ({} of {} bytes before Dr.Hook started), {} frees of {} bytes",
            out.allocs, out.bytes, out.allocs_before, out.bytes_before, out.frees, out.freed
        );
    }
    let _ = writeln!(
        head,
        "\tNo. of procs/threads: {} procs, {} threads",
        h.nproc,
        s.threads.len()
    );
    head.push('\n');
    head.push_str("    #  Memory-%      Self-alloc     + Children    Self-Leaked          Heap       Max.Stack     Paging     #Calls    #Allocs     #Frees   Routine@<thread-id>\n");
    head.push_str("         (self)         (bytes)        (bytes)        (bytes)        (bytes)        (bytes)    (delta)\n");
    o.write_all(head.as_bytes())?;

    let mut rows = mem_rows(s, at);
    let all: u64 = rows.iter().map(|r| r.own[ALLOC]).sum();
    rows.sort_by(|a, b| {
        b.own[ALLOC]
            .cmp(&a.own[ALLOC])
            .then_with(|| s.row_name(a.row).cmp(s.row_name(b.row)))
            .then(a.row.tid.cmp(&b.row.tid))
            .then_with(|| a.row.path.cmp(&b.row.path))
    });
    let mut line = String::new();
    for (i, r) in rows.iter().enumerate() {
        let pct = if all > 0 {
            100.0 * r.own[ALLOC] as f64 / all as f64
        } else {
            0.0
        };
        if pct < h.limit {
            break;
        }
        line.clear();
        let _ = write!(
            line,
            "{:5} {:9.2}  {:14} {:14} {:14} {:14} {:14} {:10} {:10} {:10}{}{:10}   ",
            i + 1,
            pct,
            r.own[ALLOC],
            r.total[ALLOC].saturating_sub(r.own[ALLOC]),
            r.own[LIVE] as i64,
            r.total[HEAP],
            r.total[STACK],
            r.total[PAGING],
            r.row.calls,
            r.own[NALLOC],
            if r.own[NALLOC] != r.own[NFREE] {
                '*'
            } else {
                ' '
            },
            r.own[NFREE],
        );
        let name_col = line.len() + 1;
        line.push(if r.row.star { '*' } else { ' ' });
        if h.callpath_packed && !r.row.path.is_empty() {
            for &anc in r.row.path.iter().rev() {
                let _ = write!(line, "{}/", s.name(anc));
            }
        }
        let _ = write!(line, "{}@{}", s.row_name(r.row), r.row.tid);
        if !h.callpath_packed {
            for (k, &anc) in r.row.path.iter().enumerate() {
                let col = name_col.saturating_sub(h.callpath_indent * (k + 1));
                let _ = write!(line, "\n{:col$}{}", "", s.name(anc));
            }
        }
        line.push('\n');
        o.write_all(line.as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::options::ProfileKind;
    use crate::profile::compute::ThreadLine;
    use crate::profile::snapshot::SizeSnap;
    use crate::sys::sysinfo::MemUsage;

    fn row(
        cluster: u32,
        tid: u32,
        star: bool,
        calls: u64,
        own: [u64; WORDS],
        total: [u64; WORDS],
    ) -> Row {
        let mut metrics = own.to_vec();
        metrics.extend(total);
        Row {
            cluster,
            tid,
            cluster_size: 1,
            star,
            calls,
            self_s: 0.0,
            total_s: 0.0,
            pct: 0.0,
            cumul: 0.0,
            size: SizeSnap::default(),
            file: None,
            path: Box::new([]),
            metrics: metrics.into_boxed_slice(),
        }
    }

    fn header() -> Header {
        Header {
            program: "./prof_example".into(),
            myproc: 1,
            nproc: 1,
            started: "20261122 093833".into(),
            ended: "20261122 093834".into(),
            mem: MemUsage::default(),
            kind: ProfileKind::Wall,
            clusterinfo: false,
            sizeinfo: false,
            callpath_indent: 2,
            callpath_packed: false,
            limit: -10.0,
            counters: Vec::new(),
            counters_at: 0,
            elapsed_s: None,
        }
    }

    fn levels(heap: u64) -> [u64; WORDS] {
        let mut w = [0; WORDS];
        w[HEAP] = heap;
        w[STACK] = 536576;
        w
    }

    /// The reference example (`examples/prof_example.memprof...-mem`),
    /// whose allocation columns are 0, comes out byte for byte.
    #[test]
    fn the_reference_layout_byte_for_byte() {
        let names: Vec<&str> = vec![
            "PROF_EXAMPLE",
            "PROF_EX_MOD:DRIVER",
            "PROF_EX_MOD:KERNEL",
            "PROF_EX_MOD:WORKER",
        ];
        let rows = vec![
            row(1, 1, false, 1, [0; WORDS], levels(115634176)),
            row(2, 1, false, 1, [0; WORDS], levels(115634176)),
            row(3, 1, true, 536, [0; WORDS], levels(147636224)),
            row(3, 2, false, 264, [0; WORDS], levels(147636224)),
            row(4, 1, true, 134, [0; WORDS], levels(147636224)),
            row(4, 2, false, 66, [0; WORDS], levels(147636224)),
        ];
        let line = |tid| ThreadLine {
            tid,
            secs: 0.0,
            pct: 0.0,
            self_ticks: None,
            lifetime_ticks: 0,
            threads: 1,
            first_routine: 0,
        };
        let s = Summary {
            rows,
            total: 0.0,
            threads: vec![line(1), line(2)],
            routines_called: 4,
            overhead_pct: 0.0,
            names: &names,
        };
        let m = MemHeader {
            max_seen: 0,
            leaked: 0,
            heap: 110 * MB,
            max_rss: 38 * MB,
            max_stack: 536576,
            vmpeak: 216 * MB,
            paging: 0,
            outside: Outside::default(),
        };
        let mut out = Vec::new();
        write_mem_text(&mut out, &header(), &s, 0, &m).unwrap();
        let text = String::from_utf8(out).unwrap();
        // Allocations outside any routine: one more header line.
        let mut with = m;
        with.outside = Outside {
            allocs: 412,
            bytes: 45678,
            frees: 12,
            freed: 2345,
            allocs_before: 400,
            bytes_before: 44000,
        };
        let mut out2 = Vec::new();
        write_mem_text(&mut out2, &header(), &s, 0, &with).unwrap();
        let text2 = String::from_utf8(out2).unwrap();
        assert_eq!(
            text2.replace(
                "\tOutside any routine : 412 allocations of 45678 bytes (400 of 44000 bytes before Dr.Hook started), 12 frees of 2345 bytes\n",
                ""
            ),
            text
        );
        assert_ne!(text2, text);
        insta::assert_snapshot!(text);
        let reference = "Memory-profiling information for program='./prof_example', proc#1:
\tNo. of instrumented routines called : 4
\tInstrumentation started : 20261122 093833
\tInstrumentation   ended : 20261122 093834
\tMemory usage : 0 MB (max.seen), 0 MB (leaked), 110 MB (heap), 38 MB (max.rss), 0 MB (max.stack), 216 MB (vmpeak), 0 (paging)
\tNo. of procs/threads: 1 procs, 2 threads

    #  Memory-%      Self-alloc     + Children    Self-Leaked          Heap       Max.Stack     Paging     #Calls    #Allocs     #Frees   Routine@<thread-id>
         (self)         (bytes)        (bytes)        (bytes)        (bytes)        (bytes)    (delta)
    1      0.00               0              0              0      115634176         536576          0          1          0          0    PROF_EXAMPLE@1
    2      0.00               0              0              0      115634176         536576          0          1          0          0    PROF_EX_MOD:DRIVER@1
    3      0.00               0              0              0      147636224         536576          0        536          0          0   *PROF_EX_MOD:KERNEL@1
    4      0.00               0              0              0      147636224         536576          0        264          0          0    PROF_EX_MOD:KERNEL@2
    5      0.00               0              0              0      147636224         536576          0        134          0          0   *PROF_EX_MOD:WORKER@1
    6      0.00               0              0              0      147636224         536576          0         66          0          0    PROF_EX_MOD:WORKER@2
";
        assert_eq!(text, reference);
    }

    #[test]
    fn filled_columns_sort_by_self_bytes_and_flag_unbalanced_counts() {
        let names: Vec<&str> = vec!["A", "B"];
        let mut a = [0; WORDS];
        a[ALLOC] = 100;
        a[NALLOC] = 2;
        a[NFREE] = 1;
        a[LIVE] = 40;
        let mut at = a;
        at[ALLOC] = 400;
        let mut b = [0; WORDS];
        b[ALLOC] = 300;
        b[NALLOC] = 3;
        b[NFREE] = 3;
        let s = Summary {
            rows: vec![row(1, 1, false, 1, a, at), row(2, 1, false, 1, b, b)],
            total: 0.0,
            threads: vec![],
            routines_called: 2,
            overhead_pct: 0.0,
            names: &names,
        };
        let mut out = Vec::new();
        write_mem_text(&mut out, &header(), &s, 0, &MemHeader::default()).unwrap();
        let text = String::from_utf8(out).unwrap();
        let rows: Vec<&str> = text.lines().skip(9).collect();
        assert!(
            rows[0].ends_with(" B@1") && rows[0].contains(" 75.00 "),
            "{text}"
        );
        assert!(
            rows[1].ends_with(" A@1") && rows[1].contains(" 25.00 "),
            "{text}"
        );
        let f: Vec<&str> = rows[1].split_whitespace().collect();
        assert_eq!(&f[2..6], ["100", "300", "40", "0"], "{text}");
        assert!(rows[1].contains("2*         1"), "{text}");
        assert!(rows[0].contains("3          3"), "{text}");
    }
}
