//! Crash tracebacks: signal handlers that print every thread's Dr.Hook
//! calling tree, a native backtrace, and write the profile.
//!
//! What the handler does, in order (compat §3.4, improved):
//! 1. a second fatal signal on the same thread ends the process at once;
//!    a signal on another thread while one is being handled waits for it
//!    (and is killed after the harakiri timeout);
//! 2. arms `alarm(DR_HOOK_HARAKIRI_TIMEOUT)` whose handler kills the
//!    process, so a crash never hangs;
//! 3. with several MPI tasks (or `DR_HOOK_USE_LOCKFILE=1`) takes an `flock`
//!    on `./drhook_lock` so the tasks print their tracebacks one after the
//!    other instead of interleaving them (the lock is released by the kernel
//!    even if a task is killed; the empty file stays);
//! 4. prints the signal, its cause, and the calling tree of every thread
//!    that is inside instrumented routines — the signalled thread first,
//!    then by thread number, each exactly once;
//! 5. in a forked helper process (bounded by a timeout, so a lock held by
//!    the crashed code cannot hang the program): the native backtrace of the
//!    signalled thread with module+offset and symbol names, and, except for
//!    SIGXCPU, the profile at its normal path;
//! 6. restores the default actions, calls the previously installed handler
//!    (unless `DR_HOOK_OPT=noprop`), and re-raises the signal with its
//!    default action, so the exit status is that of the signal.
//!
//! Steps 1–4 and 6 are async-signal-safe: no allocation, no locks, no
//! stdio — preallocated buffers, values cached at start-up, and `write(2)`.
//! Other threads' stacks are read through their top-of-stack pointer, whose
//! parent chain is immutable, so a thread entering or leaving routines
//! during the crash cannot corrupt the output.

use std::cell::{Cell, UnsafeCell};
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicU32, Ordering};

use super::calltree::{Scratch, opts_for, write_tree};
use crate::config::{Config, SignalList};
use crate::sys::linebuf::{LineBuf, prefix, write_all};
use crate::tree::node::Node;
use crate::tree::thread::{self, ThreadData};

const NSIG: usize = 65;

/// The reference's default set (SIGIOT is SIGABRT on Linux).
pub const DEFAULT_SIGNALS: &[i32] = &[
    libc::SIGABRT,
    libc::SIGBUS,
    libc::SIGSEGV,
    libc::SIGILL,
    libc::SIGSTKFLT,
    libc::SIGFPE,
    libc::SIGTRAP,
    libc::SIGINT,
    libc::SIGQUIT,
    libc::SIGTERM,
    libc::SIGXCPU,
    libc::SIGXFSZ,
    libc::SIGSYS,
];

/// Signals raised by the faulting instruction itself.
const SYNCHRONOUS: &[i32] = &[
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGILL,
    libc::SIGFPE,
    libc::SIGTRAP,
    libc::SIGSYS,
];

/// Name of a signal (`SIG#N` for those without one).
pub fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGSTKFLT => "SIGSTKFLT",
        libc::SIGCHLD => "SIGCHLD",
        libc::SIGCONT => "SIGCONT",
        libc::SIGSTOP => "SIGSTOP",
        libc::SIGTSTP => "SIGTSTP",
        libc::SIGTTIN => "SIGTTIN",
        libc::SIGTTOU => "SIGTTOU",
        libc::SIGURG => "SIGURG",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGVTALRM => "SIGVTALRM",
        libc::SIGPROF => "SIGPROF",
        libc::SIGWINCH => "SIGWINCH",
        libc::SIGIO => "SIGIO",
        libc::SIGPWR => "SIGPWR",
        libc::SIGSYS => "SIGSYS",
        _ => "SIG#",
    }
}

/// Signals `-1` selects: every signal whose default action ends the process,
/// except SIGKILL/SIGSTOP (uncatchable), SIGALRM (the harakiri alarm) and
/// glibc's reserved real-time signals 32 and 33.
pub fn catchable_fatal(sig: i32) -> bool {
    !matches!(
        sig,
        libc::SIGKILL
            | libc::SIGSTOP
            | libc::SIGALRM
            | libc::SIGCHLD
            | libc::SIGCONT
            | libc::SIGURG
            | libc::SIGWINCH
            | libc::SIGTSTP
            | libc::SIGTTIN
            | libc::SIGTTOU
            | 32
            | 33
    ) && (1..NSIG as i32).contains(&sig)
}

/// The signals to catch: the default set plus `catch`, minus `ignore`.
pub fn signals_to_catch(catch: &SignalList, ignore: &SignalList) -> Vec<i32> {
    let mut set: Vec<i32> = match catch {
        SignalList::All => (1..NSIG as i32).filter(|&s| catchable_fatal(s)).collect(),
        SignalList::Some(extra) => {
            let mut v = DEFAULT_SIGNALS.to_vec();
            v.extend(
                extra
                    .iter()
                    .copied()
                    .filter(|&s| s != libc::SIGKILL && s != libc::SIGSTOP && s != 32 && s != 33),
            );
            v
        }
        SignalList::None => DEFAULT_SIGNALS.to_vec(),
    };
    set.sort_unstable();
    set.dedup();
    set.retain(|&s| !ignore.contains(s));
    set
}

// --- state (all set before the handlers are installed) ----------------------

struct PrevTable(UnsafeCell<[MaybeUninit<libc::sigaction>; NSIG]>);
// SAFETY: entries are written only while installing (under INSTALL_LOCK,
// before the handler for that signal exists) and read by the handler.
unsafe impl Sync for PrevTable {}
static PREV: PrevTable = PrevTable(UnsafeCell::new([const { MaybeUninit::uninit() }; NSIG]));
static CAUGHT: [AtomicBool; NSIG] = [const { AtomicBool::new(false) }; NSIG];
static INSTALL_LOCK: std::sync::Mutex<bool> = std::sync::Mutex::new(false);
/// Set (after the handlers) once `install` has installed them.
static INSTALLED: AtomicBool = AtomicBool::new(false);
static NOPROP: AtomicBool = AtomicBool::new(false);
static HARAKIRI: AtomicU32 = AtomicU32::new(500);
static LOCKFILE: AtomicBool = AtomicBool::new(false);
static COREDUMP: AtomicBool = AtomicBool::new(false);
static PROFILE_ON_CRASH: AtomicBool = AtomicBool::new(false);
static NATIVE_BACKTRACE: AtomicBool = AtomicBool::new(true);
/// FE_* bits to enable on every instrumented thread (0 = none; -1 = disable all).
static TRAP_BITS: AtomicI32 = AtomicI32::new(0);
static HANDLING: AtomicI32 = AtomicI32::new(0);
static NSIGS: AtomicU32 = AtomicU32::new(0);
static PROGRAM: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());
static PROGRAM_LEN: AtomicU32 = AtomicU32::new(0);

thread_local! {
    /// Signal being handled on this thread (0 = none).
    static IN_HANDLER: Cell<i32> = const { Cell::new(0) };
}

const FE_INVALID: i32 = 0x01;
const FE_DIVBYZERO: i32 = 0x04;
const FE_OVERFLOW: i32 = 0x08;
const FE_ALL: i32 = 0x3d;

// Floating-point traps of the calling thread, as glibc's
// feenableexcept/fedisableexcept (libm). On x86-64 written here (the x87
// control word and MXCSR), so that the engine does not need libm: one
// library less to load in every process the preload library enters.
#[cfg(target_arch = "x86_64")]
unsafe fn set_fp_traps(excepts: i32, enable: bool) {
    let e = (excepts & FE_ALL) as u16;
    let mut cw: u16 = 0;
    let mut csr: u32 = 0;
    // SAFETY: reads and writes of the calling thread's FPU control words.
    unsafe {
        std::arch::asm!("fnstcw [{}]", in(reg) &mut cw, options(nostack));
        cw = if enable { cw & !e } else { cw | e };
        std::arch::asm!("fldcw [{}]", in(reg) &cw, options(nostack));
        std::arch::asm!("stmxcsr [{}]", in(reg) &mut csr, options(nostack));
        let bits = (e as u32) << 7;
        csr = if enable { csr & !bits } else { csr | bits };
        std::arch::asm!("ldmxcsr [{}]", in(reg) &csr, options(nostack));
    }
}

#[cfg(not(target_arch = "x86_64"))]
unsafe extern "C" {
    fn feenableexcept(excepts: i32) -> i32;
    fn fedisableexcept(excepts: i32) -> i32;
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn set_fp_traps(excepts: i32, enable: bool) {
    // SAFETY: glibc fenv functions on the calling thread.
    unsafe {
        if enable {
            feenableexcept(excepts);
        } else {
            fedisableexcept(excepts);
        }
    }
}

/// Installs the handlers described by `cfg` (once; later calls only report).
pub(crate) fn install(cfg: &Config, announce: bool) -> bool {
    let mut done = INSTALL_LOCK.lock().unwrap_or_else(|p| p.into_inner());
    if *done {
        return true;
    }
    let sc = &cfg.signals;
    let show = announce && cfg.show_options && !cfg.silent;
    let f = "signal_drhook_init";
    if !sc.install {
        if show {
            crate::diag!(f, "DR_HOOK_INIT_SIGNALS=0: no signal handlers installed");
        }
        return false;
    }
    NOPROP.store(cfg.options.noprop, Ordering::Relaxed);
    HARAKIRI.store(sc.harakiri_timeout, Ordering::Relaxed);
    LOCKFILE.store(
        sc.use_lockfile.unwrap_or(cfg.task.nproc > 1),
        Ordering::Relaxed,
    );
    COREDUMP.store(
        sc.allow_coredump
            .is_some_and(|c| c == -1 || c == cfg.task.myproc as i64),
        Ordering::Relaxed,
    );
    PROFILE_ON_CRASH.store(
        cfg.enabled
            && (cfg.options.profile.is_some()
                || cfg.options.mem.memprof
                || cfg.options.io
                || cfg.writes_trace())
            && cfg.profile_on_failure,
        Ordering::Relaxed,
    );
    NATIVE_BACKTRACE.store(sc.native_backtrace, Ordering::Relaxed);
    let program: &'static [u8] = Box::leak(
        crate::sys::sysinfo::program_name()
            .into_bytes()
            .into_boxed_slice(),
    );
    PROGRAM_LEN.store(program.len() as u32, Ordering::Relaxed);
    PROGRAM.store(program.as_ptr() as *mut u8, Ordering::Release);

    // Reset to the default action first, as the reference does.
    for sig in 1..NSIG as i32 {
        if sc.restore_default.contains(sig)
            && sig != libc::SIGKILL
            && sig != libc::SIGSTOP
            && sig != 32
            && sig != 33
        {
            // SAFETY: querying and setting dispositions with valid structs.
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, std::ptr::null(), &mut old) == 0
                    && old.sa_sigaction != libc::SIG_IGN
                {
                    let mut dfl: libc::sigaction = std::mem::zeroed();
                    dfl.sa_sigaction = libc::SIG_DFL;
                    libc::sigaction(sig, &dfl, std::ptr::null_mut());
                }
            }
        }
    }
    let set = signals_to_catch(&sc.catch, &sc.ignore);
    // While handling one signal, the others in the set wait (except faults,
    // which must reach the handler to be detected as a second fatal signal).
    // SAFETY: `mask` is a valid sigset_t.
    let mut mask: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    unsafe { libc::sigemptyset(&mut mask) };
    for &s in &set {
        if !SYNCHRONOUS.contains(&s) {
            // SAFETY: as above.
            unsafe { libc::sigaddset(&mut mask, s) };
        }
    }
    let mut names = String::new();
    for &sig in &set {
        // SAFETY: zeroed sigaction is a valid starting point.
        let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
        act.sa_sigaction = on_signal as *const () as usize;
        act.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_NODEFER;
        act.sa_mask = mask;
        // SAFETY: PREV[sig] is only read by the handler of `sig`, which is
        // installed by this very call.
        let ok = unsafe {
            let slot = (*PREV.0.get())[sig as usize].as_mut_ptr();
            libc::sigaction(sig, &act, slot) == 0
        };
        if ok {
            CAUGHT[sig as usize].store(true, Ordering::Release);
            names.push_str(&format!(" {}({sig})", signal_name(sig)));
        }
    }
    // Floating-point traps, as the reference: tied to catching SIGFPE.
    if set.contains(&libc::SIGFPE) {
        let bits = if sc.trapfpe {
            (if sc.trap_invalid { FE_INVALID } else { 0 })
                | (if sc.trap_divbyzero { FE_DIVBYZERO } else { 0 })
                | (if sc.trap_overflow { FE_OVERFLOW } else { 0 })
        } else {
            -1
        };
        TRAP_BITS.store(bits, Ordering::Release);
    }
    *done = true;
    INSTALLED.store(true, Ordering::Release);
    drop(done);
    on_new_thread();
    install_panic_hook();
    if show {
        crate::diag!(
            f,
            "DR_HOOK catches{names}; harakiri after {}s",
            sc.harakiri_timeout
        );
        crate::diag!(
            f,
            "{}",
            if cfg.options.noprop {
                "Previously installed handlers are not called (DR_HOOK_OPT=noprop)"
            } else {
                "Previously installed handlers are called after the traceback"
            }
        );
        match TRAP_BITS.load(Ordering::Relaxed) {
            0 => {}
            -1 => crate::diag!(
                f,
                "DR_HOOK disables floating-point trapping since DR_HOOK_TRAPFPE=0"
            ),
            b => crate::diag!(
                f,
                "DR_HOOK enables SIGFPE-related floating point trapping since DR_HOOK_TRAPFPE=1 (invalid={} divbyzero={} overflow={})",
                u8::from(b & FE_INVALID != 0),
                u8::from(b & FE_DIVBYZERO != 0),
                u8::from(b & FE_OVERFLOW != 0)
            ),
        }
    }
    true
}

/// Per-thread set-up when a thread enters its first instrumented routine
/// (and for the installing thread): floating-point traps (they are
/// per-thread state) and an alternate signal stack large enough for the
/// handler, so that a stack overflow can still be reported.
/// Sets the calling thread up as Dr.Hook sets up each thread at its first
/// instrumented call: the floating-point traps of `DR_HOOK_TRAPFPE*` and
/// the alternate signal stack, once the handlers are installed (the
/// reference's `trapfpe_slave_threads_`, for threads that make no call).
pub fn init_this_thread() {
    on_new_thread();
}

pub(crate) fn on_new_thread() {
    // A flag, not the installation lock: every new thread passes here.
    if !INSTALLED.load(Ordering::Acquire) {
        return;
    }
    match TRAP_BITS.load(Ordering::Acquire) {
        0 => {}
        // SAFETY: the calling thread's floating-point control.
        -1 => unsafe { set_fp_traps(FE_ALL, false) },
        // SAFETY: as above.
        b => unsafe { set_fp_traps(b, true) },
    }
    ALT_STACK.with(|a| a.ensure());
}

const ALT_STACK_SIZE: usize = 256 * 1024;

struct AltStack(Cell<*mut libc::c_void>);

/// Alternate stacks of threads that ended, kept for the next threads: a
/// program that creates many short threads maps and unmaps none after the
/// first ones (slots taken and returned with one atomic swap each).
static SPARE_STACKS: [AtomicPtr<libc::c_void>; 16] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; 16];

fn take_spare_stack() -> *mut libc::c_void {
    for s in &SPARE_STACKS {
        if !s.load(Ordering::Relaxed).is_null() {
            let p = s.swap(std::ptr::null_mut(), Ordering::AcqRel);
            if !p.is_null() {
                return p;
            }
        }
    }
    std::ptr::null_mut()
}

fn return_spare_stack(p: *mut libc::c_void) {
    for s in &SPARE_STACKS {
        if s.compare_exchange(std::ptr::null_mut(), p, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
        {
            return;
        }
    }
    // SAFETY: our own mapping, no longer any thread's alternate stack.
    unsafe { libc::munmap(p, ALT_STACK_SIZE) };
}

impl AltStack {
    fn ensure(&self) {
        if !self.0.get().is_null() {
            return;
        }
        // SAFETY: querying the current alternate stack.
        let mut cur: libc::stack_t = unsafe { std::mem::zeroed() };
        // SAFETY: valid out-pointer.
        unsafe { libc::sigaltstack(std::ptr::null(), &mut cur) };
        if cur.ss_flags & libc::SS_DISABLE == 0 && cur.ss_size >= 64 * 1024 {
            return;
        }
        let mut p = take_spare_stack();
        if p.is_null() {
            // SAFETY: anonymous private mapping; checked for failure.
            p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    ALT_STACK_SIZE,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if p == libc::MAP_FAILED {
                return;
            }
        }
        let st = libc::stack_t {
            ss_sp: p,
            ss_flags: 0,
            ss_size: ALT_STACK_SIZE,
        };
        // SAFETY: `st` describes a mapping of ours.
        if unsafe { libc::sigaltstack(&st, std::ptr::null_mut()) } == 0 {
            self.0.set(p);
        } else {
            return_spare_stack(p);
        }
    }
}

impl Drop for AltStack {
    fn drop(&mut self) {
        let p = self.0.get();
        if p.is_null() {
            return;
        }
        // The thread is ending: no alternate stack from now on (whoever set
        // the current one), and ours goes to the next thread.
        let off = libc::stack_t {
            ss_sp: std::ptr::null_mut(),
            ss_flags: libc::SS_DISABLE,
            ss_size: 0,
        };
        // SAFETY: disabling the calling thread's alternate stack; it is not
        // running on it (not in a signal handler).
        if unsafe { libc::sigaltstack(&off, std::ptr::null_mut()) } == 0 {
            return_spare_stack(p);
        }
    }
}

thread_local! {
    static ALT_STACK: AltStack = const { AltStack(Cell::new(std::ptr::null_mut())) };
}

fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let td = thread::current();
        // SAFETY: registered trees are never freed.
        if !td.is_null() && unsafe { (*td).current() != (*td).root } {
            crate::diag!(
                "drhook_panic",
                "Rust panic in an instrumented thread; its Dr.Hook calling tree:"
            );
            super::calltree::print_calltree();
        }
        previous(info);
    }));
}

// --- the handler ------------------------------------------------------------

fn gettid() -> i32 {
    // SAFETY: no preconditions.
    unsafe { libc::gettid() }
}

/// Kernel thread id shown in prefixes (the crashed thread's, also in the
/// helper process).
static SHOWN_TID: AtomicI32 = AtomicI32::new(0);

fn msg(line: &mut LineBuf, func: &str, f: impl FnOnce(&mut LineBuf)) {
    line.clear();
    let td = thread::current();
    let tid = if td.is_null() {
        crate::diag::caller_tid()
    } else {
        // SAFETY: registered trees are never freed.
        unsafe { (*td).tid }
    };
    let utid = match SHOWN_TID.load(Ordering::Relaxed) {
        0 => gettid(),
        t => t,
    };
    prefix(line, tid, utid);
    if func == "LinuxTraceBack" {
        line.str(" [LinuxTraceBack] ");
    } else {
        line.str(" [").str(func).str("@signals.rs] ");
    }
    f(line);
    line.write_line(2);
}

fn sleep_ms(ms: u64) {
    let ts = libc::timespec {
        tv_sec: (ms / 1000) as libc::time_t,
        tv_nsec: ((ms % 1000) * 1_000_000) as libc::c_long,
    };
    // SAFETY: valid timespec.
    unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) };
}

extern "C" fn on_harakiri(_sig: i32, _info: *mut libc::siginfo_t, _uc: *mut libc::c_void) {
    let mut l = LineBuf::new();
    msg(&mut l, "signal_harakiri", |l| {
        l.str("Harakiri: the crash handler did not finish within DR_HOOK_HARAKIRI_TIMEOUT=")
            .u64(HARAKIRI.load(Ordering::Relaxed) as u64)
            .str("s; killing the process");
    });
    // SAFETY: kill is async-signal-safe.
    unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
    crate::sys::exit_now(137);
}

extern "C" fn on_signal(sig: i32, info: *mut libc::siginfo_t, uc: *mut libc::c_void) {
    let first = IN_HANDLER.with(|c| c.get());
    if first != 0 {
        let mut l = LineBuf::new();
        msg(&mut l, "signal_drhook", |l| {
            l.str("Second fatal signal#")
                .u64(sig as u64)
                .str(" (")
                .str(signal_name(sig))
                .str(") while handling signal#")
                .u64(first as u64)
                .str("; ending the process");
        });
        // The system call, async-signal-safe.
        crate::sys::exit_now(128 + first);
    }
    IN_HANDLER.with(|c| c.set(sig));
    let me = gettid();
    SHOWN_TID.store(me, Ordering::Relaxed);
    if HANDLING
        .compare_exchange(0, me, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        // Another thread is printing the traceback and will end the process.
        let limit_ms = (HARAKIRI.load(Ordering::Relaxed) as u64 + 60) * 1000;
        let mut waited = 0;
        while waited < limit_ms {
            sleep_ms(100);
            waited += 100;
        }
        // SAFETY: async-signal-safe calls.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
            crate::sys::exit_now(128 + sig);
        }
    }
    let nsigs = NSIGS.fetch_add(1, Ordering::Relaxed) + 1;
    arm_harakiri();
    if COREDUMP.load(Ordering::Relaxed) {
        // SAFETY: get/setrlimit with valid structs.
        unsafe {
            let mut r: libc::rlimit = std::mem::zeroed();
            if libc::getrlimit(libc::RLIMIT_CORE, &mut r) == 0 {
                r.rlim_cur = r.rlim_max;
                libc::setrlimit(libc::RLIMIT_CORE, &r);
            }
        }
    }
    let lock_fd = take_lockfile();
    report(sig, info, uc, nsigs);
    if lock_fd >= 0 {
        // SAFETY: releasing our own lock.
        unsafe {
            libc::flock(lock_fd, libc::LOCK_UN);
            libc::close(lock_fd);
        }
    }
    restore_defaults();
    chain(sig, info, uc, nsigs);
    terminate(sig);
}

fn arm_harakiri() {
    // SAFETY: installing a handler and arming the alarm are async-signal-safe.
    unsafe {
        let mut act: libc::sigaction = std::mem::zeroed();
        act.sa_sigaction = on_harakiri as *const () as usize;
        act.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        libc::sigaction(libc::SIGALRM, &act, std::ptr::null_mut());
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGALRM);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::alarm(HARAKIRI.load(Ordering::Relaxed));
    }
}

/// Serialises tracebacks of several processes through `flock(./drhook_lock)`.
fn take_lockfile() -> i32 {
    if !LOCKFILE.load(Ordering::Relaxed) {
        return -1;
    }
    // SAFETY: open/flock with a valid NUL-terminated path.
    unsafe {
        let fd = libc::open(
            c"drhook_lock".as_ptr(),
            libc::O_CREAT | libc::O_RDWR | libc::O_CLOEXEC,
            0o644,
        );
        if fd < 0 {
            return -1;
        }
        let limit_ms = (HARAKIRI.load(Ordering::Relaxed) as u64 / 2).min(120) * 1000;
        let mut waited = 0u64;
        let mut said = false;
        while libc::flock(fd, libc::LOCK_EX | libc::LOCK_NB) != 0 {
            if !said {
                said = true;
                let mut l = LineBuf::new();
                msg(&mut l, "signal_drhook", |l| {
                    l.str("Waiting for another process's traceback to finish (lock file ./drhook_lock)");
                });
            }
            if waited >= limit_ms {
                break; // print anyway
            }
            sleep_ms(50);
            waited += 50;
        }
        fd
    }
}

fn cause(sig: i32, code: i32) -> &'static str {
    match (sig, code) {
        (_, 0) => "kill() from another process (SI_USER)",
        (_, 0x80) => "the kernel (SI_KERNEL)",
        (_, -6) => "tkill()/raise() (SI_TKILL)",
        (_, -1) => "sigqueue() (SI_QUEUE)",
        (libc::SIGSEGV, 1) => "address not mapped to object",
        (libc::SIGSEGV, 2) => "invalid permissions for mapped object",
        (libc::SIGBUS, 1) => "invalid address alignment",
        (libc::SIGBUS, 2) => "nonexistent physical address",
        (libc::SIGBUS, 3) => "object-specific hardware error",
        (libc::SIGFPE, 1) => "integer divide by zero",
        (libc::SIGFPE, 2) => "integer overflow",
        (libc::SIGFPE, 3) => "floating-point divide by zero",
        (libc::SIGFPE, 4) => "floating-point overflow",
        (libc::SIGFPE, 5) => "floating-point underflow",
        (libc::SIGFPE, 6) => "floating-point inexact result",
        (libc::SIGFPE, 7) => "floating-point invalid operation",
        (libc::SIGFPE, 8) => "subscript out of range",
        (libc::SIGILL, 1) => "illegal opcode",
        (libc::SIGILL, 2) => "illegal operand",
        (libc::SIGILL, 3) => "illegal addressing mode",
        (libc::SIGILL, 4) => "illegal trap",
        (libc::SIGILL, 5) => "privileged opcode",
        (libc::SIGILL, 6) => "privileged register",
        (libc::SIGILL, 7) => "coprocessor error",
        (libc::SIGILL, 8) => "internal stack error",
        (libc::SIGTRAP, 1) => "process breakpoint",
        (libc::SIGTRAP, 2) => "process trace trap",
        _ => "unrecognized si_code",
    }
}

fn pc_of(uc: *mut libc::c_void) -> u64 {
    if uc.is_null() {
        return 0;
    }
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    {
        // SAFETY: the kernel passes a valid ucontext_t to SA_SIGINFO handlers.
        unsafe {
            (*(uc as *const libc::ucontext_t)).uc_mcontext.gregs[libc::REG_RIP as usize] as u64
        }
    }
    #[cfg(all(target_arch = "aarch64", target_os = "linux"))]
    {
        // SAFETY: as above.
        unsafe { (*(uc as *const libc::ucontext_t)).uc_mcontext.pc }
    }
    #[cfg(not(any(
        all(target_arch = "x86_64", target_os = "linux"),
        all(target_arch = "aarch64", target_os = "linux")
    )))]
    {
        0
    }
}

/// Static scratch for the trees (only the handling thread uses it).
struct TreeScratch(UnsafeCell<([*const Node; 4096], [u64; 4096], [u64; 4096])>);
// SAFETY: used only by the thread that won HANDLING.
unsafe impl Sync for TreeScratch {}
static SCRATCH: TreeScratch = TreeScratch(UnsafeCell::new((
    [std::ptr::null(); 4096],
    [0; 4096],
    [0; 4096],
)));

struct ThreadList(UnsafeCell<[*const ThreadData; 1024]>);
// SAFETY: as above.
unsafe impl Sync for ThreadList {}
static THREADS: ThreadList = ThreadList(UnsafeCell::new([std::ptr::null(); 1024]));

fn print_tree(td: &ThreadData) {
    let o = opts_for(td);
    // SAFETY: only the handling thread reaches this point.
    let (f, cw, cc) = unsafe { &mut *SCRATCH.0.get() };
    let mut s = Scratch {
        frames: f,
        child_wall: cw,
        child_cpu: cc,
    };
    write_tree(td, &o, &mut s, &mut |line| line.write_line(2));
}

fn report(sig: i32, info: *mut libc::siginfo_t, uc: *mut libc::c_void, nsigs: u32) {
    let f = "signal_drhook";
    let mut l = LineBuf::new();
    write_all(2, crate::diag::LEGEND.as_bytes());
    write_all(2, b"\n");
    msg(&mut l, f, |l| {
        l.str("Received signal#")
            .u64(sig as u64)
            .str(" (")
            .str(signal_name(sig))
            .str(") :: ")
            .u64(super::calltree::max_rss_mb())
            .str(" MB (maxrss), nsigs = ")
            .u64(nsigs as u64);
    });
    msg(&mut l, f, |l| {
        l.str("Also activating Harakiri-alarm (SIGALRM=14) to expire after ")
            .u64(HARAKIRI.load(Ordering::Relaxed) as u64)
            .str("s elapsed to prevent hangs, nsigs = ")
            .u64(nsigs as u64);
    });
    if !info.is_null() {
        // SAFETY: the kernel passes a valid siginfo_t.
        let (code, addr, pid) =
            unsafe { ((*info).si_code, (*info).si_addr() as u64, (*info).si_pid()) };
        let pc = pc_of(uc);
        msg(&mut l, f, |l| {
            l.str("Signal#")
                .u64(sig as u64)
                .str(" was caused by ")
                .str(cause(sig, code));
            if code == 0 {
                l.str(" from pid ").i64(pid as i64);
            } else if SYNCHRONOUS.contains(&sig) {
                l.str(" [memaddr=").hex(addr).str("]");
            }
            if pc != 0 && SYNCHRONOUS.contains(&sig) {
                l.str(" : pc=").hex(pc).str(" in ");
                super::maps::describe(l, pc);
            }
            l.str(", nsigs = ").u64(nsigs as u64);
        });
    }
    msg(&mut l, f, |l| {
        l.str("Starting DrHook backtrace for signal#")
            .u64(sig as u64)
            .str(", nsigs = ")
            .u64(nsigs as u64);
    });
    // Every thread inside instrumented routines, the signalled one first.
    let me = thread::current();
    // SAFETY: only the handling thread uses THREADS.
    let list = unsafe { &mut *THREADS.0.get() };
    let mut n = 0;
    thread::for_each_thread(|td| {
        if n < list.len() && !std::ptr::eq(td, me) && td.current() != td.root {
            list[n] = td;
            n += 1;
        }
    });
    // Insertion sort by thread number.
    for i in 1..n {
        let mut j = i;
        // SAFETY: registered trees are never freed.
        while j > 0 && unsafe { (*list[j - 1]).tid > (*list[j]).tid } {
            list.swap(j - 1, j);
            j -= 1;
        }
    }
    let mut printed = 0;
    // SAFETY: registered trees are never freed.
    if !me.is_null() && unsafe { (*me).current() != (*me).root } {
        // SAFETY: as above.
        print_tree(unsafe { &*me });
        printed += 1;
    }
    for &td in &list[..n] {
        // SAFETY: as above.
        print_tree(unsafe { &*td });
        printed += 1;
    }
    if printed == 0 {
        msg(&mut l, f, |l| {
            l.str("No Dr.Hook calling tree: no thread is inside an instrumented routine (or Dr.Hook is off)");
        });
    }
    crash_helper(sig, pc_of(uc));
    msg(&mut l, f, |l| {
        l.str("DrHook backtrace done for signal#")
            .u64(sig as u64)
            .str(", nsigs = ")
            .u64(nsigs as u64);
    });
}

/// Native backtrace and profile in a forked helper, bounded by a timeout.
fn crash_helper(sig: i32, pc: u64) {
    // The profile, unless this process's profile was already ended (an
    // `abort` after `exit` began, a signal after MPI_Finalize): exactly once.
    let want_profile = PROFILE_ON_CRASH.load(Ordering::Relaxed)
        && sig != libc::SIGXCPU
        && crate::profile::write::claim_end();
    if !want_profile && !NATIVE_BACKTRACE.load(Ordering::Relaxed) {
        return;
    }
    // A plain fork(2) system call: glibc's fork() would run atfork handlers
    // and take allocator locks that the crashed code may hold.
    // SAFETY: no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the child only runs `helper_child`, which ends with _exit.
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone,
            libc::SIGCHLD as libc::c_ulong,
            0usize,
            0usize,
            0usize,
            0usize,
        )
    };
    if pid == 0 {
        crate::sys::linebuf::set_pid_override(parent);
        helper_child(want_profile, pc);
    }
    let mut l = LineBuf::new();
    if pid < 0 {
        msg(&mut l, "LinuxTraceBack", |l| {
            l.str("fork failed: no native backtrace")
                .str(if want_profile { " and no profile" } else { "" });
        });
        return;
    }
    let limit_ms = (HARAKIRI.load(Ordering::Relaxed) as u64 * 1000 / 2).min(60_000);
    let mut waited = 0;
    loop {
        let mut status = 0;
        // SAFETY: waiting for our own child.
        let r = unsafe { libc::waitpid(pid as i32, &mut status, libc::WNOHANG) };
        if r != 0 {
            break;
        }
        if waited >= limit_ms {
            // SAFETY: killing and reaping our own child.
            unsafe {
                libc::kill(pid as i32, libc::SIGKILL);
                libc::waitpid(pid as i32, &mut status, 0);
            }
            msg(&mut l, "LinuxTraceBack", |l| {
                l.str("The backtrace/profile helper did not finish within ")
                    .u64(limit_ms / 1000)
                    .str("s (a lock held by the crashed code?); it was stopped");
            });
            break;
        }
        sleep_ms(10);
        waited += 10;
    }
}

fn helper_child(want_profile: bool, pc: u64) -> ! {
    // Only this thread exists here; the memory is a copy of the crashed
    // process, so allocation and symbolisation are allowed (a lock held by
    // another thread of the parent can block us; the parent has a timeout).
    // The profile first: it is quick, and open activations are then timed
    // up to (almost) the moment of the crash.
    if want_profile {
        let _ = crate::profile::write::write_profile();
    }
    if !NATIVE_BACKTRACE.load(Ordering::Relaxed) {
        // Ends the helper without running atexit handlers.
        crate::sys::exit_now(0)
    }
    let mut ips = [0usize; 128];
    let mut n = 0;
    // SAFETY: single-threaded child.
    unsafe {
        backtrace::trace_unsynchronized(|frame| {
            let ip = frame.ip() as usize;
            if ip != 0 {
                ips[n] = ip;
                n += 1;
            }
            n < ips.len()
        });
    }
    // Start at the interrupted instruction: the frames above it are this
    // handler's own.
    let skip = ips[..n].iter().position(|&ip| ip as u64 == pc).unwrap_or(0);
    let program = {
        let p = PROGRAM.load(Ordering::Acquire);
        let len = PROGRAM_LEN.load(Ordering::Relaxed) as usize;
        if p.is_null() {
            ""
        } else {
            // SAFETY: leaked at installation with this length, never freed.
            std::str::from_utf8(unsafe { std::slice::from_raw_parts(p, len) }).unwrap_or("")
        }
    };
    let mut l = LineBuf::new();
    let f = "LinuxTraceBack";
    msg(&mut l, f, |l| {
        l.str("Backtrace of the signalled thread for program '")
            .text(program)
            .str("' : ")
            .u64((n - skip) as u64)
            .str(" frames from the interrupted instruction");
    });
    for (i, &ip) in ips[skip..n].iter().enumerate() {
        let mut sym = String::new();
        let mut loc = String::new();
        // Return addresses point after the call; look up the call itself.
        let lookup = if i == 0 { ip } else { ip.saturating_sub(1) };
        // SAFETY: single-threaded child.
        unsafe {
            backtrace::resolve_unsynchronized(lookup as *mut std::ffi::c_void, |s| {
                if sym.is_empty() {
                    if let Some(name) = s.name() {
                        sym = format!("{name:#}");
                    }
                    if let (Some(file), Some(line)) = (s.filename(), s.lineno()) {
                        loc = format!(" at {}:{line}", file.display());
                    }
                }
            });
        }
        msg(&mut l, f, |l| {
            l.str("[").padded(i as u64, 2).str("]: ");
            super::maps::describe(l, ip as u64);
            l.str(" [").hex(ip as u64).str("] : ");
            if sym.is_empty() {
                l.str("??()")
            } else {
                l.text(&sym).str("()")
            };
            l.text(&loc);
        });
    }
    msg(&mut l, f, |l| {
        l.str("End of backtrace");
    });
    // Ends the helper without running atexit handlers.
    crate::sys::exit_now(0)
}

fn restore_defaults() {
    for sig in 1..NSIG as i32 {
        if CAUGHT[sig as usize].load(Ordering::Acquire) {
            // SAFETY: setting the default disposition.
            unsafe {
                let mut dfl: libc::sigaction = std::mem::zeroed();
                dfl.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(sig, &dfl, std::ptr::null_mut());
            }
        }
    }
}

fn chain(sig: i32, info: *mut libc::siginfo_t, uc: *mut libc::c_void, nsigs: u32) {
    let f = "signal_drhook";
    let mut l = LineBuf::new();
    // SAFETY: written at installation, before the handler existed.
    let prev = unsafe { (*PREV.0.get())[sig as usize].assume_init_ref() };
    let h = prev.sa_sigaction;
    if NOPROP.load(Ordering::Relaxed) || h == libc::SIG_DFL || h == libc::SIG_IGN {
        msg(&mut l, f, |l| {
            l.str("Not configured (DR_HOOK_OPT=noprop) or no previous signal handler to call for signal#")
                .u64(sig as u64)
                .str(", nsigs = ")
                .u64(nsigs as u64);
        });
        return;
    }
    msg(&mut l, f, |l| {
        l.str("Calling previous signal handler at ")
            .hex(h as u64)
            .str(" for signal#")
            .u64(sig as u64);
    });
    // SAFETY: calling the handler that was installed before ours, with the
    // calling convention its flags declare.
    unsafe {
        if prev.sa_flags & libc::SA_SIGINFO != 0 {
            let f: extern "C" fn(i32, *mut libc::siginfo_t, *mut libc::c_void) =
                std::mem::transmute(h);
            f(sig, info, uc);
        } else {
            let f: extern "C" fn(i32) = std::mem::transmute(h);
            f(sig);
        }
    }
    msg(&mut l, f, |l| {
        l.str("Returned from previous signal handler for signal#")
            .u64(sig as u64)
            .str(", nsigs = ")
            .u64(nsigs as u64);
    });
}

fn terminate(sig: i32) -> ! {
    // SAFETY: async-signal-safe calls ending the process with `sig`'s default action.
    unsafe {
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(sig, &dfl, std::ptr::null_mut());
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::syscall(libc::SYS_tgkill, libc::getpid(), libc::gettid(), sig);
        crate::sys::exit_now(128 + sig);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_set_and_lists() {
        let d = signals_to_catch(&SignalList::None, &SignalList::None);
        assert_eq!(d.len(), 13);
        assert!(
            d.contains(&libc::SIGTERM) && d.contains(&libc::SIGSTKFLT) && !d.contains(&libc::SIGIO)
        );
        let e = signals_to_catch(
            &SignalList::Some(vec![libc::SIGUSR1, libc::SIGKILL]),
            &SignalList::Some(vec![libc::SIGINT]),
        );
        assert!(
            e.contains(&libc::SIGUSR1) && !e.contains(&libc::SIGKILL) && !e.contains(&libc::SIGINT)
        );
        let all = signals_to_catch(&SignalList::All, &SignalList::None);
        assert!(all.contains(&libc::SIGHUP) && all.contains(&libc::SIGUSR2));
        assert!(
            !all.contains(&libc::SIGCHLD) && !all.contains(&libc::SIGALRM) && !all.contains(&32)
        );
        assert!(signals_to_catch(&SignalList::All, &SignalList::All).is_empty());
        assert_eq!(signal_name(11), "SIGSEGV");
        assert_eq!(cause(libc::SIGFPE, 3), "floating-point divide by zero");
    }
}
