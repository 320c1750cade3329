//! Threads without a tree yet: a thread started through the attach layer
//! (`lifecycle::thread_begin`) gets, instead of a calling tree, a small
//! record of what its profile line needs — its number, the site of its
//! root region `thread:<start routine>`, its start's wall (and CPU)
//! stamps, its kernel thread id. Most threads of a pool or a library
//! never call an instrumented routine: they cost this record (no tree,
//! no metric rows, no thread-specific key; only the alternate signal
//! stack, which `lifecycle::thread_begin` sets up so that a stack overflow
//! is still reported) instead of a tree made and freed (issue 29).
//!
//! **The tree is made at the thread's first Dr.Hook event**
//! ([`super::register_current_as`], the engine's slow path for a thread
//! with no tree): the root region is entered first, back-dated to the
//! recorded start, so the tree is the one an eager start would have made.
//! The record then leaves the list of live records and keeps only the
//! root region's token for the thread's end.
//!
//! **A thread that ends without a tree** (`lifecycle::thread_end`) gives
//! its root region's figures (one call, its wall and CPU time) straight to
//! the ended threads' store (`profile::ended`), which holds this list's
//! lock too: the profile writer walks the live trees, the live records
//! and the ended blocks under both locks, so a thread that ends or makes
//! its tree meanwhile is seen exactly once.
//!
//! Records are never freed: one that ended goes to a free list for the
//! next thread. A reader without the lock (the crash handler, which takes
//! none) may therefore see a record change under it, but never freed
//! memory; its fields are atomics.
//!
//! Which threads start lazily is the caller's decision
//! (`lifecycle::thread_begin`): none when something needs the tree from
//! the thread's start (per-routine metrics such as the memory profile,
//! sampling, the timeline, watch points and per-call stampers, GPU
//! regions, timed kills).

use std::cell::Cell;
use std::ptr;
use std::sync::atomic::{AtomicI32, AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use crate::tree::site::Site;

/// One thread without a tree (see the module documentation).
pub(crate) struct Lazy {
    /// Dr.Hook thread number.
    tid: AtomicU32,
    /// Kernel thread id.
    unix_tid: AtomicI32,
    /// The root region's site (`thread:<start routine>`), registered.
    site: AtomicPtr<Site>,
    /// Wall ticks at the thread's start.
    start_wall: AtomicU64,
    /// The thread's CPU clock at its start (ns; 0 when CPU time is not
    /// measured).
    start_cpu: AtomicU64,
    /// The root region's token once the thread made its tree (0: none).
    token: AtomicU64,
    /// The next record of the live list (or of the free list).
    next: AtomicPtr<Lazy>,
    /// The previous record of the live list (under the lock).
    prev: AtomicPtr<Lazy>,
}

/// A copy of a record's figures.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LazyInfo {
    pub(crate) tid: u32,
    pub(crate) unix_tid: i32,
    pub(crate) site: &'static Site,
    pub(crate) start_wall: u64,
    pub(crate) start_cpu: u64,
}

impl Lazy {
    /// The record's figures; None while it is being filled or reused.
    pub(crate) fn info(&self) -> Option<LazyInfo> {
        let site = self.site.load(Ordering::Acquire);
        // SAFETY: only registered, 'static sites are stored.
        let site = unsafe { site.as_ref() }?;
        Some(LazyInfo {
            tid: self.tid.load(Ordering::Relaxed),
            unix_tid: self.unix_tid.load(Ordering::Relaxed),
            site,
            start_wall: self.start_wall.load(Ordering::Relaxed),
            start_cpu: self.start_cpu.load(Ordering::Relaxed),
        })
    }

    /// The root region's token once the thread made its tree (0: none).
    pub(crate) fn token(&self) -> u64 {
        self.token.load(Ordering::Acquire)
    }
}

/// What the lock guards: the free records (the live list's changes too;
/// its head is [`LIVE`], which lock-free readers load).
pub(crate) struct List {
    free: *mut Lazy,
}

// SAFETY: the pointers are records that live for ever, reached only
// under the lock.
unsafe impl Send for List {}

static LOCK: Mutex<List> = Mutex::new(List {
    free: ptr::null_mut(),
});
/// The first live record (changed under [`LOCK`]).
static LIVE: AtomicPtr<Lazy> = AtomicPtr::new(ptr::null_mut());

thread_local! {
    /// The calling thread's record while it has one.
    static MINE: Cell<*const Lazy> = const { Cell::new(ptr::null()) };
}

fn lock() -> MutexGuard<'static, List> {
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// The list's lock, held (the profile writer, a `fork`, a thread that
/// ends without a tree).
pub(crate) struct Held(MutexGuard<'static, List>);

/// Takes the list's lock. Order: after the ended threads' store, before
/// the sites' and the registry's locks.
pub(crate) fn hold() -> Held {
    Held(lock())
}

/// The calling thread's record (null: none).
pub(crate) fn mine() -> *const Lazy {
    MINE.with(|m| m.get())
}

/// The calling thread starts without a tree: its record, in the live
/// list. `site` is registered (has its id).
pub(crate) fn begin(info: LazyInfo) -> &'static Lazy {
    let mut l = lock();
    let r: &'static Lazy = match l.free {
        p if !p.is_null() => {
            // SAFETY: records live for ever; the free list changes only
            // under the lock, which is held.
            let r = unsafe { &*p };
            l.free = r.next.load(Ordering::Relaxed);
            r
        }
        _ => Box::leak(Box::new(Lazy {
            tid: AtomicU32::new(0),
            unix_tid: AtomicI32::new(0),
            site: AtomicPtr::new(ptr::null_mut()),
            start_wall: AtomicU64::new(0),
            start_cpu: AtomicU64::new(0),
            token: AtomicU64::new(0),
            next: AtomicPtr::new(ptr::null_mut()),
            prev: AtomicPtr::new(ptr::null_mut()),
        })),
    };
    r.tid.store(info.tid, Ordering::Relaxed);
    r.unix_tid.store(info.unix_tid, Ordering::Relaxed);
    r.start_wall.store(info.start_wall, Ordering::Relaxed);
    r.start_cpu.store(info.start_cpu, Ordering::Relaxed);
    r.token.store(0, Ordering::Relaxed);
    r.site
        .store(info.site as *const Site as *mut Site, Ordering::Release);
    let head = LIVE.load(Ordering::Relaxed);
    r.prev.store(ptr::null_mut(), Ordering::Relaxed);
    r.next.store(head, Ordering::Relaxed);
    if !head.is_null() {
        // SAFETY: a live record (records live for ever).
        unsafe {
            (*head)
                .prev
                .store(r as *const Lazy as *mut Lazy, Ordering::Relaxed)
        };
    }
    LIVE.store(r as *const Lazy as *mut Lazy, Ordering::Release);
    drop(l);
    MINE.with(|m| m.set(r));
    r
}

/// Takes `r` out of the live list (the lock held).
fn unlink(_l: &mut List, r: &Lazy) {
    let next = r.next.load(Ordering::Relaxed);
    let prev = r.prev.load(Ordering::Relaxed);
    if prev.is_null() {
        if std::ptr::eq(LIVE.load(Ordering::Relaxed), r) {
            LIVE.store(next, Ordering::Release);
        }
    } else {
        // SAFETY: live records (records live for ever).
        unsafe { (*prev).next.store(next, Ordering::Release) };
    }
    if !next.is_null() {
        // SAFETY: as above.
        unsafe { (*next).prev.store(prev, Ordering::Relaxed) };
    }
    r.prev.store(ptr::null_mut(), Ordering::Relaxed);
}

/// Gives `r` back to the free list (the lock held); it is no longer the
/// calling thread's.
fn free(l: &mut List, r: &Lazy) {
    r.site.store(ptr::null_mut(), Ordering::Release);
    r.next.store(l.free, Ordering::Relaxed);
    l.free = r as *const Lazy as *mut Lazy;
    MINE.with(|m| {
        if ptr::eq(m.get(), r) {
            m.set(ptr::null());
        }
    });
}

/// The calling thread ends without having made its tree (`h`: the lock,
/// held by the caller, which keeps the thread's figures): its record
/// leaves the live list and is freed.
pub(crate) fn end_untreed(h: &mut Held, r: &Lazy) {
    unlink(&mut h.0, r);
    free(&mut h.0, r);
}

/// The calling thread, which made its tree, ends: its record is freed.
pub(crate) fn end_treed(r: &Lazy) {
    let mut l = lock();
    free(&mut l, r);
}

/// Makes the calling thread's tree from its record with `make(info)`,
/// which registers the tree and enters the root region (back-dated) and
/// returns its token; the record then leaves the live list. Under the
/// list's lock, so that the profile writer sees either the record or the
/// tree. None when the thread has no record waiting for its tree.
pub(crate) fn make_tree<R>(make: impl FnOnce(LazyInfo) -> (R, u64)) -> Option<R> {
    let r = mine();
    if r.is_null() {
        return None;
    }
    // SAFETY: records live for ever; this one is the calling thread's.
    let r = unsafe { &*r };
    if r.token() != 0 {
        return None;
    }
    let info = r.info()?;
    let mut l = lock();
    let (out, token) = make(info);
    r.token.store(token, Ordering::Release);
    unlink(&mut l, r);
    Some(out)
}

/// Every live record's figures (the lock held).
pub(crate) fn for_each(_h: &Held, mut f: impl FnMut(&LazyInfo)) {
    let mut p = LIVE.load(Ordering::Acquire);
    while !p.is_null() {
        // SAFETY: records live for ever.
        let r = unsafe { &*p };
        if let Some(i) = r.info() {
            f(&i);
        }
        p = r.next.load(Ordering::Acquire);
    }
}

/// As [`for_each`] without the lock, async-signal-safe (the crash
/// handler): a record that ends or is reused meanwhile may be missed or
/// seen as it is then; at most `limit` records.
pub(crate) fn for_each_unlocked(limit: usize, mut f: impl FnMut(&LazyInfo)) {
    let mut p = LIVE.load(Ordering::Acquire);
    let mut n = 0;
    while !p.is_null() && n < limit {
        // SAFETY: records live for ever.
        let r = unsafe { &*p };
        if let Some(i) = r.info() {
            f(&i);
        }
        n += 1;
        p = r.next.load(Ordering::Acquire);
    }
}

/// In a `fork` child (`h` taken before the fork): only the calling
/// thread exists, so only its record stays live, started again at the
/// fork (`wall`, `cpu`).
pub(crate) fn clear_in_child(h: &mut Held, wall: u64, cpu: u64) {
    let me = mine();
    let mut p = LIVE.load(Ordering::Acquire);
    while !p.is_null() {
        // SAFETY: records live for ever.
        let r = unsafe { &*p };
        let next = r.next.load(Ordering::Relaxed);
        if !ptr::eq(r, me) {
            unlink(&mut h.0, r);
            r.site.store(ptr::null_mut(), Ordering::Release);
            r.next.store(h.0.free, Ordering::Relaxed);
            h.0.free = p;
        } else {
            r.start_wall.store(wall, Ordering::Relaxed);
            r.start_cpu.store(cpu, Ordering::Relaxed);
            // SAFETY: getpid has no preconditions (the child's only
            // thread is its main thread).
            r.unix_tid
                .store(unsafe { libc::getpid() }, Ordering::Relaxed);
        }
        p = next;
    }
}
