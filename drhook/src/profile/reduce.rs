//! `DR_HOOK_OPT=reduce`: this task's part of the job profile. At the end
//! written from `MPI_Finalize` (the preload library's MPI layer says so
//! first, [`begin`]), the rows this task's profile shows are folded into a
//! `drhook_merge::Merger` exactly as `drhook merge` reads them from the
//! file (times as printed, to the millisecond; the same rows, the same
//! names), and kept as bytes for the layer's reduction tree ([`take`]);
//! task 1 then writes the combined job profile ([`write_job`]) with the
//! `drhook-merge` crate's table, the one `drhook merge` prints.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use super::compute::Summary;
use super::text::Header;
use crate::config::options::ProfileKind;
use crate::setup::Engine;

/// This end is reduced (set by the MPI layer before it ends the process).
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// This task's part, once folded.
static PART: Mutex<Option<Part>> = Mutex::new(None);

/// This task's part of the job profile.
#[derive(Debug)]
pub struct Part {
    /// The `drhook_merge::Merger` of this task's rows, as bytes.
    pub merger: Vec<u8>,
    /// Threads of this task.
    pub threads: u32,
    /// When the instrumentation started (the profile's stamp).
    pub started: String,
}

/// The MPI layer is about to end the process inside `MPI_Finalize` and
/// will reduce: fold this task's rows when the profile is made. Returns
/// whether `reduce` was asked (and Dr.Hook writes a time profile).
pub(crate) fn begin() -> bool {
    let Some(e) = crate::setup::engine_if_ready() else {
        return false;
    };
    let on = asked(e);
    if on {
        ACTIVE.store(true, Ordering::Release);
    }
    on
}

/// `reduce` with a time profile.
pub(crate) fn asked(e: &Engine) -> bool {
    e.config.options.reduce && e.config.options.profile.is_some()
}

/// Whether this end is reduced.
pub(crate) fn active() -> bool {
    ACTIVE.load(Ordering::Acquire)
}

/// Whether the per-rank profile is written beside the job profile.
pub(crate) fn per_rank_files(e: &Engine) -> bool {
    !active() || e.config.options.ranks
}

/// At the end of a process whose profile is not reduced although
/// `reduce` was asked: says why and that its own profile is written.
pub(crate) fn say_if_unreduced(e: &Engine) {
    if asked(e) && !active() && crate::setup::task(e).nproc > 1 {
        crate::diag!(
            "write_profile",
            "DR_HOOK_OPT=reduce: proc#{} ends without MPI_Finalize (exit before it, MPI_Abort, a signal, or no preload library: drhook run): no job profile from this task; its own profile is written",
            crate::setup::task(e).myproc
        );
    }
}

/// Folds the rows the profile shows (called where the profile is written).
pub(crate) fn keep(h: &Header, s: &Summary<'_>) {
    if !active() {
        return;
    }
    let kind = match h.kind {
        ProfileKind::Wall => drhook_merge::Kind::Wall,
        ProfileKind::Cpu => drhook_merge::Kind::Cpu,
    };
    let mut m = drhook_merge::Merger::new();
    if m.begin_task(kind, h.myproc).is_err() {
        return;
    }
    m.task_elapsed(h.elapsed_s.map(drhook_merge::as_printed_3));
    let mut path: Vec<&str> = Vec::new();
    for r in &s.rows {
        if r.pct < h.limit {
            break;
        }
        path.clear();
        path.extend(r.path.iter().map(|&a| s.name(a)));
        m.add_row(
            s.row_name(r),
            &path,
            r.tid,
            r.calls,
            drhook_merge::as_printed_3(r.self_s),
            drhook_merge::as_printed_3(r.total_s),
        );
    }
    m.end_task();
    *PART.lock().unwrap_or_else(|p| p.into_inner()) = Some(Part {
        merger: m.encode(),
        threads: s.threads.len() as u32,
        started: h.started.clone(),
    });
}

/// This task's part.
pub(crate) fn take() -> Option<Part> {
    PART.lock().unwrap_or_else(|p| p.into_inner()).take()
}

/// `<profile>.job`: the profile template without its task number
/// (`drhook.prof.%d` → `drhook.prof.job`).
pub(crate) fn job_path(e: &Engine) -> PathBuf {
    let t = &e.config.profile_template;
    let stem = t.replace(".%d", "").replace("%d", "");
    PathBuf::from(format!("{stem}.job"))
}

/// Writes the job profile from the combined merger bytes: `identity`
/// lines (each written after `# `), a blank line, then the table
/// `drhook merge` prints for the per-rank files.
pub(crate) fn write_job(merged: &[u8], identity: &[String]) -> Result<PathBuf, String> {
    let e = crate::setup::engine_if_ready().ok_or("Dr.Hook is off")?;
    let m = drhook_merge::Merger::decode(merged).ok_or("the reduction's data is damaged")?;
    let table = drhook_merge::merge_text(&m.finish(), None);
    let path = job_path(e);
    let _own = crate::tree::thread::internal_work();
    super::write::write_atomically(&path, |w| {
        for l in identity {
            writeln!(w, "# {l}")?;
        }
        writeln!(w)?;
        w.write_all(table.as_bytes())
    })
    .map_err(|err| {
        format!(
            "unable to write the job profile '{}': {err}",
            path.display()
        )
    })?;
    if !e.config.silent {
        crate::diag!(
            "write_profile",
            "Writing the job profile (all tasks reduced) into file '{}'",
            path.display()
        );
    }
    Ok(path)
}
