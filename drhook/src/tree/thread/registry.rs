//! The thread registry: every thread's [`ThreadData`] in one lock-free
//! list, the thread numbers (reserved, proposed or fresh), the
//! registration of a thread at its first instrumented call, the
//! thread-local pointer that reaches its tree, mode bits added to every
//! tree, and what a `fork` child keeps (its counts started again).

use std::ptr;
use std::sync::atomic::{AtomicI32, AtomicPtr, AtomicU32, AtomicU64, Ordering};

use super::{InternalWork, ThreadData};
use crate::tree::node::Node;

static HEAD: AtomicPtr<ThreadData> = AtomicPtr::new(ptr::null_mut());
static NEXT_TID: AtomicU32 = AtomicU32::new(2);
static THREAD_HINT: AtomicPtr<()> = AtomicPtr::new(ptr::null_mut());
static USED_TIDS: std::sync::Mutex<Vec<u32>> = std::sync::Mutex::new(Vec::new());

/// Installs the function that proposes a thread's number at its first
/// instrumented call (e.g. `omp_get_thread_num() + 1` in OpenMP programs).
/// A proposal already taken by another thread is replaced by a fresh number,
/// so two threads never share one.
pub(crate) fn set_thread_number_hint(hint: fn() -> Option<u32>) {
    THREAD_HINT.store(hint as *mut (), Ordering::Release);
}

/// Reserves the next free thread number for a thread about to be created
/// (the creating thread asks, so that threads are numbered in the order
/// they are created — OpenMP runtimes create a team's threads in the order
/// of their OpenMP numbers — whatever the order they then start in).
pub(crate) fn reserve_tid() -> u32 {
    let mut used = USED_TIDS.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        let n = NEXT_TID.fetch_add(1, Ordering::Relaxed);
        if !used.contains(&n) {
            used.push(n);
            return n;
        }
    }
}

fn choose_tid(unix_tid: i32, reserved: Option<u32>) -> u32 {
    if let Some(n) = reserved {
        return n;
    }
    let mut used = USED_TIDS.lock().unwrap_or_else(|p| p.into_inner());
    let hint = THREAD_HINT.load(Ordering::Acquire);
    let proposal = if hint.is_null() {
        None
    } else {
        // SAFETY: only `fn() -> Option<u32>` values are stored in THREAD_HINT.
        let f: fn() -> Option<u32> =
            unsafe { std::mem::transmute::<*mut (), fn() -> Option<u32>>(hint) };
        f().filter(|&n| n >= 1)
    };
    let proposal = proposal.or_else(|| is_main_thread(unix_tid).then_some(1));
    let tid = match proposal {
        Some(n) if !used.contains(&n) => n,
        _ => loop {
            let n = NEXT_TID.fetch_add(1, Ordering::Relaxed);
            if !used.contains(&n) {
                break n;
            }
        },
    };
    used.push(tid);
    tid
}

/// The calling thread's tree, or null before its first instrumented call.
#[inline(always)]
pub(crate) fn current() -> *const ThreadData {
    crate::tree::tls::get() as *const ThreadData
}

fn gettid() -> i32 {
    // SAFETY: `gettid` has no preconditions.
    unsafe { libc::gettid() }
}

/// The process id, kept (a system call each time otherwise); reset in a
/// `fork` child.
static PID: AtomicI32 = AtomicI32::new(0);

/// Whether the thread `unix_tid` is the process's main thread (its id is
/// the process id).
fn is_main_thread(unix_tid: i32) -> bool {
    let mut pid = PID.load(Ordering::Relaxed);
    if pid == 0 {
        // SAFETY: `getpid` has no preconditions.
        pid = unsafe { libc::getpid() };
        PID.store(pid, Ordering::Relaxed);
    }
    unix_tid == pid
}

/// Creates and registers the calling thread's tree.
#[cold]
#[inline(never)]
pub(crate) fn register_current(mode: u32, start_wall: u64) -> &'static ThreadData {
    register_current_as(mode, start_wall, None)
}

/// As [`register_current`], with the number reserved for this thread by
/// [`reserve_tid`] (if any).
#[cold]
#[inline(never)]
pub(crate) fn register_current_as(
    mode: u32,
    start_wall: u64,
    reserved: Option<u32>,
) -> &'static ThreadData {
    let existing = current();
    if !existing.is_null() {
        // SAFETY: registered trees are never freed.
        return unsafe { &*existing };
    }
    // On a work stack: a thread's stack may be as small as the C library
    // allows, and the set-up (the tree, its metrics' stampers, the
    // thread's signal stack) needs more than its frames.
    crate::sys::workstack::on_work_stack(|| register_new(mode, start_wall, reserved))
}

fn register_new(mode: u32, start_wall: u64, reserved: Option<u32>) -> &'static ThreadData {
    let unix_tid = gettid();
    let tid = choose_tid(unix_tid, reserved);
    let layout = crate::metrics::layout();
    // Every thread gets the stampers of the installed stamped metrics, even
    // while the METRICS bit is clear: a watch point set later turns them
    // on by setting the bit (`metrics::watch`).
    let stampers = if layout.stamped {
        layout.stampers(tid)
    } else {
        Vec::new()
    };
    let boxed = ThreadData::with_metrics(tid, unix_tid, start_wall, layout.width, stampers);
    boxed
        .mode
        .store(mode | ADDED_BITS.load(Ordering::SeqCst), Ordering::SeqCst);
    let td: &'static ThreadData = Box::leak(boxed);
    let mut head = HEAD.load(Ordering::Acquire);
    loop {
        td.next.store(head, Ordering::Relaxed);
        match HEAD.compare_exchange_weak(
            head,
            td as *const _ as *mut _,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => break,
            Err(h) => head = h,
        }
    }
    // Bits added while this tree was being registered: either
    // `add_mode_bits` found it in the list, or they are seen here.
    std::sync::atomic::fence(Ordering::SeqCst);
    let added = ADDED_BITS.load(Ordering::SeqCst);
    if added & !td.mode() != 0 {
        td.gain_mode_bits(added);
    }
    crate::tree::tls::set(td as *const ThreadData as *const ());
    let hook = ON_NEW_THREAD.load(Ordering::Acquire);
    if !hook.is_null() {
        // SAFETY: only `fn()` values are stored in ON_NEW_THREAD.
        let f: fn() = unsafe { std::mem::transmute::<*mut (), fn()>(hook) };
        f();
    }
    td
}

static ON_NEW_THREAD: AtomicPtr<()> = AtomicPtr::new(ptr::null_mut());

/// Mode bits added after start-up (see [`add_mode_bits`]).
static ADDED_BITS: AtomicU32 = AtomicU32::new(0);

/// Adds `bits_added` to the mode of every thread's tree, present and future
/// (the caller has added them to `setup::MODE`, which the enters read):
/// `METRICS` when the first watch point is set. Modes only gain bits.
pub(crate) fn add_mode_bits(bits_added: u32) {
    ADDED_BITS.fetch_or(bits_added, Ordering::SeqCst);
    std::sync::atomic::fence(Ordering::SeqCst);
    for_each_thread(|td| td.gain_mode_bits(bits_added));
}

/// Installs the function called on each thread right after its tree is
/// registered (at its first instrumented call): per-thread set-up of other
/// subsystems (signal stack, floating-point traps), wired by `runtime`.
pub(crate) fn set_new_thread_hook(hook: fn()) {
    ON_NEW_THREAD.store(hook as *mut (), Ordering::Release);
}

/// Holds the thread numbering's lock across a `fork`, so that the child
/// does not inherit it locked by a thread it does not have.
pub(crate) fn lock_for_fork() -> std::sync::MutexGuard<'static, Vec<u32>> {
    USED_TIDS.lock().unwrap_or_else(|p| p.into_inner())
}

/// In a `fork` child: only the forking thread exists, so only its tree
/// stays registered (the others hold the parent's numbers, which are not
/// the child's), with its counts started again at the fork (`wall`, `cpu`
/// stamps of now) and its open routines kept open.
///
/// # Safety
/// Only in a `fork` child, before any other thread exists.
pub(crate) unsafe fn restart_after_fork(wall: u64, cpu: u64) {
    PID.store(0, Ordering::Relaxed);
    let me = current();
    if me.is_null() {
        HEAD.store(ptr::null_mut(), Ordering::Release);
        return;
    }
    // SAFETY: registered trees are never freed; this is the calling
    // thread's own, and it is the only thread (caller contract).
    let td = unsafe { &*me };
    td.next.store(ptr::null_mut(), Ordering::Release);
    // SAFETY: as above.
    unsafe { td.restart_counts(wall, cpu) };
    HEAD.store(me as *mut ThreadData, Ordering::Release);
}

/// Every registered thread, in no particular order. Lock-free and
/// async-signal-safe.
pub(crate) fn for_each_thread(mut f: impl FnMut(&'static ThreadData)) {
    let mut p = HEAD.load(Ordering::Acquire);
    while !p.is_null() {
        // SAFETY: registered trees are never freed.
        let td = unsafe { &*p };
        f(td);
        p = td.next.load(Ordering::Acquire);
    }
}

/// Marks the engine's own work on the calling thread (if it has a tree)
/// until the value is dropped.
pub(crate) fn internal_work() -> Option<InternalWork<'static>> {
    let td = current();
    // SAFETY: registered trees are never freed.
    (!td.is_null()).then(|| unsafe { &*td }.internal_work())
}

// A tree in a `fork` child.

impl ThreadData {
    /// In a `fork` child, on the thread that forked: every count starts
    /// again at the fork, while the routines the thread is inside stay open
    /// (each counted as one call, entered at the fork).
    ///
    /// # Safety
    /// Owner thread only, with no other thread running (a `fork` child).
    unsafe fn restart_counts(&self, wall: u64, cpu: u64) {
        let zero = |a: &AtomicU64| a.store(0, Ordering::Relaxed);
        for i in 0..self.arena.len() {
            if let Some(n) = self.arena.get(i) {
                zero(&n.calls);
                zero(&n.wall_incl);
                zero(&n.cpu_incl);
            }
            if let Some(s) = self.sizes.get(i) {
                zero(&s.count);
                zero(&s.sum);
                zero(&s.min);
                zero(&s.max);
            }
            if let Some(r) = self.resumed.get(i) {
                zero(&r.resumes);
                zero(&r.suspended);
            }
            if let Some(row) = self.rows.get(i) {
                row.iter().for_each(zero);
            }
        }
        let mut p = self.current.load(Ordering::Relaxed) as *const Node;
        while !p.is_null() && p != self.root {
            // SAFETY: nodes on this thread's stack belong to its arena.
            let n = unsafe { &*p };
            n.calls.store(1, Ordering::Relaxed);
            n.wall_enter.store(wall, Ordering::Relaxed);
            n.cpu_enter.store(cpu, Ordering::Relaxed);
            p = n.parent;
        }
        self.start_wall.store(wall, Ordering::Relaxed);
        self.unix_tid.store(gettid(), Ordering::Relaxed);
    }

    /// Whether every call counted is one of the activations still open
    /// with one call each: true right after [`restart_after_fork`], until
    /// the thread calls anything.
    pub(crate) fn calls_are_only_open_activations(&self) -> bool {
        let mut open = 0u64;
        let mut p = self.current();
        while !p.is_null() && p != self.root {
            // SAFETY: nodes on a thread's stack belong to its arena.
            let n = unsafe { &*p };
            if n.calls.load(Ordering::Relaxed) != 1 {
                return false;
            }
            open += 1;
            p = n.parent;
        }
        let total: u64 = (0..self.arena.len())
            .filter_map(|i| self.arena.get(i))
            .map(|n| n.calls.load(Ordering::Relaxed))
            .sum();
        total == open
    }
}
