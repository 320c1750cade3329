//! Which file this process's profile goes to, and whether it writes one:
//! the expanded `DR_HOOK_PROFILE` for the main process of its task, with
//! `.<command>.<pid>` appended for any other process of the run (a `fork`
//! child, a program started by the instrumented one), or
//! `<prefix><command>.<pid>.<file>` with `DRHOOK_PROFILE_PREFIX` (see
//! `config::process`).

use std::path::PathBuf;

use crate::config::process::{command_name, profile_file};
use crate::setup::{self, Engine};

/// Whether this process writes a profile (`DR_HOOK_OPT=prof`/`cpuprof`,
/// and `DR_HOOK_PROFILE_PROC` selects its task, as MPI reported it).
pub(crate) fn writes_profile(e: &Engine) -> bool {
    let myproc = setup::task(e).myproc;
    e.config.options.profile.is_some() && e.config.profile_proc.is_none_or(|p| p == myproc)
}

/// This process's profile file.
pub(crate) fn profile_path(e: &Engine) -> PathBuf {
    let task = setup::task(e);
    let base = crate::config::profile_path(&e.config.profile_template, task.myproc);
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() } as u32;
    PathBuf::from(profile_file(
        &base,
        setup::is_main(),
        &command_name(&e.program),
        pid,
        e.config.profile_prefix.as_deref(),
    ))
}
