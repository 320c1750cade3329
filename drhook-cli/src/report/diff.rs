//! Routine by routine, two runs side by side.
//!
//! Each side is merged first ([`super::merge`]), so a side may be one
//! profile or the profiles of all tasks of a run; a routine's value on a
//! side is the chosen statistic across that side's tasks (mean by default,
//! or max, or sum), 0 where it does not appear. A side may also be
//! several runs of the same program ([`diff_runs`]): its value is then the
//! mean over the runs, with their standard deviation.

use serde::Serialize;

use super::merge::{Merged, Table};

/// Which statistic across tasks a side's value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Stat {
    /// Mean over the side's tasks.
    Mean,
    /// Largest value of a task.
    Max,
    /// Sum over the side's tasks.
    Sum,
}

fn pick(m: Option<&Merged>, stat: Stat, f: fn(&Merged) -> &super::merge::Stats) -> f64 {
    m.map_or(0.0, |m| {
        let s = f(m);
        match stat {
            Stat::Mean => s.mean,
            Stat::Max => s.max,
            Stat::Sum => s.mean * f64::from(m.ntasks),
        }
    })
}

/// Before and after of one measure.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Change {
    /// Value before (the mean over the side's runs).
    pub before: f64,
    /// Value after (the mean over the side's runs).
    pub after: f64,
    /// Standard deviation over the runs before (several runs only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before_sd: Option<f64>,
    /// Standard deviation over the runs after (several runs only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_sd: Option<f64>,
}

impl Change {
    /// after − before.
    pub fn delta(&self) -> f64 {
        self.after - self.before
    }

    /// Relative change in percent (`None` when before is 0).
    pub fn pct(&self) -> Option<f64> {
        (self.before != 0.0).then(|| 100.0 * (self.after - self.before) / self.before)
    }
}

/// One routine in both runs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DiffRow {
    /// Routine name.
    pub routine: String,
    /// Calls.
    pub calls: Change,
    /// Self seconds.
    pub self_s: Change,
    /// Total seconds.
    pub total_s: Change,
    /// Present before (in any run).
    pub in_before: bool,
    /// Present after (in any run).
    pub in_after: bool,
}

/// Routines of both tables, by decreasing absolute change of self time
/// (then name).
pub fn diff(before: &Table, after: &Table, stat: Stat) -> Vec<DiffRow> {
    diff_runs(
        std::slice::from_ref(before),
        std::slice::from_ref(after),
        stat,
    )
}

/// Mean and (sample) standard deviation; the deviation only of 2 or more.
pub fn mean_sd(v: &[f64]) -> (f64, Option<f64>) {
    let n = v.len() as f64;
    if v.is_empty() {
        return (0.0, None);
    }
    let mean = v.iter().sum::<f64>() / n;
    let sd = (v.len() > 1)
        .then(|| (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt());
    (mean, sd)
}

/// As [`diff`] with repeated runs on each side: a routine's value on a
/// side is the mean over the side's runs (each run's value being `stat`
/// over its tasks, 0 in a run without the routine), with the standard
/// deviation over the runs when there are several.
pub fn diff_runs(before: &[Table], after: &[Table], stat: Stat) -> Vec<DiffRow> {
    use std::collections::HashMap;
    let mut names: Vec<&str> = before
        .iter()
        .chain(after)
        .flat_map(|t| t.routines.iter().map(|m| m.routine.as_str()))
        .collect();
    names.sort_unstable();
    names.dedup();
    fn index(side: &[Table]) -> Vec<HashMap<&str, &Merged>> {
        side.iter()
            .map(|t| t.routines.iter().map(|m| (m.routine.as_str(), m)).collect())
            .collect()
    }
    let (b, a) = (index(before), index(after));
    let mut rows: Vec<DiffRow> = names
        .into_iter()
        .map(|n| {
            let ch = |f: fn(&Merged) -> &super::merge::Stats| {
                let side = |runs: &[HashMap<&str, &Merged>]| {
                    let v: Vec<f64> = runs
                        .iter()
                        .map(|r| pick(r.get(n).copied(), stat, f))
                        .collect();
                    mean_sd(&v)
                };
                let ((before, before_sd), (after, after_sd)) = (side(&b), side(&a));
                Change {
                    before,
                    after,
                    before_sd,
                    after_sd,
                }
            };
            DiffRow {
                routine: n.to_string(),
                calls: ch(|m| &m.calls),
                self_s: ch(|m| &m.self_s),
                total_s: ch(|m| &m.total_s),
                in_before: b.iter().any(|r| r.contains_key(n)),
                in_after: a.iter().any(|r| r.contains_key(n)),
            }
        })
        .collect();
    rows.sort_by(|x, y| {
        y.self_s
            .delta()
            .abs()
            .total_cmp(&x.self_s.delta().abs())
            .then_with(|| x.routine.cmp(&y.routine))
    });
    rows
}

/// Routines whose self time after is at least `min_self_s` and grew by
/// more than `pct` percent (from 0: always).
pub fn regressions(rows: &[DiffRow], pct: f64, min_self_s: f64) -> Vec<&DiffRow> {
    rows.iter()
        .filter(|r| {
            r.self_s.after >= min_self_s
                && r.self_s.after > r.self_s.before
                && r.self_s.pct().is_none_or(|p| p > pct)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Kind;
    use crate::report::merge::Merger;
    use std::path::Path;

    fn table(rows: &[(&str, f64)]) -> Table {
        let mut m = Merger::new();
        m.begin_task(Kind::Wall, 1, Path::new("x")).unwrap();
        for &(r, s) in rows {
            m.add(r, 1, 1, s, s);
        }
        m.end_task();
        m.finish()
    }

    #[test]
    fn sorted_by_absolute_change_and_thresholds() {
        let b = table(&[("A", 1.0), ("B", 2.0), ("GONE", 0.3)]);
        let a = table(&[("A", 1.5), ("B", 1.0), ("NEW", 0.2)]);
        let d = diff(&b, &a, Stat::Mean);
        let names: Vec<&str> = d.iter().map(|r| r.routine.as_str()).collect();
        assert_eq!(names, ["B", "A", "GONE", "NEW"]);
        assert_eq!(d[1].self_s.pct(), Some(50.0));
        assert!(!d[3].in_before && d[3].in_after);
        let r: Vec<&str> = regressions(&d, 10.0, 0.0)
            .iter()
            .map(|r| r.routine.as_str())
            .collect();
        assert_eq!(r, ["A", "NEW"]);
        let r: Vec<&str> = regressions(&d, 60.0, 0.0)
            .iter()
            .map(|r| r.routine.as_str())
            .collect();
        assert_eq!(r, ["NEW"]);
        assert!(
            regressions(&d, 60.0, 0.25).is_empty(),
            "under the noise floor"
        );
    }
}
