//! A profile for the terminal: the call-path tree, indented, when the
//! profile has one, else the flat table with a bar per row; sized to a
//! width, styled only when asked.

use std::collections::HashMap;

use anstyle::{AnsiColor, Style};

use crate::profile::{Kind, Profile};

/// How to draw.
#[derive(Clone, Debug)]
pub struct TopOptions {
    /// Characters per line.
    pub width: usize,
    /// ANSI styles (colours, bold).
    pub color: bool,
    /// Only this thread.
    pub thread: Option<u32>,
    /// At most this many rows (flat) or lines per thread (tree); 0 = all.
    pub limit: usize,
    /// Tree depth shown; 0 = all.
    pub depth: usize,
    /// Flat table even when there is a tree.
    pub flat: bool,
}

/// How a line is styled.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LineKind {
    Plain,
    Bold,
    Dim,
    /// A flat-table row: its bar is coloured.
    Bar,
}

/// Lines drawn plain, then cut to the width, then styled.
struct Screen {
    lines: Vec<(String, LineKind)>,
}

impl Screen {
    /// Adds a line, its names made printable (no escape sequence of a
    /// routine's name reaches the terminal).
    fn push(&mut self, k: LineKind, line: String) {
        let line = match super::table::printable(&line) {
            std::borrow::Cow::Borrowed(_) => line,
            std::borrow::Cow::Owned(o) => o,
        };
        self.lines.push((line, k));
    }

    fn finish(self, o: &TopOptions) -> String {
        let mut out = String::new();
        for (l, k) in self.lines {
            let l = fit(l.trim_end(), o.width);
            let styled = if !o.color || l.is_empty() {
                l
            } else {
                match k {
                    LineKind::Plain => l,
                    LineKind::Bold => paint(bold(), &l),
                    LineKind::Dim => paint(dim(), &l),
                    LineKind::Bar => paint_bar(&l),
                }
            };
            out.push_str(&styled);
            out.push('\n');
        }
        out
    }
}

fn paint(style: Style, text: &str) -> String {
    format!("{}{text}{}", style.render(), style.render_reset())
}

const BAR_CHARS: &str = "█▏▎▍▌▋▊▉";

/// Colours the run of bar characters in a line.
fn paint_bar(l: &str) -> String {
    let Some(start) = l.find(|c| BAR_CHARS.contains(c)) else {
        return l.to_string();
    };
    let len: usize = l[start..]
        .chars()
        .take_while(|c| BAR_CHARS.contains(*c))
        .map(char::len_utf8)
        .sum();
    let end = start + len;
    format!(
        "{}{}{}",
        &l[..start],
        paint(bar_style(), &l[start..end]),
        &l[end..]
    )
}

fn bold() -> Style {
    Style::new().bold()
}

fn bar_style() -> Style {
    Style::new().fg_color(Some(AnsiColor::Cyan.into()))
}

fn dim() -> Style {
    Style::new().dimmed()
}

/// Fits `s` in `w` characters, ending with `…` when cut.
fn fit(s: &str, w: usize) -> String {
    let n = s.chars().count();
    if n <= w {
        return s.to_string();
    }
    if w == 0 {
        return String::new();
    }
    let mut t: String = s.chars().take(w - 1).collect();
    t.push('…');
    t
}

/// A bar of `frac` (0..=1) of `w` cells, in eighths.
fn bar(frac: f64, w: usize) -> String {
    const PARTS: [char; 8] = [' ', '▏', '▎', '▍', '▌', '▋', '▊', '▉'];
    let eighths = (frac.clamp(0.0, 1.0) * (w * 8) as f64).round() as usize;
    let mut s: String = std::iter::repeat_n('█', eighths / 8).collect();
    if eighths % 8 > 0 {
        s.push(PARTS[eighths % 8]);
    }
    let n = s.chars().count();
    s.extend(std::iter::repeat_n(' ', w.saturating_sub(n)));
    s
}

fn title(p: &Profile) -> String {
    let h = &p.header;
    let what = match h.kind {
        Kind::Wall => "wall-clock",
        Kind::Cpu => "CPU-time",
        Kind::Memory => "memory",
        Kind::Io => "I/O",
    };
    let mut s = format!(
        "program '{}', proc#{} of {}, {what} profile",
        h.program, h.proc, h.nprocs
    );
    s.push_str(&format!(", {}", elapsed_words(h)));
    s.push_str(&format!(", {} threads", h.nthreads));
    s
}

/// `NAME@thread`, or the name alone for thread 0 (threads merged by
/// [`crate::profile::tree::merge_all`]).
fn at_thread(routine: &str, thread: u32) -> String {
    if thread == 0 {
        routine.to_string()
    } else {
        format!("{routine}@{thread}")
    }
}

/// `elapsed X s` and the reference's figure, named for what it is.
pub fn elapsed_words(h: &crate::profile::Header) -> String {
    match h.elapsed_s {
        Some(e) => format!("elapsed {e:.3} s"),
        None => "elapsed not recorded".to_string(),
    }
}

/// What the header's `Wall-time is` / `Total CPU-time is` figure is.
pub fn reference_time_note(h: &crate::profile::Header) -> Option<String> {
    match (h.kind, h.total_s) {
        (Kind::Wall, Some(t)) => Some(format!(
            "Wall-time {t:.2} s (the file's header): the sum over routines of the busiest thread's self time, not the elapsed time"
        )),
        (Kind::Cpu, Some(t)) => Some(format!(
            "Total CPU-time {t:.2} s (the file's header): the self time of every row added"
        )),
        _ => None,
    }
}

/// The whole screen: every line at most `o.width` characters.
pub fn render(p: &Profile, o: &TopOptions) -> String {
    let mut sc = Screen { lines: Vec::new() };
    if let Some(src) = &p.source {
        sc.push(LineKind::Bold, src.clone());
    }
    sc.push(LineKind::Plain, title(p));
    if let Some(n) = reference_time_note(&p.header) {
        sc.push(LineKind::Dim, n);
    }
    if p.header.kind == Kind::Io {
        // The header's `I/O : ...` line (the process's totals).
        for l in p
            .header
            .extra_header
            .iter()
            .filter(|l| l.starts_with("I/O : "))
        {
            sc.push(LineKind::Plain, l.clone());
        }
        io_flat(p, o, &mut sc);
        return sc.finish(o);
    }
    match &p.tree {
        Some(_) if !o.flat => tree(p, o, &mut sc),
        _ => flat(p, o, &mut sc),
    }
    sc.finish(o)
}

fn flat(p: &Profile, o: &TopOptions, sc: &mut Screen) {
    let rows: Vec<_> = p
        .rows
        .iter()
        .filter(|r| o.thread.is_none_or(|t| r.thread == t))
        .collect();
    let n = if o.limit == 0 {
        rows.len()
    } else {
        o.limit.min(rows.len())
    };
    // The % base: the self time of every row shown (all threads), so the
    // column sums to 100%; the file's `% Time` is of the reference's
    // Wall-time and sums past 100% with threads.
    let base: f64 = rows.iter().map(|r| r.self_s).sum();
    let base_div = if base > 0.0 { base } else { 1.0 };
    let rows = &rows[..n];
    // Fixed columns: "    # " + "  Self%" + " bar " + "   Self(s)" + "  Total(s)" + "       Calls" + "  "
    let rank_w = n.to_string().len().max(1);
    let name_w = rows
        .iter()
        .map(|r| {
            super::table::printable(&r.routine).chars().count() + 1 + r.thread.to_string().len()
        })
        .max()
        .unwrap_or(7)
        .max(7);
    let fixed = rank_w + 8 + 11 + 11 + 12 + 4;
    let avail = o.width.saturating_sub(fixed);
    // The bar takes what the names leave, between 10 and 30 cells.
    let bar_w = avail
        .saturating_sub(name_w)
        .clamp(10, 30)
        .min(avail.saturating_sub(8));
    let name_room = o.width.saturating_sub(fixed + bar_w + 1);
    let head = format!(
        "{:>rank_w$} {:>7} {:bar_w$} {:>10} {:>10} {:>11}    {}",
        "#", "Self%", "", "Self(s)", "Total(s)", "Calls", "Routine@thread"
    );
    sc.push(LineKind::Plain, String::new());
    let times = p.header.kind.has_times();
    if times {
        sc.push(
            LineKind::Dim,
            format!(
                "Self% = share of the {base:.3} s of self time of all rows (all threads added)"
            ),
        );
    }
    sc.push(LineKind::Bold, head);
    for (i, r) in rows.iter().enumerate() {
        let pct = if times {
            100.0 * r.self_s / base_div
        } else {
            r.pct
        };
        let name = at_thread(&r.routine, r.thread);
        let star = if r.star { "*" } else { " " };
        let line_start = format!("{:>rank_w$} {:>6.2}% ", i + 1, pct);
        let rest = format!(
            " {:>10.3} {:>10.3} {:>11}   {star}{}",
            r.self_s,
            r.total_s,
            r.calls,
            fit(&name, name_room.max(8))
        );
        sc.push(
            LineKind::Bar,
            format!("{line_start}{}{rest}", bar(pct / 100.0, bar_w)),
        );
    }
    if n < p.rows.len() && o.limit != 0 {
        sc.push(
            LineKind::Dim,
            format!("({} more rows; --limit 0 shows all)", p.rows.len() - n),
        );
    }
}

/// An I/O profile: rows by I/O time (as in the file), the bar the row's
/// share of the I/O time.
fn io_flat(p: &Profile, o: &TopOptions, sc: &mut Screen) {
    let rows: Vec<_> = p
        .rows
        .iter()
        .filter(|r| o.thread.is_none_or(|t| r.thread == t))
        .collect();
    let n = if o.limit == 0 {
        rows.len()
    } else {
        o.limit.min(rows.len())
    };
    let rows = &rows[..n];
    let rank_w = n.to_string().len().max(1);
    // "# " + "I/O%  " + bar + " I/O(s) Self(s) Read Written Calls   "
    let fixed = rank_w + 9 + 11 + 11 + 11 + 11 + 10 + 5;
    let bar_w = o.width.saturating_sub(fixed + 16).clamp(6, 20);
    let name_room = o.width.saturating_sub(fixed + bar_w);
    let head = format!(
        "{:>rank_w$} {:>7} {:bar_w$} {:>10} {:>10} {:>10} {:>10} {:>9}    {}",
        "#", "I/O%", "", "I/O(s)", "Self(s)", "Read", "Written", "Calls", "Routine@thread"
    );
    sc.push(LineKind::Plain, String::new());
    sc.push(LineKind::Bold, head);
    for (i, r) in rows.iter().enumerate() {
        let io = r.io.unwrap_or(crate::profile::IoColumns {
            io_s: 0.0,
            compute_s: 0.0,
            read_bytes: 0,
            write_bytes: 0,
            reads: 0,
            writes: 0,
            other: 0,
        });
        let name = at_thread(&r.routine, r.thread);
        let star = if r.star { "*" } else { " " };
        let line = format!(
            "{:>rank_w$} {:>6.2}% {} {:>10.6} {:>10.6} {:>10} {:>10} {:>9}   {star}{}",
            i + 1,
            r.pct,
            bar(r.pct / 100.0, bar_w),
            io.io_s,
            r.self_s,
            bytes(io.read_bytes),
            bytes(io.write_bytes),
            io.reads + io.writes + io.other,
            fit(&name, name_room.max(8))
        );
        sc.push(LineKind::Bar, line);
    }
    if n < p.rows.len() && o.limit != 0 {
        sc.push(
            LineKind::Dim,
            format!("({} more rows; --limit 0 shows all)", p.rows.len() - n),
        );
    }
}

/// Bytes in binary units (`12.3K`, `4.0M`), at most 7 characters.
fn bytes(b: u64) -> String {
    const U: [&str; 5] = ["", "K", "M", "G", "T"];
    let (x, i) = drhook_merge::io::binary_units(b);
    if i == 0 {
        b.to_string()
    } else {
        format!("{x:.1}{}", U[i])
    }
}

fn tree(p: &Profile, o: &TopOptions, sc: &mut Screen) {
    let nodes = p.tree.as_deref().unwrap_or_default();
    let pos: HashMap<u64, usize> = nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
    let mut kids: HashMap<Option<usize>, Vec<usize>> = HashMap::new();
    for (i, n) in nodes.iter().enumerate() {
        let par = n.parent.and_then(|id| pos.get(&id).copied());
        kids.entry(par).or_default().push(i);
    }
    for v in kids.values_mut() {
        v.sort_by(|a, b| {
            nodes[*b]
                .total_s
                .total_cmp(&nodes[*a].total_s)
                .then_with(|| nodes[*a].routine.cmp(&nodes[*b].routine))
        });
    }
    for t in p.thread_ids() {
        if o.thread.is_some_and(|x| x != t) {
            continue;
        }
        let roots: Vec<usize> = kids
            .get(&None)
            .map(|v| {
                v.iter()
                    .copied()
                    .filter(|&i| nodes[i].thread == t)
                    .collect()
            })
            .unwrap_or_default();
        // The thread's time in instrumented routines: Σ totals of its roots.
        let busy: f64 = roots.iter().map(|&i| nodes[i].total_s).sum();
        let denom = if busy > 0.0 { busy } else { 1.0 };
        sc.push(LineKind::Plain, String::new());
        sc.push(
            LineKind::Bold,
            if t == 0 {
                format!("All threads merged: {busy:.3} s in instrumented routines (the % base)")
            } else {
                format!("Thread {t}: {busy:.3} s in instrumented routines (the % base)")
            },
        );
        let head = format!(
            "{:>10} {:>7} {:>10} {:>7} {:>11}  {}",
            "Total(s)", "Total%", "Self(s)", "Self%", "Calls", "Routine"
        );
        sc.push(LineKind::Bold, head);
        let fixed = 10 + 1 + 7 + 1 + 10 + 1 + 7 + 1 + 11 + 2;
        let room = o.width.saturating_sub(fixed).max(12);
        // Depth-first, with the tree drawn in the name column.
        let roots: Vec<usize> = kids
            .get(&None)
            .map(|v| {
                v.iter()
                    .copied()
                    .filter(|&i| nodes[i].thread == t)
                    .collect()
            })
            .unwrap_or_default();
        // (node, prefix for its children, its own connector)
        let mut stack: Vec<(usize, String, String, usize)> = roots
            .iter()
            .rev()
            .map(|&i| (i, String::new(), String::new(), 1))
            .collect();
        let mut shown = 0usize;
        let mut hidden = 0usize;
        while let Some((i, prefix, connector, depth)) = stack.pop() {
            if o.limit != 0 && shown >= o.limit {
                hidden += 1 + count_below(&kids, i);
                continue;
            }
            let n = &nodes[i];
            let name = format!("{prefix}{connector}{}", n.routine);
            let line = format!(
                "{:>10.3} {:>6.1}% {:>10.3} {:>6.1}% {:>11}  {}",
                n.total_s,
                100.0 * n.total_s / denom,
                n.self_s,
                100.0 * n.self_s / denom,
                n.calls,
                fit(&name, room)
            );
            sc.push(
                if n.inferred {
                    LineKind::Dim
                } else {
                    LineKind::Plain
                },
                line,
            );
            shown += 1;
            let ch = kids.get(&Some(i)).cloned().unwrap_or_default();
            if o.depth != 0 && depth >= o.depth {
                hidden += count_below(&kids, i);
                continue;
            }
            let child_prefix = if connector.is_empty() {
                prefix.clone()
            } else if connector.starts_with('├') {
                format!("{prefix}│  ")
            } else {
                format!("{prefix}   ")
            };
            for (k, &c) in ch.iter().enumerate().rev() {
                let conn = if k + 1 == ch.len() {
                    "└─ "
                } else {
                    "├─ "
                };
                stack.push((c, child_prefix.clone(), conn.to_string(), depth + 1));
            }
        }
        if hidden > 0 {
            sc.push(
                LineKind::Dim,
                format!("({hidden} more nodes; --limit 0 --depth 0 show all)"),
            );
        }
    }
}

fn count_below(kids: &HashMap<Option<usize>, Vec<usize>>, i: usize) -> usize {
    let mut n = 0;
    let mut stack = vec![i];
    while let Some(x) = stack.pop() {
        if let Some(ch) = kids.get(&Some(x)) {
            n += ch.len();
            stack.extend(ch);
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_and_fitting() {
        assert_eq!(bar(0.5, 4), "██  ");
        assert_eq!(bar(1.0 / 16.0, 2), "▏ ");
        assert_eq!(bar(2.0, 3), "███");
        assert_eq!(fit("ABCDEF", 4), "ABC…");
        assert_eq!(fit("AB", 4), "AB");
    }
}
