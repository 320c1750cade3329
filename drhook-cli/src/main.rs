//! `drhook`: the command of drhook-rs. Each subcommand lives in `cmd/`.

use clap::{Parser, Subcommand};
use drhook_cli::cmd;

/// Dr.Hook tools.
#[derive(Parser)]
#[command(name = "drhook", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Generate Dr.Hook wrappers for a C library (its functions become routines).
    Wrap(cmd::wrap::WrapArgs),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Wrap(a) => cmd::wrap::run(a),
    }
}
