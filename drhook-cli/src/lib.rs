//! The `drhook` command's library: each subcommand's work, so that it can
//! be tested and reused without the command line.
//!
//! * [`wrap`]: `drhook wrap` — wrappers for any C library, so that its
//!   functions appear as routines in the Dr.Hook calling tree
//!   (`parse` → `filter` → `check` → `select` → `emit`; `locate` finds
//!   installed wrappers for `DR_HOOK_WRAP`).
//! * [`cmd`]: the command-line arguments of each subcommand and their dispatch.

pub mod cmd;
pub mod wrap;
