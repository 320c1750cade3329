//! The engine's side of a process's life, for a layer that sees it from
//! outside the program (the preload library `libdrhook_preload.so` and its
//! link-time `--wrap` twin, crate `drhook-attach`): the root region `main`
//! (time = the whole run), a root region per thread, the profile written
//! exactly once whichever way the process ends, the MPI rank once MPI knows
//! it, and `exec`.
//!
//! Without such a layer none of this is called, and the engine behaves as
//! it always did (profile at `exit`, tracebacks on fatal signals); `fork`
//! is handled in any case (`pthread_atfork`, see the README).
//!
//! A process has one engine. A program that carries its own copy of the
//! engine (a Rust binary with `#[drhook]` code, a C or Fortran program
//! linked statically with `libdrhook.a`) announces it to the layer when it
//! starts: a constructor of this module calls the layer's
//! `drhook_attach_register_engine_v1` (a weak reference, so nothing happens
//! without the layer), which then sends every event to the program's
//! engine through [`HOOKS`] instead of its own.

mod register;
mod threads;

use std::ffi::c_int;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};

use crate::engine::{self, Token};
use crate::setup;
use crate::sys::clock;
use crate::tree::bits;
use crate::tree::node::Node;
use crate::tree::site::Site;

/// The root region of the program.
static MAIN_SITE: Site = Site::new("main", "", 0);
/// The open activation of `main` (0: none).
static MAIN_TOKEN: AtomicU64 = AtomicU64::new(0);
/// [`process_begin`] ran.
static BEGUN: AtomicBool = AtomicBool::new(false);

/// Clock stamps of the moment a process started, taken by the layer as
/// early as it can (when the library is loaded), so that `main` covers the
/// whole run whichever engine gets it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct Start {
    /// Time-stamp counter (0 where there is none).
    pub cycles: u64,
    /// `CLOCK_MONOTONIC` in nanoseconds.
    pub monotonic_ns: u64,
}

impl Start {
    /// Both clocks now.
    pub fn now() -> Start {
        Start {
            cycles: clock::cycles(),
            monotonic_ns: clock::monotonic_ns(),
        }
    }
}

/// Just before `main`: starts the engine (reads the environment), enters
/// the root region `main` on the calling thread with its start at `start`,
/// and leaves this process's place in the run (`DRHOOK_PROCESS_TREE`) in
/// the environment for its children. Returns whether Dr.Hook is on (off
/// also for a child that `DRHOOK_FOLLOW` does not select). Runs once; later
/// calls only return the state.
pub fn process_begin(start: Start) -> bool {
    let on = crate::runtime::is_enabled();
    if !on || BEGUN.swap(true, Ordering::AcqRel) {
        return on;
    }
    // The layer ends the process (after every exit handler): the engine's
    // own at-exit writer, registered later than the layer's, would write
    // before them.
    crate::profile::write::cancel_write_at_exit();
    // Children find their place from this (before main: one thread only).
    let m = setup::marker();
    // SAFETY: called before `main`, when no other thread reads the
    // environment; name and value are valid C strings.
    unsafe {
        let value = std::ffi::CString::new(m.format()).unwrap_or_default();
        libc::setenv(c"DRHOOK_PROCESS_TREE".as_ptr(), value.as_ptr(), 1);
    }
    let token = engine::enter(&MAIN_SITE);
    if token.is_active() {
        let mode = setup::MODE.load(Ordering::Relaxed);
        let now_wall = clock::wall(mode & bits::WALL_MONO != 0);
        let stamp = if mode & bits::WALL_MONO != 0 {
            start.monotonic_ns
        } else {
            start.cycles
        };
        let node = token.to_bits() as usize as *const Node;
        // SAFETY: the token was just returned by this thread's enter: it
        // is the top of this thread's stack, a node of its arena.
        let n = unsafe { &*node };
        if mode & bits::WALL != 0 && stamp != 0 && stamp <= now_wall {
            n.wall_enter.store(stamp, Ordering::Relaxed);
        }
        if mode & bits::CPU != 0 {
            // The main thread's CPU time since it started.
            n.cpu_enter.store(0, Ordering::Relaxed);
        }
        MAIN_TOKEN.store(token.to_bits(), Ordering::Release);
    }
    on
}

/// `main` returned `status`: leaves `main` (and anything left open under
/// it). The profile is written when the process ends ([`process_end`]),
/// after the program's exit handlers: what they run is in it, outside
/// `main`.
pub fn main_return(status: c_int) {
    let _ = status;
    let t = MAIN_TOKEN.swap(0, Ordering::AcqRel);
    if t != 0 {
        engine::exit_lenient(Token::from_bits(t));
    }
}

/// The process ends (`exit`, `_exit`, `abort`, `MPI_Finalize`, a signal
/// the layer saw): writes the profile unless it was already written — of
/// all the paths that end a process exactly one writes it. `failure`: a
/// non-zero exit status or an abort (no profile then with
/// `DRHOOK_PROFILE_ON_FAILURE=0`). Routines still open, `main` included,
/// are counted up to now. Returns whether a profile was written.
pub fn process_end(failure: bool) -> bool {
    crate::profile::write::end_profile(failure).is_some()
}

/// Before a thread is created, on the creating thread: reserves the new
/// thread's number (threads are then numbered in the order they are
/// created, as an OpenMP runtime creates its team: `@n` = OpenMP thread
/// `n-1`, whatever the order the threads start in). 0 when Dr.Hook is off.
pub fn thread_reserve() -> u32 {
    if !crate::runtime::is_enabled() {
        return 0;
    }
    crate::tree::thread::reserve_tid()
}

/// Runs `f` on a work stack of the engine's: a stack of its own, taken from
/// a small pool of spare stacks, with room for the engine's set-up and
/// tear-down of a thread (its tree, the name of its start routine from
/// the symbol tables, its signal stack and metrics) whatever the size of
/// the thread's own stack — as small as the C library allows (16 KiB) —
/// and for the tools' work at the same moments. The layer calls
/// [`thread_begin`] and [`thread_end`] (and its monitors) there. In place
/// when already on a work stack.
pub fn on_work_stack<R>(f: impl FnOnce() -> R) -> R {
    crate::sys::workstack::on_work_stack(f)
}

/// Start of a thread (before its start routine runs, on the new thread):
/// registers its tree with the number [`thread_reserve`] gave (0: none) and
/// enters the thread's root region, named after the start routine
/// (`thread:<symbol>`, or `thread:<library>+0x<offset>` when the routine
/// has no name). Returns what [`thread_end`] takes (0: Dr.Hook is off).
/// Called on a work stack ([`on_work_stack`]): the set-up needs far more
/// stack than the smallest threads have.
///
/// Unless something needs the tree from the thread's start
/// (`starts_lazily`), the thread gets no tree yet: a small record of its
/// number, root region and start (`tree::thread::lazy`), and the tree is
/// made at its first Dr.Hook event, its root region entered first as of
/// the thread's start — the same tree. A thread that never calls anything
/// instrumented ends with its root region's line in the profile and no
/// tree made (issue 29).
pub fn thread_begin(start_routine: usize, reserved: u32) -> u64 {
    if !crate::runtime::is_enabled() {
        return 0;
    }
    if crate::tree::thread::current().is_null() {
        let mode = setup::MODE.load(Ordering::Relaxed);
        if starts_lazily(mode) && crate::tree::thread::lazy::mine().is_null() {
            let site = threads::site_of(start_routine);
            site.id();
            let unix_tid = crate::sys::sysinfo::gettid();
            let tid =
                crate::tree::thread::number_for(unix_tid, (reserved != 0).then_some(reserved));
            // The root region's stamps, in the order an enter takes them.
            let start_cpu = if mode & bits::CPU != 0 {
                clock::thread_cpu_ns()
            } else {
                0
            };
            let start_wall = clock::wall(mode & bits::WALL_MONO != 0);
            // A stack overflow in a thread that calls nothing
            // instrumented is reported, and the profile written, as in
            // any other thread.
            crate::crash::signals::alt_stack_for_untreed_thread();
            let r = crate::tree::thread::lazy::begin(crate::tree::thread::lazy::LazyInfo {
                tid,
                unix_tid,
                site,
                start_wall,
                start_cpu,
            });
            return r as *const _ as usize as u64 | LAZY_TOKEN;
        }
        crate::tree::thread::register_current_as(
            mode,
            clock::wall(mode & bits::WALL_MONO != 0),
            (reserved != 0).then_some(reserved),
        );
    }
    engine::enter(threads::site_of(start_routine)).to_bits()
}

/// The bit of [`thread_begin`]'s result that marks a thread started
/// without a tree (the rest is its record's address; a tree's token, a
/// node's address, has it clear).
const LAZY_TOKEN: u64 = 1;

/// Whether threads may start without a tree: not when anything needs the
/// tree from the thread's start — per-routine metrics (the memory
/// profile attributes allocations to `thread:<routine>`, I/O, MPI,
/// counters, ranges), stampers at every enter and exit (watch points set,
/// `DR_HOOK_STACKCHECK`, per-call lines, the timeline), sampling (a
/// signal handler cannot make a tree), GPU regions, timed kills (armed at
/// a tree's creation).
fn starts_lazily(mode: u32) -> bool {
    use std::sync::atomic::AtomicU8;
    /// 0: not decided yet; 1: lazily; 2: eagerly.
    static LAZY: AtomicU8 = AtomicU8::new(0);
    if mode & (bits::METRICS | bits::SLOW_STAMPS) != 0 {
        return false;
    }
    match LAZY.load(Ordering::Relaxed) {
        1 => true,
        2 => false,
        _ => {
            let Some(e) = setup::engine_if_ready() else {
                return false;
            };
            let o = &e.config.options;
            // Only the watch points' metric, installed whenever Dr.Hook
            // is on and stamped from the first watch point on (the mode
            // test above).
            let lazy = crate::metrics::layout()
                .metrics
                .iter()
                .all(|m| m.metric.name() == "watch")
                && !o.sample
                && !o.trace
                && !o.gpu
                && e.config.lines.timed_kill.is_empty();
            LAZY.store(if lazy { 1 } else { 2 }, Ordering::Relaxed);
            lazy
        }
    }
}

/// End of a thread (its start routine returned, or `pthread_exit`): leaves
/// its root region and anything left open under it. A thread that never
/// ends (a worker pool, a thread still running at exit) is counted up to
/// the moment the profile is written.
///
/// The thread's tree is then kept in compact form for the profile and
/// freed (`profile::ended`); a thread that started without a tree and
/// never made one gives its root region's line to the profile directly.
pub fn thread_end(token: u64) {
    if token & LAZY_TOKEN != 0 {
        let r = (token & !LAZY_TOKEN) as usize as *const crate::tree::thread::lazy::Lazy;
        // SAFETY: the record `thread_begin` made for this thread (records
        // are never freed).
        let r = unsafe { &*r };
        match r.token() {
            0 => crate::profile::ended::retire_untreed(r),
            t => {
                engine::exit_lenient(Token::from_bits(t));
                crate::profile::ended::retire_current();
                crate::tree::thread::lazy::end_treed(r);
            }
        }
        crate::crash::signals::release_alt_stack();
    } else if token != 0 {
        engine::exit_lenient(Token::from_bits(token));
        crate::profile::ended::retire_current();
    }
}

/// MPI initialised: this process is task `rank + 1` of `size`. The
/// profile is then named after the rank even when the launcher set no
/// rank variable; a process that was not its task's main process becomes
/// it unless an ancestor already is (see the README).
pub fn mpi_init(rank: u32, size: u32) {
    let Some(e) = setup::engine_if_ready() else {
        return;
    };
    let task = crate::config::task::Task {
        myproc: rank.saturating_add(1),
        nproc: size.max(rank.saturating_add(1)),
    };
    setup::set_task(task);
    if !e.config.launcher_rank {
        // The rank was not known at start-up: the place in the run is
        // decided again, as it would have been with it.
        let mut m = setup::marker();
        if setup::is_main() || m.claimed != task.myproc {
            setup::set_main(true);
            m.claimed = task.myproc;
            setup::set_marker(m);
        }
    }
    crate::diag::set_label(task.myproc, e.start.ns);
}

/// Before an `exec`: whether this process was its task's main process,
/// and the profile written for the `exec` (removed again if it fails: the
/// process goes on and writes it at its real end, under its own name).
/// (No lock: a `fork` child must never find one held; one pointer,
/// swapped.)
static EXEC_STATE: AtomicPtr<(bool, Option<PathBuf>)> = AtomicPtr::new(std::ptr::null_mut());

/// Just before an `exec` that may succeed: the program this process is
/// becoming takes over its role (its main process's profile name), so the
/// profile so far is written under this process's child name — or not at
/// all for a `fork` child that has run nothing since the fork. Returns the
/// environment entry (`DRHOOK_PROCESS_TREE=...`) the new program must get,
/// or `None` when Dr.Hook is off.
pub fn exec_begin() -> Option<String> {
    setup::engine_if_ready()?;
    let was_main = setup::is_main();
    let mut m = setup::marker();
    if was_main {
        // SAFETY: getpid has no preconditions.
        m.heir = unsafe { libc::getpid() } as u32;
        setup::set_main(false);
    }
    let written = if crate::profile::write::is_fresh_child() {
        crate::profile::write::claim_end();
        None
    } else {
        crate::profile::write::end_profile(false)
    };
    let old = EXEC_STATE.swap(
        Box::into_raw(Box::new((was_main, written))),
        Ordering::AcqRel,
    );
    if !old.is_null() {
        // SAFETY: a box of ours, taken out of the slot by the swap.
        drop(unsafe { Box::from_raw(old) });
    }
    Some(format!("DRHOOK_PROCESS_TREE={}", m.format()))
}

/// The `exec` announced by [`exec_begin`] failed: nothing changes — the
/// process keeps its role, its profile stays open, and a profile written
/// for the `exec` under another name is removed.
pub fn exec_failed() {
    let p = EXEC_STATE.swap(std::ptr::null_mut(), Ordering::AcqRel);
    if p.is_null() {
        return;
    }
    // SAFETY: a box of ours, taken out of the slot by the swap.
    let (was_main, written) = *unsafe { Box::from_raw(p) };
    crate::profile::write::reopen();
    setup::set_main(was_main);
    if was_main && let Some(p) = written {
        let _ = std::fs::remove_file(p);
    }
}

/// The layer's own work on the calling thread begins (`true`) or ends:
/// what it allocates and reads or writes in between (the environment it
/// sets for the children, the I/O report) is not the program's routines'.
pub fn own_work(begin: bool) {
    let td = crate::tree::thread::current();
    if td.is_null() {
        return;
    }
    // SAFETY: registered trees are never freed.
    let td = unsafe { &*td };
    if begin {
        td.begin_internal_work();
    } else {
        td.end_internal_work();
    }
}

/// The path of this process's file `<stem>.<task>` by the profiles' rule
/// (the I/O report `drhook.io.N` of the preload library): in the
/// profile's directory for the main process of its task (the MPI rank
/// once MPI has said it), `<stem>.<task>.<command>.<pid>` for any other
/// (and for any process when `child`: the image before an `exec`), and
/// `<prefix><command>.<pid>.<stem>.<task>` with `DRHOOK_PROFILE_PREFIX`.
/// None when Dr.Hook is off.
pub fn companion_path(stem: &str, child: bool) -> Option<std::path::PathBuf> {
    let e = crate::setup::engine_if_ready()?;
    Some(crate::profile::name::companion_path(e, stem, child))
}

pub use register::{ABI_VERSION, HOOKS, Hooks, ReduceSink};

/// `DR_HOOK_OPT=reduce`: the MPI layer will end the process inside
/// `MPI_Finalize` and reduce the tasks' profiles; this task's rows are
/// folded when its profile is made (and its own file is then written only
/// with `ranks`). Returns whether `reduce` was asked with a time profile.
pub fn reduce_begin() -> bool {
    crate::profile::reduce::begin()
}

/// Whether this end is reduced (`reduce` asked, the MPI layer ending the
/// process inside `MPI_Finalize`: after [`reduce_begin`] said yes).
pub fn reduce_active() -> bool {
    crate::profile::reduce::active()
}

/// Whether a reduced end also writes the per-rank files (`ranks`; always
/// when the end is not reduced).
pub fn reduce_per_rank_files() -> bool {
    crate::setup::engine_if_ready().is_none_or(crate::profile::reduce::per_rank_files)
}

pub use crate::profile::reduce::Part as ReducePart;

/// After the end's write: this task's part of the job profile.
pub fn reduce_take() -> Option<ReducePart> {
    crate::profile::reduce::take()
}

/// On task 1: writes `<profile>.job` from the combined merger bytes, with
/// the run's identity lines first. Returns its path, or why not.
pub fn reduce_write_job(merged: &[u8], identity: &[String]) -> Result<PathBuf, String> {
    crate::profile::reduce::write_job(merged, identity)
}

/// Writes `<profile>-mem.job`, `<profile>-io.job` or `<profile>-mpi.job`
/// (rank 0, after the reduction) from the combined
/// `drhook_merge::ColMerger` bytes of the tasks' memory, I/O or MPI
/// profiles.
pub fn reduce_write_cols_job(merged: &[u8], identity: &[String]) -> Result<PathBuf, String> {
    crate::profile::reduce::write_cols_job(merged, identity)
}
