//! Watch points: the registry, the check at routine boundaries and its
//! report (the reference's `c_drhook_watch_` / `check_watch`; the per-call
//! mechanism is the stamped metric of `metrics::watch`).
//!
//! A watch point is a memory range given by the program (an array, a
//! scalar); its checksum (the reference's, POSIX `cksum`) is taken when it
//! is set and compared at every enter and exit of every instrumented
//! routine on every thread while it is active. A change prints
//!
//! ```text
//! PREFIX TIMESTR [check_watch@watch.rs:NN] ***Error: Watch point 'NAME' value(s) changed at address 0x... (N bytes [#M values]) -- when entering routine R : new crc32=0x...
//! ```
//!
//! (`***Warning` when it does not abort), the values (up to
//! `DR_HOOK_WATCH_PRINT_MAX`), the calling tree once per check, and then
//! aborts through Dr.Hook's abort if the watch point asks for it;
//! otherwise the new checksum is kept, so each change is reported once.
//! Checks are serialised by one lock, as the reference's global lock.

use std::sync::Mutex;
use std::sync::atomic::Ordering;

use crate::metrics::watch::{ACTIVE, cksum};

/// How the values of a watch point are printed (the reference's keys).
pub mod key {
    /// Do not print values.
    pub const NONE: i32 = 0;
    /// 4-byte LOGICALs.
    pub const LOG: i32 = 1;
    /// Characters.
    pub const CHAR: i32 = 2;
    /// 4-byte integers.
    pub const I4: i32 = 4;
    /// 8-byte integers.
    pub const I8: i32 = 8;
    /// 4-byte reals.
    pub const R4: i32 = 16;
    /// 8-byte reals.
    pub const R8: i32 = 32;
}

struct Point {
    name: String,
    addr: usize,
    nbytes: usize,
    crc: u32,
    active: bool,
    abort: bool,
    printkey: i32,
    nvals: usize,
}

static POINTS: Mutex<Vec<Point>> = Mutex::new(Vec::new());

/// The watch points' lock, held across a `fork` (the engine's
/// `pthread_atfork` handlers) so that a child never inherits it held.
pub(crate) struct ForkLock(#[allow(dead_code)] std::sync::MutexGuard<'static, Vec<Point>>);

/// Takes the watch points' lock for a `fork` (see [`ForkLock`]).
pub(crate) fn lock_for_fork() -> ForkLock {
    ForkLock(POINTS.lock().unwrap_or_else(|p| p.into_inner()))
}

/// Called when the first watch point becomes active (`runtime` turns the
/// stampers on).
static ON_FIRST: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

/// Installs what makes enter and exit call the checks (`runtime`).
pub(crate) fn set_enabler(f: fn()) {
    let _ = ON_FIRST.set(f);
}

/// A watch point to set (see [`set`]).
pub struct WatchSpec<'a> {
    /// Active (`false` switches a known range off).
    pub active: bool,
    /// Name shown in messages.
    pub name: &'a str,
    /// First byte.
    pub addr: *const u8,
    /// Length in bytes.
    pub nbytes: usize,
    /// Abort when it changes (else warn and go on).
    pub abort: bool,
    /// How to print values ([`key`]).
    pub printkey: i32,
    /// Number of values.
    pub nvals: usize,
    /// Print the calling tree now.
    pub traceback_now: bool,
}

/// Sets (or re-sets, by address) a watch point and prints the reference's
/// `***Warning: Watch point 'NAME' set at address ...` line, its values and,
/// if asked, the calling tree.
///
/// # Safety
/// `spec.addr` must be readable for `spec.nbytes` bytes for as long as the
/// watch point is active (the program's own array).
pub unsafe fn set(spec: &WatchSpec<'_>) {
    if spec.addr.is_null() || spec.nbytes == 0 {
        return;
    }
    // SAFETY: caller contract.
    let bytes = unsafe { std::slice::from_raw_parts(spec.addr, spec.nbytes) };
    let crc = cksum(bytes);
    let addr = spec.addr as usize;
    {
        let mut points = POINTS.lock().unwrap_or_else(|p| p.into_inner());
        let p = Point {
            name: spec.name.to_string(),
            addr,
            nbytes: spec.nbytes,
            crc,
            active: spec.active,
            abort: spec.abort,
            printkey: spec.printkey,
            nvals: spec.nvals,
        };
        match points.iter_mut().find(|p| p.addr == addr) {
            Some(old) => *old = p,
            None => points.push(p),
        }
        ACTIVE.store(
            points.iter().filter(|p| p.active).count(),
            Ordering::Release,
        );
    }
    if spec.active
        && let Some(f) = ON_FIRST.get()
    {
        f();
    }
    let mut line = String::new();
    crate::diag::prefix_only(&mut line);
    line.push_str(&format!(
        " ***Warning: Watch point '{}' set at address {:#x} ({} bytes [{} values]) : crc32={:#x}",
        crate::sys::linebuf::escape_controls(spec.name),
        addr,
        spec.nbytes,
        spec.nvals,
        crc
    ));
    crate::diag::raw_line(&line);
    print_values(spec.printkey, bytes, spec.nvals);
    if spec.traceback_now {
        super::calltree::print_calltree();
    }
}

/// `DR_HOOK_SHOW_LOCK=1`: the line OML's debug mode prints when the
/// reference initialises its Dr.Hook lock (`(1x,a,2i20)`: name, lock id,
/// address). Here the lock that serialises the watch-point reports (the
/// reference's lock does that too; the calling tree itself needs none).
pub(crate) fn show_lock() {
    crate::diag::raw_line(&format!(
        " oml_init_lockid_with_name \"crash/watch.rs:POINTS\" :{:>20}{:>20}",
        1, &POINTS as *const _ as usize
    ));
}

/// Checks every active watch point now (`c_drhook_check_watch_`): `where`
/// is printed as `-- whilst at WHERE`; aborts only if `allow_abort` and the
/// changed point asks for it.
pub fn check_now(where_: &str, allow_abort: bool) {
    if ACTIVE.load(Ordering::Acquire) > 0 {
        check("whilst at", where_, allow_abort);
    }
}

/// The checker the stampers call at every enter (`entering`) and exit, with
/// an address in the caller's stack frame.
pub(crate) fn check_boundary(entering: bool, sp: usize) {
    let td = crate::tree::thread::current();
    let name = if td.is_null() {
        ""
    } else {
        // SAFETY: the calling thread's own tree (freed only once the thread
        // ended it); the top of its stack is a node of its arena.
        let node = unsafe { &*(*td).current() };
        if node.site.is_null() {
            ""
        } else {
            // SAFETY: sites are static.
            unsafe { (*node.site).name() }
        }
    };
    if crate::metrics::watch::STACK_HEAP.load(Ordering::Relaxed) {
        stack_heap(entering, sp, name);
    }
    if crate::metrics::watch::LINES.load(Ordering::Relaxed)
        && let Some(e) = crate::setup::engine_if_ready()
    {
        super::lines::boundary(&e.config.lines, entering, sp, name);
    }
    if ACTIVE.load(Ordering::Acquire) == 0 {
        return;
    }
    let label = if entering {
        "when entering routine"
    } else {
        "when leaving routine"
    };
    check(label, name, true);
}

static STACKCHECK: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static HEAPCHECK: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static MAX_HEAP: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

thread_local! {
    /// (stack address at the thread's first check, largest depth seen).
    static STACK: std::cell::Cell<(usize, usize)> = const { std::cell::Cell::new((0, 0)) };
}

/// Turns on `DR_HOOK_STACKCHECK` / `DR_HOOK_HEAPCHECK` (`runtime`, at
/// start-up, when they are true).
pub(crate) fn enable_stack_heap(stack: bool, heap: bool) {
    STACKCHECK.store(stack, Ordering::Relaxed);
    HEAPCHECK.store(heap, Ordering::Relaxed);
    crate::metrics::watch::STACK_HEAP.store(stack || heap, Ordering::Release);
}

/// The reference's `DR_HOOK_STACKCHECK` line (its Fortran format
/// `(A,I3,A,I12,2X,A)`).
pub fn stackcheck_line(tid: u32, depth: usize, name: &str) -> String {
    format!("STACKCHECK Max stack usage by thread{tid:>3} ={depth:>12}  {name}")
}

/// The reference's `DR_HOOK_HEAPCHECK` line (gfortran's list-directed
/// output of its `WRITE(NULERR,*)`).
pub fn heapcheck_line(entering: bool, bytes: u64, name: &str) -> String {
    let at = if entering { "beg" } else { "end" };
    format!(" HEAPCHECK Max heap at {at} of routine ={bytes:>21}  {name}")
}

/// `DR_HOOK_STACKCHECK`: on threads other than 1, the distance from the
/// stack address at the thread's first instrumented call, printed when
/// its maximum grows. `DR_HOOK_HEAPCHECK`: on thread 1 of task 1, the
/// heap (glibc's `mallinfo2`: arena + mmapped bytes, as the header's heap)
/// printed when its maximum grows — the reference's `GETMAXLOC` always
/// returns 0, so its HEAPCHECK never prints anything.
fn stack_heap(entering: bool, sp: usize, name: &str) {
    let tid = crate::diag::caller_tid();
    let name = crate::sys::linebuf::escape_controls(name);
    if STACKCHECK.load(Ordering::Relaxed) && tid > 1 {
        let grown = STACK.with(|c| {
            let (mut base, mut max) = c.get();
            if base == 0 {
                base = sp;
            }
            let depth = base.saturating_sub(sp);
            let grown = depth > max;
            if grown {
                max = depth;
            }
            c.set((base, max));
            grown.then_some(depth)
        });
        if let Some(d) = grown {
            crate::diag::raw_line(&stackcheck_line(tid, d, &name));
        }
    }
    if HEAPCHECK.load(Ordering::Relaxed)
        && tid == 1
        && crate::setup::ENGINE
            .get()
            .is_none_or(|e| e.config.task.myproc == 1)
    {
        let heap = crate::sys::sysinfo::heap_bytes();
        if heap > MAX_HEAP.fetch_max(heap, Ordering::Relaxed) {
            crate::diag::raw_line(&heapcheck_line(entering, heap, &name));
        }
    }
}

fn check(label: &str, routine: &str, allow_abort: bool) {
    let mut abort = false;
    let mut printed_tree = false;
    {
        // A check that finds a change prints under the lock, so reports of
        // several threads do not interleave.
        let mut points = POINTS.lock().unwrap_or_else(|p| p.into_inner());
        for p in points.iter_mut().filter(|p| p.active) {
            // SAFETY: the program keeps a watched range readable while the
            // watch point is active (contract of `set`).
            let bytes = unsafe { std::slice::from_raw_parts(p.addr as *const u8, p.nbytes) };
            let crc = cksum(bytes);
            if crc == p.crc {
                continue;
            }
            crate::diag!(
                "check_watch",
                "***{}: Watch point '{}' value(s) changed at address {:#x} ({} bytes [#{} values]) -- {} {} : new crc32={:#x}",
                if p.abort { "Error" } else { "Warning" },
                p.name,
                p.addr,
                p.nbytes,
                p.nvals,
                label,
                routine,
                crc
            );
            print_values(p.printkey, bytes, p.nvals);
            if !printed_tree {
                super::calltree::print_calltree();
                printed_tree = true;
            }
            if allow_abort && p.abort {
                abort = true;
                break;
            }
            p.crc = crc;
        }
    }
    if abort {
        super::abort::drhook_abort(file!(), line!(), super::abort::FATAL_TEXT);
    }
}

/// Prints up to `DR_HOOK_WATCH_PRINT_MAX` values (all when unset or
/// negative) in the layouts of the reference's Fortran printers: logicals
/// 40 per line (`L2`), characters 40 per line, 4-byte integers 5 per line
/// in 12 columns, 8-byte integers 5 per line in 20 columns, reals 5 per
/// line in scientific notation (the reference uses list-directed output,
/// whose layout is the compiler's).
fn print_values(printkey: i32, bytes: &[u8], nvals: usize) {
    let max = crate::config::env::process_env(crate::config::env::DR_HOOK_WATCH_PRINT_MAX)
        .map(|v| crate::config::atoi(&v))
        .filter(|&n| n >= 0)
        .map_or(usize::MAX, |n| n as usize);
    let (width, per_line, size) = match printkey {
        key::LOG => (2, 40, 4),
        key::CHAR => (1, 40, 1),
        key::I4 => (12, 5, 4),
        key::I8 => (20, 5, 8),
        key::R4 => (16, 5, 4),
        key::R8 => (25, 5, 8),
        _ => return,
    };
    let n = nvals.min(max).min(bytes.len() / size);
    let mut out = String::new();
    for (i, c) in bytes.chunks_exact(size).take(n).enumerate() {
        let v = match printkey {
            key::LOG => {
                if u32::from_ne_bytes(c.try_into().unwrap_or_default()) & 1 != 0 {
                    "T".to_string()
                } else {
                    "F".to_string()
                }
            }
            key::CHAR => {
                let ch = c[0];
                if ch.is_ascii_graphic() || ch == b' ' {
                    (ch as char).to_string()
                } else {
                    "?".to_string()
                }
            }
            key::I4 => i32::from_ne_bytes(c.try_into().unwrap_or_default()).to_string(),
            key::I8 => i64::from_ne_bytes(c.try_into().unwrap_or_default()).to_string(),
            key::R4 => format!(
                "{:.8E}",
                f32::from_ne_bytes(c.try_into().unwrap_or_default())
            ),
            _ => format!(
                "{:.17E}",
                f64::from_ne_bytes(c.try_into().unwrap_or_default())
            ),
        };
        out.push_str(&format!("{v:>width$}"));
        if (i + 1) % per_line == 0 || i + 1 == n {
            out.push('\n');
        }
    }
    crate::sys::linebuf::write_all(2, out.as_bytes());
}
