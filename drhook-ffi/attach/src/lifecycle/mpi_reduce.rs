//! `DR_HOOK_OPT=reduce`: the tasks' profiles reduced inside `MPI_Finalize`
//! (before `PMPI_Finalize`), into one job profile written by rank 0. The
//! parts come from, and the job profile is written by, the process's
//! engine through its table (`crate::engine`): the layer's own, or the
//! program's (a static program's `libdrhook.a`, or `libdrhook.so` under
//! the link-time MPI library `libdrhook_mpi`).
//!
//! Each rank's part is the engine's fold of its own profile rows (a
//! `drhook_merge::Merger` as bytes: one accumulator per distinct routine,
//! keyed by its name, since routine ids differ across ranks). The parts
//! meet in a binomial tree over `MPI_COMM_WORLD`: at step k (mask 2^k),
//! a rank with that bit set sends what it holds to `rank - 2^k` and is
//! done; the others receive from `rank + 2^k` (when there is one) and fold
//! it in. ⌈log2 P⌉ steps; a rank holds its own part and one child's at a
//! time, so memory grows with the number of distinct routines (and 4 bytes
//! per task for the task numbers), never with P profiles. A child's
//! subtree covers the ranks just after its parent's, so the tasks are
//! folded in rank order (the sums are exact anyway: the order does not
//! change the numbers).
//!
//! Messages are `PMPI_Send`/`PMPI_Recv` of `MPI_BYTE` (a length, then the
//! bytes), found with `dlsym` like the rest of the MPI layer; `MPI_BYTE`
//! is `&ompi_mpi_byte` in Open MPI and `0x4c00010d` in the MPICH family.

use std::ffi::{c_int, c_void};
use std::time::Instant;

use super::mpi::{symbol, world_comm};

/// The MPICH family's `MPI_BYTE`.
const MPICH_BYTE: usize = 0x4c00_010d;
/// The tag of the reduction's messages (`"DRHK"`).
const TAG: c_int = 0x4452_484b & 0x7fff;
/// Distinct host names carried up the tree, at most.
const MAX_HOSTS: usize = 256;

type Send = unsafe extern "C" fn(*const c_void, c_int, usize, c_int, c_int, usize) -> c_int;
type Recv =
    unsafe extern "C" fn(*mut c_void, c_int, usize, c_int, c_int, usize, *mut c_void) -> c_int;

pub(super) struct Mpi {
    send: Send,
    recv: Recv,
    byte: usize,
    comm: usize,
}

impl Mpi {
    pub(super) fn find() -> Option<Mpi> {
        let send = symbol(c"PMPI_Send");
        let recv = symbol(c"PMPI_Recv");
        if send.is_null() || recv.is_null() {
            return None;
        }
        let ompi = symbol(c"ompi_mpi_byte");
        let byte = if ompi.is_null() {
            MPICH_BYTE
        } else {
            ompi as usize
        };
        // SAFETY: the C prototypes of PMPI_Send and PMPI_Recv; handles are
        // pointers (Open MPI) or ints (MPICH), one register either way.
        let (send, recv) = unsafe {
            (
                std::mem::transmute::<*mut c_void, Send>(send),
                std::mem::transmute::<*mut c_void, Recv>(recv),
            )
        };
        Some(Mpi {
            send,
            recv,
            byte,
            comm: world_comm(),
        })
    }

    pub(super) fn send(&self, to: c_int, bytes: &[u8]) -> bool {
        let len = (bytes.len() as u64).to_le_bytes();
        let Ok(n) = c_int::try_from(bytes.len()) else {
            return false;
        };
        // SAFETY: buffers valid for the counts given; MPI is initialised
        // and not finalized (called from the MPI_Finalize wrapper before
        // PMPI_Finalize).
        unsafe {
            (self.send)(len.as_ptr().cast(), 8, self.byte, to, TAG, self.comm) == 0
                && (self.send)(bytes.as_ptr().cast(), n, self.byte, to, TAG, self.comm) == 0
        }
    }

    /// Receives `buf.len()` bytes from rank `from`.
    fn recv_into(&self, from: c_int, buf: &mut [u8]) -> bool {
        let Ok(count) = c_int::try_from(buf.len()) else {
            return false;
        };
        // An MPI_Status of any MPI fits (Open MPI 24 bytes, MPICH 20).
        let mut status = [0u64; 32];
        // SAFETY: `buf` holds `count` bytes, `status` is large enough; MPI
        // is initialised and not finalized (as in `send`).
        unsafe {
            (self.recv)(
                buf.as_mut_ptr().cast(),
                count,
                self.byte,
                from,
                TAG,
                self.comm,
                status.as_mut_ptr().cast(),
            ) == 0
        }
    }

    /// A length, then that many bytes, from rank `from`.
    pub(super) fn recv(&self, from: c_int) -> Option<Vec<u8>> {
        let mut len = [0u8; 8];
        if !self.recv_into(from, &mut len) {
            return None;
        }
        let n = usize::try_from(u64::from_le_bytes(len)).ok()?;
        let mut buf = vec![0u8; n];
        self.recv_into(from, &mut buf).then_some(buf)
    }
}

/// What travels up the tree besides the merger: the memory, I/O and MPI
/// profiles' mergers (`memprof`, `io`, `mpi`), threads, hosts.
struct Part {
    merger: drhook_merge::Merger,
    cols: [Option<drhook_merge::ColMerger>; 3],
    threads: u32,
    hosts: Vec<String>,
    more_hosts: bool,
}

/// Appends an optional column merger (a flag, a length, the bytes).
fn put_cols(o: &mut Vec<u8>, m: Option<&drhook_merge::ColMerger>) {
    match m {
        None => o.push(0),
        Some(m) => {
            let b = m.encode();
            o.push(1);
            o.extend_from_slice(&(b.len() as u64).to_le_bytes());
            o.extend_from_slice(&b);
        }
    }
}

impl Part {
    fn encode(&self) -> Vec<u8> {
        let m = self.merger.encode();
        let mut o = Vec::with_capacity(m.len() + 64);
        o.extend_from_slice(&(m.len() as u64).to_le_bytes());
        o.extend_from_slice(&m);
        for c in &self.cols {
            put_cols(&mut o, c.as_ref());
        }
        o.extend_from_slice(&self.threads.to_le_bytes());
        o.push(u8::from(self.more_hosts));
        o.extend_from_slice(&(self.hosts.len() as u32).to_le_bytes());
        for h in &self.hosts {
            o.extend_from_slice(&(h.len() as u32).to_le_bytes());
            o.extend_from_slice(h.as_bytes());
        }
        o
    }

    fn decode(b: &[u8]) -> Option<Part> {
        let mut at = 0usize;
        let mut take = |n: usize| -> Option<&[u8]> {
            let s = b.get(at..at.checked_add(n)?)?;
            at += n;
            Some(s)
        };
        let mlen = usize::try_from(u64::from_le_bytes(take(8)?.try_into().ok()?)).ok()?;
        let merger = drhook_merge::Merger::decode(take(mlen)?)?;
        let mut cols: [Option<drhook_merge::ColMerger>; 3] = [None, None, None];
        for c in &mut cols {
            if take(1)?[0] != 0 {
                let n = usize::try_from(u64::from_le_bytes(take(8)?.try_into().ok()?)).ok()?;
                *c = Some(drhook_merge::ColMerger::decode(take(n)?)?);
            }
        }
        let threads = u32::from_le_bytes(take(4)?.try_into().ok()?);
        let more_hosts = take(1)?[0] != 0;
        let nh = u32::from_le_bytes(take(4)?.try_into().ok()?);
        let mut hosts = Vec::new();
        for _ in 0..nh {
            let l = u32::from_le_bytes(take(4)?.try_into().ok()?) as usize;
            hosts.push(String::from_utf8_lossy(take(l)?).into_owned());
        }
        Some(Part {
            merger,
            cols,
            threads,
            hosts,
            more_hosts,
        })
    }

    fn fold(&mut self, o: Part) -> bool {
        if self.merger.combine(o.merger).is_err() {
            return false;
        }
        for (mine, theirs) in self.cols.iter_mut().zip(o.cols) {
            match (mine.as_mut(), theirs) {
                (Some(m), Some(t)) => {
                    if m.combine(t).is_err() {
                        return false;
                    }
                }
                // A rank without it (a mix of options?): the others' only.
                (None, Some(t)) => *mine = Some(t),
                (_, None) => {}
            }
        }
        self.threads = self.threads.max(o.threads);
        self.more_hosts |= o.more_hosts;
        self.hosts.extend(o.hosts);
        self.hosts.sort_unstable();
        self.hosts.dedup();
        if self.hosts.len() > MAX_HOSTS {
            self.hosts.truncate(MAX_HOSTS);
            self.more_hosts = true;
        }
        true
    }
}

fn hostname() -> String {
    let mut b = [0u8; 256];
    // SAFETY: a buffer of the length given.
    if unsafe { libc::gethostname(b.as_mut_ptr().cast(), b.len() - 1) } != 0 {
        return "?".into();
    }
    let n = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..n]).into_owned()
}

/// The first line of `PMPI_Get_library_version`.
fn library_version() -> String {
    let f = symbol(c"PMPI_Get_library_version");
    if f.is_null() {
        return "unknown (no MPI_Get_library_version)".into();
    }
    type Version = unsafe extern "C" fn(*mut u8, *mut c_int) -> c_int;
    // SAFETY: `int MPI_Get_library_version(char *, int *)`.
    let f = unsafe { std::mem::transmute::<*mut c_void, Version>(f) };
    // MPI_MAX_LIBRARY_VERSION_STRING: 256 (Open MPI), 8192 (MPICH).
    let mut b = vec![0u8; 8192];
    let mut n: c_int = 0;
    // SAFETY: a buffer as large as any MPI's maximum.
    if unsafe { f(b.as_mut_ptr(), &mut n) } != 0 {
        return "unknown".into();
    }
    let n = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    let s = String::from_utf8_lossy(&b[..n]);
    s.lines().next().unwrap_or("").trim().to_string()
}

fn command() -> String {
    let raw = std::fs::read("/proc/self/cmdline").unwrap_or_default();
    let args: Vec<String> = raw
        .split(|&c| c == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    drhook_merge::printable(&args.join(" ")).into_owned()
}

/// The reduction, on every rank (`rank` of `size`), after this rank's
/// profile was made and before `PMPI_Finalize`.
pub(crate) fn reduce(rank: c_int, size: c_int) {
    let Some(mpi) = Mpi::find() else {
        crate::sys::diag("DR_HOOK_OPT=reduce: PMPI_Send/PMPI_Recv not found: no job profile");
        return;
    };
    let t0 = Instant::now();
    let own = crate::engine::reduce_take();
    let started = own.as_ref().map(|p| p.started.clone()).unwrap_or_default();
    let cols = |b: Option<&Vec<u8>>| b.and_then(|b| drhook_merge::ColMerger::decode(b));
    let mut part = Part {
        merger: own
            .as_ref()
            .and_then(|p| drhook_merge::Merger::decode(&p.merger))
            .unwrap_or_default(),
        cols: [
            cols(own.as_ref().and_then(|p| p.mem.as_ref())),
            cols(own.as_ref().and_then(|p| p.io.as_ref())),
            cols(own.as_ref().and_then(|p| p.mpi.as_ref())),
        ],
        threads: own.as_ref().map_or(0, |p| p.threads),
        hosts: vec![hostname()],
        more_hosts: false,
    };
    drop(own);
    let (mut steps, mut largest) = (0u32, 0usize);
    let mut mask: c_int = 1;
    while mask < size {
        if rank & mask != 0 {
            let bytes = part.encode();
            if !mpi.send(rank - mask, &bytes) {
                crate::sys::diag("DR_HOOK_OPT=reduce: sending this rank's part failed");
            }
            return;
        }
        if rank + mask < size {
            steps += 1;
            match mpi.recv(rank + mask).as_deref().and_then(|b| {
                largest = largest.max(b.len());
                Part::decode(b)
            }) {
                Some(child) => {
                    if !part.fold(child) {
                        crate::sys::diag("DR_HOOK_OPT=reduce: ranks of different profile kinds");
                    }
                }
                None => crate::sys::diag("DR_HOOK_OPT=reduce: a rank's part was lost or damaged"),
            }
        }
        mask <<= 1;
    }
    // Rank 0: the whole job.
    let secs = t0.elapsed().as_secs_f64();
    let hosts = format!(
        "{}{} ({}{})",
        part.hosts.len(),
        if part.more_hosts { "+" } else { "" },
        part.hosts.join(", "),
        if part.more_hosts { ", ..." } else { "" }
    );
    let identity = vec![
        format!(
            "Dr.Hook job profile: {} tasks reduced inside MPI_Finalize (DR_HOOK_OPT=reduce)",
            part.merger.ntasks()
        ),
        format!("Command: {}", command()),
        format!("Ranks: {size}"),
        format!("Threads: {} per rank at most", part.threads),
        format!("Hosts: {hosts}"),
        format!("Started: {started} (rank 0)"),
        format!("MPI library: {}", library_version()),
        format!(
            "Reduction: {steps} receives on rank 0 (binomial tree), largest message {largest} bytes, {} routines, {secs:.6} s on rank 0",
            part.merger.nroutines()
        ),
    ];
    let mut merged = part.merger.encode();
    if let Err(e) = crate::engine::reduce_write(false, &merged, &identity) {
        crate::sys::diag(&format!("DR_HOOK_OPT=reduce: {e}"));
    }
    merged.clear();
    for c in part.cols.iter().flatten() {
        let mut id = identity.clone();
        id[0] = format!(
            "Dr.Hook job {} profile: {} tasks reduced inside MPI_Finalize (DR_HOOK_OPT=reduce)",
            c.kind().name(),
            c.ntasks()
        );
        if let Err(e) = crate::engine::reduce_write(true, &c.encode(), &id) {
            crate::sys::diag(&format!("DR_HOOK_OPT=reduce: {e}"));
        }
    }
}
