//! Which perf groups will actually be counted on this machine, decided once by
//! probing the backend, with the fallback chain
//! requested events → software events → getrusage, and ONE notice that names
//! the reason and the remedy.

use std::sync::Arc;

use crate::backend::rusage::RusageBackend;
use crate::backend::{CounterBackend, CounterGroup, OpenError, OpenErrorKind, Scope};
use crate::events::cpu::CpuInfo;
use crate::events::set::{EventSelection, EventSet};
use crate::events::spec::{EventKind, EventSpec, names};

/// One perf group of the plan.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupLayout {
    /// Index of the event set in [`CounterLayout::set_names`].
    pub set: usize,
    /// Offset of this group's first value in a flat value array.
    pub offset: usize,
    /// The events, in read order.
    pub events: Vec<EventSpec>,
}

/// The flat layout of all values of a plan (shared by all threads).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct CounterLayout {
    /// Event set names, in selection order.
    pub set_names: Vec<String>,
    /// All perf groups, set by set.
    pub groups: Vec<GroupLayout>,
    /// Total number of values.
    pub n_values: usize,
}

impl CounterLayout {
    fn new(sets: &[(String, Vec<Vec<EventSpec>>)]) -> CounterLayout {
        let mut layout = CounterLayout::default();
        for (i, (name, groups)) in sets.iter().enumerate() {
            layout.set_names.push(name.clone());
            for g in groups {
                layout.groups.push(GroupLayout {
                    set: i,
                    offset: layout.n_values,
                    events: g.clone(),
                });
                layout.n_values += g.len();
            }
        }
        layout
    }
}

/// The resolved counting plan.
#[derive(Clone)]
pub struct CountingPlan {
    /// Backend that opens the groups (perf, or getrusage after fallback).
    pub backend: Arc<dyn CounterBackend>,
    /// What the groups observe.
    pub scope: Scope,
    /// Value layout.
    pub layout: Arc<CounterLayout>,
    /// The one fallback notice, if anything requested cannot be counted.
    pub notice: Option<String>,
}

impl std::fmt::Debug for CountingPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CountingPlan")
            .field("backend", &self.backend.name())
            .field("scope", &self.scope)
            .field("layout", &self.layout)
            .field("notice", &self.notice)
            .finish()
    }
}

/// Probes one group: returns the surviving events and the failures.
fn probe_group(
    backend: &dyn CounterBackend,
    events: &[EventSpec],
    scope: Scope,
    failures: &mut Vec<OpenError>,
) -> Vec<EventSpec> {
    let known: Vec<EventSpec> = events
        .iter()
        .filter(|e| {
            let k = backend.knows(e);
            if !k {
                failures.push(OpenError {
                    kind: OpenErrorKind::NotSupported,
                    event: e.name.clone(),
                    message: format!("not countable with the {} backend", backend.name()),
                });
            }
            k
        })
        .cloned()
        .collect();
    if known.is_empty() || backend.open_group(&known, scope).is_ok() {
        return known;
    }
    let mut ok = Vec::new();
    for e in known {
        match backend.open_group(std::slice::from_ref(&e), scope) {
            Ok(_) => ok.push(e),
            Err(mut err) => {
                if err.event.is_empty() {
                    err.event = e.name.clone();
                }
                failures.push(err);
            }
        }
    }
    if !ok.is_empty() {
        if let Err(mut err) = backend.open_group(&ok, scope) {
            err.event = ok
                .iter()
                .map(|e| e.name.as_str())
                .collect::<Vec<_>>()
                .join(",");
            failures.push(err);
            ok.clear();
        }
    }
    ok
}

fn probe_sets(
    backend: &dyn CounterBackend,
    sets: &[EventSet],
    scope: Scope,
    failures: &mut Vec<OpenError>,
) -> Vec<(String, Vec<Vec<EventSpec>>)> {
    sets.iter()
        .filter_map(|s| {
            let groups: Vec<Vec<EventSpec>> = s
                .groups
                .iter()
                .map(|g| probe_group(backend, g, scope, failures))
                .filter(|g| !g.is_empty())
                .collect();
            // A set reduced to the task clock we add for CPU time has lost
            // everything the user asked for: drop it (the caller falls back).
            let only_clock = groups.iter().flatten().all(|e| e.name == names::TASK_CLOCK);
            let had_more = s.events().any(|e| e.name != names::TASK_CLOCK);
            if groups.is_empty() || (only_clock && had_more) {
                None
            } else {
                Some((s.name.clone(), groups))
            }
        })
        .collect()
}

/// Composes the single notice from the failures.
pub fn fallback_notice(failures: &[OpenError], cpu: &CpuInfo, instead: Option<&str>) -> String {
    let names: Vec<&str> = failures.iter().map(|f| f.event.as_str()).collect();
    let count = |k| failures.iter().filter(|f| f.kind == k).count();
    let dominant = [
        OpenErrorKind::Unavailable,
        OpenErrorKind::Denied,
        OpenErrorKind::NotSupported,
        OpenErrorKind::TooManyFiles,
        OpenErrorKind::Other,
    ]
    .into_iter()
    .max_by_key(|k| count(*k))
    .unwrap_or(OpenErrorKind::Other);
    let first = failures
        .iter()
        .find(|f| f.kind == dominant)
        .map(|f| f.message.as_str())
        .unwrap_or("");
    let (reason, remedy) = match dominant {
        OpenErrorKind::NotSupported if !cpu.has_core_pmu => (
            format!(
                "hardware events are not supported here: the kernel exposes no hardware PMU{} (perf_event_open: {first})",
                if cpu.hypervisor { ", as in a virtual machine without a virtual PMU" } else { "" }
            ),
            "run on bare metal, or give the VM a virtual PMU (e.g. QEMU/KVM `-cpu host,pmu=on`, libvirt `<pmu state='on'/>`)".to_string(),
        ),
        OpenErrorKind::NotSupported => (
            format!("not supported by this CPU or kernel (perf_event_open: {first})"),
            "choose other events; `hpmcount -c` lists what can be counted here".to_string(),
        ),
        // Counting one's own threads in user space is allowed up to
        // perf_event_paranoid 2 (and kernel counting was already retried
        // without): a denial there comes from seccomp or a security module.
        OpenErrorKind::Denied if cpu.perf_event_paranoid.is_some_and(|p| p <= 2) => (
            format!(
                "perf_event_open is denied although perf_event_paranoid = {} allows it: a seccomp \
                 filter (containers) or a security module blocks it (perf_event_open: {first})",
                cpu.perf_event_paranoid.unwrap_or(0)
            ),
            "run with a seccomp profile that allows perf_event_open (e.g. docker \
             `--security-opt seccomp=unconfined`) or grant CAP_PERFMON"
                .to_string(),
        ),
        OpenErrorKind::Denied => (
            format!(
                "the kernel denies access (perf_event_paranoid = {}; perf_event_open: {first})",
                cpu.perf_event_paranoid.map_or("unknown".to_string(), |p| p.to_string())
            ),
            "as root run `sysctl -w kernel.perf_event_paranoid=2` (user-space counting) or lower, \
             or grant the program CAP_PERFMON"
                .to_string(),
        ),
        OpenErrorKind::Unavailable => (
            format!("perf_event_open is not available (no perf events in the kernel, or blocked by seccomp in a container: {first})"),
            "run outside the container or allow perf_event_open in its seccomp profile".to_string(),
        ),
        OpenErrorKind::TooManyFiles => (
            format!("out of file descriptors ({first})"),
            "raise the limit (`ulimit -n`) or count fewer events".to_string(),
        ),
        OpenErrorKind::Other => (format!("perf_event_open failed ({first})"), "check dmesg".to_string()),
    };
    let mut msg = format!("cannot count {}: {reason}.", names.join(", "));
    if let Some(instead) = instead {
        msg.push_str(&format!(" Counting {instead} instead."));
    }
    msg.push_str(&format!(" Remedy: {remedy}."));
    msg
}

/// The one line printed on stderr for a fallback notice made by
/// [`fallback_notice`]: what cannot be counted, and where to read why (the
/// report carries the whole notice, once).
pub fn notice_headline(notice: &str) -> String {
    let head = notice.split(": ").next().unwrap_or(notice);
    format!("{head}; the reason and the remedy are in the report")
}

impl CountingPlan {
    /// Probes `selection` on `backend` and falls back as needed. Never fails.
    pub fn build(
        selection: &EventSelection,
        backend: Arc<dyn CounterBackend>,
        scope: Scope,
        cpu: &CpuInfo,
    ) -> CountingPlan {
        let mut failures = Vec::new();
        let sets = probe_sets(backend.as_ref(), &selection.sets, scope, &mut failures);
        if !sets.is_empty() {
            let notice = (!failures.is_empty()).then(|| fallback_notice(&failures, cpu, None));
            return CountingPlan {
                backend,
                scope,
                layout: Arc::new(CounterLayout::new(&sets)),
                notice,
            };
        }
        // Nothing requested works: software events, then getrusage.
        let already_sw = selection.sets.iter().all(|s| s.name == "sw");
        if !already_sw {
            if let Some(sw) = EventSet::lookup("sw", cpu) {
                let mut sw_failures = Vec::new();
                let sw_sets = probe_sets(backend.as_ref(), &[sw], scope, &mut sw_failures);
                if !sw_sets.is_empty() {
                    let notice = fallback_notice(
                        &failures,
                        cpu,
                        Some(
                            "software events (task-clock, context switches, CPU migrations, page faults) and getrusage",
                        ),
                    );
                    return CountingPlan {
                        backend,
                        scope,
                        layout: Arc::new(CounterLayout::new(&sw_sets)),
                        notice: Some(notice),
                    };
                }
                failures.extend(sw_failures);
            }
        }
        let rusage: Arc<dyn CounterBackend> = Arc::new(RusageBackend);
        let sets = vec![("rusage".to_string(), vec![EventSpec::rusage_events()])];
        CountingPlan {
            backend: rusage,
            scope,
            layout: Arc::new(CounterLayout::new(&sets)),
            notice: Some(fallback_notice(
                &failures,
                cpu,
                Some("getrusage fields (CPU times, page faults, context switches)"),
            )),
        }
    }

    /// A plan without probing (for tests and callers that know what works).
    pub fn unprobed(
        sets: &[EventSet],
        backend: Arc<dyn CounterBackend>,
        scope: Scope,
    ) -> CountingPlan {
        let sets: Vec<(String, Vec<Vec<EventSpec>>)> = sets
            .iter()
            .map(|s| (s.name.clone(), s.groups.clone()))
            .collect();
        CountingPlan {
            backend,
            scope,
            layout: Arc::new(CounterLayout::new(&sets)),
            notice: None,
        }
    }

    /// Opens every group of the plan; failed groups are `None` and their
    /// values read as "not counted".
    pub fn open_groups(&self) -> (Vec<Option<Box<dyn CounterGroup>>>, Vec<OpenError>) {
        self.open_groups_in(self.scope)
    }

    /// [`CountingPlan::open_groups`] with another scope than the plan's (the
    /// plan of `hpmcount` is probed for [`Scope::ProcessTree`] and opened
    /// on its child, [`Scope::Child`]).
    pub fn open_groups_in(
        &self,
        scope: Scope,
    ) -> (Vec<Option<Box<dyn CounterGroup>>>, Vec<OpenError>) {
        let mut errors = Vec::new();
        let groups = self
            .layout
            .groups
            .iter()
            .map(|g| match self.backend.open_group(&g.events, scope) {
                Ok(grp) => Some(grp),
                Err(e) => {
                    errors.push(e);
                    None
                }
            })
            .collect();
        (groups, errors)
    }

    /// Whether any hardware event is in the plan.
    pub fn has_hardware(&self) -> bool {
        self.layout
            .groups
            .iter()
            .flat_map(|g| &g.events)
            .any(|e| e.kind.is_hardware())
    }

    /// Whether the plan fell back to getrusage.
    pub fn is_rusage(&self) -> bool {
        self.layout
            .groups
            .iter()
            .flat_map(|g| &g.events)
            .any(|e| matches!(e.kind, EventKind::Rusage(_)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::fake::FakeBackend;

    fn vm_cpu() -> CpuInfo {
        let mut c = CpuInfo::parse_cpuinfo(
            "vendor_id : GenuineIntel\ncpu family : 6\nflags : hypervisor\n",
        );
        c.perf_event_paranoid = Some(2);
        c
    }

    fn names(plan: &CountingPlan) -> Vec<Vec<String>> {
        plan.layout
            .groups
            .iter()
            .map(|g| g.events.iter().map(|e| e.name.clone()).collect())
            .collect()
    }

    #[test]
    fn everything_works_no_notice() {
        let cpu = vm_cpu();
        let fake = FakeBackend::new();
        let plan = CountingPlan::build(
            &EventSelection::default_for(&cpu),
            Arc::new(fake),
            Scope::CallingThread,
            &cpu,
        );
        assert!(plan.notice.is_none());
        assert_eq!(plan.layout.n_values, 9);
        assert_eq!(plan.layout.set_names, ["default"]);
        assert!(plan.has_hardware());
    }

    #[test]
    fn vm_without_pmu_falls_back_to_software_with_one_notice() {
        let cpu = vm_cpu();
        let fake = FakeBackend::new();
        fake.fail_hardware(OpenErrorKind::NotSupported);
        let plan = CountingPlan::build(
            &EventSelection::default_for(&cpu),
            Arc::new(fake),
            Scope::CallingThread,
            &cpu,
        );
        // only the task clock of the default set survives: switch to the sw set
        assert_eq!(plan.layout.set_names, ["sw"]);
        assert_eq!(names(&plan)[0][..2], ["task-clock", "context-switches"]);
        let n = plan.notice.expect("notice");
        assert!(n.contains("Counting software events"), "{n}");
        assert!(
            n.contains("no hardware PMU, as in a virtual machine without a virtual PMU"),
            "{n}"
        );
        assert!(
            n.contains("cannot count cycles, instructions, branches"),
            "{n}"
        );
        assert!(n.contains("Remedy: run on bare metal"), "{n}");
    }

    #[test]
    fn hardware_only_selection_falls_back_to_sw_set() {
        let cpu = vm_cpu();
        let fake = FakeBackend::new();
        fake.fail_hardware(OpenErrorKind::Denied);
        let (sel, _) = EventSelection::parse("cycles,instructions", &cpu);
        let mut sel = sel;
        sel.sets[0].groups[0].retain(|e| e.kind.is_hardware());
        let plan = CountingPlan::build(&sel, Arc::new(fake), Scope::CallingThread, &cpu);
        assert_eq!(plan.layout.set_names, ["sw"]);
        assert_eq!(plan.layout.n_values, 6);
        let n = plan.notice.unwrap();
        assert!(n.contains("perf_event_paranoid = 2"), "{n}");
        assert!(n.contains("Counting software events"), "{n}");
        assert!(n.contains("CAP_PERFMON"), "{n}");
    }

    #[test]
    fn denial_below_paranoid_3_blames_seccomp() {
        let mut cpu = vm_cpu();
        let fake = FakeBackend::new();
        fake.fail_everything(OpenErrorKind::Denied);
        let plan = CountingPlan::build(
            &EventSelection::default_for(&cpu),
            Arc::new(fake.clone()),
            Scope::CallingThread,
            &cpu,
        );
        let n = plan.notice.unwrap();
        assert!(
            n.contains("although perf_event_paranoid = 2 allows it"),
            "{n}"
        );
        assert!(n.contains("seccomp=unconfined"), "{n}");
        cpu.perf_event_paranoid = Some(3);
        let plan = CountingPlan::build(
            &EventSelection::default_for(&cpu),
            Arc::new(fake),
            Scope::CallingThread,
            &cpu,
        );
        let n = plan.notice.clone().unwrap();
        assert!(
            n.contains("the kernel denies access (perf_event_paranoid = 3"),
            "{n}"
        );
        assert!(plan.is_rusage());
    }

    #[test]
    fn no_perf_at_all_falls_back_to_getrusage() {
        let cpu = vm_cpu();
        let fake = FakeBackend::new();
        fake.fail_everything(OpenErrorKind::Unavailable);
        let plan = CountingPlan::build(
            &EventSelection::default_for(&cpu),
            Arc::new(fake),
            Scope::CallingThread,
            &cpu,
        );
        assert!(plan.is_rusage());
        assert_eq!(plan.backend.name(), "getrusage");
        let n = plan.notice.clone().unwrap();
        assert!(n.contains("seccomp"), "{n}");
        assert!(n.contains("getrusage fields"), "{n}");
        let (groups, errors) = plan.open_groups();
        assert!(errors.is_empty());
        assert_eq!(groups.len(), 1);
    }

    #[test]
    fn single_unsupported_event_is_dropped() {
        let cpu = vm_cpu();
        let fake = FakeBackend::new();
        fake.fail_event("LLC-loads", OpenErrorKind::NotSupported);
        let mut cpu_pmu = cpu.clone();
        cpu_pmu.has_core_pmu = true;
        let (sel, _) = EventSelection::parse("cache", &cpu_pmu);
        let plan = CountingPlan::build(&sel, Arc::new(fake), Scope::CallingThread, &cpu_pmu);
        assert_eq!(plan.layout.n_values, 7);
        let n = plan.notice.unwrap();
        assert!(
            n.starts_with("cannot count LLC-loads: not supported by this CPU or kernel"),
            "{n}"
        );
        assert!(!n.contains("instead"));
    }
}
