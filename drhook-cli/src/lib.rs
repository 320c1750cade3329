//! The `drhook` command's library: reading Dr.Hook profiles and the
//! reports made from them. The binary (`src/main.rs`) is only the command
//! line; everything it does is here, so it can be tested and fuzzed.
//!
//! Table of contents:
//!
//! * [`profile`]: the data model of a task's profile and its readers and
//!   writers
//!   * [`profile::text`]: `drhook.prof.N` text (ours and the reference's),
//!     whole or streamed row by row, with errors naming file and line;
//!   * [`profile::write`]: the same text back;
//!   * [`profile::json`]: the `drhook-profile` JSON document
//!     (`docs/profile-schema.json`);
//!   * [`profile::tree`]: the call-path tree from `callpath` rows;
//!   * [`profile::input`]: files and directories, text or JSON;
//!   * [`profile::number`]: fast parsing of the fixed-point columns.
//! * [`report`]: what the commands compute
//!   * [`report::merge`] and [`report::table`]: statistics across tasks;
//!   * [`report::diff`]: two runs compared;
//!   * [`report::folded`], [`report::hatchet`]: flame-graph stacks, Hatchet;
//!   * [`report::top`]: the terminal view;
//!   * [`report::trace`]: Chrome/Perfetto traces of tasks merged.
//! * [`wrap`]: `drhook wrap` — wrappers for any C library, so that its
//!   functions appear as routines in the Dr.Hook calling tree
//!   (`parse` → `filter` → `check` → `select` → `emit`; `locate` finds
//!   installed wrappers for `DR_HOOK_WRAP`).
//! * [`cmd`]: one module per subcommand (arguments and running them).
//! * [`error`]: the error type (file, line, message).

pub mod cmd;
pub mod error;
pub mod profile;
pub mod report;
pub mod wrap;

pub use error::{Error, Result};
