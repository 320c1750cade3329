//! What the user asked for: the `HPM_*` environment ([`env`](mod@env), parsed into the
//! settings types of the subsystems below: event selection text, aggregator,
//! metric context, output switches) and, with `hpmcount`'s options, the
//! [`output_plan`] (which files, stdout, unique names) that emits a report.
//!
//! The configuration knows the subsystems; none of them knows it.

pub mod env;
pub mod output_plan;
