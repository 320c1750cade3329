//! Dr.Hook's own writes never signal the program: a write past
//! `RLIMIT_FSIZE` (`ulimit -f`) raises SIGXFSZ and a write to a closed
//! pipe SIGPIPE, whose default actions end the process — a program that
//! wrote nothing itself would die of Dr.Hook's profile or message.
//! [`OwnWrites`] holds both on the calling thread for the time of the
//! writes (they fail with `EFBIG`/`EPIPE` instead, which the writers
//! report), then takes away the ones the writes raised, and restores the
//! mask. Async-signal-safe (signal mask calls and system calls only).
//! [`Deferred`] holds every asynchronous signal for the time of the
//! profile written at a process's end.

/// The signals [`OwnWrites`] holds.
const HELD: [libc::c_int; 2] = [libc::SIGXFSZ, libc::SIGPIPE];

/// While alive, the calling thread's own writes raise no SIGXFSZ or
/// SIGPIPE (see the module documentation). Nested guards are free: only
/// the outermost one unblocks.
pub struct OwnWrites {
    old: libc::sigset_t,
    pending_before: libc::sigset_t,
}

impl OwnWrites {
    /// Holds the signals from now on.
    pub fn hold() -> OwnWrites {
        // SAFETY: sigset_t is plain data; the calls fill valid sets.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for s in HELD {
                libc::sigaddset(&mut set, s);
            }
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
            let mut pending_before: libc::sigset_t = std::mem::zeroed();
            libc::sigpending(&mut pending_before);
            OwnWrites {
                old,
                pending_before,
            }
        }
    }
}

impl Drop for OwnWrites {
    fn drop(&mut self) {
        // SAFETY: as above; sigtimedwait with a zero timeout takes a
        // pending signal without waiting (the system call directly:
        // async-signal-safe).
        unsafe {
            let mut now: libc::sigset_t = std::mem::zeroed();
            libc::sigpending(&mut now);
            for s in HELD {
                if libc::sigismember(&self.old, s) == 0
                    && libc::sigismember(&now, s) == 1
                    && libc::sigismember(&self.pending_before, s) == 0
                {
                    let mut one: libc::sigset_t = std::mem::zeroed();
                    libc::sigemptyset(&mut one);
                    libc::sigaddset(&mut one, s);
                    let zero = libc::timespec {
                        tv_sec: 0,
                        tv_nsec: 0,
                    };
                    let saved = *libc::__errno_location();
                    libc::syscall(
                        libc::SYS_rt_sigtimedwait,
                        &one as *const libc::sigset_t,
                        std::ptr::null_mut::<libc::siginfo_t>(),
                        &zero as *const libc::timespec,
                        std::mem::size_of::<libc::c_ulong>(),
                    );
                    *libc::__errno_location() = saved;
                }
            }
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, std::ptr::null_mut());
        }
    }
}

/// Signals a [`Deferred`] guard does not hold: faults raised by the
/// writing code itself (holding them would hang or kill at once), and the
/// two that cannot be held (nor the two of [`OwnWrites`]).
const SYNCHRONOUS: [libc::c_int; 8] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGILL,
    libc::SIGFPE,
    libc::SIGTRAP,
    libc::SIGSYS,
    libc::SIGKILL,
    libc::SIGSTOP,
];

/// While alive, every asynchronous signal sent to the calling thread
/// (SIGTERM, SIGINT, SIGHUP, SIGALRM, ...) waits: the profile written at
/// the end of a process is finished and renamed into place before a
/// signal that arrives meanwhile takes effect — it is delivered, with the
/// program's disposition, when the guard is dropped and the thread's mask
/// restored. Async-signal-safe.
pub struct Deferred {
    old: libc::sigset_t,
}

impl Deferred {
    /// Holds every asynchronous signal from now on.
    pub fn hold() -> Deferred {
        // SAFETY: sigset_t is plain data; the calls fill valid sets.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigfillset(&mut set);
            // SIGXFSZ and SIGPIPE of the writes themselves are taken away
            // by `OwnWrites`, which needs them unheld before it.
            for s in SYNCHRONOUS.iter().chain(&HELD) {
                libc::sigdelset(&mut set, *s);
            }
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
            Deferred { old }
        }
    }
}

impl Drop for Deferred {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved by `hold`.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, std::ptr::null_mut());
        }
    }
}

/// Descriptors a [`MoreRoom`] guard adds to the soft limit.
const SPARE_DESCRIPTORS: libc::rlim_t = 16;

/// The limits a [`MoreRoom`] guard raises.
const ROOMY: [libc::__rlimit_resource_t; 3] =
    [libc::RLIMIT_NOFILE, libc::RLIMIT_AS, libc::RLIMIT_DATA];

/// While alive, the process may open a few more descriptors than its soft
/// limit (`RLIMIT_NOFILE`) and map memory up to its hard address-space and
/// data limits (`RLIMIT_AS`, `RLIMIT_DATA`): a program that ends with
/// every descriptor it may have open, or with its memory limit just above
/// its use, still gets its reports, whose files are opened and whose
/// tables are built at its very end (the writer's allocation failing
/// aborted the program). The soft limits are restored when dropped;
/// nothing of the program runs in between. Async-signal-safe.
pub struct MoreRoom {
    old: [Option<libc::rlimit>; 3],
}

impl MoreRoom {
    /// Raises the soft limits, as far as the hard ones allow.
    pub fn hold() -> MoreRoom {
        let mut old = [None; 3];
        for (slot, res) in old.iter_mut().zip(ROOMY) {
            // SAFETY: get/setrlimit with a valid struct.
            unsafe {
                let mut r: libc::rlimit = std::mem::zeroed();
                if libc::getrlimit(res, &mut r) != 0
                    || r.rlim_cur == libc::RLIM_INFINITY
                    || r.rlim_cur >= r.rlim_max
                {
                    continue;
                }
                let mut more = r;
                more.rlim_cur = if res == libc::RLIMIT_NOFILE {
                    r.rlim_cur.saturating_add(SPARE_DESCRIPTORS).min(r.rlim_max)
                } else {
                    r.rlim_max
                };
                if libc::setrlimit(res, &more) == 0 {
                    *slot = Some(r);
                }
            }
        }
        MoreRoom { old }
    }
}

impl Drop for MoreRoom {
    fn drop(&mut self) {
        for (r, res) in self.old.iter().zip(ROOMY) {
            if let Some(r) = r {
                // SAFETY: restores the limit read by `hold` (a soft limit
                // below what is in use is allowed: nothing is taken away).
                unsafe { libc::setrlimit(res, r) };
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deferred_signal_arrives_when_the_guard_ends() {
        use std::sync::atomic::{AtomicI32, Ordering};
        static GOT: AtomicI32 = AtomicI32::new(0);
        extern "C" fn on_usr2(sig: libc::c_int) {
            GOT.store(sig, Ordering::SeqCst);
        }
        // SAFETY: a handler for SIGUSR2 (nothing else in this test binary
        // uses it), a signal to this thread, the old handler restored.
        unsafe {
            let old = libc::signal(libc::SIGUSR2, on_usr2 as *const () as libc::sighandler_t);
            let mut before: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut before);
            let held = Deferred::hold();
            libc::pthread_kill(libc::pthread_self(), libc::SIGUSR2);
            assert_eq!(GOT.load(Ordering::SeqCst), 0, "held while the guard lives");
            drop(held);
            assert_eq!(
                GOT.load(Ordering::SeqCst),
                libc::SIGUSR2,
                "delivered at its end"
            );
            let mut after: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut after);
            for s in 1..32 {
                assert_eq!(
                    libc::sigismember(&before, s),
                    libc::sigismember(&after, s),
                    "signal {s}: mask restored"
                );
            }
            libc::signal(libc::SIGUSR2, old);
        }
    }

    #[test]
    fn a_write_to_a_closed_pipe_raises_nothing() {
        let mut fds = [0; 2];
        // SAFETY: a pipe, its read end closed, a write to the other.
        unsafe {
            assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
            libc::close(fds[0]);
            let held = OwnWrites::hold();
            let n = libc::write(fds[1], b"x".as_ptr().cast(), 1);
            assert_eq!(n, -1);
            assert_eq!(*libc::__errno_location(), libc::EPIPE);
            drop(held);
            let mut now: libc::sigset_t = std::mem::zeroed();
            libc::sigpending(&mut now);
            assert_eq!(libc::sigismember(&now, libc::SIGPIPE), 0, "taken away");
            let mut mask: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), &mut mask);
            assert_eq!(libc::sigismember(&mask, libc::SIGPIPE), 0, "mask restored");
            libc::close(fds[1]);
        }
    }
}
