//! One summary of a job's per-process reports: the `drhook-merge` crate's
//! ([`drhook_merge::io::summary`] has the reduction's rules), shared with
//! the in-job reduction of the preload library (`DR_HOOK_OPT=io,reduce`).

pub use drhook_merge::io::summary::*;
pub use drhook_merge::io::{summarize, summarize_with};
