//! `drhook diff`: two runs routine by routine, with an exit status for CI.

use std::path::PathBuf;

use super::{EXIT_OK, EXIT_REGRESSION, Global, emit, warn};
use crate::error::{Error, Result};
use crate::profile::input;
use crate::report::diff::{self, DiffRow, Stat};
use crate::report::merge;
use crate::report::table::{Align, render};

/// Arguments of `drhook diff`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The run before: a profile or a directory of profiles.
    #[arg(required_unless_present = "before_run", requires = "after")]
    pub before: Option<PathBuf>,
    /// The run after: a profile or a directory of profiles.
    #[arg(required_unless_present = "after_run")]
    pub after: Option<PathBuf>,
    /// Another run before (repeatable): each side's value is then the mean
    /// over its runs, shown with their standard deviation (±).
    #[arg(long, value_name = "PATH")]
    pub before_run: Vec<PathBuf>,
    /// Another run after (repeatable).
    #[arg(long, value_name = "PATH")]
    pub after_run: Vec<PathBuf>,
    /// A side's value of a routine across its tasks.
    #[arg(long, value_enum, default_value_t = Stat::Mean)]
    pub stat: Stat,
    /// Exit with status 1 when a routine's self time grew by more than PCT
    /// percent (see --min-self).
    #[arg(long, value_name = "PCT")]
    pub threshold: Option<f64>,
    /// Noise floor for --threshold: routines with less self time after
    /// (seconds) are not checked.
    #[arg(long, value_name = "SECS", default_value_t = 0.01)]
    pub min_self: f64,
    /// Show only the first N routines of the text table (0 = all).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub limit: usize,
    /// Write CSV.
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
    /// Write JSON.
    #[arg(long)]
    pub json: bool,
    /// Write to this file instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

fn pct(c: &diff::Change) -> String {
    match c.pct() {
        Some(p) => format!("{p:+.1}%"),
        None if c.after == 0.0 => "0".into(),
        None => "new".into(),
    }
}

fn text(rows: &[DiffRow], limit: usize) -> String {
    use Align::*;
    let headers = [
        ("Self before", Right),
        ("Self after", Right),
        ("Change", Right),
        ("%", Right),
        ("Total before", Right),
        ("Total after", Right),
        ("%", Right),
        ("Calls before", Right),
        ("Calls after", Right),
        ("Routine", Left),
    ];
    let n = if limit == 0 {
        rows.len()
    } else {
        limit.min(rows.len())
    };
    let num = |v: f64| {
        if v.fract() == 0.0 {
            format!("{v:.0}")
        } else {
            format!("{v:.1}")
        }
    };
    let cells: Vec<Vec<String>> = rows[..n]
        .iter()
        .map(|r| {
            let mut name = r.routine.clone();
            if !r.in_before {
                name.push_str("  (new)");
            } else if !r.in_after {
                name.push_str("  (gone)");
            }
            let sd = |v: f64, sd: Option<f64>| match sd {
                Some(d) => format!("{v:.3} ±{d:.3}"),
                None => format!("{v:.3}"),
            };
            vec![
                sd(r.self_s.before, r.self_s.before_sd),
                sd(r.self_s.after, r.self_s.after_sd),
                format!("{:+.3}", r.self_s.delta()),
                pct(&r.self_s),
                format!("{:.3}", r.total_s.before),
                format!("{:.3}", r.total_s.after),
                pct(&r.total_s),
                num(r.calls.before),
                num(r.calls.after),
                name,
            ]
        })
        .collect();
    let mut s = render(&headers, &cells);
    if n < rows.len() {
        s.push_str(&format!(
            "({} more routines; --limit 0 shows all)\n",
            rows.len() - n
        ));
    }
    s
}

fn csv_out(rows: &[DiffRow]) -> Result<String> {
    let e = |e: csv::Error| Error::msg(format!("writing CSV: {e}"));
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
        "routine",
        "calls_before",
        "calls_after",
        "self_before",
        "self_after",
        "self_change",
        "self_change_pct",
        "total_before",
        "total_after",
        "total_change",
        "total_change_pct",
    ])
    .map_err(e)?;
    for r in rows {
        let p = |c: &diff::Change| c.pct().map_or(String::new(), |v| v.to_string());
        w.write_record([
            r.routine.clone(),
            r.calls.before.to_string(),
            r.calls.after.to_string(),
            r.self_s.before.to_string(),
            r.self_s.after.to_string(),
            r.self_s.delta().to_string(),
            p(&r.self_s),
            r.total_s.before.to_string(),
            r.total_s.after.to_string(),
            r.total_s.delta().to_string(),
            p(&r.total_s),
        ])
        .map_err(e)?;
    }
    let b = w.into_inner().map_err(|e| Error::msg(e.to_string()))?;
    String::from_utf8(b).map_err(|e| Error::msg(e.to_string()))
}

/// A side's runs: the positional path first, then the `--*-run` ones.
fn runs(first: Option<&PathBuf>, more: &[PathBuf]) -> Vec<PathBuf> {
    first.into_iter().chain(more).cloned().collect()
}

/// `N task(s)` or `N runs`, and the elapsed time (mean over runs).
fn side_words(tables: &[merge::Table]) -> String {
    let el: Option<Vec<f64>> = tables.iter().map(|t| t.elapsed_s).collect();
    let elapsed = match el.map(|v| diff::mean_sd(&v)) {
        Some((m, None)) => format!("elapsed {m:.3} s"),
        Some((m, Some(d))) => format!("elapsed {m:.3} s ±{d:.3}"),
        None => "elapsed not recorded".to_string(),
    };
    match tables {
        [t] => format!(
            "{} task{}, {elapsed}",
            t.ntasks,
            if t.ntasks == 1 { "" } else { "s" }
        ),
        _ => format!("{} runs, {elapsed}", tables.len()),
    }
}

/// Runs the command: 0, or 1 when `--threshold` is exceeded.
pub fn run(a: &Args, g: &Global) -> Result<u8> {
    let side = |p: &PathBuf| -> Result<merge::Table> {
        let files = input::expand(std::slice::from_ref(p))?;
        merge::merge_files(&files, g.read_options(), 1)
    };
    let (b_runs, a_runs) = (
        runs(a.before.as_ref(), &a.before_run),
        runs(a.after.as_ref(), &a.after_run),
    );
    if b_runs.is_empty() || a_runs.is_empty() {
        return Err(Error::msg(
            "a side without runs: give BEFORE and AFTER, or --before-run and --after-run",
        ));
    }
    let before: Vec<merge::Table> = b_runs.iter().map(side).collect::<Result<_>>()?;
    let after: Vec<merge::Table> = a_runs.iter().map(side).collect::<Result<_>>()?;
    if let Some((x, y)) = before
        .iter()
        .chain(&after)
        .zip(before.iter().chain(&after).skip(1))
        .find(|(x, y)| x.kind != y.kind)
    {
        warn(&format!(
            "comparing a {:?} profile with a {:?} profile",
            x.kind, y.kind
        ));
    }
    let rows = diff::diff_runs(&before, &after, a.stat);
    let names = |v: &[PathBuf]| {
        v.iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(" ")
    };
    let several = before.len() > 1 || after.len() > 1;
    let out = if a.csv {
        csv_out(&rows)?
    } else if a.json {
        let mut s = serde_json::to_string_pretty(&serde_json::json!({
            "stat": a.stat,
            "before_tasks": before[0].ntasks,
            "after_tasks": after[0].ntasks,
            "before_runs": before.len(),
            "after_runs": after.len(),
            "before_elapsed_s": before.iter().map(|t| t.elapsed_s).collect::<Vec<_>>(),
            "after_elapsed_s": after.iter().map(|t| t.elapsed_s).collect::<Vec<_>>(),
            "routines": rows,
        }))
        .map_err(|e| Error::msg(e.to_string()))?;
        s.push('\n');
        s
    } else {
        format!(
            "before: {} ({}), after: {} ({}); seconds, {:?} over tasks{}\n\n{}",
            names(&b_runs),
            side_words(&before),
            names(&a_runs),
            side_words(&after),
            a.stat,
            if several {
                ", mean over runs ±standard deviation"
            } else {
                ""
            },
            text(&rows, a.limit)
        )
        .replace("Mean over", "mean over")
        .replace("Max over", "max over")
        .replace("Sum over", "sum over")
    };
    emit(a.output.as_deref(), out.as_bytes())?;
    if let Some(t) = a.threshold {
        let bad = diff::regressions(&rows, t, a.min_self);
        if !bad.is_empty() {
            for r in &bad {
                eprintln!(
                    "drhook: regression: {} self time {:.3} s -> {:.3} s ({})",
                    crate::report::table::printable(&r.routine),
                    r.self_s.before,
                    r.self_s.after,
                    pct(&r.self_s)
                );
            }
            eprintln!(
                "drhook: {} routine{} grew by more than {t}% (self time >= {} s after)",
                bad.len(),
                if bad.len() == 1 { "" } else { "s" },
                a.min_self
            );
            return Ok(EXIT_REGRESSION);
        }
    }
    Ok(EXIT_OK)
}
