//! `hpmcount`: count a whole program (seed §2), or merge per-task CSV files.

// The doc comments of the clap structs are the --help texts, written for a
// terminal (`<name>`), not for rustdoc.
#![allow(rustdoc::invalid_html_tags)]

use std::ffi::OsString;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;

use hpm::backend::Scope;
use hpm::config::output_plan::write_atomic;
use hpm::report::{LocalDateTime, Report, SectionReport, Tool, host_name};
use hpm::sections::program::run_counted;
use hpm::{
    Aggregator, AsciiWriter, CliOutput, CounterBackend, CountingPlan, CpuInfo, CsvCodec, EnvConfig,
    MetricContext, MonotonicClock, PerfBackend, RenderOptions,
};

/// Count hardware and software events of a program and everything it spawns.
#[derive(Parser, Debug)]
#[command(
    name = "hpmcount",
    version,
    after_help = "Environment: HPM_EVENT_SET, HPM_OUTPUT_NAME, HPM_UNIQUE_FILE_NAME, HPM_STDOUT, HPM_PRINT_FORMULA, \
                  HPM_ASC_OUTPUT, HPM_VIZ_OUTPUT, HPM_CSV_OUTPUT, HPM_AGGREGATE, HPM_DIV_WEIGHT, HPM_*_LATENCY.\n\
                  `hpmcount merge [-a <aggregator>] [-o <name>] [-x] <files.csv>...` merges per-task CSV files.\n\
                  To run a program named `merge`, write `hpmcount ./merge`."
)]
struct Cli {
    /// Copy the output to <name>.hpm (and .viz/.csv as HPM_*_OUTPUT say).
    #[arg(short = 'o', value_name = "name")]
    output: Option<String>,
    /// Make the file name unique: _<host>_<pid|rank>_<dd.mm.yyyy>_<hh.mm.ss>.
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
    /// Aggregator: mirror, single, average, loc_merge, min, max.
    #[arg(short = 'a', value_name = "aggregator")]
    aggregate: Option<String>,
    /// List the event sets (groups).
    #[arg(short = 'l')]
    list_groups: bool,
    /// List the events and whether this machine can count them.
    #[arg(short = 'c')]
    list_events: bool,
    /// The program to run and its arguments.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "program"
    )]
    program: Vec<OsString>,
}

/// `hpmcount merge`: combine per-task CSV files.
#[derive(Parser, Debug)]
#[command(name = "hpmcount merge", bin_name = "hpmcount merge")]
struct MergeCli {
    /// Aggregator: mirror, single, average, loc_merge, min, max.
    #[arg(short = 'a', value_name = "aggregator", default_value = "mirror")]
    aggregate: String,
    /// Write <name>.csv and <name>.hpm.
    #[arg(short = 'o', value_name = "name")]
    output: Option<String>,
    /// No output on stdout when -o is used.
    #[arg(short = 'n')]
    no_stdout: bool,
    /// Add the formulas of the derived metrics.
    #[arg(short = 'x')]
    formula: bool,
    /// Per-task CSV files.
    #[arg(required = true)]
    files: Vec<String>,
}

fn notice(text: &str) {
    eprintln!("hpmcount: notice: {text}");
}

fn error(text: &str) {
    eprintln!("hpmcount ERROR - {text}");
}

fn merge(args: Vec<OsString>) -> ExitCode {
    let cli = match MergeCli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let aggregator = match Aggregator::parse(&cli.aggregate) {
        Ok(a) => a,
        Err(e) => {
            error(&e);
            return ExitCode::from(2);
        }
    };
    let mut reports = Vec::new();
    let mut failed = false;
    for f in &cli.files {
        match std::fs::read_to_string(f)
            .map_err(|e| e.to_string())
            .and_then(|t| CsvCodec::read(&t))
        {
            Ok(rs) => reports.extend(rs),
            Err(e) => {
                error(&format!("cannot read '{f}': {e}"));
                failed = true;
            }
        }
    }
    if reports.is_empty() {
        error("no task data to merge");
        return ExitCode::from(1);
    }
    let (cfg, _) = EnvConfig::from_env();
    let cpu = CpuInfo::detect();
    let options = RenderOptions {
        print_formula: cli.formula || cfg.print_formula,
        metrics: MetricContext::from_config(&cfg, cpu.mhz),
    };
    let merged = aggregator.merge(reports);
    let text: String = merged
        .iter()
        .map(|r| AsciiWriter::new(options.clone()).render(r))
        .collect::<Vec<_>>()
        .join("\n");
    if cli.output.is_none() || !cli.no_stdout {
        print!("{text}");
    }
    if let Some(name) = &cli.output {
        for (path, contents) in [
            (
                format!("{name}.csv"),
                CsvCodec::new(options.clone()).write(&merged),
            ),
            (format!("{name}.hpm"), text),
        ] {
            if let Err(e) = write_atomic(std::path::Path::new(&path), contents.as_bytes()) {
                error(&format!("cannot write output file '{path}': {e}"));
                failed = true;
            }
        }
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == "merge") {
        return merge(args[1..].to_vec());
    }
    let cli = match Cli::try_parse_from(&args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { 2 } else { 0 });
        }
    };
    let cpu = CpuInfo::detect();
    if cli.list_groups || cli.list_events {
        if cli.list_groups {
            print!("{}", hpm::output::listing::groups_text(&cpu));
        }
        if cli.list_events {
            print!(
                "{}",
                hpm::output::listing::events_text(&cpu, Scope::CallingThread)
            );
        }
        return ExitCode::SUCCESS;
    }
    let Some((program, program_args)) = cli.program.split_first() else {
        error("no program given (usage: hpmcount [options] <program> [args]; -h for help)");
        return ExitCode::from(2);
    };

    // Environment first, then options (they take precedence), then the
    // distributor (it takes precedence over both, seed §2.7.2).
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
    let backend: Arc<dyn CounterBackend> = Arc::new(PerfBackend::without_rdpmc());
    let plan = CountingPlan::build(&selection, backend, Scope::ProcessTree, &cpu);
    for n in &notices {
        notice(n);
    }
    // The fallback notice: one line here, the reason and remedy once, in
    // the report.
    if let Some(n) = &plan.notice {
        notice(&hpm::counting_plan::notice_headline(n));
        notices.push(n.clone());
    }

    let started = LocalDateTime::now();
    let run = match run_counted(&plan, &MonotonicClock, program, program_args) {
        Ok(r) => r,
        Err(e) => {
            error(&e.to_string());
            return ExitCode::from(e.exit_status() as u8);
        }
    };
    for e in &run.open_errors {
        notices.push(format!("counters not available for this run: {e}"));
    }
    let command: Vec<String> = cli
        .program
        .iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let status = run.exit.shell_status();
    let mut report = Report {
        tool: Tool::Hpmcount,
        program: command.join(" "),
        host: host_name(),
        pid: std::process::id(),
        rank: cfg.mpi_rank,
        task_id: None,
        started,
        wall_s: run.measurement.wall_s,
        rusage: run.rusage,
        backend: plan.backend.name().to_string(),
        user_space_only: plan.backend.user_space_only(),
        notices,
        sections: vec![SectionReport {
            id: 0,
            label: command.first().cloned().unwrap_or_default(),
            parent: None,
            tid: 0,
            calls: 1,
            inclusive: run.measurement,
            exclusive: None,
            overhead_s: 0.0,
        }],
        exit: Some(run.exit),
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
        Tool::Hpmcount,
        &cfg,
        &cli_out,
        plugin.as_ref(),
        &mut report,
        &started,
        cpu.mhz,
    ) {
        error(&e);
    }
    ExitCode::from(status.clamp(0, 255) as u8)
}
