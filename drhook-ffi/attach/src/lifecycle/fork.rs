//! `fork` (and `vfork`, which becomes a `fork`): the monitors hear of it
//! on both sides; the engine's own fork work runs inside the real `fork`
//! through `pthread_atfork`.

use std::sync::atomic::Ordering;

use super::process;
use crate::events::{self, Events};
use crate::real::{self, slots};
use crate::sys::{errno, set_errno};

/// `fork()` (and `vfork()`, which becomes a `fork`: the layer's work in the
/// child must not run in the parent's memory). The engine's own fork work
/// (a new profile in the child) runs inside the real `fork` through
/// `pthread_atfork`.
#[inline]
pub fn fork() -> libc::pid_t {
    resolve_for_children();
    let watched = events::interest().0 & (Events::FORK.0 | Events::PROCESS.0) != 0;
    if !watched {
        return real::fork();
    }
    process::pre_fork();
    let pid = real::fork();
    let e = errno();
    process::post_fork(pid, || {
        let argv0 = std::env::args_os().next().unwrap_or_default();
        drhook::config::process::command_name(&argv0.to_string_lossy())
    });
    set_errno(e);
    pid
}

/// Before the first `fork`: the real functions a child calls first (it
/// exits or execs), looked up once in the parent rather than in every
/// child (a lookup is costly, and in a child it also touches pages).
#[inline]
fn resolve_for_children() {
    static DONE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if DONE.load(Ordering::Relaxed) {
        return;
    }
    for s in [
        &slots::UNDERSCORE_EXIT,
        &slots::EXIT,
        &slots::EXECVE,
        &slots::EXECVPE,
    ] {
        let _ = s.get();
    }
    DONE.store(true, Ordering::Relaxed);
}
