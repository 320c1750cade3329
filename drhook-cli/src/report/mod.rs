//! What the commands compute and print, independent of the command line.
//!
//! * [`merge`]: statistics of routines across tasks, streamed file by file
//!   ([`mpi_read`]: the MPI profiles it merges);
//! * [`table`]: plain-text tables; the merge table as text, CSV, JSON;
//! * [`diff`]: two runs routine by routine, regressions for CI;
//! * [`folded`]: folded stacks for flame graphs;
//! * [`hatchet`]: Hatchet's JSON (one tree indexed by node, rank, thread)
//!   and its literal format;
//! * [`top`]: the profile drawn for a terminal;
//! * [`html`]: the self-contained HTML page of `drhook report`;
//! * [`trace`]: Chrome/Perfetto traces of several tasks merged into one.

pub mod diff;
pub mod folded;
pub mod hatchet;
pub mod html;
pub mod io_read;
pub mod merge;
pub mod mpi_read;
pub mod table;
pub mod top;
pub mod trace;

/// `elapsed X s` of a job: the longest task's elapsed time, or that it was
/// not recorded (reference-format profiles, or any task without it).
pub fn job_elapsed_words(profiles: &[crate::profile::Profile]) -> String {
    let e: Option<Vec<f64>> = profiles.iter().map(|p| p.header.elapsed_s).collect();
    match e {
        Some(v) if !v.is_empty() => {
            let m = v.iter().copied().fold(0.0, f64::max);
            if v.len() > 1 {
                format!("elapsed {m:.3} s (longest task)")
            } else {
                format!("elapsed {m:.3} s")
            }
        }
        _ => "elapsed not recorded".to_string(),
    }
}
