//! The I/O reports of processes (`drhook.io.*`, `DR_HOOK_OPT=io`) and
//! their job summary (`drhook-io-job`): the model of the reports
//! ([`model`]), the reduction of a path's records across processes
//! (Darshan's shared-record reduction, `counters.rs`), and the summary
//! ([`summary`]) made through a combinable [`Partial`], shared by
//! `drhook io` and the in-job reduction of the preload library
//! (`DR_HOOK_OPT=io,reduce`: `drhook.io.job`), so that the two agree by
//! construction.

mod counters;
pub mod model;
mod partial;
pub mod summary;
mod tree;

pub use model::{
    Aio, BINS, File, Report, RoutineBytes, binary_units, ending_of, human, parse_report,
};
pub use partial::{Partial, summarize, summarize_with};
pub use summary::{
    CommandTotal, FORMAT, JobFile, Process, ProcessIo, RoutineTotal, SmallFlushes, Summary, Totals,
};

impl Summary {
    /// The document as `drhook io --json` prints it (pretty JSON and a
    /// newline).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    /// Reads a job document (`drhook.io.job`; `Err`: why it is not one).
    pub fn parse(text: &str) -> Result<Summary, String> {
        let s: Summary =
            serde_json::from_str(text).map_err(|e| format!("not a drhook-io-job document: {e}"))?;
        if s.format != FORMAT {
            return Err("not a drhook-io-job document (format)".into());
        }
        Ok(s)
    }
}
