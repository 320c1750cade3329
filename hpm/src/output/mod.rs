//! A [`crate::report::Report`] turned into text and back: the [`ascii`]
//! report (`.hpm` and stdout), the XML [`viz`] file, the [`csv`] table (which
//! `hpmcount merge` reads back), and the [`aggregate`] strategies applied to
//! one task or across tasks, and the `-l`/`-c` [`listing`]s of the commands
//! (which probe the perf backend).
//!
//! Depends on the report and the metrics; knows nothing of the environment.

pub mod aggregate;
pub mod ascii;
pub mod csv;
pub mod listing;
pub mod plugin;
pub mod viz;
