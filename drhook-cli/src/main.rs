//! `drhook`: the command of drhook-rs — reports from Dr.Hook profiles
//! (merge, flamegraph, json, diff, top), timelines (trace merge), library
//! wrappers (wrap), `run` (an unmodified program with Dr.Hook attached) and
//! `dump` (a look into a running job).
//! The work is done by the `drhook_cli` library; this is the command line
//! and the exit status.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use drhook_cli::cmd::{self, EXIT_ERROR, Global};

/// Dr.Hook tools: reports from profiles (drhook.prof.N text files, ours or
/// the reference Dr.Hook's, and drhook-profile JSON) and wrappers that put
/// a C library's functions into the calling tree.
///
/// Exit status: 0 success; 1 `diff --threshold` found a regression;
/// 2 bad arguments, unreadable or malformed input, failed output. `run`:
/// the program's own (126/127 when it cannot be run).
#[derive(Debug, Parser)]
#[command(name = "drhook", version, about, long_about)]
struct Cli {
    #[command(flatten)]
    global: Global,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// One table over all tasks: per routine calls, self and total time
    /// min/mean/max/stddev across tasks, where the max is, imbalance.
    Merge(cmd::merge::Args),
    /// A flame graph (SVG, inferno): frames as wide as their inclusive
    /// time, from call paths when the profile has them; differential with
    /// --diff.
    Flamegraph(cmd::flamegraph::Args),
    /// The profiles as JSON: the drhook-profile schema, or Hatchet's
    /// GraphFrame JSON (one tree indexed by node, rank, thread) or literal
    /// format.
    Json(cmd::json::Args),
    /// Two runs routine by routine, sorted by change of self time; an exit
    /// status for CI with --threshold.
    Diff(cmd::diff::Args),
    /// A profile as a readable tree (or table) in the terminal.
    Top(cmd::top::Args),
    /// One self-contained HTML page of a run (or job): its facts, the
    /// balance over tasks and threads, the calling tree, a flame graph, the
    /// memory and I/O tables; read offline in a browser.
    Report(cmd::report::Args),
    /// The processes of a `drhook run` directory (made by default): the process
    /// tree (pid, parent, command, files) and the time per command.
    Procs(cmd::procs::Args),
    /// Timelines (DR_HOOK_OPT=trace): `drhook trace merge` puts the tasks
    /// of a run in one Chrome/Perfetto trace.
    Trace(cmd::trace::Args),
    /// Generate Dr.Hook wrappers for a C library (its functions become
    /// routines in the calling tree).
    Wrap(Box<cmd::wrap::WrapArgs>),
    /// The per-file I/O report of processes run with DR_HOOK_OPT=io
    /// (drhook.io.* files, or directories of them): one process's table,
    /// or one summary of several (a job); --json.
    Io(cmd::io::Args),
    /// Runs an unmodified program (and every process it starts) with
    /// Dr.Hook attached (LD_PRELOAD); the exit status is the program's.
    Run(cmd::run::Args),
    /// Asks a running Dr.Hook process (and every process below it: an MPI
    /// launcher's ranks) for every thread's calling tree and the profile so
    /// far (drhook.prof.N.partial), without stopping it.
    Dump(cmd::dump::Args),
}

/// `drhook run` gives the program the `SIGPIPE` disposition and the closed
/// descriptors 0-2 this process started with, which Rust's runtime changes
/// before `main`: a constructor records them first.
#[used]
// SAFETY: `.init_array` holds pointers to functions the C runtime calls
// before `main` (with argc, argv and envp, which a function taking nothing
// ignores); this one only reads the process's state into atomics.
#[unsafe(link_section = ".init_array")]
static RECORD_INHERITED_STATE: extern "C" fn() = cmd::run::exec::record_inherited_state;

fn main() -> ExitCode {
    let Cli { global, command } = Cli::parse();
    let g = &global;
    let result = match command {
        Command::Merge(a) => cmd::merge::run(&a, g),
        Command::Flamegraph(a) => cmd::flamegraph::run(&a, g),
        Command::Json(a) => cmd::json::run(&a, g),
        Command::Diff(a) => cmd::diff::run(&a, g),
        Command::Top(a) => cmd::top::run(&a, g),
        Command::Procs(a) => cmd::procs::run(&a, g),
        Command::Trace(a) => cmd::trace::run(&a, g),
        Command::Report(a) => cmd::report::run(&a, g),
        Command::Wrap(a) => return cmd::wrap::run(*a),
        Command::Run(a) => cmd::run::run(&a, g),
        Command::Io(a) => cmd::io::run(&a),
        Command::Dump(a) => cmd::dump::run(&a),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("drhook: error: {e}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn command_line_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
