//! Sampling inside Dr.Hook regions (`DR_HOOK_OPT=sample`): each thread
//! with a calling tree gets a timer on its own CPU-time clock
//! (`timer_create(CLOCK_THREAD_CPUTIME_ID)`, `SIGEV_THREAD_ID`) firing
//! `DR_HOOK_SAMPLE_HZ` times per second of its CPU time, with a real-time
//! signal no handler was installed for (chosen once, from `SIGRTMAX`
//! down; `SA_RESTART`). The handler, on the sampled thread, reads the
//! regions active on it (its tree's `current` and the parents above:
//! immutable, lock-free) and unwinds the native stack (`unwind`), and
//! counts the stack in the thread's table (`table`), allocated when the
//! thread started. The kernel checks thread CPU-time timers at its tick
//! (`CONFIG_HZ`, often 250 Hz): above that rate a signal comes at each
//! tick with the periods that expired meanwhile as its overrun, and the
//! sample counts for all of them (`timer_getoverrun`), so that counts
//! stay proportional to CPU time. A sample that falls in the engine's own work (a new
//! node, a profile write: the tree's internal-work depth) is dropped and
//! counted. The profile writer stops sampling first ([`stop`]: every
//! timer deleted, the handler does nothing afterwards), then reads the
//! tables (`profile::sample` symbolises and writes them).
//!
//! A thread's timer is deleted when its tree ends; its table stays for the
//! profile. In a `fork` child (timers are not inherited) the forking
//! thread's table is emptied and a new timer created: the child samples
//! from the fork on, for its own profile.

pub(crate) mod table;
mod unwind;

use std::cell::{Cell, UnsafeCell};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicU32, Ordering};

use crate::tree::thread;
use table::{FRAMES, REGIONS, Table};

/// One sampled thread: its table, unwind cache and stack end.
pub(crate) struct Sampled {
    pub(crate) table: Table,
    cache: UnsafeCell<Box<unwind::Cache>>,
    stack_top: u64,
    next: AtomicPtr<Sampled>,
}

// SAFETY: `cache` is used only by the owning thread's handler (guarded by
// the table's `busy` flag); the rest is atomic or immutable.
unsafe impl Sync for Sampled {}
// SAFETY: as above.
unsafe impl Send for Sampled {}

/// The signal chosen (0: sampling never started).
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// Samples per second of thread CPU time.
static HZ: AtomicU32 = AtomicU32::new(0);
/// Set by [`stop`]: no sample is taken any more.
static STOPPED: AtomicBool = AtomicBool::new(false);
/// Every sampled thread of the process (never freed).
static HEAD: AtomicPtr<Sampled> = AtomicPtr::new(std::ptr::null_mut());

thread_local! {
    static MINE: Cell<*const Sampled> = const { Cell::new(std::ptr::null()) };
}

/// What receives the signals of the sample signal that are not the
/// timers' (set by `runtime`: the program's disposition in the preload
/// layer's view of its signals).
static FOREIGN: AtomicPtr<()> = AtomicPtr::new(std::ptr::null_mut());

/// Installs the receiver of the sample signal's other signals.
pub(crate) fn set_foreign_handler(f: fn(i32, *mut libc::siginfo_t, *mut libc::c_void)) {
    FOREIGN.store(f as *mut (), Ordering::Release);
}

/// The signal the sampler took (0: none).
pub(crate) fn signal() -> i32 {
    SIGNAL.load(Ordering::Acquire)
}

/// Marks the timer's signals (`sigev_value`).
const MAGIC: usize = 0x5a4d_504c;

/// Starts sampling at `hz` (once): the unwinder, the signal and its
/// handler, and the calling thread's timer if it has a tree. Returns the
/// signal, or why sampling cannot start.
pub(crate) fn start(hz: u32) -> Result<i32, String> {
    if !cfg!(target_arch = "x86_64") {
        return Err("sampling is implemented on x86_64 only".into());
    }
    let s = SIGNAL.load(Ordering::Acquire);
    if s != 0 {
        return Ok(s);
    }
    HZ.store(hz.max(1), Ordering::Relaxed);
    unwind::refresh();
    let sig = install_handler()?;
    SIGNAL.store(sig, Ordering::Release);
    on_new_thread();
    Ok(sig)
}

/// The first real-time signal from `SIGRTMAX` down with no handler, now
/// Dr.Hook's sample handler.
fn install_handler() -> Result<i32, String> {
    let (lo, hi) = (libc::SIGRTMIN() + 2, libc::SIGRTMAX());
    for sig in (lo..=hi).rev() {
        // SAFETY: plain data filled by the query.
        let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: a query; valid pointer.
        if unsafe { libc::sigaction(sig, std::ptr::null(), &mut old) } != 0
            || old.sa_sigaction != libc::SIG_DFL
        {
            continue;
        }
        // SAFETY: plain data.
        let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
        act.sa_sigaction = on_signal as *const () as usize;
        act.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
        // SAFETY: a valid sigset.
        unsafe { libc::sigemptyset(&mut act.sa_mask) };
        // SAFETY: valid pointers; the handler is async-signal-safe.
        if unsafe { libc::sigaction(sig, &act, std::ptr::null_mut()) } == 0 {
            return Ok(sig);
        }
    }
    Err("no real-time signal without a handler is left".into())
}

/// Sets up the calling thread (its tree just registered): its table,
/// unwind cache and timer. Nothing unless sampling started.
pub(crate) fn on_new_thread() {
    let sig = SIGNAL.load(Ordering::Acquire);
    if sig == 0 || STOPPED.load(Ordering::Acquire) || !MINE.with(|m| m.get()).is_null() {
        return;
    }
    let td = thread::current();
    if td.is_null() {
        return;
    }
    // SAFETY: the calling thread's own tree.
    let tid = unsafe { (*td).tid };
    unwind::refresh();
    let Some(table) = Table::new(tid) else { return };
    let s = Box::into_raw(Box::new(Sampled {
        table,
        cache: UnsafeCell::new(unwind::new_cache()),
        stack_top: stack_top(),
        next: AtomicPtr::new(std::ptr::null_mut()),
    }));
    // SAFETY: just allocated, never freed.
    let sr = unsafe { &*s };
    let mut head = HEAD.load(Ordering::Acquire);
    loop {
        sr.next.store(head, Ordering::Relaxed);
        match HEAD.compare_exchange_weak(head, s, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => break,
            Err(h) => head = h,
        }
    }
    MINE.with(|m| m.set(s));
    arm(sr, sig);
}

/// The end of the calling thread's stack (0: unknown; the unwind then
/// stops at the interrupted frame).
fn stack_top() -> u64 {
    // SAFETY: plain data filled by pthread_getattr_np.
    let mut attr: libc::pthread_attr_t = unsafe { std::mem::zeroed() };
    // SAFETY: the calling thread; attr destroyed below.
    if unsafe { libc::pthread_getattr_np(libc::pthread_self(), &mut attr) } != 0 {
        return 0;
    }
    let mut addr = std::ptr::null_mut();
    let mut size = 0;
    // SAFETY: an initialised attr; valid out-pointers.
    let r = unsafe { libc::pthread_attr_getstack(&attr, &mut addr, &mut size) };
    // SAFETY: initialised by pthread_getattr_np.
    unsafe { libc::pthread_attr_destroy(&mut attr) };
    if r != 0 { 0 } else { addr as u64 + size as u64 }
}

/// Creates and starts the calling thread's timer.
fn arm(s: &Sampled, sig: i32) {
    // SAFETY: plain data.
    let mut sev: libc::sigevent = unsafe { std::mem::zeroed() };
    sev.sigev_notify = libc::SIGEV_THREAD_ID;
    sev.sigev_signo = sig;
    sev.sigev_value = libc::sigval {
        sival_ptr: MAGIC as *mut libc::c_void,
    };
    // SAFETY: gettid has no preconditions.
    sev.sigev_notify_thread_id = unsafe { libc::gettid() };
    let mut timer: libc::timer_t = std::ptr::null_mut();
    // SAFETY: valid pointers; the calling thread's CPU clock.
    if unsafe { libc::timer_create(libc::CLOCK_THREAD_CPUTIME_ID, &mut sev, &mut timer) } != 0 {
        return;
    }
    let ns = 1_000_000_000 / HZ.load(Ordering::Relaxed).max(1) as i64;
    let period = libc::timespec {
        tv_sec: ns / 1_000_000_000,
        tv_nsec: ns % 1_000_000_000,
    };
    let spec = libc::itimerspec {
        it_interval: period,
        it_value: period,
    };
    // SAFETY: the timer just created; a valid spec.
    unsafe { libc::timer_settime(timer, 0, &spec, std::ptr::null_mut()) };
    s.table.timer.store(timer as usize, Ordering::Release);
}

/// Deletes the timer of `s` (if any).
fn disarm(s: &Sampled) {
    let t = s.table.timer.swap(0, Ordering::AcqRel);
    if t != 0 {
        // SAFETY: a timer this process created, deleted once (the swap).
        unsafe { libc::timer_delete(t as libc::timer_t) };
    }
}

/// The calling thread's tree ends: its timer is deleted (its samples stay
/// for the profile).
pub(crate) fn on_thread_end() {
    let s = MINE.with(|m| m.replace(std::ptr::null()));
    // SAFETY: tables are never freed.
    if let Some(s) = unsafe { s.as_ref() } {
        disarm(s);
    }
}

/// Stops sampling for good (the profile is being written): no sample is
/// taken after this returns, every timer is deleted.
pub(crate) fn stop() {
    if SIGNAL.load(Ordering::Acquire) == 0 || STOPPED.swap(true, Ordering::AcqRel) {
        return;
    }
    each(disarm);
}

/// Calls `f` on every sampled thread of the process.
pub(crate) fn each(mut f: impl FnMut(&Sampled)) {
    let mut p = HEAD.load(Ordering::Acquire);
    // SAFETY: list entries are never freed.
    while let Some(s) = unsafe { p.as_ref() } {
        f(s);
        p = s.next.load(Ordering::Acquire);
    }
}

/// Whether any sample was taken in this process (a `fork` child's: since
/// the fork).
pub(crate) fn has_samples() -> bool {
    let mut any = false;
    each(|s| any |= s.table.taken.load(Ordering::Relaxed) > 0);
    any
}

/// Whether sampling started (the signal, the rate).
pub(crate) fn started() -> Option<(i32, u32)> {
    let s = SIGNAL.load(Ordering::Acquire);
    (s != 0).then(|| (s, HZ.load(Ordering::Relaxed)))
}

/// In a `fork` child: the parent's threads are gone; the forking thread
/// samples again (timers are not inherited), from an empty table.
pub(crate) fn after_fork_child() {
    let sig = SIGNAL.load(Ordering::Acquire);
    if sig == 0 {
        return;
    }
    let me = MINE.with(|m| m.get()) as *mut Sampled;
    HEAD.store(std::ptr::null_mut(), Ordering::Release);
    // SAFETY: tables are never freed (the child has its copy).
    let Some(s) = (unsafe { me.as_ref() }) else {
        return;
    };
    s.table.timer.store(0, Ordering::Relaxed);
    s.table.busy.store(false, Ordering::Relaxed);
    s.table.clear();
    s.next.store(std::ptr::null_mut(), Ordering::Relaxed);
    HEAD.store(me, Ordering::Release);
    if !STOPPED.load(Ordering::Acquire) {
        arm(s, sig);
    }
}

/// The sample handler.
extern "C" fn on_signal(sig: i32, info: *mut libc::siginfo_t, uc: *mut libc::c_void) {
    if info.is_null() || uc.is_null() {
        return;
    }
    // SAFETY: the kernel's siginfo for an SA_SIGINFO handler.
    let (code, value) = unsafe { ((*info).si_code, (*info).si_value().sival_ptr as usize) };
    if code != libc::SI_TIMER || value != MAGIC {
        // Not a sample: the program's (a `kill`, `sigqueue`, its own timer).
        let f = FOREIGN.load(Ordering::Acquire);
        if !f.is_null() {
            // SAFETY: only such `fn`s are stored in FOREIGN.
            let f: fn(i32, *mut libc::siginfo_t, *mut libc::c_void) =
                unsafe { std::mem::transmute(f) };
            f(sig, info, uc);
        }
        return;
    }
    if STOPPED.load(Ordering::Relaxed) {
        return;
    }
    let s = MINE.with(|m| m.get());
    // SAFETY: tables are never freed.
    let Some(s) = (unsafe { s.as_ref() }) else {
        return;
    };
    if s.table.busy.swap(true, Ordering::Acquire) {
        return;
    }
    // SAFETY: the errno location of the calling thread.
    let errno = unsafe { *libc::__errno_location() };
    sample(s, uc);
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = errno };
    s.table.busy.store(false, Ordering::Release);
}

fn sample(s: &Sampled, uc: *mut libc::c_void) {
    // The kernel checks thread CPU-time timers at its tick: above the
    // tick's rate, one signal stands for the periods that expired since
    // the last (the overrun), and counts for all of them.
    let timer = s.table.timer.load(Ordering::Relaxed);
    let overrun = if timer == 0 {
        0
    } else {
        // SAFETY: the thread's own live timer (deleted only by this
        // thread or by `stop`, after which no sample is taken);
        // timer_getoverrun is a system call.
        unsafe { libc::timer_getoverrun(timer as libc::timer_t) }.max(0) as u64
    };
    let weight = 1 + overrun;
    s.table.taken.fetch_add(weight, Ordering::Relaxed);
    let td = thread::current();
    // SAFETY: the calling thread's own tree (alive while registered).
    let Some(td) = (unsafe { td.as_ref() }) else {
        return;
    };
    if td.in_internal_work() {
        s.table.in_engine.fetch_add(weight, Ordering::Relaxed);
        return;
    }
    let mut regions = [0usize; REGIONS];
    let mut nr = 0;
    let mut p = td.current();
    while nr < REGIONS && !p.is_null() && p != td.root {
        // SAFETY: nodes of the calling thread's own stack (the chain of
        // parents is immutable); sites are 'static.
        let (site, parent) = unsafe { ((*p).site, (*p).parent) };
        if site.is_null() {
            break;
        }
        regions[nr] = site as usize;
        nr += 1;
        p = parent;
    }
    let mut frames = [0u64; FRAMES];
    // SAFETY: `uc` is the handler's ucontext.
    let regs = unsafe { unwind::regs_of(uc) };
    // SAFETY: the cache is this thread's, used only here (`busy`).
    let cache = unsafe { &mut *s.cache.get() };
    let nf = unwind::unwind(&regs, s.stack_top, cache, &mut frames);
    s.table.record(&regions[..nr], &frames[..nf], weight);
}
