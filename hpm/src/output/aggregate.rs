//! Built-in replacements for the HPM plug-ins (seed §2.7, §3.12): a
//! distributor that assigns event sets per MPI rank from the launcher's
//! environment, and aggregators applied locally (`mirror`, `loc_merge`,
//! `single`) or when per-task CSV files are merged (`average`, `min`, `max`,
//! and the local ones again) by `hpmcount merge`. No MPI is linked.

use std::fmt;

use crate::backend::getrusage::Rusage;
use crate::report::{CounterValue, GroupValues, Measurement, Report, SectionReport, SetValues};

/// An aggregation strategy (`HPM_AGGREGATE`, `-a`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Aggregator {
    /// Every task prints its own data unchanged (the default).
    Mirror,
    /// Only MPI rank 0 prints.
    Single,
    /// Average over tasks with identical event sets; the distributor hands
    /// out the `HPM_EVENT_SET` list round robin over the ranks.
    Average,
    /// Per task, all event sets (multiplexed) joined into one.
    LocMerge,
    /// Minimum over tasks with identical event sets (distributor as `average`).
    Min,
    /// Maximum over tasks with identical event sets (distributor as `average`).
    Max,
}

impl fmt::Display for Aggregator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl Aggregator {
    /// All strategies.
    pub const ALL: [Aggregator; 6] = [
        Aggregator::Mirror,
        Aggregator::Single,
        Aggregator::Average,
        Aggregator::LocMerge,
        Aggregator::Min,
        Aggregator::Max,
    ];

    /// The strategy's name.
    pub fn name(self) -> &'static str {
        match self {
            Aggregator::Mirror => "mirror",
            Aggregator::Single => "single",
            Aggregator::Average => "average",
            Aggregator::LocMerge => "loc_merge",
            Aggregator::Min => "min",
            Aggregator::Max => "max",
        }
    }

    /// Parses a name; the guide's plug-in file names (`average.so`,
    /// `/path/loc_merge.so`, `loc.merge.so`) are accepted too.
    pub fn parse(text: &str) -> Result<Aggregator, String> {
        let t = text.trim();
        let base = t.rsplit('/').next().unwrap_or(t);
        let base = base
            .strip_suffix(".so")
            .unwrap_or(base)
            .to_ascii_lowercase()
            .replace(['.', '-'], "_");
        match base.as_str() {
            "mirror" => Ok(Aggregator::Mirror),
            "single" => Ok(Aggregator::Single),
            "average" | "avg" => Ok(Aggregator::Average),
            "loc_merge" | "locmerge" => Ok(Aggregator::LocMerge),
            "min" | "minimum" => Ok(Aggregator::Min),
            "max" | "maximum" => Ok(Aggregator::Max),
            _ => Err(format!(
                "unknown aggregator '{t}' (built in: mirror, single, average, loc_merge, min, max; \
                 a name ending in .so is loaded as a plug-in)"
            )),
        }
    }

    /// Whether the strategy combines several tasks (done by `hpmcount merge`).
    pub fn is_cross_task(self) -> bool {
        matches!(
            self,
            Aggregator::Average | Aggregator::Min | Aggregator::Max
        )
    }

    /// The distributor: for `average`, `min` and `max`, the comma list in
    /// `event_set` is handed out round robin by `rank` (seed §2.7.4).
    /// Returns the event set this task should use, or `None` to keep it.
    pub fn distribute(self, event_set: Option<&str>, rank: Option<u32>) -> Option<String> {
        if !self.is_cross_task() {
            return None;
        }
        let items: Vec<&str> = event_set?
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        if items.len() < 2 {
            return None;
        }
        let r = rank? as usize;
        Some(items[r % items.len()].to_string())
    }

    /// Local part of the aggregation for one task's report; returns whether
    /// this task prints (`single`: only rank 0).
    pub fn apply_local(self, report: &mut Report) -> bool {
        match self {
            Aggregator::LocMerge => {
                for s in &mut report.sections {
                    s.inclusive = s.inclusive.merged();
                    s.exclusive = s.exclusive.as_ref().map(Measurement::merged);
                }
                true
            }
            Aggregator::Single => report.rank.is_none_or(|r| r == 0),
            _ => true,
        }
    }

    /// Merges the reports of several tasks (`hpmcount merge`).
    pub fn merge(self, mut reports: Vec<Report>) -> Vec<Report> {
        reports.sort_by_key(|r| (r.rank, r.pid));
        match self {
            Aggregator::Mirror => reports,
            Aggregator::LocMerge => {
                for r in &mut reports {
                    self.apply_local(r);
                }
                reports
            }
            Aggregator::Single => reports.into_iter().take(1).collect(),
            Aggregator::Average | Aggregator::Min | Aggregator::Max => {
                let mut groups: Vec<(String, Vec<Report>)> = Vec::new();
                for r in reports {
                    let sig = signature(&r);
                    match groups.iter_mut().find(|(s, _)| *s == sig) {
                        Some((_, g)) => g.push(r),
                        None => groups.push((sig, vec![r])),
                    }
                }
                groups.into_iter().map(|(_, g)| self.combine(&g)).collect()
            }
        }
    }

    fn op(self, xs: &[f64]) -> f64 {
        match self {
            Aggregator::Min => xs.iter().copied().fold(f64::INFINITY, f64::min),
            Aggregator::Max => xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            _ => xs.iter().sum::<f64>() / xs.len().max(1) as f64,
        }
    }

    fn opt(self, xs: &[Option<f64>]) -> Option<f64> {
        let v: Vec<f64> = xs.iter().flatten().copied().collect();
        (v.len() == xs.len() && !v.is_empty()).then(|| self.op(&v))
    }

    fn int(self, xs: &[u64]) -> u64 {
        let v: Vec<f64> = xs.iter().map(|&x| x as f64).collect();
        self.op(&v).round() as u64
    }

    fn combine(self, g: &[Report]) -> Report {
        let first = &g[0];
        let ranks: Vec<String> = g
            .iter()
            .map(|r| r.rank.map_or(format!("pid {}", r.pid), |x| x.to_string()))
            .collect();
        let mut hosts: Vec<&str> = g.iter().map(|r| r.host.as_str()).collect();
        hosts.dedup();
        let mut out = first.clone();
        out.rank = None;
        out.pid = 0;
        out.host = hosts.join(",");
        out.aggregate = Some(format!(
            "{} over {} tasks (ranks {})",
            self.name(),
            g.len(),
            ranks.join(",")
        ));
        out.wall_s = self.op(&g.iter().map(|r| r.wall_s).collect::<Vec<_>>());
        out.error_count = self.int(&g.iter().map(|r| r.error_count).collect::<Vec<_>>());
        out.rusage = if g.iter().all(|r| r.rusage.is_some()) {
            let fields: Vec<Vec<(&'static str, f64)>> = g
                .iter()
                .filter_map(|r| r.rusage.as_ref().map(Rusage::to_fields))
                .collect();
            let combined: Vec<(&str, f64)> = fields[0]
                .iter()
                .enumerate()
                .map(|(i, (k, _))| {
                    (
                        *k,
                        self.op(&fields.iter().map(|f| f[i].1).collect::<Vec<_>>()),
                    )
                })
                .collect();
            Some(Rusage::from_fields(&combined))
        } else {
            None
        };
        out.sections = first
            .sections
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let all: Vec<&SectionReport> = g.iter().map(|r| &r.sections[i]).collect();
                SectionReport {
                    calls: self.int(&all.iter().map(|s| s.calls).collect::<Vec<_>>()),
                    overhead_s: self.op(&all.iter().map(|s| s.overhead_s).collect::<Vec<_>>()),
                    inclusive: self.combine_measurements(
                        &all.iter().map(|s| &s.inclusive).collect::<Vec<_>>(),
                    ),
                    exclusive: s.exclusive.as_ref().map(|_| {
                        self.combine_measurements(
                            &all.iter()
                                .filter_map(|s| s.exclusive.as_ref())
                                .collect::<Vec<_>>(),
                        )
                    }),
                    ..s.clone()
                }
            })
            .collect();
        out
    }

    fn combine_measurements(self, ms: &[&Measurement]) -> Measurement {
        let first = ms[0];
        Measurement {
            wall_s: self.op(&ms.iter().map(|m| m.wall_s).collect::<Vec<_>>()),
            user_s: self.opt(&ms.iter().map(|m| m.user_s).collect::<Vec<_>>()),
            sets: first
                .sets
                .iter()
                .enumerate()
                .map(|(si, set)| SetValues {
                    name: set.name.clone(),
                    groups: set
                        .groups
                        .iter()
                        .enumerate()
                        .map(|(gi, grp)| {
                            let gs: Vec<&GroupValues> =
                                ms.iter().map(|m| &m.sets[si].groups[gi]).collect();
                            GroupValues {
                                enabled_ns: self
                                    .int(&gs.iter().map(|g| g.enabled_ns).collect::<Vec<_>>()),
                                running_ns: self
                                    .int(&gs.iter().map(|g| g.running_ns).collect::<Vec<_>>()),
                                counters: grp
                                    .counters
                                    .iter()
                                    .enumerate()
                                    .map(|(ci, c)| CounterValue {
                                        name: c.name.clone(),
                                        role: c.role,
                                        raw: self.int(
                                            &gs.iter()
                                                .map(|g| g.counters[ci].raw)
                                                .collect::<Vec<_>>(),
                                        ),
                                        value: self.opt(
                                            &gs.iter()
                                                .map(|g| g.counters[ci].value)
                                                .collect::<Vec<_>>(),
                                        ),
                                    })
                                    .collect(),
                            }
                        })
                        .collect(),
                })
                .collect(),
        }
    }
}

/// What must be equal for tasks to be combined: sections, sets, groups, events.
fn signature(r: &Report) -> String {
    let mut s = String::new();
    for sec in &r.sections {
        s.push_str(&format!("|{}:{}", sec.id, sec.exclusive.is_some()));
        for set in &sec.inclusive.sets {
            s.push_str(&format!("[{}", set.name));
            for g in &set.groups {
                s.push('(');
                for c in &g.counters {
                    s.push_str(&c.name);
                    s.push(' ');
                }
                s.push(')');
            }
            s.push(']');
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::spec::EventRole;
    use crate::report::{LocalDateTime, Tool};

    #[test]
    fn parse_names_and_plugin_files() {
        assert_eq!(Aggregator::parse("average.so"), Ok(Aggregator::Average));
        assert_eq!(
            Aggregator::parse("/opt/ihpct/lib64/loc_merge.so"),
            Ok(Aggregator::LocMerge)
        );
        assert_eq!(Aggregator::parse("loc.merge.so"), Ok(Aggregator::LocMerge));
        assert_eq!(Aggregator::parse(" MIRROR "), Ok(Aggregator::Mirror));
        assert_eq!(Aggregator::parse("max"), Ok(Aggregator::Max));
        assert!(
            Aggregator::parse("median")
                .unwrap_err()
                .contains("unknown aggregator 'median'")
        );
        for a in Aggregator::ALL {
            assert_eq!(Aggregator::parse(a.name()), Ok(a));
        }
    }

    #[test]
    fn distributor_round_robin() {
        let a = Aggregator::Average;
        assert_eq!(a.distribute(Some("0,1,3"), Some(0)).as_deref(), Some("0"));
        assert_eq!(a.distribute(Some("0,1,3"), Some(4)).as_deref(), Some("1"));
        assert_eq!(a.distribute(Some("0,1,3"), Some(5)).as_deref(), Some("3"));
        assert_eq!(a.distribute(Some("fp"), Some(5)), None);
        assert_eq!(a.distribute(Some("0,1"), None), None);
        assert_eq!(Aggregator::Mirror.distribute(Some("0,1"), Some(1)), None);
    }

    fn report(rank: u32, set: &str, cycles: f64, wall: f64) -> Report {
        let m = Measurement {
            wall_s: wall,
            user_s: Some(wall / 2.0),
            sets: vec![SetValues {
                name: set.into(),
                groups: vec![GroupValues {
                    enabled_ns: 100,
                    running_ns: 100,
                    counters: vec![CounterValue {
                        name: "cycles".into(),
                        role: EventRole::Plain,
                        raw: cycles as u64,
                        value: Some(cycles),
                    }],
                }],
            }],
        };
        Report {
            tool: Tool::Libhpm,
            program: "p".into(),
            host: "h".into(),
            pid: 100 + rank,
            rank: Some(rank),
            task_id: None,
            started: LocalDateTime::default(),
            wall_s: wall,
            rusage: None,
            backend: "fake".into(),
            user_space_only: false,
            notices: vec![],
            sections: vec![SectionReport {
                id: 1,
                label: "a".into(),
                parent: None,
                tid: 1,
                calls: 1 + rank as u64,
                inclusive: m,
                exclusive: None,
                overhead_s: 0.0,
            }],
            exit: None,
            error_count: 0,
            aggregate: None,
        }
    }

    #[test]
    fn average_min_max_over_like_tasks_only() {
        let rs = vec![
            report(0, "default", 10.0, 1.0),
            report(1, "fp", 99.0, 5.0),
            report(2, "default", 30.0, 3.0),
        ];
        let avg = Aggregator::Average.merge(rs.clone());
        assert_eq!(
            avg.len(),
            2,
            "tasks with different event sets are not averaged together"
        );
        assert_eq!(avg[0].sections[0].inclusive.find("cycles"), Some(20.0));
        assert_eq!(avg[0].wall_s, 2.0);
        assert_eq!(avg[0].sections[0].calls, 2);
        assert_eq!(
            avg[0].aggregate.as_deref(),
            Some("average over 2 tasks (ranks 0,2)")
        );
        assert_eq!(avg[1].sections[0].inclusive.find("cycles"), Some(99.0));
        let min = Aggregator::Min.merge(rs.clone());
        assert_eq!(min[0].sections[0].inclusive.find("cycles"), Some(10.0));
        assert_eq!(min[0].sections[0].inclusive.user_s, Some(0.5));
        let max = Aggregator::Max.merge(rs.clone());
        assert_eq!(max[0].sections[0].inclusive.find("cycles"), Some(30.0));
        assert_eq!(Aggregator::Single.merge(rs.clone()).len(), 1);
        assert_eq!(Aggregator::Single.merge(rs.clone())[0].rank, Some(0));
        assert_eq!(Aggregator::Mirror.merge(rs).len(), 3);
    }

    #[test]
    fn single_prints_only_rank_zero() {
        let mut r = report(3, "default", 1.0, 1.0);
        assert!(!Aggregator::Single.apply_local(&mut r));
        r.rank = Some(0);
        assert!(Aggregator::Single.apply_local(&mut r));
        r.rank = None;
        assert!(Aggregator::Single.apply_local(&mut r));
    }
}
