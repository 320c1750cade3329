//! Unit tests of the signal lists, names and causes.

use super::handler::cause;
use super::*;
use crate::config::SignalList;

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
    assert!(!all.contains(&libc::SIGCHLD) && !all.contains(&libc::SIGALRM) && !all.contains(&32));
    assert!(signals_to_catch(&SignalList::All, &SignalList::All).is_empty());
    assert_eq!(signal_name(11), "SIGSEGV");
    assert_eq!(cause(libc::SIGFPE, 3), "floating-point divide by zero");
}
