//! I/O profiling by interposition (`DR_HOOK_OPT=io`, seed 001 — ECIOPROF):
//! the POSIX and stdio calls of a program that was not written for it,
//! per file and per Dr.Hook routine.
//!
//! * Per file (by path, resolved once at open; descriptors the program got
//!   otherwise — standard streams, pipes, sockets — grouped by kind at
//!   their first use): opens, reads and writes with their bytes, access
//!   size histograms (Darshan's ten bins), sequential and consecutive
//!   accesses, smallest and largest operations, time inside read, write,
//!   metadata, open and close calls, first and last use, stdio calls and
//!   bytes, the `setvbuf` buffer size, mappings, and the routine
//!   (`NAME@thread`) that opened it. Written at the end of each process to
//!   `drhook.io.<task>` (the first process of a run) or
//!   `drhook.io.<task>.<command>.<pid>` (its children), a JSON document
//!   with the ancestry of the process; `drhook io` reports it.
//! * Per routine: every call is also an event of the engine's `io` metric
//!   (bytes, operations, nanoseconds), written in `drhook.prof.N-io`.
//!
//! Whether calls are recorded is decided once, at the first interposed
//! call, from `DR_HOOK` and `DR_HOOK_OPT` (the `io` token); otherwise each
//! wrapper is one load, a branch and the real call. Recording is lock-free
//! on the data path: a fixed table of descriptors (the file each refers
//! to) and a fixed table of files, both of atomics; a lock is taken only
//! when a file is opened (its path interned) and at the end. `errno` is
//! the real call's.
//!
//! Not seen: the C library's own calls to `read`/`write`/`close` from
//! inside stdio (they do not go through the dynamic linker): a stream's
//! bytes are counted as the program passed them to `fwrite`, `fputs`...,
//! not as the system calls that flushed them; the `printf` family; system
//! calls made without the C library.

use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use crate::tls;

// --- the decision -------------------------------------------------------------

const UNDECIDED: u8 = 0;
const OFF: u8 = 1;
const ON: u8 = 2;
static MODE: AtomicU8 = AtomicU8::new(UNDECIDED);

/// Guard bit: the layer's own I/O (the report) is not recorded.
const BUSY: u64 = 1 << 8;

/// Whether calls are recorded now on this thread.
#[inline(always)]
fn recording() -> bool {
    match MODE.load(Ordering::Relaxed) {
        ON => tls::get(tls::GUARD) & BUSY == 0,
        OFF => false,
        _ => decide() && tls::get(tls::GUARD) & BUSY == 0,
    }
}

/// Whether I/O is profiled in this process.
pub fn enabled() -> bool {
    match MODE.load(Ordering::Relaxed) {
        ON => true,
        OFF => false,
        _ => decide(),
    }
}

#[cold]
#[inline(never)]
fn decide() -> bool {
    let on = crate::alloc::dr_hook_on()
        && crate::alloc::env_value(b"DR_HOOK_OPT").is_some_and(|v| {
            v.split(|&c| matches!(c, b',' | b' ' | b'\t' | b'/'))
                .any(|t| t.eq_ignore_ascii_case(b"IO") || t.eq_ignore_ascii_case(b"IOPROF"))
        });
    let m = if on { ON } else { OFF };
    match MODE.compare_exchange(UNDECIDED, m, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => {
            if on {
                START_TICKS.store(ticks(), Ordering::Relaxed);
                START_NS.store(mono_ns(), Ordering::Relaxed);
            }
            on
        }
        Err(other) => other == ON,
    }
}

// --- clock ----------------------------------------------------------------------

static START_TICKS: AtomicU64 = AtomicU64::new(0);
static START_NS: AtomicU64 = AtomicU64::new(0);

/// A cheap time stamp (the time-stamp counter on x86-64, else ns).
#[inline(always)]
fn ticks() -> u64 {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: rdtsc has no preconditions.
    unsafe {
        std::arch::x86_64::_rdtsc()
    }
    #[cfg(not(target_arch = "x86_64"))]
    mono_ns()
}

pub(crate) fn mono_ns() -> u64 {
    // SAFETY: plain data written by the call.
    let mut t: libc::timespec = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut t) };
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// `mono_ns()` at the process's start (or its fork).
pub(crate) fn start_ns() -> u64 {
    START_NS.load(Ordering::Relaxed)
}

/// Nanoseconds per tick as the wrappers use it.
pub(crate) fn ns_per_tick_cached() -> f64 {
    NS_PER_TICK.get()
}

/// Nanoseconds per tick, from the stamps at the decision and now (1 for a
/// run too short to tell: never a wait).
fn ns_per_tick() -> f64 {
    if cfg!(not(target_arch = "x86_64")) {
        return 1.0;
    }
    let dt = ticks().saturating_sub(START_TICKS.load(Ordering::Relaxed));
    let dn = mono_ns().saturating_sub(START_NS.load(Ordering::Relaxed));
    if dt == 0 || dn == 0 {
        return 1.0;
    }
    dn as f64 / dt as f64
}

// --- tables ---------------------------------------------------------------------

/// Counters of one file, by index (their names in the report: [`c::NAMES`]).
#[allow(missing_docs)]
pub mod c {
    pub const OPENS: usize = 0;
    pub const CLOSES: usize = 1;
    pub const READS: usize = 2;
    pub const WRITES: usize = 3;
    pub const READ_BYTES: usize = 4;
    pub const WRITE_BYTES: usize = 5;
    pub const READ_T: usize = 6;
    pub const WRITE_T: usize = 7;
    pub const META_OPS: usize = 8;
    pub const META_T: usize = 9;
    pub const OPEN_T: usize = 10;
    pub const CLOSE_T: usize = 11;
    pub const SEQ_READS: usize = 12;
    pub const SEQ_WRITES: usize = 13;
    pub const CONSEC_READS: usize = 14;
    pub const CONSEC_WRITES: usize = 15;
    pub const MAX_READ: usize = 16;
    pub const MAX_WRITE: usize = 17;
    /// Smallest operation + 1 (0: none yet).
    pub const MIN_READ1: usize = 18;
    pub const MIN_WRITE1: usize = 19;
    pub const FIRST_T: usize = 20;
    pub const LAST_T: usize = 21;
    pub const MMAPS: usize = 22;
    pub const STDIO_READS: usize = 23;
    pub const STDIO_WRITES: usize = 24;
    pub const STDIO_READ_BYTES: usize = 25;
    pub const STDIO_WRITE_BYTES: usize = 26;
    pub const STDIO_OTHER: usize = 27;
    /// `setvbuf` size + 1 (0: never called).
    pub const BUFSIZE1: usize = 28;
    pub const BUFMODE: usize = 29;
    pub const SEEKS: usize = 30;
    pub const SYNCS: usize = 31;
    pub const HIST_READ: usize = 32;
    pub const HIST_WRITE: usize = 42;
    pub const N: usize = 52;
    /// Names in the report, by index (histograms apart).
    pub const NAMES: [&str; 32] = [
        "opens",
        "closes",
        "reads",
        "writes",
        "read_bytes",
        "write_bytes",
        "read_time",
        "write_time",
        "meta_ops",
        "meta_time",
        "open_time",
        "close_time",
        "seq_reads",
        "seq_writes",
        "consec_reads",
        "consec_writes",
        "max_read",
        "max_write",
        "min_read",
        "min_write",
        "first",
        "last",
        "mmaps",
        "stdio_reads",
        "stdio_writes",
        "stdio_read_bytes",
        "stdio_write_bytes",
        "stdio_other",
        "bufsize",
        "bufmode",
        "seeks",
        "syncs",
    ];
}

/// Files tracked by path (more go to the "other files" entry).
pub(crate) const MAX_FILES: usize = 4096;
/// Descriptors tracked (larger ones go to the "other files" entry).
const MAX_FD: usize = 1 << 16;

/// Routines counted per file by name (the bytes of the others are added
/// together).
const ROUTINE_SLOTS: usize = 8;

/// Per file: the bytes each routine moved — the first [`ROUTINE_SLOTS`]
/// routines to move any (their identity from the engine's `io_event`),
/// then all others together. No lock: a slot is claimed by one
/// compare-and-swap.
struct RoutineBytes {
    ids: [AtomicUsize; ROUTINE_SLOTS],
    bytes: [AtomicU64; ROUTINE_SLOTS],
    others: AtomicU64,
}

impl RoutineBytes {
    const fn new() -> Self {
        RoutineBytes {
            ids: [const { AtomicUsize::new(0) }; ROUTINE_SLOTS],
            bytes: [const { AtomicU64::new(0) }; ROUTINE_SLOTS],
            others: AtomicU64::new(0),
        }
    }

    /// `bytes` moved by routine `id` (0: no routine).
    #[inline]
    fn add(&self, id: usize, bytes: u64) {
        if id != 0 {
            for k in 0..ROUTINE_SLOTS {
                let s = self.ids[k].load(Ordering::Acquire);
                let mine = s == id
                    || (s == 0
                        && match self.ids[k].compare_exchange(
                            0,
                            id,
                            Ordering::AcqRel,
                            Ordering::Acquire,
                        ) {
                            Ok(_) => true,
                            Err(now) => now == id,
                        });
                if mine {
                    self.bytes[k].fetch_add(bytes, Ordering::Relaxed);
                    return;
                }
            }
        }
        self.others.fetch_add(bytes, Ordering::Relaxed);
    }

    fn clear(&self) {
        for k in 0..ROUTINE_SLOTS {
            self.ids[k].store(0, Ordering::Relaxed);
            self.bytes[k].store(0, Ordering::Relaxed);
        }
        self.others.store(0, Ordering::Relaxed);
    }
}

static ROUTINES: [RoutineBytes; MAX_FILES] = [const { RoutineBytes::new() }; MAX_FILES];

struct FileStats([AtomicU64; c::N]);

static FILES: [FileStats; MAX_FILES] =
    [const { FileStats([const { AtomicU64::new(0) }; c::N]) }; MAX_FILES];
/// The file of each descriptor (0: not known yet).
static FD_FILE: [AtomicU32; MAX_FD] = [const { AtomicU32::new(0) }; MAX_FD];
/// The end of each descriptor's last access (for sequential counts) and
/// its implicit position.
static FD_END: [AtomicU64; MAX_FD] = [const { AtomicU64::new(0) }; MAX_FD];
static FD_POS: [AtomicU64; MAX_FD] = [const { AtomicU64::new(0) }; MAX_FD];

/// Entries 1.. of the file table; entry 1 is "other files".
const OTHER_FILES: u32 = 1;

struct Names {
    paths: Vec<Vec<u8>>,
    openers: Vec<String>,
    by_path: HashMap<Vec<u8>, u32>,
}

static NAMES: Mutex<Option<Names>> = Mutex::new(None);

/// Metadata calls on paths (stat, access, unlink, rename, ...): count and
/// ticks, process-wide.
static PATH_META: [AtomicU64; 2] = [const { AtomicU64::new(0) }; 2];

/// The file entry for `path` (interned; the opener recorded the first
/// time).
fn intern(path: &[u8]) -> u32 {
    let mut g = NAMES.lock().unwrap_or_else(|p| p.into_inner());
    let n = g.get_or_insert_with(|| Names {
        paths: vec![Vec::new(), b"<other files>".to_vec()],
        openers: vec![String::new(), String::new()],
        by_path: HashMap::new(),
    });
    if let Some(&i) = n.by_path.get(path) {
        return i;
    }
    if n.paths.len() >= MAX_FILES {
        return OTHER_FILES;
    }
    let i = n.paths.len() as u32;
    n.paths.push(path.to_vec());
    n.openers.push(current_routine());
    n.by_path.insert(path.to_vec(), i);
    crate::iotrace::classify(i, path);
    i
}

/// The path of entry `i` (for the trace of its opens).
fn path_of(i: u32) -> Vec<u8> {
    let g = NAMES.lock().unwrap_or_else(|p| p.into_inner());
    g.as_ref()
        .and_then(|n| n.paths.get(i as usize).cloned())
        .unwrap_or_default()
}

fn current_routine() -> String {
    let mut buf = [0u8; 256];
    let h = crate::engine::hooks();
    let n = (h.current_routine)(buf.as_mut_ptr(), buf.len()).min(buf.len());
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// The absolute form of `path` (relative to the working directory, or to
/// `dirfd`'s directory for the `*at` calls); no symbolic link resolved.
fn absolute(dirfd: c_int, path: &CStr) -> Vec<u8> {
    let p = path.to_bytes();
    if p.first() == Some(&b'/') {
        return p.to_vec();
    }
    let base = if dirfd == libc::AT_FDCWD {
        std::env::current_dir()
            .map(|d| d.into_os_string().into_encoded_bytes())
            .unwrap_or_default()
    } else {
        std::fs::read_link(format!("/proc/self/fd/{dirfd}"))
            .map(|d| d.into_os_string().into_encoded_bytes())
            .unwrap_or_default()
    };
    let mut v = base;
    if !v.ends_with(b"/") {
        v.push(b'/');
    }
    v.extend_from_slice(p.strip_prefix(b"./").unwrap_or(p));
    v
}

/// The entry of a descriptor the program did not open through us: by its
/// path for a regular file or directory, else by kind.
#[cold]
fn classify(fd: c_int) -> u32 {
    let std_name = |fd: c_int| -> Vec<u8> {
        // A standard stream redirected to a file is that file.
        // SAFETY: plain data written by fstat.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: valid pointer.
        if unsafe { libc::fstat(fd, &mut st) } == 0 && st.st_mode & libc::S_IFMT == libc::S_IFREG {
            if let Ok(p) = std::fs::read_link(format!("/proc/self/fd/{fd}")) {
                return p.into_os_string().into_encoded_bytes();
            }
        }
        match fd {
            0 => b"<stdin>".to_vec(),
            1 => b"<stdout>".to_vec(),
            _ => b"<stderr>".to_vec(),
        }
    };
    let name: Vec<u8> = match fd {
        0..=2 => std_name(fd),
        _ => {
            // SAFETY: plain data written by fstat.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: valid pointer.
            let ok = unsafe { libc::fstat(fd, &mut st) } == 0;
            let kind = st.st_mode & libc::S_IFMT;
            if !ok {
                b"<unknown descriptors>".to_vec()
            } else if kind == libc::S_IFIFO {
                b"<pipes>".to_vec()
            } else if kind == libc::S_IFSOCK {
                b"<sockets>".to_vec()
            } else if kind == libc::S_IFCHR {
                b"<devices>".to_vec()
            } else {
                std::fs::read_link(format!("/proc/self/fd/{fd}"))
                    .map(|d| d.into_os_string().into_encoded_bytes())
                    .unwrap_or_else(|_| b"<unknown descriptors>".to_vec())
            }
        }
    };
    intern(&name)
}

/// The file entry of descriptor `fd` (classified at its first use).
#[inline]
fn file_of(fd: c_int) -> &'static FileStats {
    &FILES[file_index(fd) as usize]
}

/// The entry index of descriptor `fd` (classified at its first use).
#[inline]
fn file_index(fd: c_int) -> u32 {
    if fd >= 0 && (fd as usize) < MAX_FD {
        let f = FD_FILE[fd as usize].load(Ordering::Relaxed);
        if f != 0 {
            f
        } else {
            let f = guard(|| classify(fd)).unwrap_or(OTHER_FILES);
            FD_FILE[fd as usize].store(f, Ordering::Relaxed);
            f
        }
    } else {
        OTHER_FILES
    }
}

/// Runs `f` with the layer's own I/O not recorded.
fn guard<R>(f: impl FnOnce() -> R) -> Option<R> {
    tls::guarded(BUSY, f)
}

/// Runs `f` (always) with the calling thread's I/O not recorded: Dr.Hook's
/// own work in the lifecycle callbacks (a new thread's name read from the
/// symbol tables, the profiles written at the end) is not the program's.
pub(crate) fn unrecorded<R>(f: impl FnOnce() -> R) -> R {
    let before = tls::get(tls::GUARD) & BUSY;
    tls::set(tls::GUARD, tls::get(tls::GUARD) | BUSY);
    let r = f();
    tls::set(tls::GUARD, (tls::get(tls::GUARD) & !BUSY) | before);
    r
}

#[inline]
fn add(f: &FileStats, k: usize, v: u64) {
    f.0[k].fetch_add(v, Ordering::Relaxed);
}

#[inline]
fn raise(f: &FileStats, k: usize, v: u64) {
    if v > f.0[k].load(Ordering::Relaxed) {
        f.0[k].fetch_max(v, Ordering::Relaxed);
    }
}

#[inline]
fn lower1(f: &FileStats, k: usize, v: u64) {
    let cur = f.0[k].load(Ordering::Relaxed);
    if cur == 0 || v + 1 < cur {
        f.0[k].store(v + 1, Ordering::Relaxed);
    }
}

/// Darshan's access-size bins: 0-100, 100-1K, 1K-10K, 10K-100K,
/// 100K-1M, 1M-4M, 4M-10M, 10M-100M, 100M-1G, 1G+.
#[inline]
pub fn bin(n: u64) -> usize {
    const EDGES: [u64; 9] = [
        100,
        1024,
        10 * 1024,
        100 * 1024,
        1024 * 1024,
        4 * 1024 * 1024,
        10 * 1024 * 1024,
        100 * 1024 * 1024,
        1024 * 1024 * 1024,
    ];
    EDGES.iter().position(|&e| n < e).unwrap_or(9)
}

#[inline]
fn stamp(f: &FileStats, t1: u64) {
    if f.0[c::FIRST_T].load(Ordering::Relaxed) == 0 {
        let _ = f.0[c::FIRST_T].compare_exchange(0, t1, Ordering::Relaxed, Ordering::Relaxed);
    }
    raise(f, c::LAST_T, t1);
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Dir {
    Read,
    Write,
}

/// A read or write of `n` bytes (the call's result; negative: failed) on
/// `fd` at `off` (None: the descriptor's position, which then moves).
#[inline]
fn data(fd: c_int, dir: Dir, n: isize, off: Option<u64>, t0: u64, t1: u64) {
    let i = file_index(fd);
    if crate::iotrace::traced(i) {
        let op = if matches!(dir, Dir::Write) {
            b'w'
        } else {
            b'r'
        };
        let at = off.or_else(|| {
            (fd >= 0 && (fd as usize) < MAX_FD).then(|| FD_POS[fd as usize].load(Ordering::Relaxed))
        });
        // (The descriptor's position as this table follows it: exact for
        // a descriptor opened through us and not moved by another process.)
        let at = at.filter(|&p| p < u64::MAX / 4);
        let _ = guard(|| crate::iotrace::op(op, fd, n, at, t0, t1));
    }
    let f = &FILES[i as usize];
    let dt = t1.wrapping_sub(t0);
    let bytes = n.max(0) as u64;
    let (ops, b, t, seq, consec, max, min1, hist) = match dir {
        Dir::Read => (
            c::READS,
            c::READ_BYTES,
            c::READ_T,
            c::SEQ_READS,
            c::CONSEC_READS,
            c::MAX_READ,
            c::MIN_READ1,
            c::HIST_READ,
        ),
        Dir::Write => (
            c::WRITES,
            c::WRITE_BYTES,
            c::WRITE_T,
            c::SEQ_WRITES,
            c::CONSEC_WRITES,
            c::MAX_WRITE,
            c::MIN_WRITE1,
            c::HIST_WRITE,
        ),
    };
    add(f, ops, 1);
    add(f, b, bytes);
    add(f, t, dt);
    if n >= 0 {
        add(f, hist + bin(bytes), 1);
        raise(f, max, bytes);
        lower1(f, min1, bytes);
        if fd >= 0 && (fd as usize) < MAX_FD {
            let i = fd as usize;
            let at = match off {
                Some(o) => o,
                None => {
                    let p = FD_POS[i].load(Ordering::Relaxed);
                    FD_POS[i].store(p + bytes, Ordering::Relaxed);
                    p
                }
            };
            let end = FD_END[i].load(Ordering::Relaxed);
            if at == end {
                add(f, consec, 1);
                add(f, seq, 1);
            } else if at > end {
                add(f, seq, 1);
            }
            FD_END[i].store(at + bytes, Ordering::Relaxed);
        }
    }
    stamp(f, t1);
    let kind = if dir == Dir::Read { 0 } else { 1 };
    let routine =
        (crate::engine::hooks().io_event)(kind, bytes, (dt as f64 * NS_PER_TICK.get()) as u64);
    if bytes != 0 {
        ROUTINES[i as usize].add(routine, bytes);
    }
}

/// A metadata call on `fd` (seek, sync, truncate, stat): counted for the
/// file and the routine.
#[inline]
fn meta(fd: c_int, k: Option<usize>, t0: u64, t1: u64) {
    let f = file_of(fd);
    add(f, c::META_OPS, 1);
    add(f, c::META_T, t1.wrapping_sub(t0));
    if let Some(k) = k {
        add(f, k, 1);
    }
    stamp(f, t1);
    other_event(t0, t1);
}

#[inline]
fn other_event(t0: u64, t1: u64) {
    let _ = (crate::engine::hooks().io_event)(
        2,
        0,
        (t1.wrapping_sub(t0) as f64 * NS_PER_TICK.get()) as u64,
    );
}

/// A cached conversion factor for the per-routine nanoseconds (refreshed
/// now and then; exact figures are converted at the report).
struct NsPerTick(AtomicU64);
static NS_PER_TICK: NsPerTick = NsPerTick(AtomicU64::new(0));
impl NsPerTick {
    #[inline]
    fn get(&self) -> f64 {
        let v = self.0.load(Ordering::Relaxed);
        if v != 0 {
            return f64::from_bits(v);
        }
        let r = guard(ns_per_tick).unwrap_or(1.0);
        // Only once the run is long enough to calibrate well.
        if mono_ns().saturating_sub(START_NS.load(Ordering::Relaxed)) > 50_000_000 {
            self.0.store(r.to_bits(), Ordering::Relaxed);
        }
        r
    }
}

/// `fd` now refers to the file `path` (an open that succeeded).
fn opened(fd: c_int, path: Option<&CStr>, dirfd: c_int, flags: c_int, t0: u64, t1: u64) {
    if fd < 0 {
        other_event(t0, t1);
        return;
    }
    let i = guard(|| match path {
        Some(p) => intern(&absolute(dirfd, p)),
        None => classify(fd),
    })
    .unwrap_or(OTHER_FILES);
    if (fd as usize) < MAX_FD {
        FD_FILE[fd as usize].store(i, Ordering::Relaxed);
        let pos = if flags & libc::O_APPEND != 0 {
            u64::MAX / 2
        } else {
            0
        };
        FD_POS[fd as usize].store(pos, Ordering::Relaxed);
        FD_END[fd as usize].store(pos, Ordering::Relaxed);
    }
    if crate::iotrace::traced(i) {
        let _ = guard(|| crate::iotrace::open(fd, &path_of(i), flags, t0, t1));
    }
    let f = &FILES[i as usize];
    add(f, c::OPENS, 1);
    add(f, c::OPEN_T, t1.wrapping_sub(t0));
    stamp(f, t1);
    other_event(t0, t1);
}

/// `fd` is being closed (the call's time `t0..t1`).
fn closing(fd: c_int, t0: u64, t1: u64) {
    if fd < 0 {
        return;
    }
    let i = file_index(fd);
    if crate::iotrace::traced(i) {
        let _ = guard(|| crate::iotrace::op(b'c', fd, 0, None, t0, t1));
    }
    let f = &FILES[i as usize];
    add(f, c::CLOSES, 1);
    add(f, c::CLOSE_T, t1.wrapping_sub(t0));
    stamp(f, t1);
    if (fd as usize) < MAX_FD {
        FD_FILE[fd as usize].store(0, Ordering::Relaxed);
    }
    other_event(t0, t1);
}

/// `new` is a duplicate of `old` (dup, dup2, dup3, fcntl F_DUPFD).
fn duplicated(old: c_int, new: c_int) {
    if new < 0 || old < 0 || (new as usize) >= MAX_FD {
        return;
    }
    let f = if (old as usize) < MAX_FD {
        let f = FD_FILE[old as usize].load(Ordering::Relaxed);
        if f == 0 {
            guard(|| classify(old)).unwrap_or(OTHER_FILES)
        } else {
            f
        }
    } else {
        OTHER_FILES
    };
    FD_FILE[new as usize].store(f, Ordering::Relaxed);
}

fn errno() -> c_int {
    // SAFETY: the thread's errno.
    unsafe { *libc::__errno_location() }
}

fn set_errno(e: c_int) {
    // SAFETY: the thread's errno.
    unsafe { *libc::__errno_location() = e };
}

/// Runs the real call `f` timed, then `after` with the stamps, keeping
/// the real call's `errno`.
#[inline(always)]
fn timed<R: Copy>(f: impl FnOnce() -> R, after: impl FnOnce(R, u64, u64)) -> R {
    let t0 = ticks();
    let r = f();
    let t1 = ticks();
    let e = errno();
    after(r, t0, t1);
    set_errno(e);
    r
}

/// The body of a wrapper that only times the call: the real call `f(args)`
/// alone when calls are not recorded (or `skip` holds), else timed with
/// [`timed`] and `after` run on its result and stamps.
macro_rules! pass_or_time {
    ($f:ident($($a:expr),*), $after:expr $(, if $skip:expr)?) => {{
        if !recording() $(|| $skip)? {
            // SAFETY: the C contract of the wrapped function.
            return unsafe { $f($($a),*) };
        }
        // SAFETY: as above.
        timed(|| unsafe { $f($($a),*) }, $after)
    }};
}

// --- the wrappers' bodies ---------------------------------------------------------

/// The real functions of one mode.
pub trait Source {
    /// The real function called `name` (None when absent).
    fn get(slot: &'static Slot) -> Option<*mut c_void>;
}

/// One real function: its name and, in preload mode, its lookup.
pub struct Slot {
    /// The function's name.
    pub name: &'static CStr,
    /// The preload mode's lookup.
    pub real: crate::real::Real,
}

impl Slot {
    /// A slot for `name`.
    pub const fn new(name: &'static CStr) -> Slot {
        Slot {
            name,
            real: crate::real::Real::new(name),
        }
    }
}

/// The preload library's real functions (`dlsym(RTLD_NEXT)`).
pub struct Preload;
impl Source for Preload {
    #[inline(always)]
    fn get(slot: &'static Slot) -> Option<*mut c_void> {
        slot.real.get()
    }
}

macro_rules! real {
    ($s:ty, $slot:expr, $ty:ty) => {
        match <$s>::get(&$slot) {
            // SAFETY: the slot holds the function of this signature.
            Some(p) => unsafe { std::mem::transmute::<*mut c_void, $ty>(p) },
            None => crate::wrap::missing($slot.name),
        }
    };
}

/// The slots, one per wrapped function.
pub mod slots {
    use super::Slot;
    macro_rules! slots {
        ($($id:ident = $name:literal;)*) => {
            $(
                #[allow(missing_docs)]
                pub static $id: Slot = Slot::new($name);
            )*
        };
    }
    slots! {
        OPEN = c"open"; OPEN64 = c"open64"; OPENAT = c"openat"; OPENAT64 = c"openat64";
        CREAT = c"creat"; CREAT64 = c"creat64"; CLOSE = c"close";
        READ = c"read"; WRITE = c"write"; PREAD = c"pread"; PREAD64 = c"pread64";
        PWRITE = c"pwrite"; PWRITE64 = c"pwrite64"; READV = c"readv"; WRITEV = c"writev";
        PREADV = c"preadv"; PWRITEV = c"pwritev";
        LSEEK = c"lseek"; LSEEK64 = c"lseek64"; FSYNC = c"fsync"; FDATASYNC = c"fdatasync";
        FTRUNCATE = c"ftruncate"; FTRUNCATE64 = c"ftruncate64";
        DUP = c"dup"; DUP2 = c"dup2"; DUP3 = c"dup3"; FCNTL = c"fcntl"; FCNTL64 = c"fcntl64";
        MMAP = c"mmap"; MMAP64 = c"mmap64";
        STAT = c"stat"; LSTAT = c"lstat"; FSTAT = c"fstat"; ACCESS = c"access";
        UNLINK = c"unlink"; RENAME = c"rename";
        FOPEN = c"fopen"; FOPEN64 = c"fopen64"; FDOPEN = c"fdopen"; FREOPEN = c"freopen";
        FCLOSE = c"fclose"; FREAD = c"fread"; FWRITE = c"fwrite"; FPUTS = c"fputs";
        FGETS = c"fgets"; FPUTC = c"fputc"; FGETC = c"fgetc"; GETLINE = c"getline";
        FFLUSH = c"fflush"; FSEEK = c"fseek"; FTELL = c"ftell"; REWIND = c"rewind";
        SETVBUF = c"setvbuf"; SETBUF = c"setbuf";
        AIO_READ = c"aio_read"; AIO_WRITE = c"aio_write"; AIO_RETURN = c"aio_return";
        AIO_SUSPEND = c"aio_suspend"; AIO_ERROR = c"aio_error";
        OPEN_2 = c"__open_2"; OPEN64_2 = c"__open64_2"; OPENAT_2 = c"__openat_2";
        OPENAT64_2 = c"__openat64_2"; READ_CHK = c"__read_chk"; PREAD_CHK = c"__pread_chk";
        PREAD64_CHK = c"__pread64_chk"; FREAD_CHK = c"__fread_chk"; FGETS_CHK = c"__fgets_chk";
        COPY_FILE_RANGE = c"copy_file_range"; SENDFILE = c"sendfile"; SENDFILE64 = c"sendfile64";
    }
}

type OpenFn = unsafe extern "C" fn(*const c_char, c_int, libc::mode_t) -> c_int;
type OpenatFn = unsafe extern "C" fn(c_int, *const c_char, c_int, libc::mode_t) -> c_int;
type CreatFn = unsafe extern "C" fn(*const c_char, libc::mode_t) -> c_int;
type FdFn = unsafe extern "C" fn(c_int) -> c_int;
type RwFn = unsafe extern "C" fn(c_int, *mut c_void, usize) -> isize;
type PrwFn = unsafe extern "C" fn(c_int, *mut c_void, usize, libc::off_t) -> isize;
type VFn = unsafe extern "C" fn(c_int, *const libc::iovec, c_int) -> isize;
type PvFn = unsafe extern "C" fn(c_int, *const libc::iovec, c_int, libc::off_t) -> isize;
type SeekFn = unsafe extern "C" fn(c_int, libc::off_t, c_int) -> libc::off_t;
type TruncFn = unsafe extern "C" fn(c_int, libc::off_t) -> c_int;
type Dup2Fn = unsafe extern "C" fn(c_int, c_int) -> c_int;
type Dup3Fn = unsafe extern "C" fn(c_int, c_int, c_int) -> c_int;
type FcntlFn = unsafe extern "C" fn(c_int, c_int, usize) -> c_int;
type MmapFn =
    unsafe extern "C" fn(*mut c_void, usize, c_int, c_int, c_int, libc::off_t) -> *mut c_void;
type StatFn = unsafe extern "C" fn(*const c_char, *mut libc::stat) -> c_int;
type FstatFn = unsafe extern "C" fn(c_int, *mut libc::stat) -> c_int;
type AccessFn = unsafe extern "C" fn(*const c_char, c_int) -> c_int;
type PathFn = unsafe extern "C" fn(*const c_char) -> c_int;
type RenameFn = unsafe extern "C" fn(*const c_char, *const c_char) -> c_int;
type FopenFn = unsafe extern "C" fn(*const c_char, *const c_char) -> *mut libc::FILE;
type FdopenFn = unsafe extern "C" fn(c_int, *const c_char) -> *mut libc::FILE;
type FreopenFn =
    unsafe extern "C" fn(*const c_char, *const c_char, *mut libc::FILE) -> *mut libc::FILE;
type FileFn = unsafe extern "C" fn(*mut libc::FILE) -> c_int;
type FrwFn = unsafe extern "C" fn(*mut c_void, usize, usize, *mut libc::FILE) -> usize;
type FputsFn = unsafe extern "C" fn(*const c_char, *mut libc::FILE) -> c_int;
type FgetsFn = unsafe extern "C" fn(*mut c_char, c_int, *mut libc::FILE) -> *mut c_char;
type FputcFn = unsafe extern "C" fn(c_int, *mut libc::FILE) -> c_int;
type GetlineFn = unsafe extern "C" fn(*mut *mut c_char, *mut usize, *mut libc::FILE) -> isize;
type FseekFn = unsafe extern "C" fn(*mut libc::FILE, libc::c_long, c_int) -> c_int;
type FtellFn = unsafe extern "C" fn(*mut libc::FILE) -> libc::c_long;
type RewindFn = unsafe extern "C" fn(*mut libc::FILE);
type SetvbufFn = unsafe extern "C" fn(*mut libc::FILE, *mut c_char, c_int, usize) -> c_int;
type SetbufFn = unsafe extern "C" fn(*mut libc::FILE, *mut c_char);
type AiocbFn = unsafe extern "C" fn(*mut libc::aiocb) -> c_int;
type AioRetFn = unsafe extern "C" fn(*mut libc::aiocb) -> isize;
type AioErrFn = unsafe extern "C" fn(*const libc::aiocb) -> c_int;
type AioSuspendFn =
    unsafe extern "C" fn(*const *const libc::aiocb, c_int, *const libc::timespec) -> c_int;

use slots as s;

/// `open`, `open64` (`which`: the slot).
///
/// # Safety
/// The C contract.
pub unsafe fn open<S: Source>(
    which: &'static Slot,
    p: *const c_char,
    fl: c_int,
    m: libc::mode_t,
) -> c_int {
    let f = real!(S, *which, OpenFn);
    if !recording() || p.is_null() {
        // SAFETY: the C contract.
        return unsafe { f(p, fl, m) };
    }
    // SAFETY: the C contract; `p` is a C string.
    timed(
        || unsafe { f(p, fl, m) },
        |r, a, b| {
            opened(
                r,
                // SAFETY: a C string (the C contract).
                Some(unsafe { CStr::from_ptr(p) }),
                libc::AT_FDCWD,
                fl,
                a,
                b,
            )
        },
    )
}

/// `openat`, `openat64`.
///
/// # Safety
/// The C contract.
pub unsafe fn openat<S: Source>(
    which: &'static Slot,
    d: c_int,
    p: *const c_char,
    fl: c_int,
    m: libc::mode_t,
) -> c_int {
    let f = real!(S, *which, OpenatFn);
    if !recording() || p.is_null() {
        // SAFETY: the C contract.
        return unsafe { f(d, p, fl, m) };
    }
    // SAFETY: the C contract; `p` is a C string.
    timed(
        || unsafe { f(d, p, fl, m) },
        // SAFETY: a C string (the C contract).
        |r, a, b| opened(r, Some(unsafe { CStr::from_ptr(p) }), d, fl, a, b),
    )
}

/// `creat`, `creat64`.
///
/// # Safety
/// The C contract.
pub unsafe fn creat<S: Source>(which: &'static Slot, p: *const c_char, m: libc::mode_t) -> c_int {
    let f = real!(S, *which, CreatFn);
    if !recording() || p.is_null() {
        // SAFETY: the C contract.
        return unsafe { f(p, m) };
    }
    // SAFETY: the C contract; `p` is a C string.
    timed(
        || unsafe { f(p, m) },
        |r, a, b| {
            opened(
                r,
                // SAFETY: a C string (the C contract).
                Some(unsafe { CStr::from_ptr(p) }),
                libc::AT_FDCWD,
                0,
                a,
                b,
            )
        },
    )
}

type Open2Fn = unsafe extern "C" fn(*const c_char, c_int) -> c_int;
type Openat2Fn = unsafe extern "C" fn(c_int, *const c_char, c_int) -> c_int;
type ReadChkFn = unsafe extern "C" fn(c_int, *mut c_void, usize, usize) -> isize;
type PreadChkFn = unsafe extern "C" fn(c_int, *mut c_void, usize, libc::off_t, usize) -> isize;
type FreadChkFn = unsafe extern "C" fn(*mut c_void, usize, usize, usize, *mut libc::FILE) -> usize;
type FgetsChkFn = unsafe extern "C" fn(*mut c_char, usize, c_int, *mut libc::FILE) -> *mut c_char;
type CopyRangeFn =
    unsafe extern "C" fn(c_int, *mut i64, c_int, *mut i64, usize, libc::c_uint) -> isize;
type SendfileFn = unsafe extern "C" fn(c_int, c_int, *mut libc::off_t, usize) -> isize;

/// `__open_2`, `__open64_2` (`open` of programs built with
/// `_FORTIFY_SOURCE`).
///
/// # Safety
/// The C contract.
pub unsafe fn open_2<S: Source>(which: &'static Slot, p: *const c_char, fl: c_int) -> c_int {
    let f = real!(S, *which, Open2Fn);
    if !recording() || p.is_null() {
        // SAFETY: the C contract.
        return unsafe { f(p, fl) };
    }
    // SAFETY: the C contract.
    timed(
        || unsafe { f(p, fl) },
        // SAFETY: a C string (the C contract).
        |r, a, b| {
            opened(
                r,
                // SAFETY: a C string (the C contract).
                Some(unsafe { CStr::from_ptr(p) }),
                libc::AT_FDCWD,
                fl,
                a,
                b,
            )
        },
    )
}

/// `__openat_2`, `__openat64_2`.
///
/// # Safety
/// The C contract.
pub unsafe fn openat_2<S: Source>(
    which: &'static Slot,
    d: c_int,
    p: *const c_char,
    fl: c_int,
) -> c_int {
    let f = real!(S, *which, Openat2Fn);
    if !recording() || p.is_null() {
        // SAFETY: the C contract.
        return unsafe { f(d, p, fl) };
    }
    // SAFETY: the C contract.
    timed(
        || unsafe { f(d, p, fl) },
        // SAFETY: a C string (the C contract).
        |r, a, b| opened(r, Some(unsafe { CStr::from_ptr(p) }), d, fl, a, b),
    )
}

/// `__read_chk`.
///
/// # Safety
/// The C contract.
pub unsafe fn read_chk<S: Source>(fd: c_int, b: *mut c_void, n: usize, len: usize) -> isize {
    let f = real!(S, s::READ_CHK, ReadChkFn);
    pass_or_time!(f(fd, b, n, len), |r, a, t| data(
        fd,
        Dir::Read,
        r,
        None,
        a,
        t
    ))
}

/// `__pread_chk`, `__pread64_chk`.
///
/// # Safety
/// The C contract.
pub unsafe fn pread_chk<S: Source>(
    which: &'static Slot,
    fd: c_int,
    b: *mut c_void,
    n: usize,
    off: libc::off_t,
    len: usize,
) -> isize {
    let f = real!(S, *which, PreadChkFn);
    pass_or_time!(f(fd, b, n, off, len), |r, a, t| data(
        fd,
        Dir::Read,
        r,
        Some(off.max(0) as u64),
        a,
        t
    ))
}

/// `__fread_chk`.
///
/// # Safety
/// The C contract.
pub unsafe fn fread_chk<S: Source>(
    b: *mut c_void,
    len: usize,
    sz: usize,
    n: usize,
    fp: *mut libc::FILE,
) -> usize {
    let f = real!(S, s::FREAD_CHK, FreadChkFn);
    pass_or_time!(f(b, len, sz, n, fp), |r, a, t| stdio_data(
        fp,
        false,
        (r * sz) as u64,
        a,
        t
    ))
}

/// `__fgets_chk`.
///
/// # Safety
/// The C contract.
pub unsafe fn fgets_chk<S: Source>(
    b: *mut c_char,
    len: usize,
    n: c_int,
    fp: *mut libc::FILE,
) -> *mut c_char {
    let f = real!(S, s::FGETS_CHK, FgetsChkFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(b, len, n, fp) };
    }
    // SAFETY: the C contract.
    timed(
        || unsafe { f(b, len, n, fp) },
        // SAFETY: on success `r` is a C string.
        |r, a, t| {
            stdio_data(
                fp,
                false,
                if r.is_null() {
                    0
                } else {
                    // SAFETY: a C string (the C contract).
                    unsafe { libc::strlen(r) as u64 }
                },
                a,
                t,
            )
        },
    )
}

/// `copy_file_range`: the bytes are read from one file and written to the
/// other (one operation each).
///
/// # Safety
/// The C contract.
pub unsafe fn copy_file_range<S: Source>(
    i: c_int,
    io: *mut i64,
    o: c_int,
    oo: *mut i64,
    n: usize,
    fl: libc::c_uint,
) -> isize {
    let f = real!(S, s::COPY_FILE_RANGE, CopyRangeFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(i, io, o, oo, n, fl) };
    }
    // SAFETY: the offsets are null or the caller's.
    let (ai, ao) = unsafe {
        (
            io.as_ref().map(|x| *x as u64),
            oo.as_ref().map(|x| *x as u64),
        )
    };
    // SAFETY: the C contract.
    timed(
        || unsafe { f(i, io, o, oo, n, fl) },
        |r, a, t| {
            data(i, Dir::Read, r, ai, a, t);
            data(o, Dir::Write, r, ao, a, a);
        },
    )
}

/// `sendfile` (+64): read from `in`, written to `out`.
///
/// # Safety
/// The C contract.
pub unsafe fn sendfile<S: Source>(
    which: &'static Slot,
    o: c_int,
    i: c_int,
    off: *mut libc::off_t,
    n: usize,
) -> isize {
    let f = real!(S, *which, SendfileFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(o, i, off, n) };
    }
    // SAFETY: the offset is null or the caller's.
    let at = unsafe { off.as_ref().map(|x| *x as u64) };
    // SAFETY: the C contract.
    timed(
        || unsafe { f(o, i, off, n) },
        |r, a, t| {
            data(i, Dir::Read, r, at, a, t);
            data(o, Dir::Write, r, None, a, a);
        },
    )
}

/// `close`.
///
/// # Safety
/// The C contract.
pub unsafe fn close<S: Source>(fd: c_int) -> c_int {
    let f = real!(S, s::CLOSE, FdFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(fd) };
    }
    // Counted whatever the result (a close of a descriptor the program
    // never opened is the program's business: it fails as it would).
    // SAFETY: the C contract.
    timed(
        || unsafe { f(fd) },
        |r, a, b| {
            if r == 0 {
                closing(fd, a, b)
            } else {
                other_event(a, b)
            }
        },
    )
}

/// `read`, `write` (`dir`), through `which`.
///
/// # Safety
/// The C contract.
#[inline(always)]
pub unsafe fn rw<S: Source>(
    which: &'static Slot,
    write: bool,
    fd: c_int,
    b: *mut c_void,
    n: usize,
) -> isize {
    let f = real!(S, *which, RwFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(fd, b, n) };
    }
    // SAFETY: the C contract.
    unsafe { rw_recorded(f, write, fd, b, n) }
}

/// The recording part of [`rw`], out of line so that the pass-through
/// stays a few instructions.
///
/// # Safety
/// The C contract.
#[inline(never)]
unsafe fn rw_recorded(f: RwFn, write: bool, fd: c_int, b: *mut c_void, n: usize) -> isize {
    let dir = if write { Dir::Write } else { Dir::Read };
    // SAFETY: the C contract.
    timed(
        || unsafe { f(fd, b, n) },
        |r, a, t| data(fd, dir, r, None, a, t),
    )
}

/// `pread`, `pwrite` (+64).
///
/// # Safety
/// The C contract.
pub unsafe fn prw<S: Source>(
    which: &'static Slot,
    write: bool,
    fd: c_int,
    b: *mut c_void,
    n: usize,
    off: libc::off_t,
) -> isize {
    let f = real!(S, *which, PrwFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(fd, b, n, off) };
    }
    let dir = if write { Dir::Write } else { Dir::Read };
    // SAFETY: the C contract.
    timed(
        || unsafe { f(fd, b, n, off) },
        |r, a, t| data(fd, dir, r, Some(off.max(0) as u64), a, t),
    )
}

/// `readv`, `writev`.
///
/// # Safety
/// The C contract.
pub unsafe fn rwv<S: Source>(
    which: &'static Slot,
    write: bool,
    fd: c_int,
    v: *const libc::iovec,
    n: c_int,
) -> isize {
    let f = real!(S, *which, VFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(fd, v, n) };
    }
    let dir = if write { Dir::Write } else { Dir::Read };
    // SAFETY: the C contract.
    timed(
        || unsafe { f(fd, v, n) },
        |r, a, t| data(fd, dir, r, None, a, t),
    )
}

/// `preadv`, `pwritev`.
///
/// # Safety
/// The C contract.
pub unsafe fn prwv<S: Source>(
    which: &'static Slot,
    write: bool,
    fd: c_int,
    v: *const libc::iovec,
    n: c_int,
    off: libc::off_t,
) -> isize {
    let f = real!(S, *which, PvFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(fd, v, n, off) };
    }
    let dir = if write { Dir::Write } else { Dir::Read };
    // SAFETY: the C contract.
    timed(
        || unsafe { f(fd, v, n, off) },
        |r, a, t| data(fd, dir, r, Some(off.max(0) as u64), a, t),
    )
}

/// `lseek`, `lseek64`.
///
/// # Safety
/// The C contract.
pub unsafe fn lseek<S: Source>(
    which: &'static Slot,
    fd: c_int,
    off: libc::off_t,
    wh: c_int,
) -> libc::off_t {
    let f = real!(S, *which, SeekFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(fd, off, wh) };
    }
    // SAFETY: the C contract.
    timed(
        || unsafe { f(fd, off, wh) },
        |r, a, b| {
            if r >= 0 && fd >= 0 && (fd as usize) < MAX_FD {
                FD_POS[fd as usize].store(r as u64, Ordering::Relaxed);
            }
            meta(fd, Some(c::SEEKS), a, b)
        },
    )
}

/// `fsync`, `fdatasync`.
///
/// # Safety
/// The C contract.
pub unsafe fn sync<S: Source>(which: &'static Slot, fd: c_int) -> c_int {
    let f = real!(S, *which, FdFn);
    pass_or_time!(f(fd), |_, a, b| meta(fd, Some(c::SYNCS), a, b))
}

/// `ftruncate` (+64).
///
/// # Safety
/// The C contract.
pub unsafe fn ftruncate<S: Source>(which: &'static Slot, fd: c_int, len: libc::off_t) -> c_int {
    let f = real!(S, *which, TruncFn);
    pass_or_time!(f(fd, len), |_, a, b| meta(fd, None, a, b))
}

/// `fstat`.
///
/// # Safety
/// The C contract.
pub unsafe fn fstat<S: Source>(fd: c_int, st: *mut libc::stat) -> c_int {
    let f = real!(S, s::FSTAT, FstatFn);
    pass_or_time!(f(fd, st), |_, a, b| meta(fd, None, a, b))
}

fn path_meta(a: u64, b: u64) {
    PATH_META[0].fetch_add(1, Ordering::Relaxed);
    PATH_META[1].fetch_add(b.wrapping_sub(a), Ordering::Relaxed);
    other_event(a, b);
}

/// `stat`, `lstat`.
///
/// # Safety
/// The C contract.
pub unsafe fn stat<S: Source>(
    which: &'static Slot,
    p: *const c_char,
    st: *mut libc::stat,
) -> c_int {
    let f = real!(S, *which, StatFn);
    pass_or_time!(f(p, st), |_, a, b| path_meta(a, b))
}

/// `access`.
///
/// # Safety
/// The C contract.
pub unsafe fn access<S: Source>(p: *const c_char, m: c_int) -> c_int {
    let f = real!(S, s::ACCESS, AccessFn);
    pass_or_time!(f(p, m), |_, a, b| path_meta(a, b))
}

/// `unlink`.
///
/// # Safety
/// The C contract.
pub unsafe fn unlink<S: Source>(p: *const c_char) -> c_int {
    let f = real!(S, s::UNLINK, PathFn);
    pass_or_time!(f(p), |_, a, b| path_meta(a, b))
}

/// `rename`.
///
/// # Safety
/// The C contract.
pub unsafe fn rename<S: Source>(p: *const c_char, q: *const c_char) -> c_int {
    let f = real!(S, s::RENAME, RenameFn);
    pass_or_time!(f(p, q), |_, a, b| path_meta(a, b))
}

/// `dup`.
///
/// # Safety
/// The C contract.
pub unsafe fn dup<S: Source>(fd: c_int) -> c_int {
    let f = real!(S, s::DUP, FdFn);
    // SAFETY: the C contract.
    let r = unsafe { f(fd) };
    if recording() {
        let e = errno();
        duplicated(fd, r);
        set_errno(e);
    }
    r
}

/// `dup2`.
///
/// # Safety
/// The C contract.
pub unsafe fn dup2<S: Source>(fd: c_int, to: c_int) -> c_int {
    let f = real!(S, s::DUP2, Dup2Fn);
    // SAFETY: the C contract.
    let r = unsafe { f(fd, to) };
    if recording() && r >= 0 && r != fd {
        let e = errno();
        duplicated(fd, r);
        set_errno(e);
    }
    r
}

/// `dup3`.
///
/// # Safety
/// The C contract.
pub unsafe fn dup3<S: Source>(fd: c_int, to: c_int, fl: c_int) -> c_int {
    let f = real!(S, s::DUP3, Dup3Fn);
    // SAFETY: the C contract.
    let r = unsafe { f(fd, to, fl) };
    if recording() && r >= 0 {
        let e = errno();
        duplicated(fd, r);
        set_errno(e);
    }
    r
}

/// `fcntl` (+64): `F_DUPFD` and `F_DUPFD_CLOEXEC` duplicate. The third
/// argument is passed on as a word (every `fcntl` command takes an
/// integer or a pointer there).
///
/// # Safety
/// The C contract.
pub unsafe fn fcntl<S: Source>(which: &'static Slot, fd: c_int, cmd: c_int, arg: usize) -> c_int {
    let f = real!(S, *which, FcntlFn);
    // SAFETY: the C contract.
    let r = unsafe { f(fd, cmd, arg) };
    if (cmd == libc::F_DUPFD || cmd == libc::F_DUPFD_CLOEXEC) && recording() {
        let e = errno();
        duplicated(fd, r);
        set_errno(e);
    }
    r
}

/// `mmap` (+64): a mapping of a file is counted for the file (not as
/// bytes).
///
/// # Safety
/// The C contract.
pub unsafe fn mmap<S: Source>(
    which: &'static Slot,
    a: *mut c_void,
    n: usize,
    p: c_int,
    fl: c_int,
    fd: c_int,
    off: libc::off_t,
) -> *mut c_void {
    let f = real!(S, *which, MmapFn);
    // SAFETY: the C contract.
    let r = unsafe { f(a, n, p, fl, fd, off) };
    if fd >= 0 && fl & libc::MAP_ANONYMOUS == 0 && r != libc::MAP_FAILED && recording() {
        let e = errno();
        add(file_of(fd), c::MMAPS, 1);
        set_errno(e);
    }
    r
}

// --- stdio ---------------------------------------------------------------------------

#[inline]
fn fileno(fp: *mut libc::FILE) -> c_int {
    if fp.is_null() {
        return -1;
    }
    // SAFETY: a stream of the C library (fileno does not lock).
    unsafe { libc::fileno(fp) }
}

/// `fopen`, `fopen64`.
///
/// # Safety
/// The C contract.
pub unsafe fn fopen<S: Source>(
    which: &'static Slot,
    p: *const c_char,
    m: *const c_char,
) -> *mut libc::FILE {
    let f = real!(S, *which, FopenFn);
    if !recording() || p.is_null() {
        // SAFETY: the C contract.
        return unsafe { f(p, m) };
    }
    // SAFETY: the C contract; `p` a C string.
    timed(
        || unsafe { f(p, m) },
        |r, a, b| {
            if r.is_null() {
                other_event(a, b)
            } else {
                opened(
                    fileno(r),
                    // SAFETY: a C string (the C contract).
                    Some(unsafe { CStr::from_ptr(p) }),
                    libc::AT_FDCWD,
                    0,
                    a,
                    b,
                )
            }
        },
    )
}

/// `fdopen`: the stream on a descriptor already known.
///
/// # Safety
/// The C contract.
pub unsafe fn fdopen<S: Source>(fd: c_int, m: *const c_char) -> *mut libc::FILE {
    let f = real!(S, s::FDOPEN, FdopenFn);
    // SAFETY: the C contract.
    unsafe { f(fd, m) }
}

/// `freopen`: the stream's old file is closed, the new one opened.
///
/// # Safety
/// The C contract.
pub unsafe fn freopen<S: Source>(
    p: *const c_char,
    m: *const c_char,
    fp: *mut libc::FILE,
) -> *mut libc::FILE {
    let f = real!(S, s::FREOPEN, FreopenFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(p, m, fp) };
    }
    let old = fileno(fp);
    // SAFETY: the C contract.
    timed(
        || unsafe { f(p, m, fp) },
        |r, a, b| {
            if old >= 0 && (old as usize) < MAX_FD {
                closing(old, a, a);
            }
            if !r.is_null() && !p.is_null() {
                // SAFETY: `p` is a C string.
                opened(
                    fileno(r),
                    // SAFETY: a C string (the C contract).
                    Some(unsafe { CStr::from_ptr(p) }),
                    libc::AT_FDCWD,
                    0,
                    a,
                    b,
                )
            }
        },
    )
}

/// `fclose` (its `close` is the C library's own: counted here).
///
/// # Safety
/// The C contract.
pub unsafe fn fclose<S: Source>(fp: *mut libc::FILE) -> c_int {
    let f = real!(S, s::FCLOSE, FileFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(fp) };
    }
    let fd = fileno(fp);
    // SAFETY: the C contract.
    timed(|| unsafe { f(fp) }, |_, a, b| closing(fd, a, b))
}

#[inline]
fn stdio_data(fp: *mut libc::FILE, write: bool, bytes: u64, t0: u64, t1: u64) {
    let fd = fileno(fp);
    let i = file_index(fd);
    if crate::iotrace::traced(i) {
        let op = if write { b'W' } else { b'R' };
        let _ = guard(|| crate::iotrace::op(op, fd, bytes as isize, None, t0, t1));
    }
    let f = &FILES[i as usize];
    if write {
        add(f, c::STDIO_WRITES, 1);
        add(f, c::STDIO_WRITE_BYTES, bytes);
        add(f, c::WRITE_T, t1.wrapping_sub(t0));
    } else {
        add(f, c::STDIO_READS, 1);
        add(f, c::STDIO_READ_BYTES, bytes);
        add(f, c::READ_T, t1.wrapping_sub(t0));
    }
    stamp(f, t1);
    let routine = (crate::engine::hooks().io_event)(
        write as u32,
        bytes,
        (t1.wrapping_sub(t0) as f64 * NS_PER_TICK.get()) as u64,
    );
    if bytes != 0 {
        ROUTINES[i as usize].add(routine, bytes);
    }
}

#[inline]
fn stdio_other(fp: *mut libc::FILE, t0: u64, t1: u64) {
    let f = file_of(fileno(fp));
    add(f, c::STDIO_OTHER, 1);
    add(f, c::META_T, t1.wrapping_sub(t0));
    other_event(t0, t1);
}

/// `fread`, `fwrite`.
///
/// # Safety
/// The C contract.
#[inline(always)]
pub unsafe fn frw<S: Source>(
    which: &'static Slot,
    write: bool,
    b: *mut c_void,
    sz: usize,
    n: usize,
    fp: *mut libc::FILE,
) -> usize {
    let f = real!(S, *which, FrwFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(b, sz, n, fp) };
    }
    // SAFETY: the C contract.
    unsafe { frw_recorded(f, write, b, sz, n, fp) }
}

/// The recording part of [`frw`].
///
/// # Safety
/// The C contract.
#[inline(never)]
unsafe fn frw_recorded(
    f: FrwFn,
    write: bool,
    b: *mut c_void,
    sz: usize,
    n: usize,
    fp: *mut libc::FILE,
) -> usize {
    // SAFETY: the C contract.
    timed(
        || unsafe { f(b, sz, n, fp) },
        |r, a, t| stdio_data(fp, write, (r * sz) as u64, a, t),
    )
}

/// `fputs`.
///
/// # Safety
/// The C contract.
pub unsafe fn fputs<S: Source>(str: *const c_char, fp: *mut libc::FILE) -> c_int {
    let f = real!(S, s::FPUTS, FputsFn);
    if !recording() || str.is_null() {
        // SAFETY: the C contract.
        return unsafe { f(str, fp) };
    }
    // SAFETY: a C string.
    let n = unsafe { libc::strlen(str) } as u64;
    // SAFETY: the C contract.
    timed(
        || unsafe { f(str, fp) },
        |r, a, t| stdio_data(fp, true, if r >= 0 { n } else { 0 }, a, t),
    )
}

/// `fgets`.
///
/// # Safety
/// The C contract.
pub unsafe fn fgets<S: Source>(b: *mut c_char, n: c_int, fp: *mut libc::FILE) -> *mut c_char {
    let f = real!(S, s::FGETS, FgetsFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(b, n, fp) };
    }
    // SAFETY: the C contract; on success `b` holds a C string.
    timed(
        || unsafe { f(b, n, fp) },
        |r, a, t| {
            stdio_data(
                fp,
                false,
                if r.is_null() {
                    0
                } else {
                    // SAFETY: a C string (the C contract).
                    unsafe { libc::strlen(r) as u64 }
                },
                a,
                t,
            )
        },
    )
}

/// `fputc`.
///
/// # Safety
/// The C contract.
pub unsafe fn fputc<S: Source>(ch: c_int, fp: *mut libc::FILE) -> c_int {
    let f = real!(S, s::FPUTC, FputcFn);
    pass_or_time!(f(ch, fp), |r, a, t| stdio_data(
        fp,
        true,
        (r >= 0) as u64,
        a,
        t
    ))
}

/// `fgetc`.
///
/// # Safety
/// The C contract.
pub unsafe fn fgetc<S: Source>(fp: *mut libc::FILE) -> c_int {
    let f = real!(S, s::FGETC, FileFn);
    pass_or_time!(f(fp), |r, a, t| stdio_data(
        fp,
        false,
        (r >= 0) as u64,
        a,
        t
    ))
}

/// `getline`.
///
/// # Safety
/// The C contract.
pub unsafe fn getline<S: Source>(l: *mut *mut c_char, n: *mut usize, fp: *mut libc::FILE) -> isize {
    let f = real!(S, s::GETLINE, GetlineFn);
    pass_or_time!(f(l, n, fp), |r, a, t| stdio_data(
        fp,
        false,
        r.max(0) as u64,
        a,
        t
    ))
}

/// `fflush` (NULL: every stream).
///
/// # Safety
/// The C contract.
pub unsafe fn fflush<S: Source>(fp: *mut libc::FILE) -> c_int {
    let f = real!(S, s::FFLUSH, FileFn);
    pass_or_time!(f(fp), |_, a, t| stdio_other(fp, a, t), if fp.is_null())
}

/// `fseek`.
///
/// # Safety
/// The C contract.
pub unsafe fn fseek<S: Source>(fp: *mut libc::FILE, off: libc::c_long, wh: c_int) -> c_int {
    let f = real!(S, s::FSEEK, FseekFn);
    pass_or_time!(f(fp, off, wh), |_, a, t| stdio_other(fp, a, t))
}

/// `ftell`.
///
/// # Safety
/// The C contract.
pub unsafe fn ftell<S: Source>(fp: *mut libc::FILE) -> libc::c_long {
    let f = real!(S, s::FTELL, FtellFn);
    pass_or_time!(f(fp), |_, a, t| stdio_other(fp, a, t))
}

/// `rewind`.
///
/// # Safety
/// The C contract.
pub unsafe fn rewind<S: Source>(fp: *mut libc::FILE) {
    let f = real!(S, s::REWIND, RewindFn);
    pass_or_time!(f(fp), |_, a, t| stdio_other(fp, a, t))
}

/// `setvbuf`: the buffer size and mode chosen are reported per file
/// (seed 001: buffers not tuned to the file system's block size).
///
/// # Safety
/// The C contract.
pub unsafe fn setvbuf<S: Source>(
    fp: *mut libc::FILE,
    b: *mut c_char,
    mode: c_int,
    size: usize,
) -> c_int {
    let f = real!(S, s::SETVBUF, SetvbufFn);
    // SAFETY: the C contract.
    let r = unsafe { f(fp, b, mode, size) };
    if r == 0 && recording() {
        let e = errno();
        let file = file_of(fileno(fp));
        file.0[c::BUFSIZE1].store(size as u64 + 1, Ordering::Relaxed);
        file.0[c::BUFMODE].store(mode as u64 + 1, Ordering::Relaxed);
        set_errno(e);
    }
    r
}

/// `setbuf` (`setvbuf` with `BUFSIZ`, or unbuffered for NULL).
///
/// # Safety
/// The C contract.
pub unsafe fn setbuf<S: Source>(fp: *mut libc::FILE, b: *mut c_char) {
    let f = real!(S, s::SETBUF, SetbufFn);
    // SAFETY: the C contract.
    unsafe { f(fp, b) };
    if recording() {
        let e = errno();
        let file = file_of(fileno(fp));
        let (size, mode) = if b.is_null() {
            (0, libc::_IONBF)
        } else {
            (libc::BUFSIZ as u64, libc::_IOFBF)
        };
        file.0[c::BUFSIZE1].store(size + 1, Ordering::Relaxed);
        file.0[c::BUFMODE].store(mode as u64 + 1, Ordering::Relaxed);
        set_errno(e);
    }
}

// --- POSIX AIO ------------------------------------------------------------------------

/// Requests in flight: (aiocb address, issue ticks, write).
static AIO: Mutex<Vec<(usize, u64, bool)>> = Mutex::new(Vec::new());
/// Requests, bytes, completion ticks, maximum queue depth.
static AIO_STATS: [AtomicU64; 6] = [const { AtomicU64::new(0) }; 6];
const AIO_READS: usize = 0;
const AIO_WRITES: usize = 1;
const AIO_BYTES: usize = 2;
const AIO_T: usize = 3;
const AIO_DEPTH: usize = 4;
const AIO_DONE: usize = 5;

/// `aio_read`, `aio_write`.
///
/// # Safety
/// The C contract.
pub unsafe fn aio_submit<S: Source>(
    which: &'static Slot,
    write: bool,
    cb: *mut libc::aiocb,
) -> c_int {
    let f = real!(S, *which, AiocbFn);
    let t0 = ticks();
    // SAFETY: the C contract.
    let r = unsafe { f(cb) };
    if r == 0 && recording() && !cb.is_null() {
        let e = errno();
        guard(|| {
            let mut q = AIO.lock().unwrap_or_else(|p| p.into_inner());
            q.retain(|x| x.0 != cb as usize);
            q.push((cb as usize, t0, write));
            let depth = q.len() as u64;
            if depth > AIO_STATS[AIO_DEPTH].load(Ordering::Relaxed) {
                AIO_STATS[AIO_DEPTH].store(depth, Ordering::Relaxed);
            }
        });
        AIO_STATS[if write { AIO_WRITES } else { AIO_READS }].fetch_add(1, Ordering::Relaxed);
        // SAFETY: the program's control block.
        let (fd, n) = unsafe { ((*cb).aio_fildes, (*cb).aio_nbytes) };
        let file = file_of(fd);
        add(file, if write { c::WRITES } else { c::READS }, 1);
        set_errno(e);
        let _ = n;
    }
    r
}

/// `aio_return`: the request completes (its bytes and its time from
/// issue to completion).
///
/// # Safety
/// The C contract.
pub unsafe fn aio_return<S: Source>(cb: *mut libc::aiocb) -> isize {
    let f = real!(S, s::AIO_RETURN, AioRetFn);
    // SAFETY: the C contract.
    let r = unsafe { f(cb) };
    if recording() && !cb.is_null() {
        let e = errno();
        let t1 = ticks();
        let found = guard(|| {
            let mut q = AIO.lock().unwrap_or_else(|p| p.into_inner());
            let i = q.iter().position(|x| x.0 == cb as usize)?;
            Some(q.swap_remove(i))
        })
        .flatten();
        if let Some((_, t0, write)) = found {
            let bytes = r.max(0) as u64;
            AIO_STATS[AIO_BYTES].fetch_add(bytes, Ordering::Relaxed);
            AIO_STATS[AIO_T].fetch_add(t1.wrapping_sub(t0), Ordering::Relaxed);
            AIO_STATS[AIO_DONE].fetch_add(1, Ordering::Relaxed);
            // SAFETY: the program's control block.
            let fd = unsafe { (*cb).aio_fildes };
            let fi = file_index(fd);
            let file = &FILES[fi as usize];
            add(
                file,
                if write { c::WRITE_BYTES } else { c::READ_BYTES },
                bytes,
            );
            add(
                file,
                (if write { c::HIST_WRITE } else { c::HIST_READ }) + bin(bytes),
                1,
            );
            let routine = (crate::engine::hooks().io_event)(write as u32, bytes, 0);
            if bytes != 0 {
                ROUTINES[fi as usize].add(routine, bytes);
            }
        }
        set_errno(e);
    }
    r
}

/// `aio_error` (passed through).
///
/// # Safety
/// The C contract.
pub unsafe fn aio_error<S: Source>(cb: *const libc::aiocb) -> c_int {
    let f = real!(S, s::AIO_ERROR, AioErrFn);
    // SAFETY: the C contract.
    unsafe { f(cb) }
}

/// `aio_suspend` (timed as an other operation).
///
/// # Safety
/// The C contract.
pub unsafe fn aio_suspend<S: Source>(
    l: *const *const libc::aiocb,
    n: c_int,
    t: *const libc::timespec,
) -> c_int {
    let f = real!(S, s::AIO_SUSPEND, AioSuspendFn);
    pass_or_time!(f(l, n, t), |_, a, b| other_event(a, b))
}

// --- the process: ancestry, fork, the report ------------------------------------------

/// The monitor that writes the report at the end of each process.
pub struct IoMonitor;

/// The ancestry of this process (`pid-command` of each ancestor under the
/// same run, outermost first) and its own entry.
static ANCESTRY: Mutex<(String, String)> = Mutex::new((String::new(), String::new()));

const ANCESTRY_VAR: &str = "DRHOOK_IO_ANCESTRY";

impl crate::Monitor for IoMonitor {
    fn events(&self) -> crate::Events {
        crate::Events::PROCESS | crate::Events::FORK
    }

    fn init_process(&self, p: &crate::Process<'_>) {
        let _ = guard(|| {
            let mut before = std::env::var(ANCESTRY_VAR).unwrap_or_default();
            // After an `exec` the program continues the same process: it
            // takes that process's place (and report name); the image
            // before the `exec` wrote its report under a child's name.
            let last = before.rsplit('/').next().unwrap_or("");
            if last
                .split_once('-')
                .is_some_and(|(pid, _)| pid == p.pid.to_string())
            {
                let keep = before.len() - last.len();
                before.truncate(keep.saturating_sub(1));
            }
            let me = format!("{}-{}", p.pid, p.command);
            let next = if before.is_empty() {
                me.clone()
            } else {
                format!("{before}/{me}")
            };
            // SAFETY: before `main` (one thread) or in a fork child's
            // first moments (one thread).
            unsafe { std::env::set_var(ANCESTRY_VAR, &next) };
            *ANCESTRY.lock().unwrap_or_else(|e| e.into_inner()) = (before, me);
        });
    }

    fn post_fork(&self, side: crate::ForkSide) {
        if side != crate::ForkSide::Child {
            return;
        }
        // The child's report holds its own I/O: counts restart; the
        // descriptors keep their files.
        for f in FILES.iter() {
            for w in f.0.iter() {
                w.store(0, Ordering::Relaxed);
            }
        }
        for r in ROUTINES.iter() {
            r.clear();
        }
        for w in PATH_META.iter().chain(AIO_STATS.iter()) {
            w.store(0, Ordering::Relaxed);
        }
        START_TICKS.store(ticks(), Ordering::Relaxed);
        START_NS.store(mono_ns(), Ordering::Relaxed);
        crate::iotrace::after_fork_child();
    }

    fn fini_process(&self, how: crate::Ending) {
        let _ = guard(|| {
            if how == crate::Ending::Exec {
                // The program this process becomes takes the plain names.
                crate::iotrace::before_exec();
            }
            write_report(how)
        });
    }
}

/// Registers the monitor when I/O is profiled (process start).
pub(crate) fn register_if_enabled() {
    static DONE: AtomicU8 = AtomicU8::new(0);
    if enabled() && DONE.swap(1, Ordering::AcqRel) == 0 {
        static M: IoMonitor = IoMonitor;
        if crate::register(&M).is_err() {
            crate::diag("drhook io: no room for the I/O monitor; no I/O report");
        }
    }
}

fn task() -> u32 {
    let (t, _) = drhook::task::Task::from_lookup(&|k| std::env::var(k).ok());
    t.myproc
}

fn json_str(out: &mut String, b: &[u8]) {
    out.push('"');
    for ch in String::from_utf8_lossy(b).chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Where this process's file `<stem>.<task>` goes (the first process of
/// a run; `<stem>.<task>.<command>.<pid>` for the processes it started),
/// in `DRHOOK_IO_DIR` or the working directory.
pub(crate) fn output_path(stem: &str) -> std::path::PathBuf {
    let child = !ANCESTRY
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .0
        .is_empty();
    output_path_as(stem, child)
}

/// [`output_path`] with the plain name (`child` false) or a child's.
pub(crate) fn output_path_as(stem: &str, child: bool) -> std::path::PathBuf {
    let (_, me) = ANCESTRY.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let command = me.split_once('-').map(|x| x.1).unwrap_or_default();
    let task = task();
    let file = if !child {
        format!("{stem}.{task}")
    } else {
        format!("{stem}.{task}.{command}.{}", std::process::id())
    };
    let dir = std::env::var("DRHOOK_IO_DIR").unwrap_or_default();
    if dir.is_empty() {
        std::path::PathBuf::from(&file)
    } else {
        std::path::Path::new(&dir).join(&file)
    }
}

/// This process's ancestry, `pid-command` of each ancestor then of itself,
/// separated by `/`.
pub(crate) fn ancestry_text() -> String {
    let (before, me) = ANCESTRY.lock().unwrap_or_else(|e| e.into_inner()).clone();
    if before.is_empty() {
        me
    } else {
        format!("{before}/{me}")
    }
}

/// `, "routines": [{"routine": NAME, "bytes": N}, ...], "other_routines_bytes": N`
/// (most bytes first; the same routine on several threads added up).
fn routines_json(o: &mut String, r: &RoutineBytes) {
    use std::fmt::Write as _;
    let mut by_name: Vec<(String, u64)> = Vec::new();
    for k in 0..ROUTINE_SLOTS {
        let id = r.ids[k].load(Ordering::Acquire);
        if id == 0 {
            continue;
        }
        let mut buf = [0u8; 256];
        let n =
            (crate::engine::hooks().routine_name)(id, buf.as_mut_ptr(), buf.len()).min(buf.len());
        let name = String::from_utf8_lossy(&buf[..n]).into_owned();
        let b = r.bytes[k].load(Ordering::Relaxed);
        match by_name.iter_mut().find(|(x, _)| *x == name) {
            Some(e) => e.1 += b,
            None => by_name.push((name, b)),
        }
    }
    by_name.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    o.push_str(", \"routines\": [");
    for (k, (name, b)) in by_name.iter().enumerate() {
        o.push_str(if k == 0 {
            "{\"routine\": "
        } else {
            ", {\"routine\": "
        });
        json_str(o, name.as_bytes());
        let _ = write!(o, ", \"bytes\": {b}}}");
    }
    let _ = write!(
        o,
        "], \"other_routines_bytes\": {}",
        r.others.load(Ordering::Relaxed)
    );
}

fn write_report(how: crate::Ending) {
    use std::fmt::Write as _;
    let npt = ns_per_tick();
    let secs = |t: u64| t as f64 * npt * 1e-9;
    let start = START_TICKS.load(Ordering::Relaxed);
    let (before, me) = ANCESTRY.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let pid = std::process::id();
    let command = me
        .split_once('-')
        .map(|x| x.1.to_string())
        .unwrap_or_default();
    let task = task();
    let mut o = String::new();
    o.push_str("{\n  \"format\": \"drhook-io\",\n  \"version\": 1,\n  \"program\": ");
    json_str(
        &mut o,
        std::env::args().next().unwrap_or_default().as_bytes(),
    );
    let _ = write!(o, ",\n  \"command\": ");
    json_str(&mut o, command.as_bytes());
    let _ = write!(
        o,
        ",\n  \"pid\": {pid},\n  \"ppid\": {},\n  \"task\": {task},\n  \"ancestry\": [",
        std::os::unix::process::parent_id()
    );
    for (k, a) in before.split('/').filter(|s| !s.is_empty()).enumerate() {
        if k > 0 {
            o.push_str(", ");
        }
        json_str(&mut o, a.as_bytes());
    }
    let _ = write!(o, "],\n  \"ending\": ");
    json_str(&mut o, format!("{how:?}").as_bytes());
    let _ = write!(
        o,
        ",\n  \"seconds\": {:.6},\n  \"path_meta_ops\": {},\n  \"path_meta_time\": {:.6},\n",
        secs(ticks().saturating_sub(start)),
        PATH_META[0].load(Ordering::Relaxed),
        secs(PATH_META[1].load(Ordering::Relaxed))
    );
    let a = |k: usize| AIO_STATS[k].load(Ordering::Relaxed);
    let _ = writeln!(
        o,
        "  \"aio\": {{\"reads\": {}, \"writes\": {}, \"completed\": {}, \"bytes\": {}, \"time\": {:.6}, \"max_queue_depth\": {}}},",
        a(AIO_READS),
        a(AIO_WRITES),
        a(AIO_DONE),
        a(AIO_BYTES),
        secs(a(AIO_T)),
        a(AIO_DEPTH)
    );
    o.push_str("  \"files\": [");
    let names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    let mut first = true;
    if let Some(n) = names.as_ref() {
        for (i, path) in n.paths.iter().enumerate().skip(1) {
            let f = &FILES[i];
            let v = |k: usize| f.0[k].load(Ordering::Relaxed);
            let used = (0..c::N).any(|k| v(k) != 0);
            if !used {
                continue;
            }
            o.push_str(if first { "\n    {" } else { ",\n    {" });
            first = false;
            o.push_str("\"path\": ");
            json_str(&mut o, path);
            o.push_str(", \"opened_by\": ");
            json_str(&mut o, n.openers[i].as_bytes());
            routines_json(&mut o, &ROUTINES[i]);
            for (k, name) in c::NAMES.iter().enumerate() {
                let x = v(k);
                match k {
                    c::READ_T | c::WRITE_T | c::META_T | c::OPEN_T | c::CLOSE_T => {
                        let _ = write!(o, ", \"{name}\": {:.9}", secs(x));
                    }
                    c::FIRST_T | c::LAST_T => {
                        let _ = write!(
                            o,
                            ", \"{name}\": {:.6}",
                            if x == 0 {
                                0.0
                            } else {
                                secs(x.saturating_sub(start))
                            }
                        );
                    }
                    c::MIN_READ1 | c::MIN_WRITE1 | c::BUFSIZE1 | c::BUFMODE => {
                        if x == 0 {
                            let _ = write!(o, ", \"{name}\": null");
                        } else if k == c::BUFMODE {
                            let m = match x as c_int - 1 {
                                libc::_IOFBF => "full",
                                libc::_IOLBF => "line",
                                libc::_IONBF => "none",
                                _ => "?",
                            };
                            let _ = write!(o, ", \"{name}\": \"{m}\"");
                        } else {
                            let _ = write!(o, ", \"{name}\": {}", x - 1);
                        }
                    }
                    _ => {
                        let _ = write!(o, ", \"{name}\": {x}");
                    }
                }
            }
            for (label, at) in [("read_hist", c::HIST_READ), ("write_hist", c::HIST_WRITE)] {
                let _ = write!(o, ", \"{label}\": [");
                for b in 0..10 {
                    let _ = write!(o, "{}{}", if b > 0 { ", " } else { "" }, v(at + b));
                }
                o.push(']');
            }
            o.push('}');
        }
    }
    o.push_str("\n  ]\n}\n");
    // The image before an `exec` is a child's part of the process: the
    // program it becomes writes the plain name.
    let path = output_path_as(
        "drhook.io",
        !before.is_empty() || how == crate::Ending::Exec,
    );
    let tmp = path.with_extension(format!("tmp{pid}"));
    let written = std::fs::write(&tmp, o.as_bytes()).and_then(|()| std::fs::rename(&tmp, &path));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        let msg = format!("drhook io: cannot write '{}': {e}\n", path.display());
        // SAFETY: a plain write of our message to stderr.
        unsafe { libc::write(2, msg.as_ptr().cast(), msg.len()) };
    }
}

/// Exports the I/O functions (see the module documentation); `$p` is the
/// symbol prefix.
#[macro_export]
#[doc(hidden)]
macro_rules! __interpose_io {
    ($p:literal, preload) => {
        /// The I/O functions (I/O profile).
        #[doc(hidden)]
        // Each body forwards its arguments under the C contract of the
        // function it replaces.
        #[allow(
            clippy::missing_safety_doc,
            clippy::undocumented_unsafe_blocks,
            missing_docs
        )]
        pub mod __drhook_io_exports {
            use std::ffi::{c_char, c_int, c_long, c_void};
            use $crate::io;
            use $crate::io::slots as s;
            type S = io::Preload;

            #[unsafe(export_name = concat!($p, "open"))]
            pub unsafe extern "C" fn open(p: *const c_char, f: c_int, m: libc::mode_t) -> c_int {
                unsafe { io::open::<S>(&s::OPEN, p, f, m) }
            }
            #[unsafe(export_name = concat!($p, "open64"))]
            pub unsafe extern "C" fn open64(p: *const c_char, f: c_int, m: libc::mode_t) -> c_int {
                unsafe { io::open::<S>(&s::OPEN64, p, f, m) }
            }
            #[unsafe(export_name = concat!($p, "openat"))]
            pub unsafe extern "C" fn openat(
                d: c_int,
                p: *const c_char,
                f: c_int,
                m: libc::mode_t,
            ) -> c_int {
                unsafe { io::openat::<S>(&s::OPENAT, d, p, f, m) }
            }
            #[unsafe(export_name = concat!($p, "openat64"))]
            pub unsafe extern "C" fn openat64(
                d: c_int,
                p: *const c_char,
                f: c_int,
                m: libc::mode_t,
            ) -> c_int {
                unsafe { io::openat::<S>(&s::OPENAT64, d, p, f, m) }
            }
            #[unsafe(export_name = concat!($p, "creat"))]
            pub unsafe extern "C" fn creat(p: *const c_char, m: libc::mode_t) -> c_int {
                unsafe { io::creat::<S>(&s::CREAT, p, m) }
            }
            #[unsafe(export_name = concat!($p, "creat64"))]
            pub unsafe extern "C" fn creat64(p: *const c_char, m: libc::mode_t) -> c_int {
                unsafe { io::creat::<S>(&s::CREAT64, p, m) }
            }
            #[unsafe(export_name = concat!($p, "close"))]
            pub unsafe extern "C" fn close(fd: c_int) -> c_int {
                unsafe { io::close::<S>(fd) }
            }
            #[unsafe(export_name = concat!($p, "read"))]
            pub unsafe extern "C" fn read(fd: c_int, b: *mut c_void, n: usize) -> isize {
                unsafe { io::rw::<S>(&s::READ, false, fd, b, n) }
            }
            #[unsafe(export_name = concat!($p, "write"))]
            pub unsafe extern "C" fn write(fd: c_int, b: *const c_void, n: usize) -> isize {
                unsafe { io::rw::<S>(&s::WRITE, true, fd, b as *mut c_void, n) }
            }
            #[unsafe(export_name = concat!($p, "pread"))]
            pub unsafe extern "C" fn pread(
                fd: c_int,
                b: *mut c_void,
                n: usize,
                o: libc::off_t,
            ) -> isize {
                unsafe { io::prw::<S>(&s::PREAD, false, fd, b, n, o) }
            }
            #[unsafe(export_name = concat!($p, "pread64"))]
            pub unsafe extern "C" fn pread64(
                fd: c_int,
                b: *mut c_void,
                n: usize,
                o: libc::off_t,
            ) -> isize {
                unsafe { io::prw::<S>(&s::PREAD64, false, fd, b, n, o) }
            }
            #[unsafe(export_name = concat!($p, "pwrite"))]
            pub unsafe extern "C" fn pwrite(
                fd: c_int,
                b: *const c_void,
                n: usize,
                o: libc::off_t,
            ) -> isize {
                unsafe { io::prw::<S>(&s::PWRITE, true, fd, b as *mut c_void, n, o) }
            }
            #[unsafe(export_name = concat!($p, "pwrite64"))]
            pub unsafe extern "C" fn pwrite64(
                fd: c_int,
                b: *const c_void,
                n: usize,
                o: libc::off_t,
            ) -> isize {
                unsafe { io::prw::<S>(&s::PWRITE64, true, fd, b as *mut c_void, n, o) }
            }
            #[unsafe(export_name = concat!($p, "readv"))]
            pub unsafe extern "C" fn readv(fd: c_int, v: *const libc::iovec, n: c_int) -> isize {
                unsafe { io::rwv::<S>(&s::READV, false, fd, v, n) }
            }
            #[unsafe(export_name = concat!($p, "writev"))]
            pub unsafe extern "C" fn writev(fd: c_int, v: *const libc::iovec, n: c_int) -> isize {
                unsafe { io::rwv::<S>(&s::WRITEV, true, fd, v, n) }
            }
            #[unsafe(export_name = concat!($p, "preadv"))]
            pub unsafe extern "C" fn preadv(
                fd: c_int,
                v: *const libc::iovec,
                n: c_int,
                o: libc::off_t,
            ) -> isize {
                unsafe { io::prwv::<S>(&s::PREADV, false, fd, v, n, o) }
            }
            #[unsafe(export_name = concat!($p, "pwritev"))]
            pub unsafe extern "C" fn pwritev(
                fd: c_int,
                v: *const libc::iovec,
                n: c_int,
                o: libc::off_t,
            ) -> isize {
                unsafe { io::prwv::<S>(&s::PWRITEV, true, fd, v, n, o) }
            }
            #[unsafe(export_name = concat!($p, "lseek"))]
            pub unsafe extern "C" fn lseek(fd: c_int, o: libc::off_t, w: c_int) -> libc::off_t {
                unsafe { io::lseek::<S>(&s::LSEEK, fd, o, w) }
            }
            #[unsafe(export_name = concat!($p, "lseek64"))]
            pub unsafe extern "C" fn lseek64(fd: c_int, o: libc::off_t, w: c_int) -> libc::off_t {
                unsafe { io::lseek::<S>(&s::LSEEK64, fd, o, w) }
            }
            #[unsafe(export_name = concat!($p, "fsync"))]
            pub unsafe extern "C" fn fsync(fd: c_int) -> c_int {
                unsafe { io::sync::<S>(&s::FSYNC, fd) }
            }
            #[unsafe(export_name = concat!($p, "fdatasync"))]
            pub unsafe extern "C" fn fdatasync(fd: c_int) -> c_int {
                unsafe { io::sync::<S>(&s::FDATASYNC, fd) }
            }
            #[unsafe(export_name = concat!($p, "ftruncate"))]
            pub unsafe extern "C" fn ftruncate(fd: c_int, l: libc::off_t) -> c_int {
                unsafe { io::ftruncate::<S>(&s::FTRUNCATE, fd, l) }
            }
            #[unsafe(export_name = concat!($p, "ftruncate64"))]
            pub unsafe extern "C" fn ftruncate64(fd: c_int, l: libc::off_t) -> c_int {
                unsafe { io::ftruncate::<S>(&s::FTRUNCATE64, fd, l) }
            }
            #[unsafe(export_name = concat!($p, "fstat"))]
            pub unsafe extern "C" fn fstat(fd: c_int, st: *mut libc::stat) -> c_int {
                unsafe { io::fstat::<S>(fd, st) }
            }
            #[unsafe(export_name = concat!($p, "stat"))]
            pub unsafe extern "C" fn stat(p: *const c_char, st: *mut libc::stat) -> c_int {
                unsafe { io::stat::<S>(&s::STAT, p, st) }
            }
            #[unsafe(export_name = concat!($p, "lstat"))]
            pub unsafe extern "C" fn lstat(p: *const c_char, st: *mut libc::stat) -> c_int {
                unsafe { io::stat::<S>(&s::LSTAT, p, st) }
            }
            #[unsafe(export_name = concat!($p, "access"))]
            pub unsafe extern "C" fn access(p: *const c_char, m: c_int) -> c_int {
                unsafe { io::access::<S>(p, m) }
            }
            #[unsafe(export_name = concat!($p, "unlink"))]
            pub unsafe extern "C" fn unlink(p: *const c_char) -> c_int {
                unsafe { io::unlink::<S>(p) }
            }
            #[unsafe(export_name = concat!($p, "rename"))]
            pub unsafe extern "C" fn rename(p: *const c_char, q: *const c_char) -> c_int {
                unsafe { io::rename::<S>(p, q) }
            }
            #[unsafe(export_name = concat!($p, "dup"))]
            pub unsafe extern "C" fn dup(fd: c_int) -> c_int {
                unsafe { io::dup::<S>(fd) }
            }
            #[unsafe(export_name = concat!($p, "dup2"))]
            pub unsafe extern "C" fn dup2(fd: c_int, t: c_int) -> c_int {
                unsafe { io::dup2::<S>(fd, t) }
            }
            #[unsafe(export_name = concat!($p, "dup3"))]
            pub unsafe extern "C" fn dup3(fd: c_int, t: c_int, f: c_int) -> c_int {
                unsafe { io::dup3::<S>(fd, t, f) }
            }
            #[unsafe(export_name = concat!($p, "fcntl"))]
            pub unsafe extern "C" fn fcntl(fd: c_int, cmd: c_int, a: usize) -> c_int {
                unsafe { io::fcntl::<S>(&s::FCNTL, fd, cmd, a) }
            }
            #[unsafe(export_name = concat!($p, "fcntl64"))]
            pub unsafe extern "C" fn fcntl64(fd: c_int, cmd: c_int, a: usize) -> c_int {
                unsafe { io::fcntl::<S>(&s::FCNTL64, fd, cmd, a) }
            }
            #[unsafe(export_name = concat!($p, "mmap"))]
            pub unsafe extern "C" fn mmap(
                a: *mut c_void,
                n: usize,
                p: c_int,
                f: c_int,
                fd: c_int,
                o: libc::off_t,
            ) -> *mut c_void {
                unsafe { io::mmap::<S>(&s::MMAP, a, n, p, f, fd, o) }
            }
            #[unsafe(export_name = concat!($p, "mmap64"))]
            pub unsafe extern "C" fn mmap64(
                a: *mut c_void,
                n: usize,
                p: c_int,
                f: c_int,
                fd: c_int,
                o: libc::off_t,
            ) -> *mut c_void {
                unsafe { io::mmap::<S>(&s::MMAP64, a, n, p, f, fd, o) }
            }
            #[unsafe(export_name = concat!($p, "fopen"))]
            pub unsafe extern "C" fn fopen(p: *const c_char, m: *const c_char) -> *mut libc::FILE {
                unsafe { io::fopen::<S>(&s::FOPEN, p, m) }
            }
            #[unsafe(export_name = concat!($p, "fopen64"))]
            pub unsafe extern "C" fn fopen64(
                p: *const c_char,
                m: *const c_char,
            ) -> *mut libc::FILE {
                unsafe { io::fopen::<S>(&s::FOPEN64, p, m) }
            }
            #[unsafe(export_name = concat!($p, "fdopen"))]
            pub unsafe extern "C" fn fdopen(fd: c_int, m: *const c_char) -> *mut libc::FILE {
                unsafe { io::fdopen::<S>(fd, m) }
            }
            #[unsafe(export_name = concat!($p, "freopen"))]
            pub unsafe extern "C" fn freopen(
                p: *const c_char,
                m: *const c_char,
                f: *mut libc::FILE,
            ) -> *mut libc::FILE {
                unsafe { io::freopen::<S>(p, m, f) }
            }
            #[unsafe(export_name = concat!($p, "fclose"))]
            pub unsafe extern "C" fn fclose(f: *mut libc::FILE) -> c_int {
                unsafe { io::fclose::<S>(f) }
            }
            #[unsafe(export_name = concat!($p, "fread"))]
            pub unsafe extern "C" fn fread(
                b: *mut c_void,
                z: usize,
                n: usize,
                f: *mut libc::FILE,
            ) -> usize {
                unsafe { io::frw::<S>(&s::FREAD, false, b, z, n, f) }
            }
            #[unsafe(export_name = concat!($p, "fwrite"))]
            pub unsafe extern "C" fn fwrite(
                b: *const c_void,
                z: usize,
                n: usize,
                f: *mut libc::FILE,
            ) -> usize {
                unsafe { io::frw::<S>(&s::FWRITE, true, b as *mut c_void, z, n, f) }
            }
            #[unsafe(export_name = concat!($p, "fputs"))]
            pub unsafe extern "C" fn fputs(t: *const c_char, f: *mut libc::FILE) -> c_int {
                unsafe { io::fputs::<S>(t, f) }
            }
            #[unsafe(export_name = concat!($p, "fgets"))]
            pub unsafe extern "C" fn fgets(
                b: *mut c_char,
                n: c_int,
                f: *mut libc::FILE,
            ) -> *mut c_char {
                unsafe { io::fgets::<S>(b, n, f) }
            }
            #[unsafe(export_name = concat!($p, "fputc"))]
            pub unsafe extern "C" fn fputc(ch: c_int, f: *mut libc::FILE) -> c_int {
                unsafe { io::fputc::<S>(ch, f) }
            }
            #[unsafe(export_name = concat!($p, "fgetc"))]
            pub unsafe extern "C" fn fgetc(f: *mut libc::FILE) -> c_int {
                unsafe { io::fgetc::<S>(f) }
            }
            #[unsafe(export_name = concat!($p, "getline"))]
            pub unsafe extern "C" fn getline(
                l: *mut *mut c_char,
                n: *mut usize,
                f: *mut libc::FILE,
            ) -> isize {
                unsafe { io::getline::<S>(l, n, f) }
            }
            #[unsafe(export_name = concat!($p, "fflush"))]
            pub unsafe extern "C" fn fflush(f: *mut libc::FILE) -> c_int {
                unsafe { io::fflush::<S>(f) }
            }
            #[unsafe(export_name = concat!($p, "fseek"))]
            pub unsafe extern "C" fn fseek(f: *mut libc::FILE, o: c_long, w: c_int) -> c_int {
                unsafe { io::fseek::<S>(f, o, w) }
            }
            #[unsafe(export_name = concat!($p, "ftell"))]
            pub unsafe extern "C" fn ftell(f: *mut libc::FILE) -> c_long {
                unsafe { io::ftell::<S>(f) }
            }
            #[unsafe(export_name = concat!($p, "rewind"))]
            pub unsafe extern "C" fn rewind(f: *mut libc::FILE) {
                unsafe { io::rewind::<S>(f) }
            }
            #[unsafe(export_name = concat!($p, "setvbuf"))]
            pub unsafe extern "C" fn setvbuf(
                f: *mut libc::FILE,
                b: *mut c_char,
                m: c_int,
                n: usize,
            ) -> c_int {
                unsafe { io::setvbuf::<S>(f, b, m, n) }
            }
            #[unsafe(export_name = concat!($p, "setbuf"))]
            pub unsafe extern "C" fn setbuf(f: *mut libc::FILE, b: *mut c_char) {
                unsafe { io::setbuf::<S>(f, b) }
            }
            #[unsafe(export_name = concat!($p, "aio_read"))]
            pub unsafe extern "C" fn aio_read(cb: *mut libc::aiocb) -> c_int {
                unsafe { io::aio_submit::<S>(&s::AIO_READ, false, cb) }
            }
            #[unsafe(export_name = concat!($p, "aio_write"))]
            pub unsafe extern "C" fn aio_write(cb: *mut libc::aiocb) -> c_int {
                unsafe { io::aio_submit::<S>(&s::AIO_WRITE, true, cb) }
            }
            #[unsafe(export_name = concat!($p, "aio_return"))]
            pub unsafe extern "C" fn aio_return(cb: *mut libc::aiocb) -> isize {
                unsafe { io::aio_return::<S>(cb) }
            }
            #[unsafe(export_name = concat!($p, "aio_error"))]
            pub unsafe extern "C" fn aio_error(cb: *const libc::aiocb) -> c_int {
                unsafe { io::aio_error::<S>(cb) }
            }
            #[unsafe(export_name = concat!($p, "__open_2"))]
            pub unsafe extern "C" fn open_2(p: *const c_char, f: c_int) -> c_int {
                unsafe { io::open_2::<S>(&s::OPEN_2, p, f) }
            }
            #[unsafe(export_name = concat!($p, "__open64_2"))]
            pub unsafe extern "C" fn open64_2(p: *const c_char, f: c_int) -> c_int {
                unsafe { io::open_2::<S>(&s::OPEN64_2, p, f) }
            }
            #[unsafe(export_name = concat!($p, "__openat_2"))]
            pub unsafe extern "C" fn openat_2(d: c_int, p: *const c_char, f: c_int) -> c_int {
                unsafe { io::openat_2::<S>(&s::OPENAT_2, d, p, f) }
            }
            #[unsafe(export_name = concat!($p, "__openat64_2"))]
            pub unsafe extern "C" fn openat64_2(d: c_int, p: *const c_char, f: c_int) -> c_int {
                unsafe { io::openat_2::<S>(&s::OPENAT64_2, d, p, f) }
            }
            #[unsafe(export_name = concat!($p, "__read_chk"))]
            pub unsafe extern "C" fn read_chk(
                fd: c_int,
                b: *mut c_void,
                n: usize,
                l: usize,
            ) -> isize {
                unsafe { io::read_chk::<S>(fd, b, n, l) }
            }
            #[unsafe(export_name = concat!($p, "__pread_chk"))]
            pub unsafe extern "C" fn pread_chk(
                fd: c_int,
                b: *mut c_void,
                n: usize,
                o: libc::off_t,
                l: usize,
            ) -> isize {
                unsafe { io::pread_chk::<S>(&s::PREAD_CHK, fd, b, n, o, l) }
            }
            #[unsafe(export_name = concat!($p, "__pread64_chk"))]
            pub unsafe extern "C" fn pread64_chk(
                fd: c_int,
                b: *mut c_void,
                n: usize,
                o: libc::off_t,
                l: usize,
            ) -> isize {
                unsafe { io::pread_chk::<S>(&s::PREAD64_CHK, fd, b, n, o, l) }
            }
            #[unsafe(export_name = concat!($p, "__fread_chk"))]
            pub unsafe extern "C" fn fread_chk(
                b: *mut c_void,
                l: usize,
                z: usize,
                n: usize,
                f: *mut libc::FILE,
            ) -> usize {
                unsafe { io::fread_chk::<S>(b, l, z, n, f) }
            }
            #[unsafe(export_name = concat!($p, "__fgets_chk"))]
            pub unsafe extern "C" fn fgets_chk(
                b: *mut c_char,
                l: usize,
                n: c_int,
                f: *mut libc::FILE,
            ) -> *mut c_char {
                unsafe { io::fgets_chk::<S>(b, l, n, f) }
            }
            #[unsafe(export_name = concat!($p, "copy_file_range"))]
            pub unsafe extern "C" fn copy_file_range(
                i: c_int,
                io_: *mut i64,
                o: c_int,
                oo: *mut i64,
                n: usize,
                f: libc::c_uint,
            ) -> isize {
                unsafe { io::copy_file_range::<S>(i, io_, o, oo, n, f) }
            }
            #[unsafe(export_name = concat!($p, "sendfile"))]
            pub unsafe extern "C" fn sendfile(
                o: c_int,
                i: c_int,
                off: *mut libc::off_t,
                n: usize,
            ) -> isize {
                unsafe { io::sendfile::<S>(&s::SENDFILE, o, i, off, n) }
            }
            #[unsafe(export_name = concat!($p, "sendfile64"))]
            pub unsafe extern "C" fn sendfile64(
                o: c_int,
                i: c_int,
                off: *mut libc::off_t,
                n: usize,
            ) -> isize {
                unsafe { io::sendfile::<S>(&s::SENDFILE64, o, i, off, n) }
            }
            #[unsafe(export_name = concat!($p, "aio_suspend"))]
            pub unsafe extern "C" fn aio_suspend(
                l: *const *const libc::aiocb,
                n: c_int,
                t: *const libc::timespec,
            ) -> c_int {
                unsafe { io::aio_suspend::<S>(l, n, t) }
            }
        }
    };
    ($p:literal, wrap) => {};
}
