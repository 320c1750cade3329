//! `DR_HOOK_OPT=io,reduce`: the ranks' I/O reports reduced inside
//! `MPI_Finalize` into one job summary, `drhook.io.job` (rank 0), the
//! `drhook-io-job` document `drhook io --json --top 0` makes of the
//! per-rank reports: each rank reads its own report's text as `drhook io`
//! reads the file (`drhook_merge::io::parse_report`), makes its partial
//! summary (`drhook_merge::io::Partial`: one accumulator per distinct path,
//! routine and command, and its process row), and the partials combine
//! along the reduction tree of the profile's reduction
//! (`crate::lifecycle::mpi_reduce_io`). The per-rank reports are then
//! written only with `ranks` (as the profiles), or where the reduction
//! could not run (with a message).

use std::path::{Path, PathBuf};

use drhook_merge::io::{Partial, parse_report};

use crate::lifecycle::mpi_reduce_io::combine;
use crate::sys::diag;

/// This end (inside `MPI_Finalize`) is reduced: `reduce` was asked and the
/// MPI layer reduces with the layer's own engine.
pub(super) fn asked() -> bool {
    !crate::engine::is_programs_engine() && drhook::lifecycle::reduce_active()
}

/// `drhook.io.job` beside the rank's own report `path` (the name up to
/// `drhook.io`, then `.job`).
fn job_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = match name.find("drhook.io") {
        Some(k) => &name[..k + "drhook.io".len()],
        None => "drhook.io",
    };
    path.with_file_name(format!("{stem}.job"))
}

/// Takes part in the reduction with this rank's report (`text`, to be
/// written at `path`); rank 0 writes the job summary with `write`.
/// Returns whether the rank's own report is still to be written.
pub(super) fn run(
    text: &str,
    path: &Path,
    write: impl Fn(&Path, &[u8]) -> Result<(), String>,
) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // A report that does not read (it always does) still takes its place
    // in the tree, empty, so that no rank waits for it.
    let part = match parse_report(text) {
        Ok(r) => Partial::of_report(&name, &r),
        Err(e) => {
            diag(&format!("DR_HOOK_OPT=io,reduce: this rank's report: {e}"));
            Partial::default()
        }
    };
    let per_rank = drhook::lifecycle::reduce_per_rank_files();
    match combine(part, Partial::encode, Partial::decode, Partial::combine) {
        Err(why) => {
            diag(&format!(
                "DR_HOOK_OPT=io,reduce: {why}: no job I/O report from this rank; its own report is written"
            ));
            true
        }
        Ok(None) => per_rank,
        Ok(Some((whole, seen))) => {
            if seen.lost {
                diag(
                    "DR_HOOK_OPT=io,reduce: a rank's part was lost or damaged: the job I/O report misses it",
                );
            }
            let n = whole.processes();
            let doc = whole.finish(0, None).to_json();
            let job = job_path(path);
            match write(&job, doc.as_bytes()) {
                Ok(()) => diag(&format!(
                    "Writing the job's I/O report ({n} ranks reduced, {} receives, largest message {} bytes, {:.6} s on rank 0) into file '{}'",
                    seen.receives,
                    seen.largest,
                    seen.seconds,
                    job.display()
                )),
                Err(e) => diag(&format!(
                    "DR_HOOK_OPT=io,reduce: cannot write '{}': {e}",
                    job.display()
                )),
            }
            per_rank
        }
    }
}
