//! Who this process is in the run, for the names of its files: its
//! ancestry (`pid-command` of each ancestor under the same run, carried to
//! the children in `DRHOOK_IO_ANCESTRY`) and the paths of its report and
//! trace (`<stem>.<task>` for the first process of a run,
//! `<stem>.<task>.<command>.<pid>` for the others).

use std::sync::Mutex;

/// The ancestry of this process (`pid-command` of each ancestor under the
/// same run, outermost first) and its own entry.
pub(super) static ANCESTRY: Mutex<(String, String)> = Mutex::new((String::new(), String::new()));

pub(super) const ANCESTRY_VAR: &str = "DRHOOK_IO_ANCESTRY";

pub(super) fn task() -> u32 {
    let (t, _) = drhook::task::Task::from_lookup(&|k| std::env::var(k).ok());
    t.myproc
}

/// Where this process's file `<stem>.<task>` goes (the first process of
/// a run; `<stem>.<task>.<command>.<pid>` for the processes it started),
/// in `DRHOOK_IO_DIR` or the working directory.
pub(super) fn output_path(stem: &str) -> std::path::PathBuf {
    let child = !ANCESTRY
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .0
        .is_empty();
    output_path_as(stem, child)
}

/// [`output_path`] with the plain name (`child` false) or a child's.
pub(super) fn output_path_as(stem: &str, child: bool) -> std::path::PathBuf {
    let (_, me) = ANCESTRY.lock().unwrap_or_else(|e| e.into_inner()).clone();
    let command = me.split_once('-').map(|x| x.1).unwrap_or_default();
    let task = task();
    let file = if !child {
        format!("{stem}.{task}")
    } else {
        format!("{stem}.{task}.{command}.{}", std::process::id())
    };
    let dir = std::env::var("DRHOOK_IO_DIR").unwrap_or_default();
    if dir.is_empty() {
        std::path::PathBuf::from(&file)
    } else {
        std::path::Path::new(&dir).join(&file)
    }
}

/// This process's ancestry, `pid-command` of each ancestor then of itself,
/// separated by `/`.
pub(super) fn ancestry_text() -> String {
    let (before, me) = ANCESTRY.lock().unwrap_or_else(|e| e.into_inner()).clone();
    if before.is_empty() {
        me
    } else {
        format!("{before}/{me}")
    }
}
