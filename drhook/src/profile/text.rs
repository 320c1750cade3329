//! The text of the Dr.Hook profile, byte-compatible with the reference's
//! `drhook.prof.N`, and its counters CSV companion.

use std::fmt::Write as _;

use super::compute::Summary;
use crate::config::options::ProfileKind;
use crate::sys::linebuf::escape_controls;
use crate::sys::sysinfo::MemUsage;

/// Header facts of a profile.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Header {
    pub program: String,
    pub myproc: u32,
    pub nproc: u32,
    pub started: String,
    pub ended: String,
    pub mem: MemUsage,
    pub kind: ProfileKind,
    pub clusterinfo: bool,
    pub sizeinfo: bool,
    pub callpath_indent: usize,
    pub callpath_packed: bool,
    pub limit: f64,
    /// Events counted per routine (`hpmprof`): MIPS and MFlops columns.
    pub counters: Vec<hpm::EventSpec>,
    /// Where the counters' words start in the rows' metric values.
    pub counters_at: usize,
    /// Seconds from the instrumentation's start to the profile's write
    /// (the `Elapsed time is` line; none in the reference's layout tests).
    pub elapsed_s: Option<f64>,
}

/// Column where row names start.
const NAME_COL: usize = 96;

/// `1234567` -> `1,234,567`.
pub(crate) fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

const MB: u64 = 1024 * 1024;

/// Lines a front door adds to the header (each after a tab), e.g. the
/// functions `-finstrument-functions` stopped timing.
static HEADER_LINES: std::sync::OnceLock<fn() -> Vec<String>> = std::sync::OnceLock::new();

/// Sets the function whose lines every profile header carries (the first
/// one set stays).
pub fn set_header_lines(f: fn() -> Vec<String>) {
    let _ = HEADER_LINES.set(f);
}

/// The header lines from "Profiling information" to the per-thread lines;
/// `with_memory` adds the memory line (the file has it, the stderr echo not).
pub(crate) fn format_header(h: &Header, s: &Summary, with_memory: bool) -> String {
    let mut o = String::new();
    first_lines(&mut o, "Profiling", h, s);
    let _ = writeln!(o, "\tInstrumentation overhead: {:.2}%", s.overhead_pct);
    if with_memory {
        let m = &h.mem;
        let _ = writeln!(
            o,
            "\tMemory usage : {} MB (heap), {} MB (rss), {} MB (stack), {} MB (vmpeak), {} (paging)",
            m.heap / MB,
            m.rss / MB,
            m.stack / MB,
            m.vmpeak / MB,
            m.paging
        );
    }
    let what = match h.kind {
        ProfileKind::Wall => "Wall",
        ProfileKind::Cpu => "Total CPU",
    };
    let _ = writeln!(
        o,
        "\t{what}-time is {:.2} sec on proc#{} ({} procs, {} threads)",
        s.total,
        h.myproc,
        h.nproc,
        s.threads.len()
    );
    for t in &s.threads {
        let _ = write!(
            o,
            "\tThread#{}: {:11.2} sec ({:.2}%) -- Cycles:",
            t.tid, t.secs, t.pct
        );
        if let Some(c) = t.self_ticks {
            let _ = write!(o, " {c}");
        }
        let _ = writeln!(o, " ({})", t.lifetime_ticks);
    }
    ranges_line(&mut o, s);
    if let Some(l) = super::gpu::header_line() {
        let _ = writeln!(o, "{l}");
    }
    if let Some(l) = super::sample::header_line() {
        let _ = writeln!(o, "{l}");
    }
    if let Some(f) = HEADER_LINES.get() {
        for l in f() {
            let _ = writeln!(o, "\t{l}");
        }
    }
    // Threads that ended, summed per first routine (`profile::ended`): a
    // line no reader mistakes for a thread's.
    for t in s.threads.iter().filter(|t| t.threads > 1) {
        let _ = writeln!(
            o,
            "\tThreads that ended, summed : {} in Thread#{} ({})",
            t.threads,
            t.tid,
            s.name(t.first_routine)
        );
    }
    // Not in the reference: the task's true elapsed time. Its
    // `Wall-time is` above is the sum over routines of the busiest
    // thread's self time, which counts twice the routines that ran at the
    // same time on different threads.
    if let Some(el) = h.elapsed_s {
        let _ = writeln!(
            o,
            "\tElapsed time is {el:.3} sec (wall clock, from the instrumentation's start to this profile)"
        );
    }
    o
}

#[cfg(test)]
impl Header {
    /// The header of the layout tests.
    pub(crate) fn for_tests() -> Header {
        tests::header(ProfileKind::Wall)
    }
}

/// With `DR_HOOK_NVTX` / `DR_HOOK_ROCTX`: the ranges the spam filter
/// skipped (a line the reference's readers skip, like the ended threads'
/// one; none when both are off).
fn ranges_line(o: &mut String, s: &Summary) {
    let (nvtx, roctx) = crate::metrics::ranges::tools();
    let Some(m) = crate::metrics::layout().find("ranges") else {
        return;
    };
    let (n, r) =
        crate::metrics::ranges::skipped_in(s.rows.iter().map(|row| row.metric(m.offset, m.len).0));
    for (on, tool, count) in [(nvtx, "NVTX", n), (roctx, "ROCTX", r)] {
        if on {
            let _ = writeln!(o, "	{tool} ranges skipped by the spam filter : {count}");
        }
    }
}

/// The first four lines every profile file of the reference starts with
/// (`<what> information for program=...`, routines called, start, end).
pub(crate) fn first_lines(o: &mut String, what: &str, h: &Header, s: &Summary) {
    let _ = writeln!(
        o,
        "{what} information for program='{}', proc#{}:",
        h.program, h.myproc
    );
    let _ = writeln!(
        o,
        "\tNo. of instrumented routines called : {}",
        s.routines_called
    );
    let _ = writeln!(o, "\tInstrumentation started : {}", h.started);
    let _ = writeln!(o, "\tInstrumentation   ended : {}", h.ended);
}

/// The whole profile text (tests; the writer streams it with
/// [`write_profile_text`]).
#[cfg(test)]
pub(crate) fn format_profile(h: &Header, s: &Summary) -> String {
    let mut o = Vec::new();
    write_profile_text(&mut o, h, s).expect("writing to memory");
    String::from_utf8(o).expect("the profile is UTF-8")
}

/// A right-aligned 11-wide counter rate (MIPS, MFlops), `-` when the
/// events counted cannot give it.
struct Rate(f64);

impl std::fmt::Display for Rate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.0.is_finite() {
            write!(f, "{:11.0}", self.0)
        } else {
            write!(f, "{:>11}", "-")
        }
    }
}

/// Writes the whole profile to `o`, one row at a time: nothing of the
/// size of the profile is built in memory.
pub(crate) fn write_profile_text<W: std::io::Write + ?Sized>(
    o: &mut W,
    h: &Header,
    s: &Summary,
) -> std::io::Result<()> {
    o.write_all(format_header(h, s, true).as_bytes())?;
    o.write_all(b"\n")?;
    let with_counters = !h.counters.is_empty();
    if with_counters {
        o.write_all(b"    #  % Time         Cumul         Self        Total     # of calls        MIPS      MFlops    Routine@<thread-id>")?;
    } else {
        o.write_all(b"    #  % Time         Cumul         Self        Total     # of calls        Self       Total    Routine@<thread-id>")?;
    }
    if h.clusterinfo {
        o.write_all(b" [Cluster:(id,size)]")?;
    }
    o.write_all(b"\n")?;
    if h.sizeinfo {
        writeln!(o, "{:76} (Size; Size/sec; Size/call; MinSize; MaxSize)", "")?;
    }
    if with_counters {
        o.write_all(b"        (self)        (sec)        (sec)        (sec)                     (self)      (self)\n\n")?;
    } else {
        o.write_all(b"        (self)        (sec)        (sec)        (sec)                    ms/call     ms/call\n\n")?;
    }
    for (i, r) in s.rows.iter().enumerate() {
        if r.pct < h.limit {
            break;
        }
        let per = |x: f64| {
            if r.calls > 0 {
                1000.0 * x / r.calls as f64
            } else {
                0.0
            }
        };
        write!(
            o,
            "{:5} {:8.2} {:12.3} {:12.3} {:12.3} {:14} ",
            i + 1,
            r.pct,
            r.cumul,
            r.self_s,
            r.total_s,
            r.calls,
        )?;
        if with_counters {
            let (excl, _) = r.metric(h.counters_at, h.counters.len());
            let (mips, mflops) = crate::metrics::counters::mips_mflops(&h.counters, excl, r.self_s);
            write!(o, "{} {}", Rate(mips), Rate(mflops))?;
        } else {
            write!(o, "{:11.2} {:11.2}", per(r.self_s), per(r.total_s))?;
        }
        write!(o, "   {}", if r.star { '*' } else { ' ' })?;
        if h.callpath_packed && !r.path.is_empty() {
            for &anc in r.path.iter().rev() {
                write!(o, "{}/", s.name(anc))?;
            }
        }
        write!(o, "{}@{}", s.row_name(r), r.tid)?;
        if let Some(f) = r.file {
            let base = f.rsplit('/').next().unwrap_or("");
            write!(o, ":{}", escape_controls(base))?;
        }
        if h.clusterinfo {
            write!(o, " [{},{}]", r.cluster, r.cluster_size)?;
        }
        if !h.callpath_packed {
            for (k, &anc) in r.path.iter().enumerate() {
                let col = NAME_COL.saturating_sub(h.callpath_indent * (k + 1));
                write!(o, "\n{:col$}{}", "", s.name(anc))?;
            }
        }
        if h.sizeinfo && r.size.sum > 0 {
            let per_sec = if r.self_s > 0.0 {
                (r.size.sum as f64 / r.self_s).round() as u64
            } else {
                0
            };
            let per_call = if r.calls > 0 {
                (r.size.sum as f64 / r.calls as f64).round() as u64
            } else {
                0
            };
            write!(
                o,
                "\n{:76} ({}; {}; {}; {}; {})",
                "",
                group(r.size.sum),
                group(per_sec),
                group(per_call),
                group(r.size.min),
                group(r.size.max)
            )?;
        }
        o.write_all(b"\n")?;
    }
    Ok(())
}

/// A CSV field (RFC 4180): quoted, with quotes doubled, when it holds a
/// comma, a quote or a line break (names are already free of control
/// characters, see `linebuf::escape_controls`; a C++ name may hold commas).
fn csv_field(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains([',', '"', '\n', '\r']) {
        std::borrow::Cow::Owned(format!("\"{}\"", s.replace('"', "\"\"")))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

/// The counters CSV (tests; the writer streams it with [`write_counters_csv`]).
#[cfg(test)]
pub(crate) fn format_counters_csv(h: &Header, s: &Summary) -> String {
    let mut o = Vec::new();
    write_counters_csv(&mut o, h, s).expect("writing to memory");
    String::from_utf8(o).expect("the CSV is UTF-8")
}

/// The counters CSV (`<profile>.csv`, compat §5.1): one line per routine
/// row, MPI rank and thread 0-based, exclusive then inclusive counts, and
/// Mcycles/s when the first event counts cycles. Written one row at a time.
pub(crate) fn write_counters_csv<W: std::io::Write + ?Sized>(
    o: &mut W,
    h: &Header,
    s: &Summary,
) -> std::io::Result<()> {
    o.write_all(
        b"Routine,MPI Rank,ThreadId,SelfRank,% Self Time,Cumul,Excl Time,Incl. Time,#Calls",
    )?;
    for e in &h.counters {
        write!(o, ",{}(excl)", csv_field(&e.name))?;
    }
    for e in &h.counters {
        write!(o, ",{}(incl)", csv_field(&e.name))?;
    }
    let cycles_first = h
        .counters
        .first()
        .is_some_and(|e| e.name == "cycles" || e.name == "cpu-cycles");
    if cycles_first {
        o.write_all(b",Mcyc/sec(excl),Mcyc/sec(incl)")?;
    }
    o.write_all(b"\n")?;
    for (i, r) in s
        .rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.cluster != 0 && r.pct >= h.limit)
    {
        write!(
            o,
            "{},{},{},{},{:.4},{:.6},{:.6},{:.6},{}",
            csv_field(s.row_name(r)),
            h.myproc.saturating_sub(1),
            r.tid.saturating_sub(1),
            i + 1,
            r.pct,
            r.cumul,
            r.self_s,
            r.total_s,
            r.calls
        )?;
        let (excl, incl) = r.metric(h.counters_at, h.counters.len());
        for v in excl.iter().chain(incl) {
            write!(o, ",{v}")?;
        }
        if cycles_first {
            let rate = |c: Option<&u64>, t: f64| {
                if t > 0.0 {
                    c.map_or(0.0, |&c| c as f64 / t / 1e6)
                } else {
                    0.0
                }
            };
            write!(
                o,
                ",{:.3},{:.3}",
                rate(excl.first(), r.self_s),
                rate(incl.first(), r.total_s)
            )?;
        }
        o.write_all(b"\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::options::SelfMode;
    use crate::metrics::Agg;
    use crate::profile::compute::tests::{names, thread};
    use crate::profile::compute::{self, Params};
    use crate::tree::overhead::Overhead;

    #[test]
    fn grouping() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(7_920_000), "7,920,000");
        assert_eq!(group(51_606_977), "51,606,977");
    }

    pub(super) fn header(kind: ProfileKind) -> Header {
        Header {
            program: "./prof_example".into(),
            myproc: 1,
            nproc: 1,
            started: "20261122 093830".into(),
            ended: "20261122 093830".into(),
            mem: MemUsage {
                heap: 110 * MB,
                rss: 74 * MB,
                stack: 0,
                vmpeak: 216 * MB,
                paging: 0,
            },
            kind,
            clusterinfo: false,
            sizeinfo: true,
            callpath_indent: 2,
            callpath_packed: false,
            limit: -10.0,
            elapsed_s: None,
            counters: Vec::new(),
            counters_at: 0,
        }
    }

    /// The reference example (`examples/prof_example.wallprof.drhook.prof.1`)
    /// rebuilt from its own numbers: the layout must match byte for byte.
    #[test]
    fn wallprof_layout_matches_the_reference() {
        let names = vec![
            "PROF_EXAMPLE",
            "PROF_EX_MOD:DRIVER",
            "PROF_EX_MOD:WORKER",
            "PROF_EX_MOD:KERNEL",
        ];
        // Ticks are microseconds; the numbers mirror the reference run.
        let mut t1 = thread(
            1,
            &[
                (0, 1, 1, 199_524),
                (1, 2, 1, 199_516),
                (2, 3, 99, 155_370),
                (3, 4, 396, 153_468),
            ],
        );
        t1.nodes[4].size = crate::profile::snapshot::SizeSnap {
            count: 396,
            sum: 7_920_000,
            min: 20_000,
            max: 20_000,
        };
        let mut t2 = thread(2, &[(0, 3, 101, 152_057), (1, 4, 404, 149_940)]);
        t2.nodes[2].size = crate::profile::snapshot::SizeSnap {
            count: 404,
            sum: 8_080_000,
            min: 20_000,
            max: 20_000,
        };
        let p = Params {
            kind: ProfileKind::Wall,
            self_mode: SelfMode::Off,
            callpath: None,
            routine_names: &names,
            ticks_per_sec: 1e6,
            overhead: Overhead::default(),
            aggs: &[],
        };
        let s = compute_fixture(&[t1, t2], &p);
        let text = format_profile(&header(ProfileKind::Wall), &s);
        insta::assert_snapshot!(text);
        // Structural checks against the real reference file.
        let reference = include_str!("../../../tests/fixtures/prof_example.wallprof.drhook.prof.1");
        let ours: Vec<&str> = text.lines().collect();
        let theirs: Vec<&str> = reference.lines().collect();
        for i in [0, 1, 9, 10, 11, 12, 13] {
            assert_eq!(ours[i], theirs[i], "line {i}");
        }
        assert_eq!(ours.len(), theirs.len());
        for (a, b) in ours.iter().zip(&theirs).skip(14) {
            assert_eq!(a.len(), b.len(), "line widths differ:\n{a}\n{b}");
            if b.trim_start().starts_with('(') {
                assert_eq!(a.find('('), b.find('('), "size line offset");
            } else {
                assert_eq!(&a[95..], &b[95..], "names differ");
            }
        }
    }

    fn compute_fixture<'a>(
        t: &[crate::profile::snapshot::ThreadSnap],
        p: &Params<'a>,
    ) -> Summary<'a> {
        compute::compute(t, p)
    }

    #[test]
    fn cpu_header_and_callpath_cluster_layout() {
        let names = names();
        let t1 = thread(1, &[(0, 1, 1, 1_000_000_000), (1, 2, 3, 600_000_000)]);
        let t2 = thread(2, &[(0, 2, 2, 300_000_000)]);
        let p = Params {
            kind: ProfileKind::Cpu,
            self_mode: SelfMode::Print,
            callpath: Some(50),
            routine_names: &names,
            ticks_per_sec: 1e9,
            overhead: Overhead {
                cpu_out: 1000.0,
                cpu_in: 100.0,
                ..Overhead::default()
            },
            aggs: &[],
        };
        let s = compute::compute(&[t1, t2], &p);
        let mut h = header(ProfileKind::Cpu);
        h.clusterinfo = true;
        insta::assert_snapshot!(format_profile(&h, &s));
    }

    #[test]
    fn limit_cuts_rows() {
        let names = names();
        let t = thread(1, &[(0, 1, 1, 1000), (1, 2, 1, 990)]);
        let p = Params {
            kind: ProfileKind::Wall,
            self_mode: SelfMode::Off,
            callpath: None,
            routine_names: &names,
            ticks_per_sec: 1000.0,
            overhead: Overhead::default(),
            aggs: &[],
        };
        let s = compute::compute(&[t], &p);
        let mut h = header(ProfileKind::Wall);
        h.limit = 5.0;
        let text = format_profile(&h, &s);
        assert!(text.contains("A@1"));
        assert!(
            !text.contains("MAIN@1"),
            "MAIN has 1% self time, under the 5% limit"
        );
    }

    #[test]
    fn counters_columns_and_csv() {
        use hpm::{EventKind, EventRole, EventSpec};
        let names = vec!["MAIN", "PHYS:A"];
        let mut t = thread(1, &[(0, 1, 1, 1000), (1, 2, 10, 500)]);
        // Two events: their inclusive counts (then scratch words).
        crate::profile::compute::tests::with_width(&mut t, 6);
        t.words[6..8].copy_from_slice(&[3_000_000_000, 1_000_000_000]);
        t.words[12..14].copy_from_slice(&[1_000_000_000, 500_000_000]);
        let aggs = [
            Agg::Inclusive,
            Agg::Inclusive,
            Agg::Scratch,
            Agg::Scratch,
            Agg::Scratch,
            Agg::Scratch,
        ];
        let p = Params {
            kind: ProfileKind::Wall,
            self_mode: SelfMode::Off,
            callpath: None,
            routine_names: &names,
            ticks_per_sec: 1000.0,
            overhead: Overhead::default(),
            aggs: &aggs,
        };
        let s = compute::compute(&[t], &p);
        let mut h = header(ProfileKind::Wall);
        let spec = |name: &str, role| EventSpec {
            name: name.into(),
            kind: EventKind::Software(0),
            role,
            description: String::new(),
        };
        h.counters = vec![
            spec("instructions", EventRole::Plain),
            spec("fp_arith", EventRole::Flops(1.0)),
        ];
        let text = format_profile(&h, &s);
        // MAIN: 2e9 instructions and 5e8 flops in 0.5 s of self time.
        assert!(
            text.contains("           1        4000        1000    MAIN@1"),
            "{text}"
        );
        assert!(
            text.contains("          10        2000        1000    PHYS:A@1"),
            "{text}"
        );
        assert!(text.contains("# of calls        MIPS      MFlops    Routine@<thread-id>"));
        let csv = format_counters_csv(&h, &s);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            lines[0],
            "Routine,MPI Rank,ThreadId,SelfRank,% Self Time,Cumul,Excl Time,Incl. Time,#Calls,instructions(excl),fp_arith(excl),instructions(incl),fp_arith(incl)"
        );
        assert!(lines.contains(&"MAIN,0,0,1,50.0000,0.500000,0.500000,1.000000,1,2000000000,500000000,3000000000,1000000000"), "{csv}");
        assert!(lines.contains(&"PHYS:A,0,0,2,50.0000,1.000000,0.500000,0.500000,10,1000000000,500000000,1000000000,500000000"), "{csv}");
        // Events that cannot give MIPS print "-".
        // Names that need quoting stay one field on one line.
        let mut quoted_names = names.clone();
        quoted_names[s.rows[0].cluster as usize - 1] = "f<int, \"x\">";
        let mut quoted = s.clone();
        quoted.names = &quoted_names;
        let csv = format_counters_csv(&h, &quoted);
        assert!(
            csv.lines()
                .nth(1)
                .unwrap()
                .starts_with("\"f<int, \"\"x\"\">\",0,0,1,"),
            "{csv}"
        );
        assert_eq!(csv.lines().count(), 3);
        h.counters = vec![spec("task-clock", EventRole::Plain)];
        let text = format_profile(&h, &s);
        assert!(text.contains("          -           -    MAIN@1"), "{text}");
    }
}
