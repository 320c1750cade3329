//! The measured data of one task, independent of the output format: what
//! `hpmcount` and `hpmTerminate` produce and the writers print.

use crate::backend::getrusage::Rusage;
use crate::counting::plan::CounterLayout;
use crate::counting::thread::Accumulator;
use crate::events::spec::{EventRole, names};
use crate::metrics::{MetricCounter, MetricInput};

/// Which tool produced the report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    /// The `hpmcount` command.
    Hpmcount,
    /// The libhpm API (`hpmInit` ... `hpmTerminate`).
    Libhpm,
    /// The `hpmstat` command (system-wide counting).
    Hpmstat,
}

impl Tool {
    /// `hpmcount`, `libhpm` or `hpmstat`.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Hpmcount => "hpmcount",
            Tool::Libhpm => "libhpm",
            Tool::Hpmstat => "hpmstat",
        }
    }
}

/// Local date and time (for reports and unique file names).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LocalDateTime {
    /// Year, e.g. 2026.
    pub year: i32,
    /// 1..=12.
    pub month: u32,
    /// 1..=31.
    pub day: u32,
    /// 0..=23.
    pub hour: u32,
    /// 0..=59.
    pub minute: u32,
    /// 0..=60.
    pub second: u32,
}

impl LocalDateTime {
    /// Now, in the local time zone (`localtime_r`).
    pub fn now() -> LocalDateTime {
        // SAFETY: time(NULL) only returns the current time.
        let t = unsafe { libc::time(std::ptr::null_mut()) };
        // SAFETY: `tm` is plain old data; all-zero is a valid value.
        let mut tm: libc::tm = unsafe { std::mem::zeroed() };
        // SAFETY: both pointers are valid for the duration of the call;
        // localtime_r is the thread-safe variant.
        if unsafe { libc::localtime_r(&t, &mut tm) }.is_null() {
            return LocalDateTime::default();
        }
        LocalDateTime {
            year: tm.tm_year + 1900,
            month: (tm.tm_mon + 1) as u32,
            day: tm.tm_mday as u32,
            hour: tm.tm_hour as u32,
            minute: tm.tm_min as u32,
            second: tm.tm_sec as u32,
        }
    }

    /// `dd.mm.yyyy` (seed §2.2).
    pub fn date_dotted(&self) -> String {
        format!("{:02}.{:02}.{:04}", self.day, self.month, self.year)
    }

    /// `hh.mm.ss` (seed §2.2).
    pub fn time_dotted(&self) -> String {
        format!("{:02}.{:02}.{:02}", self.hour, self.minute, self.second)
    }

    /// `yyyy-mm-dd hh:mm:ss`.
    pub fn iso(&self) -> String {
        format!(
            "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }
}

/// One event's value in a measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct CounterValue {
    /// Perf event name.
    pub name: String,
    /// Role in derived metrics.
    pub role: EventRole,
    /// Raw count (while the group was running).
    pub raw: u64,
    /// Count scaled by enabled/running; `None` if the group never ran.
    pub value: Option<f64>,
}

/// One perf group's values and its multiplexing times.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupValues {
    /// Time enabled, ns.
    pub enabled_ns: u64,
    /// Time running, ns.
    pub running_ns: u64,
    /// The events.
    pub counters: Vec<CounterValue>,
}

impl GroupValues {
    /// Fraction of the enabled time the group counted (1.0 = not multiplexed).
    pub fn running_fraction(&self) -> Option<f64> {
        (self.enabled_ns > 0).then(|| self.running_ns as f64 / self.enabled_ns as f64)
    }
}

/// The values of one event set.
#[derive(Clone, Debug, PartialEq)]
pub struct SetValues {
    /// Event set name.
    pub name: String,
    /// Its perf groups.
    pub groups: Vec<GroupValues>,
}

impl SetValues {
    /// All counters of the set.
    pub fn counters(&self) -> impl Iterator<Item = &CounterValue> {
        self.groups.iter().flat_map(|g| &g.counters)
    }

    /// Scaled value of `name`, if present and counted.
    pub fn value(&self, name: &str) -> Option<f64> {
        self.counters()
            .find(|c| c.name == name)
            .and_then(|c| c.value)
    }
}

/// Times and counter values over one subset of the time line.
#[derive(Clone, Debug, PartialEq)]
pub struct Measurement {
    /// Wall clock time, s.
    pub wall_s: f64,
    /// User (CPU) time, s, if known.
    pub user_s: Option<f64>,
    /// The event sets.
    pub sets: Vec<SetValues>,
}

impl Measurement {
    /// Converts accumulated raw deltas into scaled values.
    pub fn from_accumulator(layout: &CounterLayout, acc: &Accumulator) -> Measurement {
        let mut sets: Vec<SetValues> = layout
            .set_names
            .iter()
            .map(|n| SetValues {
                name: n.clone(),
                groups: Vec::new(),
            })
            .collect();
        for (g, gl) in layout.groups.iter().enumerate() {
            let (enabled_ns, running_ns) = (acc.enabled_ns[g], acc.running_ns[g]);
            let counters = gl
                .events
                .iter()
                .enumerate()
                .map(|(k, e)| {
                    let raw = acc.values[gl.offset + k];
                    let value = crate::backend::scale(
                        raw,
                        crate::backend::GroupTimes {
                            enabled_ns,
                            running_ns,
                        },
                    );
                    CounterValue {
                        name: e.name.clone(),
                        role: e.role,
                        raw,
                        value,
                    }
                })
                .collect();
            if let Some(set) = sets.get_mut(gl.set) {
                set.groups.push(GroupValues {
                    enabled_ns,
                    running_ns,
                    counters,
                });
            }
        }
        let mut m = Measurement {
            wall_s: acc.wall_ns as f64 * 1e-9,
            user_s: None,
            sets,
        };
        m.user_s = m
            .find(names::TASK_CLOCK)
            .or_else(|| m.find(names::RU_UTIME))
            .map(|ns| ns * 1e-9);
        m
    }

    /// First counted value of `name` in any set.
    pub fn find(&self, name: &str) -> Option<f64> {
        self.sets.iter().find_map(|s| s.value(name))
    }

    /// The inputs of the derived metrics for one set.
    pub fn metric_input<'a>(&self, set: &'a SetValues) -> MetricInput<'a> {
        MetricInput {
            counters: set
                .counters()
                .filter_map(|c| {
                    c.value.map(|value| MetricCounter {
                        name: &c.name,
                        role: c.role,
                        value,
                    })
                })
                .collect(),
            wall_s: self.wall_s,
            user_s: self.user_s,
        }
    }

    /// All sets joined into one (`loc_merge`): counts are already scaled to
    /// the whole interval, so more derived metrics become computable.
    pub fn merged(&self) -> Measurement {
        if self.sets.len() <= 1 {
            return self.clone();
        }
        let mut groups = Vec::new();
        let mut seen: Vec<&str> = Vec::new();
        for s in &self.sets {
            for g in &s.groups {
                let counters: Vec<CounterValue> = g
                    .counters
                    .iter()
                    .filter(|c| !seen.contains(&c.name.as_str()))
                    .cloned()
                    .collect();
                seen.extend(g.counters.iter().map(|c| c.name.as_str()));
                if !counters.is_empty() {
                    groups.push(GroupValues {
                        enabled_ns: g.enabled_ns,
                        running_ns: g.running_ns,
                        counters,
                    });
                }
            }
        }
        let name = self
            .sets
            .iter()
            .map(|s| s.name.as_str())
            .collect::<Vec<_>>()
            .join("+");
        Measurement {
            wall_s: self.wall_s,
            user_s: self.user_s,
            sets: vec![SetValues { name, groups }],
        }
    }
}

/// One instrumented section (or, for `hpmcount`, the whole program).
#[derive(Clone, Debug, PartialEq)]
pub struct SectionReport {
    /// Section id (0 for the hpmcount program).
    pub id: u32,
    /// Label given at the first start.
    pub label: String,
    /// Parent section used at the last start, if any.
    pub parent: Option<u32>,
    /// Linux thread id that ran the section.
    pub tid: i32,
    /// Completed start/stop pairs.
    pub calls: u64,
    /// Inclusive values.
    pub inclusive: Measurement,
    /// Exclusive values, when requested (`HPM_EXCLUSIVE_VALUES` or `HPM_ONLY_EXCLUSIVE`).
    pub exclusive: Option<Measurement>,
    /// Accumulated start/stop overhead, s (seed §3.8).
    pub overhead_s: f64,
}

impl SectionReport {
    /// Overhead above 20% of the wall time (seed §3.8).
    pub fn overhead_warning(&self) -> bool {
        self.inclusive.wall_s > 0.0 && self.overhead_s > 0.2 * self.inclusive.wall_s
    }
}

/// How the measured program ended (`hpmcount`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitInfo {
    /// Exited with this code.
    Code(i32),
    /// Killed by this signal.
    Signal(i32),
}

impl ExitInfo {
    /// The shell convention: the code, or 128 + signal.
    pub fn shell_status(self) -> i32 {
        match self {
            ExitInfo::Code(c) => c,
            ExitInfo::Signal(s) => 128 + s,
        }
    }
}

/// Everything one task measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// Producing tool.
    pub tool: Tool,
    /// Program name (libhpm: `hpmInit`'s progName; hpmcount: the command).
    pub program: String,
    /// Host name (short form).
    pub host: String,
    /// Process id.
    pub pid: u32,
    /// MPI rank from the launcher, if any.
    pub rank: Option<u32>,
    /// The deprecated taskID of hpmInit/hpmTerminate (libhpm).
    pub task_id: Option<i32>,
    /// Start of the measurement.
    pub started: LocalDateTime,
    /// Total wall time, s (hpmcount: program run; libhpm: init to terminate).
    pub wall_s: f64,
    /// getrusage block.
    pub rusage: Option<Rusage>,
    /// Counter backend (`perf_event`, `getrusage`, `fake`).
    pub backend: String,
    /// Counting restricted to user space (perf_event_paranoid).
    pub user_space_only: bool,
    /// Notices (fallback, configuration warnings) to repeat in the files.
    pub notices: Vec<String>,
    /// Sections, ordered by id.
    pub sections: Vec<SectionReport>,
    /// hpmcount: how the program ended.
    pub exit: Option<ExitInfo>,
    /// libhpm: number of API errors (hpm_error_count).
    pub error_count: u64,
    /// Set when this report combines several tasks (`hpmcount merge`).
    pub aggregate: Option<String>,
}

/// Short host name: up to the first '.' (seed §2.2).
pub fn short_host_name(full: &str) -> String {
    full.trim().split('.').next().unwrap_or("").to_string()
}

/// This machine's short host name.
pub fn host_name() -> String {
    let full =
        std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_else(|_| "localhost".into());
    let short = short_host_name(&full);
    if short.is_empty() {
        "localhost".into()
    } else {
        short
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_are_shortened() {
        assert_eq!(short_host_name("node12.cluster.example.org\n"), "node12");
        assert_eq!(short_host_name("login"), "login");
        assert!(!host_name().is_empty());
    }

    #[test]
    fn dates() {
        let d = LocalDateTime {
            year: 2026,
            month: 3,
            day: 7,
            hour: 9,
            minute: 5,
            second: 1,
        };
        assert_eq!(d.date_dotted(), "07.03.2026");
        assert_eq!(d.time_dotted(), "09.05.01");
        assert_eq!(d.iso(), "2026-03-07 09:05:01");
        let now = LocalDateTime::now();
        assert!(now.year >= 2024 && (1..=12).contains(&now.month));
    }

    #[test]
    fn merged_sets_drop_duplicates() {
        let cv = |n: &str, v| CounterValue {
            name: n.into(),
            role: EventRole::Plain,
            raw: v as u64,
            value: Some(v),
        };
        let m = Measurement {
            wall_s: 1.0,
            user_s: None,
            sets: vec![
                SetValues {
                    name: "default".into(),
                    groups: vec![GroupValues {
                        enabled_ns: 10,
                        running_ns: 5,
                        counters: vec![cv("task-clock", 1.0), cv("cycles", 2.0)],
                    }],
                },
                SetValues {
                    name: "sw".into(),
                    groups: vec![GroupValues {
                        enabled_ns: 10,
                        running_ns: 10,
                        counters: vec![cv("task-clock", 3.0), cv("page-faults", 4.0)],
                    }],
                },
            ],
        };
        let merged = m.merged();
        assert_eq!(merged.sets.len(), 1);
        assert_eq!(merged.sets[0].name, "default+sw");
        let names: Vec<&str> = merged.sets[0].counters().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["task-clock", "cycles", "page-faults"]);
        assert_eq!(m.sets[0].groups[0].running_fraction(), Some(0.5));
    }

    #[test]
    fn exit_status_convention() {
        assert_eq!(ExitInfo::Code(3).shell_status(), 3);
        assert_eq!(ExitInfo::Signal(9).shell_status(), 137);
    }
}
