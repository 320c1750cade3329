//! The forked helper process (step 5 of the module doc): the profile and
//! the native backtrace of the signalled thread, written by a copy of the
//! crashed process where allocation is allowed, waited for with a timeout.

use std::sync::atomic::Ordering;

use super::handler::{msg, sleep_ms};
use super::{HARAKIRI, NATIVE_BACKTRACE, PROFILE_ON_CRASH, PROGRAM, PROGRAM_LEN};
use crate::sys::linebuf::LineBuf;

/// Native backtrace and profile in a forked helper, bounded by a timeout.
pub(super) fn crash_helper(sig: i32, pc: u64) {
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
            crate::crash::maps::describe(l, ip as u64);
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
