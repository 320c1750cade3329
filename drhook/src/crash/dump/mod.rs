//! A look into a running job: on a signal (`DR_HOOK_DUMP_SIGNAL`, what
//! `drhook dump PID` sends) or when no thread has entered or left a region
//! for `DR_HOOK_HANG_TIMEOUT` seconds (`hang.rs`), every thread's current
//! calling tree on stderr (or into `DR_HOOK_DUMP_FILE`) and the profile so
//! far in `<profile>.partial`; the program goes on.
//!
//! The handler does only async-signal-safe work: two `clone` system calls
//! (no `atfork` handlers, no `SIGCHLD`: the program cannot tell) and a wait
//! for the first, which ends at once. The second child, a frozen copy of
//! the process at the moment of the signal, orphaned, writes everything
//! (allocation is allowed there: only its thread exists), as the crash
//! path's helper does (`signals::helper`); an alarm ends it should a lock
//! that another thread held at that moment block it.
//!
//! The signal: `DR_HOOK_DUMP_SIGNAL` (a number, a name `SIGUSR2`/`USR2`,
//! or `SIGRTMIN+n`; `0`/`none`: no handler); by default
//! [`DEFAULT_OFFSET`] above `SIGRTMIN`, a real-time signal programs rarely
//! use. Installed only when the program has left the signal at its
//! default (a program's handler is never replaced; one the program
//! installs later replaces this one), with `SA_RESTART` (interrupted
//! system calls are restarted) and `SA_ONSTACK`; the program's signal mask
//! is left alone. Under the preload library the program's `sigaction`
//! sees the default it left (`program_action`).
//!
//! Native frames under the regions: a process that samples its stacks
//! (issue 27, sampling inside Dr.Hook regions) sets
//! [`set_native_frames`]; the dump then writes them after each thread's
//! tree.

pub(crate) mod hang;

use std::io::Write;
use std::sync::atomic::{AtomicI32, AtomicPtr, AtomicU32, Ordering};

use crate::crash::calltree::{Scratch, opts_for, write_tree};
use crate::crash::signals::view::own_sigaction;
use crate::sys::linebuf::LineBuf;
use crate::tree::thread;

/// The default signal: `SIGRTMIN + 6`.
pub const DEFAULT_OFFSET: i32 = 6;

/// The signal installed (0: none).
static SIGNAL: AtomicI32 = AtomicI32::new(0);
/// Why the next dump is made (0: the signal, 1: the hang watchdog), read
/// by the copy.
static REASON: AtomicU32 = AtomicU32::new(0);
/// Seconds of the hang that triggered the dump.
static HANG_SECS: AtomicU32 = AtomicU32::new(0);

/// Writes native frames of thread `tid` (Dr.Hook's number) after its tree.
pub type NativeFrames = fn(tid: u32, out: &mut dyn Write);
static NATIVE: AtomicPtr<()> = AtomicPtr::new(std::ptr::null_mut());

/// The hook point for sampling: `f` writes a thread's native frames in
/// every dump (called in the dump's copy of the process).
pub fn set_native_frames(f: NativeFrames) {
    NATIVE.store(f as *mut (), Ordering::Release);
}

/// Parses `DR_HOOK_DUMP_SIGNAL`: Some(0) for off, None when not a signal.
pub(crate) fn parse_signal(v: &str) -> Option<i32> {
    let v = v.trim();
    if v.is_empty() {
        return Some(libc::SIGRTMIN() + DEFAULT_OFFSET);
    }
    if v == "0" || v.eq_ignore_ascii_case("none") || v.eq_ignore_ascii_case("off") {
        return Some(0);
    }
    let up = v.to_ascii_uppercase();
    let name = up.strip_prefix("SIG").unwrap_or(&up);
    let n = if let Ok(n) = name.parse::<i32>() {
        n
    } else if let Some(off) = name.strip_prefix("RTMIN") {
        libc::SIGRTMIN()
            + if off.is_empty() {
                0
            } else {
                off.parse::<i32>().ok()?
            }
    } else if let Some(off) = name.strip_prefix("RTMAX") {
        libc::SIGRTMAX()
            + if off.is_empty() {
                0
            } else {
                off.parse::<i32>().ok()?
            }
    } else {
        match name {
            "USR1" => libc::SIGUSR1,
            "USR2" => libc::SIGUSR2,
            "HUP" => libc::SIGHUP,
            "URG" => libc::SIGURG,
            "WINCH" => libc::SIGWINCH,
            _ => return None,
        }
    };
    // Not the signals that stop or end a program on their own, nor those
    // Dr.Hook's crash handlers take.
    let refused = [
        libc::SIGKILL,
        libc::SIGSTOP,
        libc::SIGSEGV,
        libc::SIGBUS,
        libc::SIGILL,
        libc::SIGFPE,
        libc::SIGABRT,
        libc::SIGTRAP,
        libc::SIGCHLD,
    ];
    (n > 0 && n <= libc::SIGRTMAX() && !refused.contains(&n)).then_some(n)
}

/// Installs the dump handler (at the engine's start; once).
pub(crate) fn install() {
    let v = crate::config::env::process_env("DR_HOOK_DUMP_SIGNAL").unwrap_or_default();
    let Some(sig) = parse_signal(&v) else {
        crate::diag!(
            "drhook_init",
            "Warning - DR_HOOK_DUMP_SIGNAL={v:?} is not a signal Dr.Hook can take: no dumps on a signal"
        );
        return;
    };
    if sig == 0 {
        return;
    }
    // SAFETY: plain data filled in by sigaction.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    if own_sigaction(sig, std::ptr::null(), &mut old) != 0 {
        return;
    }
    if old.sa_sigaction != libc::SIG_DFL {
        crate::diag!(
            "drhook_init",
            "Warning - signal {sig} (DR_HOOK_DUMP_SIGNAL) is the program's: no dumps on a signal"
        );
        return;
    }
    // SAFETY: plain data.
    let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
    act.sa_sigaction = handler as *const () as usize;
    act.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART | libc::SA_ONSTACK;
    // SAFETY: a valid mask.
    unsafe { libc::sigemptyset(&mut act.sa_mask) };
    if own_sigaction(sig, &act, std::ptr::null_mut()) == 0 {
        SIGNAL.store(sig, Ordering::Relaxed);
    }
}

/// The program's `sigaction` on the dump signal (through the preload
/// layer's wrapper, `signals::view`): the program sees the default it left;
/// a disposition it sets replaces Dr.Hook's handler, which steps aside
/// (no more dumps on a signal). Returns 1 (done here), or 0 for the
/// caller to make the real call (a disposition that cannot be set).
///
/// # Safety
/// `act` and `old` are null or valid.
pub(crate) unsafe fn program_action(
    sig: i32,
    act: *const libc::sigaction,
    old: *mut libc::sigaction,
) -> i32 {
    // SAFETY: the caller's valid pointers.
    let (new, old) = unsafe { (act.as_ref(), old.as_mut()) };
    if let Some(new) = new {
        if own_sigaction(sig, new, std::ptr::null_mut()) != 0 {
            // The real call reports the error.
            return 0;
        }
        SIGNAL.store(0, Ordering::Relaxed);
    }
    if let Some(o) = old {
        // SAFETY: all-zero is a valid sigaction: SIG_DFL, empty mask.
        *o = unsafe { std::mem::zeroed() };
    }
    1
}

/// The installed signal (0: none).
pub fn signal() -> i32 {
    SIGNAL.load(Ordering::Relaxed)
}

extern "C" fn handler(_sig: i32, _info: *mut libc::siginfo_t, _uc: *mut libc::c_void) {
    REASON.store(0, Ordering::Relaxed);
    dump_in_copy();
}

/// Makes the copy that writes the dump, and waits only for the
/// intermediate child. Async-signal-safe; errno kept.
pub(crate) fn dump_in_copy() {
    // SAFETY: reading errno.
    let saved = unsafe { *libc::__errno_location() };
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // A plain clone with no exit signal: no atfork handlers, no SIGCHLD
    // for the program, invisible to its wait(-1).
    // SAFETY: the child runs `intermediate`, which ends with exit_group.
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone,
            0 as libc::c_ulong,
            0usize,
            0usize,
            0usize,
            0usize,
        )
    };
    if pid == 0 {
        intermediate(parent);
    }
    if pid > 0 {
        let mut status = 0;
        // SAFETY: reaping our own clone child (__WCLONE: no exit signal).
        unsafe { libc::waitpid(pid as i32, &mut status, libc::__WCLONE) };
    }
    // SAFETY: restoring errno.
    unsafe { *libc::__errno_location() = saved };
}

fn intermediate(parent: i32) -> ! {
    // SAFETY: the grandchild runs `copy_main`, which never returns.
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone,
            0 as libc::c_ulong,
            0usize,
            0usize,
            0usize,
            0usize,
        )
    };
    if pid == 0 {
        copy_main(parent);
    }
    crate::sys::exit_now(0)
}

/// The copy: trees, then the partial profile.
fn copy_main(parent: i32) -> ! {
    // SAFETY: an alarm for this process alone (its default action ends it).
    unsafe {
        libc::alarm(60);
        let mut all: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut all);
        libc::sigaddset(&mut all, libc::SIGALRM);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &all, std::ptr::null_mut());
        libc::signal(libc::SIGALRM, libc::SIG_DFL);
    }
    crate::sys::linebuf::set_pid_override(parent);
    let mut out = Vec::new();
    write_trees(&mut out, parent);
    match crate::config::env::process_env("DR_HOOK_DUMP_FILE").filter(|p| !p.is_empty()) {
        Some(p) => {
            let p = p.replace("%d", &parent.to_string());
            if let Err(e) = crate::profile::write::write_atomically(std::path::Path::new(&p), |w| {
                w.write_all(&out)
            }) {
                crate::diag!("drhook_dump", "Error: DR_HOOK_DUMP_FILE '{p}': {e}");
            }
        }
        None => crate::sys::linebuf::write_all(2, &out),
    }
    crate::profile::write::set_partial();
    let _ = crate::profile::write::write_profile();
    crate::sys::exit_now(0)
}

/// Every thread's calling tree, as the `[DrHookCallTree]` lines of the
/// crash report, each thread under a `[DrHookDump]` line.
fn write_trees(out: &mut Vec<u8>, pid: i32) {
    let mut l = LineBuf::new();
    let line = |l: &mut LineBuf, out: &mut Vec<u8>| {
        out.extend_from_slice(l.as_bytes());
        out.push(b'\n');
    };
    crate::sys::linebuf::prefix(&mut l, 1, pid);
    l.str(" [DrHookDump] pid ").i64(pid as i64);
    match REASON.load(Ordering::Relaxed) {
        1 => {
            l.str(": no region entered or left for ")
                .u64(HANG_SECS.load(Ordering::Relaxed) as u64)
                .str(" s (DR_HOOK_HANG_TIMEOUT)");
        }
        _ => {
            l.str(": on signal ")
                .i64(SIGNAL.load(Ordering::Relaxed) as i64);
        }
    }
    l.str("; the program goes on");
    line(&mut l, out);
    let pin = thread::Pin::new();
    let n = 1 << 12;
    let (mut f, mut cw, mut cc) = (vec![std::ptr::null(); n], vec![0; n], vec![0; n]);
    let native = NATIVE.load(Ordering::Acquire);
    thread::for_each_thread_in(&pin, |td| {
        let mut l = LineBuf::new();
        crate::sys::linebuf::prefix(&mut l, td.tid, td.unix_tid());
        l.str(" [DrHookDump] Thread#")
            .u64(td.tid as u64)
            .str(" (tid ")
            .i64(td.unix_tid() as i64)
            .str(")");
        line(&mut l, out);
        let o = opts_for(td);
        let mut s = Scratch {
            frames: &mut f,
            child_wall: &mut cw,
            child_cpu: &mut cc,
        };
        write_tree(td, &o, &mut s, &mut |l| line(l, out));
        if !native.is_null() {
            // SAFETY: only `NativeFrames` values are stored.
            let f: NativeFrames = unsafe { std::mem::transmute::<*mut (), NativeFrames>(native) };
            f(td.tid, out);
        }
    });
}

/// The dump of the hang watchdog (from its thread).
pub(crate) fn dump_for_hang(secs: u32) {
    REASON.store(1, Ordering::Relaxed);
    HANG_SECS.store(secs, Ordering::Relaxed);
    dump_in_copy();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_names() {
        let rt = libc::SIGRTMIN();
        assert_eq!(parse_signal(""), Some(rt + DEFAULT_OFFSET));
        assert_eq!(parse_signal("none"), Some(0));
        assert_eq!(parse_signal("SIGUSR2"), Some(libc::SIGUSR2));
        assert_eq!(parse_signal("usr1"), Some(libc::SIGUSR1));
        assert_eq!(parse_signal("SIGRTMIN+3"), Some(rt + 3));
        assert_eq!(parse_signal("RTMAX-1"), Some(libc::SIGRTMAX() - 1));
        assert_eq!(parse_signal("12"), Some(12));
        assert_eq!(parse_signal("SEGV"), None);
        assert_eq!(parse_signal("9"), None);
        assert_eq!(parse_signal("bogus"), None);
    }
}
