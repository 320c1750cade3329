//! Writes a [`Profile`] as `drhook.prof.N` text, in the layout the engine
//! (and the reference Dr.Hook) print: what [`super::text`] reads back.
//! Used for round-trip tests and for the benchmark's synthetic profiles.

use std::fmt::Write as _;

use super::number::group;
use super::text::NAME_COL;
use super::{Columns, Header, Kind, PerCall, Profile, Row};

/// The whole text of a profile.
pub fn to_text(p: &Profile) -> String {
    let mut o = String::with_capacity(256 + 140 * p.rows.len());
    header(&mut o, &p.header);
    for r in &p.rows {
        row(&mut o, &p.header, r);
    }
    o
}

/// The header and the column header.
pub fn header(o: &mut String, h: &Header) {
    let memory = h.kind == Kind::Memory;
    let title = if memory {
        "Memory-profiling information"
    } else {
        "Profiling information"
    };
    let _ = writeln!(o, "{title} for program='{}', proc#{}:", h.program, h.proc);
    let _ = writeln!(
        o,
        "\tNo. of instrumented routines called : {}",
        h.routines_called
    );
    let _ = writeln!(o, "\tInstrumentation started : {}", h.started);
    let _ = writeln!(o, "\tInstrumentation   ended : {}", h.ended);
    if let Some(pct) = h.overhead_pct {
        let _ = writeln!(o, "\tInstrumentation overhead: {pct:.2}%");
    }
    if let Some(items) = &h.memory_usage {
        let v: Vec<String> = items
            .iter()
            .map(|m| {
                if m.unit.is_empty() {
                    format!("{} ({})", m.value, m.name)
                } else {
                    format!("{} {} ({})", m.value, m.unit, m.name)
                }
            })
            .collect();
        let _ = writeln!(o, "\tMemory usage : {}", v.join(", "));
    }
    for l in &h.extra_header {
        let _ = writeln!(o, "\t{l}");
    }
    if memory {
        let _ = writeln!(
            o,
            "\tNo. of procs/threads: {} procs, {} threads",
            h.nprocs, h.nthreads
        );
    } else {
        let what = if h.kind == Kind::Cpu {
            "Total CPU"
        } else {
            "Wall"
        };
        let _ = writeln!(
            o,
            "\t{what}-time is {:.2} sec on proc#{} ({} procs, {} threads)",
            h.total_s.unwrap_or(0.0),
            h.proc,
            h.nprocs,
            h.nthreads
        );
    }
    for t in &h.threads {
        let _ = write!(
            o,
            "\tThread#{}: {:11.2} sec ({:.2}%) -- Cycles:",
            t.id, t.time_s, t.pct
        );
        if let Some(c) = t.self_cycles {
            let _ = write!(o, " {c}");
        }
        if let Some(c) = t.cycles {
            let _ = write!(o, " ({c})");
        }
        o.push('\n');
    }
    if let Some(el) = h.elapsed_s {
        let _ = writeln!(
            o,
            "\tElapsed time is {el:.3} sec (wall clock, from the instrumentation's start to this profile)"
        );
    }
    o.push('\n');
    if memory {
        o.push_str("    #  Memory-%      Self-alloc     + Children    Self-Leaked          Heap       Max.Stack     Paging     #Calls    #Allocs     #Frees   Routine@<thread-id>");
    } else if h.columns == Columns::Counters {
        o.push_str("    #  % Time         Cumul         Self        Total     # of calls        MIPS      MFlops    Routine@<thread-id>");
    } else {
        o.push_str("    #  % Time         Cumul         Self        Total     # of calls        Self       Total    Routine@<thread-id>");
    }
    if h.clusterinfo {
        o.push_str(" [Cluster:(id,size)]");
    }
    o.push('\n');
    if h.sizeinfo {
        let _ = writeln!(o, "{:76} (Size; Size/sec; Size/call; MinSize; MaxSize)", "");
    }
    if memory {
        o.push_str("         (self)         (bytes)        (bytes)        (bytes)        (bytes)        (bytes)    (delta)\n");
    } else if h.columns == Columns::Counters {
        o.push_str("        (self)        (sec)        (sec)        (sec)                     (self)      (self)\n\n");
    } else {
        o.push_str("        (self)        (sec)        (sec)        (sec)                    ms/call     ms/call\n\n");
    }
}

/// One row with its call-path and size lines.
pub fn row(o: &mut String, h: &Header, r: &Row) {
    let star = if r.star { '*' } else { ' ' };
    if let Some(m) = &r.memory {
        let mark = if m.allocs != m.frees { '*' } else { ' ' };
        let _ = write!(
            o,
            "{:5} {:9.2}  {:14} {:14} {:14} {:14} {:14} {:10} {:10} {:10}{mark}{:10}   {star}",
            r.rank,
            r.pct,
            m.self_alloc,
            m.children_alloc,
            m.self_leaked,
            m.heap,
            m.max_stack,
            m.paging,
            r.calls,
            m.allocs,
            m.frees
        );
    } else {
        let (c1, c2) = match r.per_call {
            PerCall::Ms { self_ms, total_ms } => {
                (format!("{self_ms:11.2}"), format!("{total_ms:11.2}"))
            }
            PerCall::Counters { mips, mflops } => {
                let col = |v: Option<f64>| match v {
                    Some(v) => format!("{v:11.0}"),
                    None => format!("{:>11}", "-"),
                };
                (col(mips), col(mflops))
            }
            PerCall::None => (format!("{:11.2}", 0.0), format!("{:11.2}", 0.0)),
        };
        let _ = write!(
            o,
            "{:5} {:8.2} {:12.3} {:12.3} {:12.3} {:14} {c1} {c2}   {star}",
            r.rank, r.pct, r.cumul_s, r.self_s, r.total_s, r.calls
        );
    }
    let _ = write!(o, "{}@{}", r.routine, r.thread);
    if let Some(f) = &r.file {
        let _ = write!(o, ":{f}");
    }
    if let Some(c) = r.cluster {
        let _ = write!(o, " [{},{}]", c.id, c.size);
    }
    let indent = h.callpath_indent.unwrap_or(2);
    for (k, caller) in r.path.iter().enumerate() {
        let col = NAME_COL.saturating_sub(indent * (k + 1));
        let _ = write!(o, "\n{:col$}{caller}", "");
    }
    if let Some(s) = r.sizes {
        let _ = write!(
            o,
            "\n{:76} ({}; {}; {}; {}; {})",
            "",
            group(s.sum),
            group(s.per_sec),
            group(s.per_call),
            group(s.min),
            group(s.max)
        );
    }
    o.push('\n');
}
