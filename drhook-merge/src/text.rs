//! The merge table as text, and the plain-text table layout it uses:
//! columns sized to their contents.

use crate::{Kind, Stats, Table};

/// Alignment of a column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Numbers.
    Right,
    /// Names.
    Left,
}

/// `s` as text safe to print on a terminal: control characters (C0 but
/// newline and tab, DEL, C1 — an escape sequence starts with one) and the
/// bidirectional overrides and isolates (which reorder what is shown) are
/// written as `\xNN` or `\u{NNNN}`; a backslash is doubled only when
/// something was escaped, so ordinary names print unchanged.
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    fn unsafe_char(c: char) -> bool {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    }
    if !s.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut o = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            c if unsafe_char(c) && (c as u32) < 0x100 => {
                o.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if unsafe_char(c) => o.push_str(&format!("\\u{{{:04x}}}", c as u32)),
            c => o.push(c),
        }
    }
    std::borrow::Cow::Owned(o)
}

/// Lays out `rows` under `headers`, two spaces between columns, each
/// column as wide as its widest cell; the last column is not padded.
/// Cells are shown [`printable`].
pub fn render(headers: &[(&str, Align)], rows: &[Vec<String>]) -> String {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.iter().map(|c| printable(c).into_owned()).collect())
        .collect();
    let rows = &rows[..];
    let n = headers.len();
    let mut w: Vec<usize> = headers.iter().map(|(h, _)| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate().take(n) {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let mut o = String::new();
    let mut line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut l = String::new();
        for (i, c) in cells.enumerate() {
            if i > 0 {
                l.push_str("  ");
            }
            let pad = w[i].saturating_sub(c.chars().count());
            let last = i + 1 == n;
            match headers[i].1 {
                Align::Right => {
                    l.extend(std::iter::repeat_n(' ', pad));
                    l.push_str(c);
                }
                Align::Left => {
                    l.push_str(c);
                    if !last {
                        l.extend(std::iter::repeat_n(' ', pad));
                    }
                }
            }
        }
        o.push_str(l.trim_end());
        o.push('\n');
    };
    line(&mut headers.iter().map(|(h, _)| *h));
    for r in rows {
        line(&mut r.iter().map(String::as_str));
    }
    o
}

pub(crate) fn secs(v: f64) -> String {
    format!("{v:.3}")
}

fn calls(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.1}")
    }
}

/// The merge table as text.
pub fn merge_text(t: &Table, limit: Option<usize>) -> String {
    let kind = t.kind.name();
    let per_task = match t.kind {
        Kind::Cpu => "threads added up",
        _ => "busiest thread",
    };
    let elapsed = match t.elapsed_s {
        Some(e) => format!("elapsed {e:.3} s (longest task)"),
        None => "elapsed not recorded (reference-format profiles)".to_string(),
    };
    let mut o = format!(
        "{} task{} merged ({kind} profiles, {}), {} routines, {elapsed}; seconds per task ({per_task}); a routine missing on a task counts 0 there; Max/mean = max/mean of the self time, Imbal-% = 100*(max-min)/max (the reference's)\n\n",
        t.ntasks,
        if t.ntasks == 1 { "" } else { "s" },
        proc_range(&t.procs),
        t.routines.len()
    );
    o.push_str(&stats_table(&t.routines, "Routine", "routines", limit));
    if !t.paths.is_empty() {
        o.push_str(&format!(
            "\nPer call path ({} paths, callers from the outermost > routine; per task as above; Total is the path's own)\n\n",
            t.paths.len()
        ));
        o.push_str(&stats_table(&t.paths, "Call path", "paths", limit));
    }
    o
}

/// One table of statistics across tasks, `name` heading the last column.
fn stats_table(ms: &[crate::Merged], name: &str, what: &str, limit: Option<usize>) -> String {
    use Align::*;
    let headers = [
        ("#", Right),
        ("Self max", Right),
        ("task:thr", Right),
        ("Self mean", Right),
        ("Self min", Right),
        ("Self sdev", Right),
        ("Max/mean", Right),
        ("Imbal-%", Right),
        ("Total max", Right),
        ("task:thr", Right),
        ("Total mean", Right),
        ("Total min", Right),
        ("Total sdev", Right),
        ("Calls max", Right),
        ("Calls mean", Right),
        ("Calls min", Right),
        ("Calls sdev", Right),
        ("Tasks", Right),
        (name, Left),
    ];
    let n = limit.unwrap_or(usize::MAX).min(ms.len());
    let rows: Vec<Vec<String>> = ms[..n]
        .iter()
        .enumerate()
        .map(|(i, m)| {
            vec![
                (i + 1).to_string(),
                secs(m.self_s.max),
                task_thread(&m.self_s),
                secs(m.self_s.mean),
                secs(m.self_s.min),
                secs(m.self_s.stddev),
                m.imbalance.map_or("-".into(), |v| format!("{v:.2}")),
                m.imbalance_pct.map_or("-".into(), |v| format!("{v:.1}")),
                secs(m.total_s.max),
                task_thread(&m.total_s),
                secs(m.total_s.mean),
                secs(m.total_s.min),
                secs(m.total_s.stddev),
                calls(m.calls.max),
                calls(m.calls.mean),
                calls(m.calls.min),
                format!("{:.1}", m.calls.stddev),
                format!("{}/{}", m.tasks, m.ntasks),
                m.routine.clone(),
            ]
        })
        .collect();
    let mut o = render(&headers, &rows);
    if n < ms.len() {
        o.push_str(&format!(
            "({} more {what}; --limit 0 shows all)\n",
            ms.len() - n
        ));
    }
    o
}

/// `task:thread` of a maximum.
fn task_thread(s: &Stats) -> String {
    match s.max_thread {
        Some(t) => format!("{}:{t}", s.max_task),
        None => s.max_task.to_string(),
    }
}

/// `1-4`, `1,3,7-9`.
pub fn proc_range(procs: &[u32]) -> String {
    let mut v = procs.to_vec();
    v.sort_unstable();
    v.dedup();
    let mut parts = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        parts.push(if i == j {
            format!("proc#{}", v[i])
        } else {
            format!("proc#{}-{}", v[i], v[j])
        });
        i = j + 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_fit_their_cells() {
        let s = render(
            &[("#", Align::Right), ("Name", Align::Left)],
            &[
                vec!["1".into(), "A".into()],
                vec!["10".into(), "LONGER".into()],
            ],
        );
        assert_eq!(s, " #  Name\n 1  A\n10  LONGER\n");
    }

    #[test]
    fn control_characters_and_bidi_overrides_print_as_text() {
        assert_eq!(printable("CLOUDSC"), "CLOUDSC");
        assert_eq!(printable("a\\b"), "a\\b");
        assert_eq!(printable("\u{1b}[31mRED\u{7}\\"), "\\x1b[31mRED\\x07\\\\");
        assert_eq!(printable("x\u{9b}2J"), "x\\x9b2J");
        assert_eq!(printable("ab\u{202e}cd"), "ab\\u{202e}cd");
        let t = render(
            &[("routine", Align::Left)],
            &[vec!["\u{1b}]0;title\u{7}".to_string()]],
        );
        assert!(
            !t.contains('\u{1b}') && t.contains("\\x1b]0;title\\x07"),
            "{t}"
        );
    }

    #[test]
    fn ranges() {
        assert_eq!(proc_range(&[1, 2, 3, 4]), "proc#1-4");
        assert_eq!(proc_range(&[3, 1, 7, 8, 9]), "proc#1,proc#3,proc#7-9");
    }
}
