//! `DR_HOOK_OPT=reduce`: this task's part of the job profile. At the end
//! written from `MPI_Finalize` (the MPI layer — the preload library's, or
//! the link-time `libdrhook_mpi`'s, through the engine's table — says so
//! first, [`begin`]), the rows this task's profile shows are folded into a
//! `drhook_merge::Merger` exactly as `drhook merge` reads them from the
//! file (times as printed, to the millisecond; the same rows, the same
//! names), and kept as bytes for the layer's reduction tree ([`take`]);
//! task 1 then writes the combined job profile ([`write_job`]) with the
//! `drhook-merge` crate's table, the one `drhook merge` prints. With
//! `memprof`/`io`/`mpi` the rows of the memory, I/O and MPI profiles are
//! folded too (`drhook_merge::ColMerger`), into `<profile>-mem.job`,
//! `<profile>-io.job` and `<profile>-mpi.job` ([`write_cols_job`]).

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
    /// The `drhook_merge::ColMerger` of the memory profile's rows
    /// (`memprof`), as bytes.
    pub mem: Option<Vec<u8>>,
    /// The `drhook_merge::ColMerger` of the I/O profile's rows (`io`), as
    /// bytes.
    pub io: Option<Vec<u8>>,
    /// The `drhook_merge::ColMerger` of the MPI profile's rows (`mpi`, a
    /// task that made MPI calls: one that writes `<profile>-mpi`), as
    /// bytes.
    pub mpi: Option<Vec<u8>>,
}

impl Part {
    /// As bytes, for a layer that holds another copy of the engine (the
    /// link-time MPI library's, reducing for the program's `libdrhook`):
    /// [`Part::decode`] reads them back.
    pub fn encode(&self) -> Vec<u8> {
        fn put(o: &mut Vec<u8>, b: Option<&[u8]>) {
            match b {
                None => o.push(0),
                Some(b) => {
                    o.push(1);
                    o.extend_from_slice(&(b.len() as u64).to_le_bytes());
                    o.extend_from_slice(b);
                }
            }
        }
        let mut o = Vec::with_capacity(self.merger.len() + 64);
        put(&mut o, Some(&self.merger));
        o.extend_from_slice(&self.threads.to_le_bytes());
        put(&mut o, Some(self.started.as_bytes()));
        for b in [&self.mem, &self.io, &self.mpi] {
            put(&mut o, b.as_deref());
        }
        o
    }

    /// The part [`Part::encode`] made into `b` (None: not such bytes).
    pub fn decode(b: &[u8]) -> Option<Part> {
        struct Reader<'a>(&'a [u8]);
        impl<'a> Reader<'a> {
            fn take(&mut self, n: usize) -> Option<&'a [u8]> {
                let (a, rest) = self.0.split_at_checked(n)?;
                self.0 = rest;
                Some(a)
            }
            fn opt(&mut self) -> Option<Option<Vec<u8>>> {
                if self.take(1)?[0] == 0 {
                    return Some(None);
                }
                let n = u64::from_le_bytes(self.take(8)?.try_into().ok()?);
                Some(Some(self.take(usize::try_from(n).ok()?)?.to_vec()))
            }
        }
        let mut r = Reader(b);
        let merger = r.opt()??;
        let threads = u32::from_le_bytes(r.take(4)?.try_into().ok()?);
        let started = String::from_utf8(r.opt()??).ok()?;
        Some(Part {
            merger,
            threads,
            started,
            mem: r.opt()?,
            io: r.opt()?,
            mpi: r.opt()?,
        })
    }
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
            "DR_HOOK_OPT=reduce: proc#{} ends without MPI_Finalize (exit before it, MPI_Abort, a signal, or MPI_Finalize not wrapped: neither drhook run nor -ldrhook_mpi): no job profile from this task; its own profile is written",
            crate::setup::task(e).myproc
        );
    }
}

/// Folds the rows the profile shows (called where the profile is written),
/// and those of the memory, I/O and MPI profiles when their words are at
/// `mem_at`, `io_at` and `mpi_at`.
pub(crate) fn keep(
    h: &Header,
    s: &Summary<'_>,
    mem_at: Option<usize>,
    io_at: Option<usize>,
    mpi_at: Option<usize>,
) {
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
        mem: mem_at.map(|at| keep_mem(h, s, at)),
        io: io_at.map(|at| keep_io(h, s, at)),
        mpi: mpi_at
            .filter(|&at| super::mpi::has_rows(s, at))
            .map(|at| super::mpi::keep_mpi(h, s, at)),
    });
}

/// The memory profile's rows (those `mem::write_mem_text` prints), folded
/// as `drhook merge` reads them back.
fn keep_mem(h: &Header, s: &Summary<'_>, at: usize) -> Vec<u8> {
    use crate::metrics::mem::{ALLOC, HEAP, LIVE, NALLOC, NFREE, PAGING, STACK};
    let rows = super::mem::mem_rows(s, at);
    let all: u64 = rows.iter().map(|r| r.own[ALLOC]).sum();
    let mut m = drhook_merge::ColMerger::new(drhook_merge::ColKind::Memory);
    m.begin_task(h.myproc);
    for r in &rows {
        let pct = if all > 0 {
            100.0 * r.own[ALLOC] as f64 / all as f64
        } else {
            0.0
        };
        if pct < h.limit {
            continue;
        }
        m.add(
            s.row_name(r.row),
            &[
                r.own[ALLOC] as f64,
                r.total[ALLOC].saturating_sub(r.own[ALLOC]) as f64,
                r.own[LIVE] as i64 as f64,
                r.total[HEAP] as f64,
                r.total[STACK] as f64,
                r.total[PAGING] as f64,
                r.row.calls as f64,
                r.own[NALLOC] as f64,
                r.own[NFREE] as f64,
            ],
        );
    }
    m.end_task();
    m.encode()
}

/// The I/O profile's rows (those `io::write_io_text` prints), seconds as
/// printed.
fn keep_io(h: &Header, s: &Summary<'_>, at: usize) -> Vec<u8> {
    use crate::metrics::io::{NANOS, OTHER, READ_BYTES, READS, WORDS, WRITE_BYTES, WRITES};
    let words = |r: &super::compute::Row| {
        let (own, _) = r.metric(at, WORDS);
        let mut w = [0u64; WORDS];
        w[..own.len()].copy_from_slice(own);
        w
    };
    let rows = s.rows.iter().filter(|r| r.cluster != 0);
    let total_ns: u64 = rows.clone().map(|r| words(r)[NANOS]).sum();
    let mut m = drhook_merge::ColMerger::new(drhook_merge::ColKind::Io);
    m.begin_task(h.myproc);
    let p6 = drhook_merge::as_printed_6;
    for r in rows {
        let w = words(r);
        let pct = if total_ns > 0 {
            100.0 * w[NANOS] as f64 / total_ns as f64
        } else {
            0.0
        };
        if pct < h.limit {
            continue;
        }
        let io_s = w[NANOS] as f64 * 1e-9;
        m.add(
            s.row_name(r),
            &[
                p6(r.self_s),
                p6(io_s),
                p6((r.self_s - io_s).max(0.0)),
                w[READ_BYTES] as f64,
                w[WRITE_BYTES] as f64,
                w[READS] as f64,
                w[WRITES] as f64,
                w[OTHER] as f64,
            ],
        );
    }
    m.end_task();
    m.encode()
}

/// This task's part.
pub(crate) fn take() -> Option<Part> {
    PART.lock().unwrap_or_else(|p| p.into_inner()).take()
}

/// `<profile>.job`: the profile template without its task number
/// (`drhook.prof.%d` → `drhook.prof.job`); `<profile>-mem.job`,
/// `<profile>-io.job` and `<profile>-mpi.job` with `suffix` `-mem`, `-io`
/// or `-mpi`.
pub(crate) fn job_path(e: &Engine, suffix: &str) -> PathBuf {
    let t = &e.config.profile_template;
    let stem = t.replace(".%d", "").replace("%d", "");
    PathBuf::from(format!("{stem}{suffix}.job"))
}

/// Writes the job profile from the combined merger bytes: `identity`
/// lines (each written after `# `), a blank line, then the table
/// `drhook merge` prints for the per-rank files.
pub(crate) fn write_job(merged: &[u8], identity: &[String]) -> Result<PathBuf, String> {
    let m = drhook_merge::Merger::decode(merged).ok_or("the reduction's data is damaged")?;
    write_table(&drhook_merge::merge_text(&m.finish(), None), "", identity)
}

/// Writes the job's memory, I/O or MPI profile (`<profile>-mem.job`,
/// `<profile>-io.job`, `<profile>-mpi.job`) from the combined
/// `drhook_merge::ColMerger` bytes: `identity`, a blank line, the table
/// `drhook merge` prints for the per-rank `-mem`, `-io` or `-mpi` files.
pub(crate) fn write_cols_job(merged: &[u8], identity: &[String]) -> Result<PathBuf, String> {
    let m = drhook_merge::ColMerger::decode(merged).ok_or("the reduction's data is damaged")?;
    let suffix = match m.kind() {
        drhook_merge::ColKind::Memory => "-mem",
        drhook_merge::ColKind::Io => "-io",
        drhook_merge::ColKind::Mpi => "-mpi",
    };
    write_table(&drhook_merge::col_text(&m.finish(), None), suffix, identity)
}

fn write_table(table: &str, suffix: &str, identity: &[String]) -> Result<PathBuf, String> {
    let e = crate::setup::engine_if_ready().ok_or("Dr.Hook is off")?;
    let path = job_path(e, suffix);
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
            "Writing the job{} profile (all tasks reduced) into file '{}'",
            match suffix {
                "-mem" => "'s memory",
                "-io" => "'s I/O",
                "-mpi" => "'s MPI",
                _ => "",
            },
            path.display()
        );
    }
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::Part;

    #[test]
    fn a_part_crosses_between_engine_copies_as_bytes() {
        let p = Part {
            merger: vec![1, 2, 3],
            threads: 4,
            started: "20261127 020000".into(),
            mem: None,
            io: Some(vec![9; 300]),
            mpi: Some(Vec::new()),
        };
        let b = p.encode();
        let q = Part::decode(&b).expect("decoded");
        assert_eq!(
            (&q.merger, q.threads, &q.started, &q.mem, &q.io, &q.mpi),
            (&p.merger, p.threads, &p.started, &p.mem, &p.io, &p.mpi)
        );
        // Cut short anywhere: refused, never misread.
        for n in 0..b.len() {
            assert!(Part::decode(&b[..n]).is_none(), "{n} bytes");
        }
    }
}
