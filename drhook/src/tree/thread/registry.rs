//! The thread registry: every live thread's [`ThreadData`] in one list
//! that readers walk without a lock, the thread numbers (reserved,
//! proposed or fresh), the registration of a thread at its first
//! instrumented call, the thread-local pointer that reaches its tree,
//! mode bits added to every tree, the end of a thread's tree, and what a
//! `fork` child keeps (its counts started again).
//!
//! **When a tree is freed.** A thread that ends ([`unregister_current`],
//! after the profile layer kept what the profile needs of it) leaves the
//! list at once, but its tree is freed only when no reader can still hold
//! it: every walk of the list ([`for_each_thread`], [`Pin`]) counts itself
//! in `WALKERS` before it reads the list's head and out after its last
//! read; the ending thread unlinks its tree, then frees it — and the trees
//! that ended before — only if it sees no walker (sequentially consistent
//! on both sides: a walker that started after the unlink cannot reach the
//! tree, one that started before is counted). Otherwise the tree waits for
//! the next thread that ends with no walker about. Nothing else reaches a
//! tree from another thread: handles and tokens are compared, never
//! dereferenced, unless found on the calling thread's own stack; the
//! memory profile's block headers point into metric rows, which the profile
//! layer keeps when they are still pointed at (`Rows::keep`).

use crate::sys::sysinfo::gettid;
use std::ptr;
use std::sync::atomic::{AtomicI32, AtomicPtr, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use super::{InternalWork, ThreadData};
use crate::tree::node::Node;

static HEAD: AtomicPtr<ThreadData> = AtomicPtr::new(ptr::null_mut());
static NEXT_TID: AtomicU32 = AtomicU32::new(2);
static THREAD_HINT: AtomicPtr<()> = AtomicPtr::new(ptr::null_mut());
/// Walks of the list in progress (see the module documentation).
static WALKERS: AtomicUsize = AtomicUsize::new(0);

/// What the registry's lock guards: the thread numbers in use, changes to
/// the list (readers take no lock), and the trees that ended while the
/// list was being walked.
pub(crate) struct Registry {
    /// Bit `n` set: thread number `n` is taken.
    used: Vec<u64>,
    /// Unlinked trees not freed yet (a walker was about).
    #[allow(
        clippy::vec_box,
        reason = "a walker may still read the tree where it is: it must not move"
    )]
    ended: Vec<Box<ThreadData>>,
}

impl Registry {
    fn contains(&self, n: u32) -> bool {
        self.used
            .get(n as usize / 64)
            .is_some_and(|w| w & (1 << (n % 64)) != 0)
    }

    fn insert(&mut self, n: u32) {
        let i = n as usize / 64;
        if i >= self.used.len() {
            self.used.resize(i + 1, 0);
        }
        self.used[i] |= 1 << (n % 64);
    }

    /// The next number not taken, now taken.
    fn fresh(&mut self) -> u32 {
        loop {
            let n = NEXT_TID.fetch_add(1, Ordering::Relaxed);
            if !self.contains(n) {
                self.insert(n);
                return n;
            }
        }
    }
}

static REGISTRY: Mutex<Registry> = Mutex::new(Registry {
    used: Vec::new(),
    ended: Vec::new(),
});

fn registry() -> MutexGuard<'static, Registry> {
    REGISTRY.lock().unwrap_or_else(|p| p.into_inner())
}

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
    registry().fresh()
}

fn choose_tid(unix_tid: i32, reserved: Option<u32>) -> u32 {
    if let Some(n) = reserved {
        return n;
    }
    let mut reg = registry();
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
    match proposal {
        Some(n) if !reg.contains(n) => {
            reg.insert(n);
            n
        }
        _ => reg.fresh(),
    }
}

/// The calling thread's tree, or null before its first instrumented call.
#[inline(always)]
pub(crate) fn current() -> *const ThreadData {
    crate::tree::tls::get() as *const ThreadData
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
        // SAFETY: the calling thread's own tree (freed only once the thread ended it).
        return unsafe { &*existing };
    }
    // On a work stack: a thread's stack may be as small as the C library
    // allows, and the set-up (the tree, its metrics' stampers, the
    // thread's signal stack) needs more than its frames.
    crate::sys::own::own_work(|| {
        crate::sys::workstack::on_work_stack(|| {
            // A thread started without a tree (`lazy`): its tree now, with
            // its root region entered first, as of its start.
            super::lazy::make_tree(|i| {
                let td = register_new(mode, i.start_wall, Some(i.tid));
                let m = td.mode();
                // SAFETY: the calling thread's own, new tree.
                let node = unsafe { td.enter(i.site, i.site.id(), m) };
                // SAFETY: just entered: the top of this thread's stack.
                let n = unsafe { &*node };
                if m & crate::tree::bits::WALL != 0 {
                    n.wall_enter.store(i.start_wall, Ordering::Relaxed);
                }
                if m & crate::tree::bits::CPU != 0 {
                    n.cpu_enter.store(i.start_cpu, Ordering::Relaxed);
                }
                (td, node as usize as u64)
            })
            .unwrap_or_else(|| register_new(mode, start_wall, reserved))
        })
    })
}

/// The number of the calling thread (kernel id `unix_tid`) as its
/// registration would choose it: `reserved` when given, else the hint's
/// proposal or a fresh one.
pub(crate) fn number_for(unix_tid: i32, reserved: Option<u32>) -> u32 {
    choose_tid(unix_tid, reserved)
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
    {
        // Pushed under the registry's lock: a tree that ends unlinks
        // itself from anywhere in the list.
        let _reg = registry();
        td.next.store(HEAD.load(Ordering::SeqCst), Ordering::SeqCst);
        HEAD.store(td as *const _ as *mut _, Ordering::SeqCst);
    }
    // Bits added while this tree was being registered: either
    // `add_mode_bits` found it in the list, or they are seen here.
    std::sync::atomic::fence(Ordering::SeqCst);
    let added = ADDED_BITS.load(Ordering::SeqCst);
    if added & !td.mode() != 0 {
        td.gain_mode_bits(added);
    }
    crate::tree::tls::set(td as *const ThreadData as *const ());
    if !is_main_thread(unix_tid) && !ON_THREAD_END.load(Ordering::Acquire).is_null() {
        // A key whose destructor ends the tree when the thread exits (for
        // threads no layer announces the end of, and those cancelled; the
        // main thread's tree lasts until the process's profile). Not a
        // thread-local's destructor: its registration `calloc`s, which
        // costs a thread that allocates nothing else the C library's
        // per-thread `malloc` cache (`sys::exit_key`).
        if !END_KEY.arm() {
            let _ = THREAD_END.try_with(|_| {});
        }
    }
    let hook = ON_NEW_THREAD.load(Ordering::Acquire);
    if !hook.is_null() {
        // SAFETY: only `fn()` values are stored in ON_NEW_THREAD.
        let f: fn() = unsafe { std::mem::transmute::<*mut (), fn()>(hook) };
        f();
    }
    td
}

static ON_NEW_THREAD: AtomicPtr<()> = AtomicPtr::new(ptr::null_mut());

/// What ends a thread's tree when the thread exits (set by `runtime`).
static ON_THREAD_END: AtomicPtr<()> = AtomicPtr::new(ptr::null_mut());

/// Installs the function that ends the calling thread's tree at its exit
/// (the profile layer keeps what the profile needs, then
/// [`unregister_current`]): called from a thread-local destructor on
/// threads that registered a tree, unless the tree ended before (the
/// attach layer announces a thread's end).
pub(crate) fn set_thread_end_hook(hook: fn()) {
    ON_THREAD_END.store(hook as *mut (), Ordering::Release);
}

/// The end of the calling thread's tree at its exit, unless it ended
/// before (the attach layer announces a thread's end).
fn end_at_exit() {
    let hook = ON_THREAD_END.load(Ordering::Acquire);
    if !hook.is_null() && !current().is_null() {
        // SAFETY: only `fn()` values are stored in ON_THREAD_END.
        let f: fn() = unsafe { std::mem::transmute::<*mut (), fn()>(hook) };
        // The thread's own stack may be small (see `sys::workstack`); a
        // panic must not leave a destructor (the process would abort).
        let _ = std::panic::catch_unwind(|| {
            crate::sys::own::own_work(|| crate::sys::workstack::on_work_stack(f))
        });
    }
}

unsafe extern "C" fn end_key_dtor(_: *mut std::ffi::c_void) {
    end_at_exit();
}

static END_KEY: crate::sys::exit_key::ExitKey = crate::sys::exit_key::ExitKey::new(end_key_dtor);

/// Where no key could be made: a thread-local's destructor.
struct ThreadEnd;

impl Drop for ThreadEnd {
    fn drop(&mut self) {
        end_at_exit();
    }
}

thread_local! {
    static THREAD_END: ThreadEnd = const { ThreadEnd };
}

/// A walk of the thread list in progress: trees that end meanwhile are
/// not freed until it is dropped (see the module documentation).
/// Async-signal-safe.
pub(crate) struct Pin(());

impl Pin {
    pub(crate) fn new() -> Pin {
        WALKERS.fetch_add(1, Ordering::SeqCst);
        Pin(())
    }
}

impl Drop for Pin {
    fn drop(&mut self) {
        WALKERS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The calling thread's tree ends: it leaves the list, the thread-local
/// pointer forgets it (a later instrumented call on this thread would
/// start a new tree), and it is freed once no walk of the list can hold
/// it (with those that ended before). The caller has kept what the
/// profile needs of it; its trace buffer, if any, must not be read again
/// (the profile layer does not end trees while the timeline is on).
pub(crate) fn unregister_current() {
    let me = current() as *mut ThreadData;
    if me.is_null() {
        return;
    }
    crate::tree::tls::set(ptr::null());
    // SAFETY: this thread's own tree, still registered.
    unsafe { (*me).fold_heap_share() };
    let free = {
        let mut reg = registry();
        // SAFETY: registered trees are only freed here, after unlinking.
        let next = unsafe { (*me).next.load(Ordering::SeqCst) };
        let mut link: &AtomicPtr<ThreadData> = &HEAD;
        loop {
            let p = link.load(Ordering::SeqCst);
            if p.is_null() {
                break; // not in the list (a `fork` child's other trees)
            }
            if p == me {
                link.store(next, Ordering::SeqCst);
                break;
            }
            // SAFETY: linked trees are alive; the list changes only under
            // the registry's lock, which is held.
            link = unsafe { &(*p).next };
        }
        // SAFETY: leaked at registration; unlinked above, and the
        // thread-local pointer no longer reaches it: once no walker holds
        // it, nothing does.
        reg.ended.push(unsafe { Box::from_raw(me) });
        if WALKERS.load(Ordering::SeqCst) == 0 {
            std::mem::take(&mut reg.ended)
        } else {
            Vec::new()
        }
    };
    drop(free);
}

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

/// Holds the registry's lock (thread numbers, the list's changes) across
/// a `fork`, so that the child does not inherit it locked by a thread it
/// does not have.
pub(crate) fn lock_for_fork() -> MutexGuard<'static, Registry> {
    registry()
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
    // Walks in progress at the fork were on threads the child does not
    // have.
    WALKERS.store(0, Ordering::SeqCst);
    let me = current();
    if me.is_null() {
        HEAD.store(ptr::null_mut(), Ordering::Release);
        return;
    }
    // SAFETY: the calling thread's own tree (alive until it ends it), and
    // it is the only thread (caller contract).
    let td = unsafe { &*me };
    td.next.store(ptr::null_mut(), Ordering::Release);
    // SAFETY: as above.
    unsafe { td.restart_counts(wall, cpu) };
    HEAD.store(me as *mut ThreadData, Ordering::Release);
}

/// Every live thread's tree, in no particular order. Lock-free and
/// async-signal-safe. A tree seen here stays alive until the walk ends
/// (hold a [`Pin`] to keep one longer).
pub(crate) fn for_each_thread(f: impl FnMut(&ThreadData)) {
    let pin = Pin::new();
    for_each_thread_in(&pin, f);
}

/// As [`for_each_thread`], for trees used after the walk: they stay alive
/// as long as `pin`.
pub(crate) fn for_each_thread_in<'p>(_pin: &'p Pin, mut f: impl FnMut(&'p ThreadData)) {
    let mut p = HEAD.load(Ordering::SeqCst);
    while !p.is_null() {
        // SAFETY: a linked tree is freed only once no walk that could
        // have reached it is in progress (module documentation); this one
        // is counted until `_pin` is dropped.
        let td = unsafe { &*p };
        f(td);
        p = td.next.load(Ordering::SeqCst);
    }
}

/// Marks the engine's own work on the calling thread (if it has a tree)
/// until the value is dropped.
pub(crate) fn internal_work() -> Option<InternalWork<'static>> {
    let td = current();
    // SAFETY: the calling thread's own tree (freed only once the thread ended it).
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
