//! The signal handler (steps 1–3 of the module doc, then the report,
//! the helper and the chaining in turn): a second signal on the same or
//! another thread, the harakiri alarm, the core-dump limit and the lock
//! file that serialises the tasks' tracebacks; and the lines it writes
//! (`msg`), the cause of a signal and the interrupted instruction.

use crate::sys::sysinfo::gettid;
use std::cell::Cell;
use std::sync::atomic::{AtomicI32, Ordering};

use super::chaining::{Outcome, call_first, chain, restore_defaults, terminate};
use super::names::{TERMINATION, signal_name};
use super::report::report;
use super::view::{self, own_sigaction};
use super::{COREDUMP, CRASH_STACK, HANDLING, HARAKIRI, LOCKFILE, NOPROP, NSIGS};
use crate::sys::linebuf::{LineBuf, prefix};
use crate::sys::workstack::on_stack;
use crate::tree::thread;

thread_local! {
    /// Signal being handled on this thread (0 = none).
    static IN_HANDLER: Cell<i32> = const { Cell::new(0) };
}

/// Kernel thread id shown in prefixes (the crashed thread's, also in the
/// helper process).
static SHOWN_TID: AtomicI32 = AtomicI32::new(0);

pub(super) fn msg(line: &mut LineBuf, func: &str, f: impl FnOnce(&mut LineBuf)) {
    line.clear();
    let td = thread::current();
    let tid = if td.is_null() {
        crate::diag::caller_tid()
    } else {
        // SAFETY: the calling thread's own tree (freed only once the thread ended it).
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

pub(super) fn sleep_ms(ms: u64) {
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

pub(super) extern "C" fn on_signal(sig: i32, info: *mut libc::siginfo_t, uc: *mut libc::c_void) {
    let first = IN_HANDLER.with(|c| c.get());
    // The program's own handler first (unless it is a runtime's that ends
    // the process itself, or DR_HOOK_OPT=noprop): a signal it handles and
    // survives leaves no trace of Dr.Hook; Dr.Hook reports only a signal
    // that ends the process.
    let mut called = false;
    if first == 0
        && !NOPROP.load(Ordering::Relaxed)
        && !view::handler_ends_process(sig)
        && let Some(act) = view::get(sig)
        && view::is_handler(act)
    {
        if call_first(sig, info, uc, act) == Outcome::Continued {
            return;
        }
        called = true;
    }
    if first == 0 && !called && handled_by_a_later_handler(sig) {
        return;
    }
    // The profile being written at the process's end on another thread is
    // finished before this signal ends the process (issue 22, item 11).
    crate::profile::write::wait_for_end_write(30_000);
    if first != 0 {
        second_fatal(sig, first);
    }
    IN_HANDLER.with(|c| c.set(sig));
    let me = gettid();
    SHOWN_TID.store(me, Ordering::Relaxed);
    if HANDLING
        .compare_exchange(0, me, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        wait_for_the_other(sig);
    }
    // This thread alone from here on (HANDLING): the rest runs on the
    // crash stack, mapped at installation, whatever stack the signal
    // arrived on — the thread's own, Dr.Hook's alternate stack, or the
    // program's (Rust's standard library gives the main thread and each
    // thread it starts a few KiB for its stack-overflow report), or a
    // thread that never entered a region. The forked helper runs on its
    // copy (the profile, the symbolised backtrace).
    let top = CRASH_STACK.load(Ordering::Acquire);
    // SAFETY: the crash stack is used by the thread that won HANDLING
    // alone, and `handle` never unwinds (it ends the process).
    unsafe { on_stack(top, || handle(sig, info, uc, called)) };
    terminate(sig);
}

/// Whether `sig` asks the process to end (`kill`, Ctrl-C, a hang-up, a
/// service manager's stop) and Dr.Hook's handler was reached from a
/// handler the program installed after it, which calls the one it
/// replaced (`signal-hook`, and so tokio's `signal`, do; the program's view
/// of the signal before Dr.Hook's handler is then the default action).
/// The program handles such a signal: Dr.Hook's handler does what the
/// disposition it replaced would have done when called so — nothing —
/// and the profile is written when the program ends (its graceful
/// shutdown, `exit`; a program that then ends by the signal's default
/// action ends without one: Dr.Hook's handler is no longer installed). A
/// fault keeps the crash path whoever calls the handler.
/// Async-signal-safe.
fn handled_by_a_later_handler(sig: i32) -> bool {
    if !TERMINATION.contains(&sig) {
        return false;
    }
    // SAFETY: a zeroed sigaction, filled by the query.
    let mut now: libc::sigaction = unsafe { std::mem::zeroed() };
    own_sigaction(sig, std::ptr::null(), &mut now) == 0
        && now.sa_sigaction != on_signal as *const () as usize
        && view::is_handler(&now)
}

/// A fatal signal while this thread handles one: the process ends at once.
#[cold]
#[inline(never)]
fn second_fatal(sig: i32, first: i32) -> ! {
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
    crate::sys::exit_now(128 + first)
}

/// Another thread is printing the traceback and will end the process.
#[cold]
#[inline(never)]
fn wait_for_the_other(sig: i32) -> ! {
    let limit_ms = (HARAKIRI.load(Ordering::Relaxed) as u64 + 60) * 1000;
    let mut waited = 0;
    while waited < limit_ms {
        sleep_ms(100);
        waited += 100;
    }
    // SAFETY: async-signal-safe calls.
    unsafe {
        libc::kill(libc::getpid(), libc::SIGKILL);
        crate::sys::exit_now(128 + sig)
    }
}

/// Steps 2–6 on the crash stack: the alarm, the report, the helper, the
/// program's handler, the end.
fn handle(sig: i32, info: *mut libc::siginfo_t, uc: *mut libc::c_void, called: bool) {
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
    if !called {
        chain(sig, info, uc, nsigs);
    }
    terminate(sig);
}

fn arm_harakiri() {
    // SAFETY: a zeroed sigaction is a valid starting point.
    let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
    act.sa_sigaction = on_harakiri as *const () as usize;
    act.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
    own_sigaction(libc::SIGALRM, &act, std::ptr::null_mut());
    // SAFETY: unblocking and arming the alarm are async-signal-safe.
    unsafe {
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
    // SAFETY: open/flock with a valid NUL-terminated path. Shared by the
    // processes of a run, so not exclusive; never through a link (one
    // planted at the name fails the open: the traceback is printed
    // without the lock).
    unsafe {
        let fd = libc::open(
            c"drhook_lock".as_ptr(),
            libc::O_CREAT | libc::O_RDWR | libc::O_NOFOLLOW | libc::O_CLOEXEC,
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

pub(super) fn cause(sig: i32, code: i32) -> &'static str {
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

pub(super) fn pc_of(uc: *mut libc::c_void) -> u64 {
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
