//! `DR_HACK=1` (the reference's `dr_hack_mod`): every enter and exit of
//! every instrumented routine is a line of `drhack.txt` on task 1 — a
//! pseudo-XML call trace,
//!
//! ```text
//!  <MODEL_MOD_STEP>
//!  </MODEL_MOD_STEP>
//! ```
//!
//! with `<`, `>`, `:` and blanks of the name written as `_` (gfortran's
//! list-directed layout: one leading blank). As the reference, the file is
//! appended to, and closed when `MODEL_MOD_MODEL_DELETE` is left. It is
//! written as every file Dr.Hook creates: an exclusive temporary file
//! (with the old contents of `drhack.txt` copied first) renamed into place
//! at exit — the reference appends in place, from every thread without a
//! lock, and on tasks other than 1 writes `fort.999`.

use std::io::Read;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI32, Ordering};

use crate::profile::write::AtomicFile;

/// The file: `None` before the first line, `Some(None)` once closed (or
/// if it could not be created).
static FILE: Mutex<Option<Option<AtomicFile>>> = Mutex::new(None);
/// The process that created it: a `fork` child inherits the temporary
/// file but neither writes it nor renames (nor removes) it.
static OWNER: AtomicI32 = AtomicI32::new(0);

fn pid() -> i32 {
    // SAFETY: no preconditions.
    unsafe { libc::getpid() }
}

/// The file's name, in the working directory.
const NAME: &str = "drhack.txt";

fn create() -> Option<AtomicFile> {
    let path = std::path::Path::new(NAME);
    let mut f = match AtomicFile::create(path) {
        Ok(f) => f,
        Err(e) => {
            crate::diag!("dr_hack_init", "DR_HACK: cannot create {NAME}: {e}");
            return None;
        }
    };
    // The old contents, read without following a link.
    let mut old = Vec::new();
    if let Ok(mut o) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags_nofollow()
        .open(path)
    {
        let _ = o.read_to_end(&mut old);
    }
    let _ = f.writer().write_all(&old);
    Some(f)
}

trait NoFollow {
    fn custom_flags_nofollow(&mut self) -> &mut Self;
}

impl NoFollow for std::fs::OpenOptions {
    fn custom_flags_nofollow(&mut self) -> &mut Self {
        use std::os::unix::fs::OpenOptionsExt;
        self.custom_flags(libc::O_NOFOLLOW)
    }
}

/// Writes the line of an enter (`entering`) or exit of `name`.
pub(crate) fn line(entering: bool, name: &str) {
    let clean: String = name
        .chars()
        .map(|c| {
            if matches!(c, '<' | '>' | ':' | ' ') {
                '_'
            } else {
                c
            }
        })
        .collect();
    let mut g = FILE.lock().unwrap_or_else(|p| p.into_inner());
    let slot = g.get_or_insert_with(|| {
        OWNER.store(pid(), Ordering::Relaxed);
        create()
    });
    if OWNER.load(Ordering::Relaxed) != pid() {
        // A fork child: the parent's file, left alone.
        if let Some(f) = slot.take() {
            std::mem::forget(f);
        }
        return;
    }
    let Some(f) = slot else { return };
    let _ = writeln!(
        f.writer(),
        " <{}{}>",
        if entering { "" } else { "/" },
        crate::sys::linebuf::escape_controls(&clean)
    );
    if !entering && clean == "MODEL_MOD_MODEL_DELETE" {
        commit(slot);
    }
}

fn commit(slot: &mut Option<AtomicFile>) {
    if OWNER.load(Ordering::Relaxed) != pid() {
        if let Some(f) = slot.take() {
            std::mem::forget(f);
        }
        return;
    }
    if let Some(f) = slot.take()
        && let Err(e) = f.commit()
    {
        crate::diag!("dr_hack_end", "DR_HACK: cannot write {NAME}: {e}");
    }
}

/// Renames the file into place (`runtime` registers it with `atexit`).
pub(crate) extern "C" fn end() {
    let mut g = FILE.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(slot) = g.as_mut() {
        commit(slot);
    }
}
