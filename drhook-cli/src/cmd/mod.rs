//! Command-line arguments of the subcommands and what each one runs.

pub mod wrap;
