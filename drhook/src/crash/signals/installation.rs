//! Installing the handlers (once, from the configuration), the
//! floating-point traps and the alternate signal stack of each thread
//! (with spare stacks kept from threads that ended), and the panic hook
//! that prints the calling tree of a panicking instrumented thread.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

use super::handler::on_signal;
use super::names::{SYNCHRONOUS, signal_name, signals_to_catch};
use super::view::{self, own_default, own_sigaction};
use super::{
    CAUGHT, COREDUMP, CRASH_STACK, CRASH_STACK_SIZE, HARAKIRI, INSTALL_LOCK, INSTALLED, LOCKFILE,
    NATIVE_BACKTRACE, NOPROP, NSIG, PROFILE_ON_CRASH, PROGRAM, PROGRAM_LEN, TRAP_BITS,
};
use crate::config::Config;
use crate::tree::thread;

const FE_INVALID: i32 = 0x01;
const FE_DIVBYZERO: i32 = 0x04;
const FE_OVERFLOW: i32 = 0x08;
const FE_ALL: i32 = 0x3d;

// Enables floating-point traps on the calling thread, as glibc's
// feenableexcept (libm). On x86-64 written here (the x87 control word and
// MXCSR), so that the engine does not need libm: one library less to load
// in every process the preload library enters. Dr.Hook never disables
// traps (DR_HOOK_TRAPFPE=0 leaves the program's floating-point
// environment alone).
#[cfg(target_arch = "x86_64")]
unsafe fn enable_fp_traps(excepts: i32) {
    let e = (excepts & FE_ALL) as u16;
    let mut cw: u16 = 0;
    let mut csr: u32 = 0;
    // SAFETY: reads and writes of the calling thread's FPU control words.
    unsafe {
        std::arch::asm!("fnstcw [{}]", in(reg) &mut cw, options(nostack));
        cw &= !e;
        std::arch::asm!("fldcw [{}]", in(reg) &cw, options(nostack));
        std::arch::asm!("stmxcsr [{}]", in(reg) &mut csr, options(nostack));
        csr &= !((e as u32) << 7);
        std::arch::asm!("ldmxcsr [{}]", in(reg) &csr, options(nostack));
    }
}

#[cfg(not(target_arch = "x86_64"))]
unsafe extern "C" {
    fn feenableexcept(excepts: i32) -> i32;
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn enable_fp_traps(excepts: i32) {
    // SAFETY: glibc's fenv function on the calling thread.
    unsafe {
        feenableexcept(excepts);
    }
}

/// Whether floating-point traps are on when `DR_HOOK_TRAPFPE` is unset:
/// see [`trap_fpe_by_default`].
static TRAP_FPE_BY_DEFAULT: AtomicBool = AtomicBool::new(false);

/// Sets what an unset `DR_HOOK_TRAPFPE` means: `true` — the reference's
/// default, floating-point traps on the threads Dr.Hook sets up, for
/// Fortran and C codes — or `false`, the default for a program whose
/// engine a Rust front door starts (`#[drhook]`, guards, `DrHookLayer`,
/// `Settings`): Rust (and C++) code relies on IEEE results, `0.0 / 0.0`
/// is NaN, not SIGFPE. `libdrhook` (the C and Fortran entry points, the
/// preload library) calls it with `true` before it starts the engine.
/// Takes effect when the signal handlers are installed (the engine's
/// start); later calls change nothing.
pub fn trap_fpe_by_default(yes: bool) {
    TRAP_FPE_BY_DEFAULT.store(yes, Ordering::Release);
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
    // The stack the handler works on (see `handler.rs`): before any handler
    // is installed, so that a signal never finds it missing.
    if CRASH_STACK.load(Ordering::Relaxed).is_null() {
        CRASH_STACK.store(
            crate::sys::workstack::map_kept(CRASH_STACK_SIZE),
            Ordering::Release,
        );
    }
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
            // SAFETY: a zeroed sigaction, filled by the query.
            let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
            if own_sigaction(sig, std::ptr::null(), &mut old) == 0
                && old.sa_sigaction != libc::SIG_IGN
            {
                own_default(sig);
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
    let mut ignored = String::new();
    for &sig in &set {
        // The program's disposition before Dr.Hook's handler: a signal it
        // ignores (inherited `SIG_IGN`: `trap '' INT`, a background job, a
        // supervisor) stays ignored, since a handler there would turn a
        // signal the program survives into its end; otherwise it becomes
        // the program's view of the signal (`view`), whose handler
        // Dr.Hook's calls.
        // SAFETY: a zeroed sigaction, filled by the query.
        let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
        if own_sigaction(sig, std::ptr::null(), &mut old) != 0 {
            continue;
        }
        if old.sa_sigaction == libc::SIG_IGN {
            ignored.push_str(&format!(" {}({sig})", signal_name(sig)));
            continue;
        }
        if !view::record(sig, &old) {
            continue;
        }
        // SAFETY: zeroed sigaction is a valid starting point.
        let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
        act.sa_sigaction = on_signal as *const () as usize;
        // Interrupted system calls restart as the program's handler asked.
        act.sa_flags = libc::SA_SIGINFO
            | libc::SA_ONSTACK
            | libc::SA_NODEFER
            | (old.sa_flags & libc::SA_RESTART);
        act.sa_mask = mask;
        if own_sigaction(sig, &act, std::ptr::null_mut()) == 0 {
            CAUGHT[sig as usize].store(true, Ordering::Release);
            names.push_str(&format!(" {}({sig})", signal_name(sig)));
        }
    }
    // Floating-point traps, as the reference: tied to catching SIGFPE and
    // enabled by DR_HOOK_TRAPFPE=1 — by default only when a foreign front
    // door (`libdrhook`, from Fortran or C) started Dr.Hook: Rust code
    // relies on IEEE results (`0.0 / 0.0` is NaN). DR_HOOK_TRAPFPE=0
    // leaves the floating-point environment as the program set it (the reference
    // disables the traps: a program built to trap, -ffpe-trap=..., then
    // computes on with infinities on the threads Dr.Hook set up).
    if set.contains(&libc::SIGFPE)
        && sc
            .trapfpe
            .unwrap_or_else(|| TRAP_FPE_BY_DEFAULT.load(Ordering::Acquire))
    {
        let bits = (if sc.trap_invalid { FE_INVALID } else { 0 })
            | (if sc.trap_divbyzero { FE_DIVBYZERO } else { 0 })
            | (if sc.trap_overflow { FE_OVERFLOW } else { 0 });
        TRAP_BITS.store(bits, Ordering::Release);
    }
    *done = true;
    INSTALLED.store(true, Ordering::Release);
    drop(done);
    on_new_thread();
    install_panic_hook();
    {
        use super::dumpfiles::{BUDDYINFO, FILES, MAPS, MEMINFO, SMAPS};
        let l = &cfg.lines;
        FILES.store(
            (if l.dump_smaps { SMAPS } else { 0 })
                | (if l.dump_maps { MAPS } else { 0 })
                | (if l.dump_buddyinfo { BUDDYINFO } else { 0 })
                | (if l.dump_meminfo { MEMINFO } else { 0 }),
            Ordering::Relaxed,
        );
    }
    crate::crash::meminfo::set_period(cfg.lines.dump_hugepages);
    if let Some(sig) = cfg.lines.gencore_signal {
        super::gencore::install(sig, show);
    }
    if show {
        crate::diag!(
            f,
            "DR_HOOK catches{names}; harakiri after {}s",
            sc.harakiri_timeout
        );
        if !ignored.is_empty() {
            crate::diag!(f, "Signals the program ignores stay ignored:{ignored}");
        }
        crate::diag!(
            f,
            "{}",
            if cfg.options.noprop {
                "Previously installed handlers are not called (DR_HOOK_OPT=noprop)"
            } else {
                "The program's own handlers are called first; a traceback only for a signal that ends the process"
            }
        );
        match TRAP_BITS.load(Ordering::Relaxed) {
            0 => crate::diag!(
                f,
                "DR_HOOK leaves floating-point trapping as the program sets it (DR_HOOK_TRAPFPE={})",
                match sc.trapfpe {
                    Some(_) => "0",
                    None => "0, the default from Rust",
                }
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
        b => unsafe { enable_fp_traps(b) },
    }
    ALT_STACK.with(|a| a.ensure(true));
}

/// A thread started without a tree (`tree::thread::lazy`): only the
/// alternate signal stack, so that a stack overflow in a thread that never
/// calls anything instrumented is still reported and the profile written
/// (no floating-point traps, as for any thread before its first
/// instrumented call). No key is armed: the thread's end
/// ([`release_alt_stack`], from `lifecycle::thread_end`, also at a
/// cancellation) gives it back.
pub(crate) fn alt_stack_for_untreed_thread() {
    if !INSTALLED.load(Ordering::Acquire) {
        return;
    }
    ALT_STACK.with(|a| a.ensure(false));
}

/// The end of a thread started without a tree: its alternate stack goes
/// back to the spares (also when the thread made its tree meanwhile: the
/// stack was set up before, no key armed).
pub(crate) fn release_alt_stack() {
    let _ = ALT_STACK.try_with(AltStack::release);
}

/// Gives the calling thread's alternate stack back at its end: the
/// destructor of a key, not of a thread-local (whose registration
/// `calloc`s: the C library's per-thread `malloc` cache for a thread that
/// allocates nothing else; `sys::exit_key`).
static ALT_KEY: crate::sys::exit_key::ExitKey = crate::sys::exit_key::ExitKey::new(alt_key_dtor);

unsafe extern "C" fn alt_key_dtor(_: *mut libc::c_void) {
    let _ = ALT_STACK.try_with(AltStack::release);
}

/// Where no key could be made: a thread-local's destructor.
struct AltStackEnd;

impl Drop for AltStackEnd {
    fn drop(&mut self) {
        let _ = ALT_STACK.try_with(AltStack::release);
    }
}

thread_local! {
    static ALT_STACK_END: AltStackEnd = const { AltStackEnd };
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
    /// Sets up the thread's alternate stack unless it has one (ours, or
    /// its own of 64 KiB or more); `arm`: a key gives it back at the
    /// thread's end (else the caller does).
    fn ensure(&self, arm: bool) {
        if !self.0.get().is_null() {
            return;
        }
        // SAFETY: querying the current alternate stack.
        let mut cur: libc::stack_t = unsafe { std::mem::zeroed() };
        // SAFETY: valid out-pointer.
        unsafe { libc::sigaltstack(std::ptr::null(), &mut cur) };
        // A thread with an alternate stack of 64 KiB or more keeps it. A
        // smaller one (Rust's standard library gives each thread it starts
        // 8 KiB for its stack-overflow report) is replaced on an
        // instrumented thread: a stack overflow there runs the program's
        // handler (Rust's, which aborts) and then Dr.Hook's for the
        // SIGABRT, nested, before the switch to the crash stack — more
        // than 8 KiB with the kernel's signal frames. The program's
        // handler runs on Dr.Hook's stack as it would on its own. Threads
        // that never enter a region keep theirs: the handler needs little
        // of it (`handler.rs`).
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
            if arm && !ALT_KEY.arm() {
                let _ = ALT_STACK_END.try_with(|_| {});
            }
        } else {
            return_spare_stack(p);
        }
    }
}

impl AltStack {
    /// The thread is ending: its alternate stack goes back to the spares.
    fn release(&self) {
        let p = self.0.replace(std::ptr::null_mut());
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
        // SAFETY: the calling thread's own tree (freed only once the thread ended it).
        if !td.is_null() && unsafe { (*td).current() != (*td).root } {
            crate::diag!(
                "drhook_panic",
                "Rust panic in an instrumented thread; its Dr.Hook calling tree:"
            );
            crate::crash::calltree::print_calltree();
        }
        previous(info);
    }));
}
