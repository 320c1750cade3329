//! Dr.Hook's own writes never signal the program: a write past
//! `RLIMIT_FSIZE` (`ulimit -f`) raises SIGXFSZ and a write to a closed
//! pipe SIGPIPE, whose default actions end the process — a program that
//! wrote nothing itself would die of Dr.Hook's profile or message.
//! [`OwnWrites`] holds both on the calling thread for the time of the
//! writes (they fail with `EFBIG`/`EPIPE` instead, which the writers
//! report), then takes away the ones the writes raised, and restores the
//! mask. Async-signal-safe (signal mask calls and system calls only).

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

#[cfg(test)]
mod tests {
    use super::*;

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
