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
    (e.config.options.profile.is_some() || e.config.options.mem.memprof || e.config.options.io)
        && e.config.profile_proc.is_none_or(|p| p == myproc)
}

/// This process's profile file.
pub(crate) fn profile_path(e: &Engine) -> PathBuf {
    let task = setup::task(e);
    let base = crate::config::profile_path(&e.config.profile_template, task.myproc);
    // The process's own pid (a dump's copy names its files after the
    // process it copies).
    let pid = crate::sys::linebuf::shown_pid() as u32;
    PathBuf::from(profile_file(
        &base,
        setup::is_main(),
        &command_name(&e.program),
        pid,
        e.config.profile_prefix.as_deref(),
    ))
}

/// The JSON companion of this process's profile: `<profile>.json`.
pub(crate) fn json_path(e: &Engine) -> PathBuf {
    let mut p = profile_path(e).into_os_string();
    p.push(".json");
    PathBuf::from(p)
}

/// This process's timeline: `drhook.trace.<task>.json` in the directory of
/// the profile for the main process of its task; with `.<command>.<pid>`
/// before `.json` for any other; `<prefix><command>.<pid>.drhook.trace.<task>.json`
/// with a prefix.
pub(crate) fn trace_path(e: &Engine) -> PathBuf {
    let task = setup::task(e).myproc;
    let base = format!("drhook.trace.{task}");
    // The process's own pid (a dump's copy names its files after the
    // process it copies).
    let pid = crate::sys::linebuf::shown_pid() as u32;
    let command = command_name(&e.program);
    if let Some(p) = e.config.profile_prefix.as_deref() {
        return PathBuf::from(format!("{p}{command}.{pid}.{base}.json"));
    }
    let name = if setup::is_main() {
        format!("{base}.json")
    } else {
        format!("{base}.{command}.{pid}.json")
    };
    let profile = crate::config::profile_path(&e.config.profile_template, task);
    match std::path::Path::new(&profile).parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(name),
        _ => PathBuf::from(name),
    }
}

/// This process's file `<stem>.<task>` named as the profile is (see
/// [`crate::lifecycle::companion_path`]).
pub(crate) fn companion_path(e: &Engine, stem: &str, child: bool) -> PathBuf {
    let task = setup::task(e).myproc;
    let base = format!("{stem}.{task}");
    // The process's own pid (a dump's copy names its files after the
    // process it copies).
    let pid = crate::sys::linebuf::shown_pid() as u32;
    let command = command_name(&e.program);
    if let Some(p) = e.config.profile_prefix.as_deref() {
        return PathBuf::from(format!("{p}{command}.{pid}.{base}"));
    }
    let name = if setup::is_main() && !child {
        base
    } else {
        format!("{base}.{command}.{pid}")
    };
    let profile = crate::config::profile_path(&e.config.profile_template, task);
    match std::path::Path::new(&profile).parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(name),
        _ => PathBuf::from(name),
    }
}
