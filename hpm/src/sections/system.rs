//! System-wide counting on every CPU (`hpmstat`, seed §4): one set of
//! groups per online CPU, opened with `perf_event_open(pid = -1, cpu = N)`
//! ([`Scope::Cpu`]), enabled for the duration of a program or an interval,
//! and summed over the CPUs.
//!
//! The kernel allows this to root, to `CAP_PERFMON` (or `CAP_SYS_ADMIN`)
//! and, without either, only at `perf_event_paranoid <= 0`;
//! [`probe_system_wide`] tells the refusal apart so that `hpmstat` can say so
//! once and fall back to `getrusage`.

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::process::Command;
use std::time::Duration;

use crate::backend::clock::Clock;
use crate::backend::getrusage::{Rusage, RusageWho};
use crate::backend::{CounterBackend, CounterGroup, OpenError, OpenErrorKind, Scope};
use crate::counting::plan::CountingPlan;
use crate::counting::thread::{Accumulator, Snapshot};
use crate::events::cpu::CpuInfo;
use crate::events::spec::EventSpec;
use crate::report::{ExitInfo, Measurement};
use crate::sections::program::{IgnoreInterrupts, SpawnError, wait_with_usage};

/// What `hpmstat` measures while its counters run.
#[derive(Clone, Debug)]
pub enum Workload {
    /// Runs a program (its exit status is reported) and counts the whole
    /// system until it ends.
    Program(OsString, Vec<OsString>),
    /// Counts the whole system for this long.
    Interval(Duration),
}

/// The result of one system-wide measurement.
#[derive(Clone, Debug, PartialEq)]
pub struct SystemRun {
    /// How the program ended (`None` for an interval).
    pub exit: Option<ExitInfo>,
    /// Values summed over all CPUs; wall time of the measurement.
    pub measurement: Measurement,
    /// The program's own resource usage, or this process's for an interval.
    pub rusage: Option<Rusage>,
    /// Groups that could not be opened (on some CPU).
    pub open_errors: Vec<OpenError>,
    /// How many CPUs were counted (1 for the getrusage fallback).
    pub cpus: usize,
}

/// Parses a kernel CPU list (`0-3,8,10-11`).
pub fn parse_cpu_list(text: &str) -> Vec<u32> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let mut ends = part.splitn(2, '-').map(|n| n.trim().parse::<u32>());
        match (ends.next(), ends.next()) {
            (Some(Ok(a)), None) => cpus.push(a),
            (Some(Ok(a)), Some(Ok(b))) if a <= b => cpus.extend(a..=b),
            _ => {}
        }
    }
    cpus
}

/// The online CPUs (`/sys/devices/system/cpu/online`, else 0..the number
/// of CPUs this process may use).
pub fn online_cpus() -> Vec<u32> {
    let listed = std::fs::read_to_string("/sys/devices/system/cpu/online")
        .map(|t| parse_cpu_list(&t))
        .unwrap_or_default();
    if !listed.is_empty() {
        return listed;
    }
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    (0..n as u32).collect()
}

/// Whether `backend` may count system-wide: opens one software event
/// (`cpu-clock`) on `cpu` for all processes. `Err` carries the kernel's
/// answer; [`OpenErrorKind::Denied`] is the refusal (`perf_event_paranoid`,
/// no root or `CAP_PERFMON`).
pub fn probe_system_wide(backend: &dyn CounterBackend, cpu: u32) -> Result<(), OpenError> {
    let probe =
        EventSpec::parse("cpu-clock", &CpuInfo::parse_cpuinfo("")).map_err(|e| OpenError {
            kind: OpenErrorKind::Other,
            event: "cpu-clock".into(),
            message: e,
        })?;
    backend
        .open_group(std::slice::from_ref(&probe), Scope::Cpu(cpu))
        .map(drop)
}

/// The one message `hpmstat` prints when the kernel refuses system-wide
/// counting.
pub fn refusal_message(err: &OpenError, paranoid: Option<i32>) -> String {
    format!(
        "system-wide counting refused by the kernel (perf_event_paranoid = {}, {}; \
         perf_event_open: {err}); it needs root, CAP_PERFMON or perf_event_paranoid <= 0 \
         (`sysctl -w kernel.perf_event_paranoid=0`). Reporting this process's and its \
         program's getrusage data instead",
        paranoid.map_or("unknown".into(), |p| p.to_string()),
        // SAFETY: geteuid has no preconditions and cannot fail.
        if unsafe { libc::geteuid() } == 0 {
            "running as root"
        } else {
            "not root"
        },
    )
}

/// Counts `workload` with `plan` once per scope in `scopes` (one
/// [`Scope::Cpu`] per CPU, or a single process scope for the getrusage
/// fallback) and sums the values.
pub fn run_system_wide(
    plan: &CountingPlan,
    clock: &dyn Clock,
    scopes: &[Scope],
    workload: &Workload,
) -> Result<SystemRun, SpawnError> {
    let layout = &plan.layout;
    let mut open_errors = Vec::new();
    let mut per_scope: Vec<Vec<Option<Box<dyn CounterGroup>>>> = Vec::new();
    for &s in scopes {
        let (groups, errors) = plan.open_groups_in(s);
        open_errors.extend(errors);
        per_scope.push(groups);
    }
    let mut before: Vec<Snapshot> = scopes.iter().map(|_| Snapshot::new(layout)).collect();
    let mut after = before.clone();
    for groups in &mut per_scope {
        for g in groups.iter_mut().flatten() {
            let _ = g.enable();
        }
    }
    let t0 = clock.now_ns();
    for (snap, groups) in before.iter_mut().zip(&per_scope) {
        snap.read_groups(groups, layout, || {});
    }
    let (exit, rusage) = match workload {
        Workload::Program(program, args) => {
            let mut child =
                Command::new(program)
                    .args(args)
                    .spawn()
                    .map_err(|error| SpawnError {
                        program: program.to_string_lossy().into_owned(),
                        error,
                    })?;
            let (status, usage) = {
                let _quiet = IgnoreInterrupts::new();
                wait_with_usage(&mut child)
            };
            let exit = match status {
                Ok(s) => match (s.code(), s.signal()) {
                    (Some(c), _) => ExitInfo::Code(c),
                    (None, Some(sig)) => ExitInfo::Signal(sig),
                    (None, None) => ExitInfo::Code(1),
                },
                Err(_) => ExitInfo::Code(1),
            };
            (Some(exit), usage)
        }
        Workload::Interval(d) => {
            std::thread::sleep(*d);
            (None, Rusage::read(RusageWho::Process))
        }
    };
    for (snap, groups) in after.iter_mut().zip(&per_scope) {
        snap.read_groups(groups, layout, || {});
    }
    let t1 = clock.now_ns();
    for groups in &mut per_scope {
        for g in groups.iter_mut().flatten() {
            let _ = g.disable();
        }
    }
    // The wall time once (the first scope's snapshots carry it).
    if let (Some(b), Some(a)) = (before.first_mut(), after.first_mut()) {
        b.t_ns = t0;
        a.t_ns = t1;
    }
    let mut acc = Accumulator::new(layout);
    for (b, a) in before.iter().zip(&after) {
        acc.add(layout, b, a);
    }
    let mut measurement = Measurement::from_accumulator(layout, &acc);
    // User time is the program's (or this process's), not the CPUs' sum.
    measurement.user_s = rusage.as_ref().map(|r| r.user_time_s);
    Ok(SystemRun {
        exit,
        measurement,
        rusage,
        open_errors,
        cpus: scopes.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::fake::FakeBackend;
    use crate::events::set::EventSet;
    use crate::events::spec::names;
    use std::sync::Arc;

    #[test]
    fn cpu_lists() {
        assert_eq!(parse_cpu_list("0-3,8,10-11\n"), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_cpu_list("0"), vec![0]);
        assert_eq!(parse_cpu_list(""), Vec::<u32>::new());
        assert_eq!(parse_cpu_list("3-1,x"), Vec::<u32>::new());
        assert!(!online_cpus().is_empty());
    }

    #[test]
    fn refusal_is_told_apart() {
        let fake = FakeBackend::new();
        assert!(probe_system_wide(&fake, 0).is_ok());
        fake.fail_everything(OpenErrorKind::Denied);
        let err = probe_system_wide(&fake, 0).unwrap_err();
        assert_eq!(err.kind, OpenErrorKind::Denied);
        let msg = refusal_message(&err, Some(2));
        assert!(msg.contains("perf_event_paranoid = 2"), "{msg}");
        assert!(msg.contains("CAP_PERFMON"), "{msg}");
        assert!(msg.contains("getrusage"), "{msg}");
    }

    #[test]
    fn values_are_summed_over_cpus() {
        let fake = FakeBackend::new();
        let cpu = CpuInfo::parse_cpuinfo("");
        let set = EventSet::lookup("sw", &cpu).unwrap();
        let plan = CountingPlan::unprobed(&[set], Arc::new(fake.clone()), Scope::Cpu(0));
        let clock = fake.clone();
        let one = {
            let t = clock.now_ns();
            let r = run_system_wide(
                &plan,
                &clock,
                &[Scope::Cpu(0)],
                &Workload::Interval(Duration::ZERO),
            )
            .unwrap();
            assert!(clock.now_ns() >= t);
            r
        };
        let four = run_system_wide(
            &plan,
            &clock,
            &[Scope::Cpu(0), Scope::Cpu(1), Scope::Cpu(2), Scope::Cpu(3)],
            &Workload::Interval(Duration::ZERO),
        )
        .unwrap();
        assert_eq!(four.cpus, 4);
        assert!(one.exit.is_none());
        let (a, b) = (
            one.measurement.find(names::TASK_CLOCK),
            four.measurement.find(names::TASK_CLOCK),
        );
        assert!(a.is_some() && b.is_some(), "{a:?} {b:?}");
    }
}
