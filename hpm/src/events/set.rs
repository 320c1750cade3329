//! Event sets ("groups" in the HPM guide, seed §2.3) and their selection with
//! `HPM_EVENT_SET` / `hpmcount -g`.
//!
//! An event set is what the user picks; internally it is one or more perf
//! groups, each small enough to fit the PMU (a perf group is scheduled all or
//! nothing) and each read with one `read(2)`. When the perf groups of the
//! selected sets do not fit the PMU together the kernel multiplexes them and
//! the reports show the scaling.

use crate::events::cpu::{CpuInfo, CpuVendor};
use crate::events::spec::{EventSpec, names};

/// A named, numbered set of events.
#[derive(Clone, Debug, PartialEq)]
pub struct EventSet {
    /// Group number for `-g <n>` (`None` for user-given lists).
    pub number: Option<u32>,
    /// Group name for `-g <name>`.
    pub name: String,
    /// One-line description.
    pub description: String,
    /// The perf groups; each is opened and read as one unit.
    pub groups: Vec<Vec<EventSpec>>,
}

/// Largest number of hardware events put into one perf group of a user list.
pub const MAX_HW_EVENTS_PER_GROUP: usize = 4;

/// The built-in set names, in number order.
pub const BUILTIN_NAMES: [&str; 4] = ["default", "fp", "cache", "sw"];

fn specs(list: &[&str], cpu: &CpuInfo) -> Vec<EventSpec> {
    // The built-in names are all in the event table (tested below).
    list.iter()
        .filter_map(|n| EventSpec::parse(n, cpu).ok())
        .collect()
}

impl EventSet {
    /// The built-in sets for this CPU: 0 `default`, 1 `fp`, 2 `cache`, 3 `sw`.
    pub fn builtin(cpu: &CpuInfo) -> Vec<EventSet> {
        use names::*;
        // Group sizes respect the smallest common PMU: Intel with SMT has 4
        // general-purpose counters, and the NMI watchdog may hold the fixed
        // cycles counter, so `cycles` can need a general-purpose one. A perf
        // group that does not fit is never scheduled. Intel's four FP events
        // therefore go without `cycles`; AMD (6 counters) keeps it.
        let vendor = EventSpec::vendor_fp_events(cpu);
        let mut fp = if cpu.vendor == CpuVendor::Amd && !vendor.is_empty() {
            specs(&[TASK_CLOCK, CYCLES, INSTRUCTIONS], cpu)
        } else {
            specs(&[TASK_CLOCK, INSTRUCTIONS], cpu)
        };
        let fp_description = if vendor.is_empty() {
            "floating point: no FP events are known for this CPU, counts instructions only"
                .to_string()
        } else {
            format!(
                "floating point: instructions and {} FP events of this CPU",
                vendor.len()
            )
        };
        fp.extend(vendor);
        vec![
            EventSet {
                number: Some(0),
                name: "default".into(),
                description: "cycles, instructions, branches, L1D and LLC accesses/misses".into(),
                groups: vec![
                    specs(
                        &[TASK_CLOCK, CYCLES, INSTRUCTIONS, BRANCHES, BRANCH_MISSES],
                        cpu,
                    ),
                    specs(
                        &[L1D_LOADS, L1D_LOAD_MISSES, CACHE_REFERENCES, CACHE_MISSES],
                        cpu,
                    ),
                ],
            },
            EventSet {
                number: Some(1),
                name: "fp".into(),
                description: fp_description,
                groups: vec![fp],
            },
            EventSet {
                number: Some(2),
                name: "cache".into(),
                description: "L1D, LLC load and data TLB accesses/misses (latency estimates)"
                    .into(),
                groups: vec![
                    specs(
                        &[
                            TASK_CLOCK,
                            L1D_LOADS,
                            L1D_LOAD_MISSES,
                            LLC_LOADS,
                            LLC_LOAD_MISSES,
                        ],
                        cpu,
                    ),
                    specs(&[CYCLES, DTLB_LOADS, DTLB_LOAD_MISSES], cpu),
                ],
            },
            EventSet {
                number: Some(3),
                name: "sw".into(),
                description: "software: task clock, context switches, migrations, page faults"
                    .into(),
                groups: vec![specs(
                    &[
                        TASK_CLOCK,
                        CONTEXT_SWITCHES,
                        CPU_MIGRATIONS,
                        PAGE_FAULTS,
                        MINOR_FAULTS,
                        MAJOR_FAULTS,
                    ],
                    cpu,
                )],
            },
        ]
    }

    /// Finds a built-in set by number or name (`software` and `hw` are aliases).
    pub fn lookup(token: &str, cpu: &CpuInfo) -> Option<EventSet> {
        let t = token.trim();
        let t = match t {
            "software" => "sw",
            "hw" | "hardware" => "default",
            other => other,
        };
        EventSet::builtin(cpu).into_iter().find(|s| {
            s.name.eq_ignore_ascii_case(t) || s.number.is_some_and(|n| t.parse::<u32>() == Ok(n))
        })
    }

    /// A user-given list of events, split into perf groups of at most
    /// [`MAX_HW_EVENTS_PER_GROUP`] hardware events; software events and the
    /// task clock go into the first group.
    pub fn from_events(name: &str, events: Vec<EventSpec>) -> EventSet {
        let (hw, sw): (Vec<_>, Vec<_>) = events.into_iter().partition(|e| e.kind.is_hardware());
        let mut groups: Vec<Vec<EventSpec>> = vec![sw];
        for (i, chunk) in hw.chunks(MAX_HW_EVENTS_PER_GROUP).enumerate() {
            if i == 0 {
                groups[0].extend(chunk.iter().cloned());
            } else {
                groups.push(chunk.to_vec());
            }
        }
        EventSet {
            number: None,
            name: name.into(),
            description: "user-given event list".into(),
            groups,
        }
    }

    /// All events of the set, in group order.
    pub fn events(&self) -> impl Iterator<Item = &EventSpec> {
        self.groups.iter().flatten()
    }
}

/// The event sets selected by `HPM_EVENT_SET` or `-g`.
#[derive(Clone, Debug, PartialEq)]
pub struct EventSelection {
    /// Selected sets, in order.
    pub sets: Vec<EventSet>,
}

impl EventSelection {
    /// The `default` set.
    pub fn default_for(cpu: &CpuInfo) -> EventSelection {
        EventSelection {
            sets: EventSet::lookup("default", cpu).into_iter().collect(),
        }
    }

    /// Parses `HPM_EVENT_SET`: a group name or number, a comma list of
    /// groups, perf event names (collected into one set named `user`), or a
    /// mix. Unknown tokens produce a warning and are skipped; an empty result
    /// falls back to `default`.
    pub fn parse(text: &str, cpu: &CpuInfo) -> (EventSelection, Vec<String>) {
        EventSelection::parse_impl(text, cpu, true)
    }

    /// Like [`EventSelection::parse`], but a list of event names is taken as
    /// given: no `task-clock` is added (for per-routine counters, where a
    /// hardware-only group can be read with `rdpmc`).
    pub fn parse_exact(text: &str, cpu: &CpuInfo) -> (EventSelection, Vec<String>) {
        EventSelection::parse_impl(text, cpu, false)
    }

    fn parse_impl(text: &str, cpu: &CpuInfo, add_clock: bool) -> (EventSelection, Vec<String>) {
        let mut warnings = Vec::new();
        let mut sets: Vec<EventSet> = Vec::new();
        let mut user: Vec<EventSpec> = Vec::new();
        for token in text.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            if let Some(set) = EventSet::lookup(token, cpu) {
                if !sets.iter().any(|s| s.name == set.name) {
                    sets.push(set);
                }
                continue;
            }
            if token.chars().all(|c| c.is_ascii_digit()) {
                warnings.push(format!(
                    "event set {token} does not exist (sets are 0..{}; `hpmcount -l` lists them); ignored",
                    BUILTIN_NAMES.len() - 1
                ));
                continue;
            }
            match EventSpec::parse(token, cpu) {
                Ok(e) => {
                    if !user.iter().any(|u| u.name == e.name) {
                        user.push(e);
                    }
                }
                Err(e) => warnings.push(format!("{e}; ignored")),
            }
        }
        if !user.is_empty() {
            if add_clock && !user.iter().any(|e| e.name == names::TASK_CLOCK) {
                user.extend(EventSpec::parse(names::TASK_CLOCK, cpu).ok());
                user.rotate_right(1);
            }
            sets.push(EventSet::from_events("user", user));
        }
        if sets.is_empty() {
            warnings.push(format!(
                "no usable event set in '{text}'; using the default set"
            ));
            return (EventSelection::default_for(cpu), warnings);
        }
        (EventSelection { sets }, warnings)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::cpu::CpuVendor;

    fn intel() -> CpuInfo {
        let mut c = CpuInfo::parse_cpuinfo("");
        c.vendor = CpuVendor::Intel;
        c.family = 6;
        c.model = 106; // Ice Lake SP
        c
    }

    #[test]
    fn builtin_sets_are_complete() {
        let sets = EventSet::builtin(&intel());
        let counts: Vec<usize> = sets.iter().map(|s| s.events().count()).collect();
        assert_eq!(counts, vec![9, 6, 8, 6]);
        for (i, s) in sets.iter().enumerate() {
            assert_eq!(s.number, Some(i as u32));
            assert_eq!(s.name, BUILTIN_NAMES[i]);
            for g in &s.groups {
                // instructions has a fixed counter on Intel; everything else
                // may need one of the 4 general-purpose counters
                let gp = g
                    .iter()
                    .filter(|e| e.kind.is_hardware() && e.name != "instructions")
                    .count();
                assert!(gp <= 4, "group too large for Intel with SMT: {:?}", s.name);
            }
        }
        let unknown = CpuInfo::parse_cpuinfo("");
        assert_eq!(
            EventSet::lookup("fp", &unknown).unwrap().events().count(),
            2
        );
        let mut zen = CpuInfo::parse_cpuinfo("");
        zen.vendor = CpuVendor::Amd;
        zen.family = 0x19;
        let fp = EventSet::lookup("fp", &zen).unwrap();
        let names: Vec<&str> = fp.events().map(|e| e.name.as_str()).collect();
        assert_eq!(names[..3], ["task-clock", "cycles", "instructions"]);
        assert_eq!(names.len(), 6);
    }

    #[test]
    fn selection_by_name_number_and_list() {
        let c = intel();
        let (s, w) = EventSelection::parse("3", &c);
        assert!(w.is_empty());
        assert_eq!(s.sets[0].name, "sw");
        let (s, w) = EventSelection::parse("fp, sw,FP", &c);
        assert!(w.is_empty());
        assert_eq!(
            s.sets.iter().map(|s| s.name.as_str()).collect::<Vec<_>>(),
            ["fp", "sw"]
        );
    }

    #[test]
    fn user_lists_are_grouped() {
        let c = intel();
        let (s, w) = EventSelection::parse(
            "instructions,cycles,context-switches,branches,branch-misses,cache-misses,L1-dcache-loads,bogus",
            &c,
        );
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("unknown event name 'bogus'"));
        let user = &s.sets[0];
        assert_eq!(user.name, "user");
        assert_eq!(user.groups.len(), 2);
        let first: Vec<&str> = user.groups[0].iter().map(|e| e.name.as_str()).collect();
        assert_eq!(
            first,
            [
                "task-clock",
                "context-switches",
                "instructions",
                "cycles",
                "branches",
                "branch-misses"
            ]
        );
        assert_eq!(user.groups[1].len(), 2);
    }

    #[test]
    fn exact_lists_get_no_task_clock() {
        let (s, w) = EventSelection::parse_exact("cycles,instructions", &intel());
        assert!(w.is_empty());
        let names: Vec<&str> = s.sets[0].events().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["cycles", "instructions"]);
        let (s, _) = EventSelection::parse("cycles,instructions", &intel());
        assert_eq!(s.sets[0].events().count(), 3);
    }

    #[test]
    fn bad_selection_falls_back_to_default() {
        let (s, w) = EventSelection::parse("42,nonsense", &intel());
        assert_eq!(s.sets[0].name, "default");
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(w[0].contains("event set 42 does not exist"));
    }
}
