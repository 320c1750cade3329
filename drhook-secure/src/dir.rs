//! Directories Dr.Hook creates and writes into.
//!
//! `mkdir(2)` never follows a link at the name it creates (it fails with
//! `EEXIST`), so what [`create_dir_all`] makes is a new directory; it is
//! then opened with `O_DIRECTORY|O_NOFOLLOW` and checked to be a directory
//! this process owns before anything is written into it (another user who
//! can write the parent could have swapped it in between). An entry that
//! was already there is used unless another user could have planted it
//! ([`check_not_planted`]).

use std::fs::OpenOptions;
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Component, Path, PathBuf};

fn euid() -> u32 {
    // SAFETY: no preconditions.
    unsafe { libc::geteuid() }
}

/// The directory an entry `p` is in, as a path (`p/..` when `p` has no
/// name of its own, such as `.`).
fn parent_of(p: &Path) -> PathBuf {
    match (p.parent(), p.components().next_back()) {
        (Some(d), Some(Component::Normal(_))) if !d.as_os_str().is_empty() => d.to_path_buf(),
        (_, Some(Component::Normal(_))) => PathBuf::from("."),
        _ => p.join(".."),
    }
}

/// Refuses an existing entry `p` (a directory to write into, or a link to
/// one) that another user could have planted: one that belongs to neither
/// this user nor root, in a directory anyone may write (`/tmp`, a
/// world-writable scratch directory; with or without the sticky bit). An
/// entry in a directory only its owner or group may write is trusted, as
/// the user's own choice.
pub fn check_not_planted(p: &Path) -> io::Result<()> {
    let m = std::fs::symlink_metadata(p)?;
    if m.uid() == euid() || m.uid() == 0 {
        return Ok(());
    }
    let parent = parent_of(p);
    let pm = std::fs::metadata(&parent)?;
    if pm.mode() & 0o002 != 0 {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "'{}' belongs to another user (uid {}) in '{}', which anyone may write: not written into",
                p.display(),
                m.uid(),
                parent.display()
            ),
        ));
    }
    Ok(())
}

/// Checks that `p`, which this process has just created, is a directory
/// it owns, without following a link.
fn check_own(p: &Path) -> io::Result<()> {
    let d = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(p)
        .map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("'{}' is not the directory just created: {e}", p.display()),
            )
        })?;
    let m = d.metadata()?;
    if !m.is_dir() || m.uid() != euid() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "'{}' is not a directory of this user's (uid {})",
                p.display(),
                m.uid()
            ),
        ));
    }
    Ok(())
}

/// Creates `dir` and its missing parents (mode `0777` less the umask),
/// each new one checked to be this process's own directory, and each one
/// that existed checked not to be planted ([`check_not_planted`]).
pub fn create_dir_all(dir: &Path) -> io::Result<()> {
    let mut at = PathBuf::new();
    for c in dir.components() {
        at.push(c);
        if !matches!(c, Component::Normal(_)) {
            continue;
        }
        match std::fs::create_dir(&at) {
            Ok(()) => check_own(&at)?,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                check_not_planted(&at)?;
                if !std::fs::metadata(&at)?.is_dir() {
                    return Err(io::Error::new(
                        io::ErrorKind::NotADirectory,
                        format!("'{}' is not a directory", at.display()),
                    ));
                }
            }
            Err(e) => {
                return Err(io::Error::new(
                    e.kind(),
                    format!("cannot create '{}': {e}", at.display()),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parents() {
        assert_eq!(parent_of(Path::new("a")), Path::new("."));
        assert_eq!(parent_of(Path::new("/tmp/a")), Path::new("/tmp"));
        assert_eq!(parent_of(Path::new("x/a/")), Path::new("x"));
        assert_eq!(parent_of(Path::new(".")), Path::new("./.."));
    }

    #[test]
    fn creates_nested_directories_and_accepts_existing_ones() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a/b/c");
        create_dir_all(&p).unwrap();
        assert!(p.is_dir());
        create_dir_all(&p).unwrap();
    }

    #[test]
    fn a_file_in_the_way_is_refused() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("f"), "").unwrap();
        assert!(create_dir_all(&d.path().join("f/g")).is_err());
    }

    #[test]
    fn an_entry_of_another_user_in_a_world_writable_directory_is_refused() {
        if euid() != 0 {
            eprintln!("SKIPPED: needs root to give a directory to another user");
            return;
        }
        let d = tempfile::tempdir().unwrap();
        std::fs::set_permissions(
            d.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o1777),
        )
        .unwrap();
        let planted = d.path().join("profiles");
        std::fs::create_dir(&planted).unwrap();
        std::os::unix::fs::chown(&planted, Some(65534), Some(65534)).unwrap();
        let e = create_dir_all(&planted).unwrap_err();
        assert!(e.to_string().contains("another user"), "{e}");
        // A link planted the same way.
        let link = d.path().join("link");
        std::os::unix::fs::symlink("/etc", &link).unwrap();
        std::os::unix::fs::lchown(&link, Some(65534), Some(65534)).unwrap();
        assert!(check_not_planted(&link).is_err());
        // In a directory only its owner writes, the same entry is trusted.
        std::fs::set_permissions(
            d.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        create_dir_all(&planted).unwrap();
    }
}
