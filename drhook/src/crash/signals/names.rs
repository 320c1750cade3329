//! Signal names and the lists of signals Dr.Hook catches: the reference's
//! default set, the synchronous (fault) signals, those `-1` selects, and
//! the set a configuration asks for.

use super::NSIG;
use crate::config::SignalList;

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
pub(super) const SYNCHRONOUS: &[i32] = &[
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGILL,
    libc::SIGFPE,
    libc::SIGTRAP,
    libc::SIGSYS,
];

/// Signals that ask the process to end, sent by another process (a
/// service manager's stop, Ctrl-C, a hang-up): a program may handle them
/// to shut down gracefully.
pub(super) const TERMINATION: &[i32] = &[libc::SIGHUP, libc::SIGINT, libc::SIGTERM];

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
