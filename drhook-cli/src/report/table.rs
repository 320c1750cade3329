//! The merge table in text, CSV and JSON. The text and the table layout
//! are the `drhook-merge` crate's (shared with the in-job reduction).

pub use drhook_merge::{Align, merge_text, printable, proc_range, render};

use super::merge::{Merged, Stats, Table};
use crate::error::{Error, Result};

/// The merge table as CSV (one line per routine, every statistic).
pub fn merge_csv(t: &Table) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut head = vec!["routine".to_string(), "tasks".into(), "ntasks".into()];
    for m in ["calls", "self_s", "total_s"] {
        for s in ["min", "mean", "max", "stddev", "max_task", "max_thread"] {
            head.push(format!("{m}_{s}"));
        }
    }
    head.push("imbalance".into());
    head.push("imbalance_pct".into());
    let e = |e: csv::Error| Error::msg(format!("writing CSV: {e}"));
    w.write_record(&head).map_err(e)?;
    for m in &t.routines {
        let mut r = vec![m.routine.clone(), m.tasks.to_string(), m.ntasks.to_string()];
        for s in [&m.calls, &m.self_s, &m.total_s] {
            push_stats(&mut r, s);
        }
        r.push(m.imbalance.map_or(String::new(), |v| v.to_string()));
        r.push(m.imbalance_pct.map_or(String::new(), |v| v.to_string()));
        w.write_record(&r).map_err(e)?;
    }
    let bytes = w
        .into_inner()
        .map_err(|e| Error::msg(format!("writing CSV: {e}")))?;
    String::from_utf8(bytes).map_err(|e| Error::msg(e.to_string()))
}

fn push_stats(r: &mut Vec<String>, s: &Stats) {
    r.push(s.min.to_string());
    r.push(s.mean.to_string());
    r.push(s.max.to_string());
    r.push(s.stddev.to_string());
    r.push(s.max_task.to_string());
    r.push(s.max_thread.map_or(String::new(), |t| t.to_string()));
}

/// The merge table as JSON.
pub fn merge_json(t: &Table) -> Result<String> {
    let mut s = serde_json::to_string_pretty(t).map_err(|e| Error::msg(e.to_string()))?;
    s.push('\n');
    Ok(s)
}

/// Looks a routine up in a merged table.
pub fn find<'a>(t: &'a Table, routine: &str) -> Option<&'a Merged> {
    t.routines.iter().find(|m| m.routine == routine)
}
