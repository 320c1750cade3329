//! `hpmstat`: system-wide counting on every CPU (seed §4).

// The doc comments of the clap structs are the --help texts, written for a
// terminal (`<name>`), not for rustdoc.
#![allow(rustdoc::invalid_html_tags)]

use std::ffi::OsString;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;

use hpm::backend::Scope;
use hpm::report::{LocalDateTime, Report, SectionReport, Tool, host_name};
use hpm::sections::system::{
    Workload, online_cpus, probe_system_wide, refusal_message, run_system_wide,
};
use hpm::{
    Aggregator, CliOutput, CounterBackend, CountingPlan, CpuInfo, EnvConfig, EventSet, EventSpec,
    MonotonicClock, OpenErrorKind, PerfBackend, RusageBackend,
};

/// Exit status when the kernel refuses system-wide counting (the getrusage
/// report is printed all the same).
const EXIT_REFUSED: u8 = 3;

/// Count hardware and software events system-wide, on every CPU, while a
/// program runs or for an interval (like vmstat).
#[derive(Parser, Debug)]
#[command(
    name = "hpmstat",
    version,
    after_help = "Usage: hpmstat [options] [<interval s> [<count>]] | [options] <program> [args]\n\
                  Without a program, counts for <interval> seconds (default 1), <count> times (default 1).\n\
                  Needs root, CAP_PERFMON or kernel.perf_event_paranoid <= 0; else it reports \
                  getrusage data and exits with status 3.\n\
                  Environment: as hpmcount (HPM_EVENT_SET, HPM_OUTPUT_NAME, HPM_AGGREGATE, ...)."
)]
struct Cli {
    /// Copy the output to <name>.hpm (and .viz/.csv as HPM_*_OUTPUT say).
    #[arg(short = 'o', value_name = "name")]
    output: Option<String>,
    /// Make the file name unique: _<host>_<pid>_<dd.mm.yyyy>_<hh.mm.ss>.
    #[arg(short = 'u')]
    unique: bool,
    /// No output on stdout when -o is used.
    #[arg(short = 'n')]
    no_stdout: bool,
    /// Add the formulas of the derived metrics.
    #[arg(short = 'x')]
    formula: bool,
    /// Event set(s): number, name, comma list of sets and/or perf event names.
    #[arg(short = 'g', value_name = "group")]
    group: Option<String>,
    /// Aggregate counters with this plug-in (name or name.so).
    #[arg(short = 'a', value_name = "plug-in")]
    aggregate: Option<String>,
    /// List the event sets (groups).
    #[arg(short = 'l')]
    list_groups: bool,
    /// List the events and whether this machine can count them system-wide.
    #[arg(short = 'c')]
    list_events: bool,
    /// <interval> (<count>), or the program to run and its arguments.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "interval [count] | program"
    )]
    rest: Vec<OsString>,
}

fn notice(text: &str) {
    eprintln!("hpmstat: notice: {text}");
}

fn error(text: &str) {
    eprintln!("hpmstat ERROR - {text}");
}

/// The workloads: one program, or `count` intervals.
fn workloads(rest: &[OsString]) -> Result<Vec<Workload>, String> {
    let num = |a: &OsString| a.to_str().and_then(|s| s.parse::<f64>().ok());
    match rest.first() {
        None => Ok(vec![Workload::Interval(Duration::from_secs(1))]),
        Some(first) => match num(first) {
            Some(secs) if secs.is_finite() && secs >= 0.0 => {
                let count = match rest.get(1) {
                    None => 1,
                    Some(c) => c
                        .to_str()
                        .and_then(|c| c.parse::<u32>().ok())
                        .filter(|c| *c > 0 && rest.len() == 2)
                        .ok_or("usage: hpmstat [options] [<interval s> [<count>]]")?,
                };
                let d = Duration::from_secs_f64(secs);
                Ok((0..count).map(|_| Workload::Interval(d)).collect())
            }
            Some(_) => Err("the interval must be a non-negative number of seconds".into()),
            None => Ok(vec![Workload::Program(first.clone(), rest[1..].to_vec())]),
        },
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let cpu = CpuInfo::detect();
    let cpus = online_cpus();
    let first_cpu = cpus.first().copied().unwrap_or(0);
    if cli.list_groups || cli.list_events {
        if cli.list_groups {
            print!("{}", hpm::output::listing::groups_text(&cpu));
        }
        if cli.list_events {
            print!(
                "{}",
                hpm::output::listing::events_text(&cpu, Scope::Cpu(first_cpu))
            );
        }
        return ExitCode::SUCCESS;
    }
    let workloads = match workloads(&cli.rest) {
        Ok(w) => w,
        Err(e) => {
            error(&e);
            return ExitCode::from(2);
        }
    };

    // Environment, then options, then the distributor (seed §2.7.2).
    let (plugin, plugin_notices) =
        hpm::output::plugin::load_for_command(cli.aggregate.as_deref(), cli.group.as_deref());
    let (mut cfg, warnings) = EnvConfig::from_env();
    let mut notices: Vec<String> = warnings.into_iter().map(|w| w.0).collect();
    notices.extend(plugin_notices);
    if let Some(g) = cli.group.as_ref().filter(|_| plugin.is_none()) {
        cfg.event_set = Some(g.clone());
    }
    if let Some(a) = cli.aggregate.as_ref().filter(|_| plugin.is_none()) {
        match Aggregator::parse(a) {
            Ok(a) => cfg.aggregate = Some(a),
            Err(e) => notices.push(format!("-a: {e}; using mirror")),
        }
    }
    notices.extend(cfg.distribute_event_sets("-a "));
    let (selection, w) = cfg.event_selection(&cpu);
    notices.extend(w);

    let perf: Arc<dyn CounterBackend> = Arc::new(PerfBackend::without_rdpmc());
    let mut refused = false;
    let (plan, scopes) = match probe_system_wide(perf.as_ref(), first_cpu) {
        Ok(()) => {
            let plan = CountingPlan::build(&selection, perf, Scope::Cpu(first_cpu), &cpu);
            let scopes: Vec<Scope> = cpus.iter().map(|&c| Scope::Cpu(c)).collect();
            (plan, scopes)
        }
        Err(e) => {
            let msg = if e.kind == OpenErrorKind::Denied {
                refused = true;
                refusal_message(&e, cpu.perf_event_paranoid)
            } else {
                format!(
                    "system-wide counting is not possible here (perf_event_open: {e}); \
                     reporting getrusage data instead"
                )
            };
            error(&msg);
            let set = EventSet {
                number: None,
                name: "rusage".into(),
                description: "getrusage fields".into(),
                groups: vec![EventSpec::rusage_events()],
            };
            let mut plan =
                CountingPlan::unprobed(&[set], Arc::new(RusageBackend), Scope::ProcessTree);
            plan.notice = Some(msg);
            (plan, vec![Scope::ProcessTree])
        }
    };
    for n in &notices {
        notice(n);
    }
    if let Some(n) = &plan.notice {
        if !plan.is_rusage() {
            notice(&hpm::counting_plan::notice_headline(n));
        }
        notices.push(n.clone());
    }

    let mut status = 0;
    for workload in &workloads {
        let started = LocalDateTime::now();
        let run = match run_system_wide(&plan, &MonotonicClock, &scopes, workload) {
            Ok(r) => r,
            Err(e) => {
                error(&e.to_string());
                return ExitCode::from(e.exit_status() as u8);
            }
        };
        let mut notes = notices.clone();
        for e in &run.open_errors {
            notes.push(format!("counters not available for this run: {e}"));
        }
        let label = match workload {
            Workload::Program(p, a) => std::iter::once(p)
                .chain(a)
                .map(|s| s.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join(" "),
            Workload::Interval(d) => format!("interval {:.3} s", d.as_secs_f64()),
        };
        notes.push(format!(
            "system-wide: {} CPU{} counted",
            run.cpus,
            if run.cpus == 1 { "" } else { "s" }
        ));
        if let Some(exit) = run.exit {
            status = exit.shell_status();
        }
        let mut report = Report {
            tool: Tool::Hpmstat,
            program: label.clone(),
            host: host_name(),
            pid: std::process::id(),
            rank: cfg.mpi_rank,
            task_id: None,
            started,
            wall_s: run.measurement.wall_s,
            rusage: run.rusage,
            backend: plan.backend.name().to_string(),
            user_space_only: plan.backend.user_space_only(),
            notices: notes,
            sections: vec![SectionReport {
                id: 0,
                label,
                parent: None,
                tid: 0,
                calls: 1,
                inclusive: run.measurement,
                exclusive: None,
                overhead_s: 0.0,
            }],
            exit: run.exit,
            error_count: 0,
            aggregate: None,
        };
        let cli_out = CliOutput {
            output_name: cli.output.clone(),
            unique: cli.unique,
            no_stdout: cli.no_stdout,
            print_formula: cli.formula,
        };
        for e in hpm::config::output_plan::aggregate_and_emit(
            Tool::Hpmstat,
            &cfg,
            &cli_out,
            plugin.as_ref(),
            &mut report,
            &started,
            cpu.mhz,
        ) {
            error(&e);
        }
    }
    if refused {
        return ExitCode::from(EXIT_REFUSED);
    }
    ExitCode::from(status.clamp(0, 255) as u8)
}
