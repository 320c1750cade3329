//! A file created exclusively under an unpredictable temporary name beside
//! its final name, and renamed into place ([`NewFile`]).
//!
//! The temporary file is made by the `tempfile` crate: `O_CREAT|O_EXCL`
//! (`create_new`) and `O_CLOEXEC`, a name of 12 random characters, retried
//! on a collision. `O_EXCL` never opens what is already at the name, a
//! link included (dangling or not), so `O_NOFOLLOW` would add nothing. The
//! mode asked for is `0666`, so the file gets the process's umask, as a
//! file made by `creat` would (tempfile's default would be `0600`).
//!
//! The rename (`rename(2)`) replaces whatever is at the final name — a
//! regular file, or a link, which is replaced and never written through —
//! and fails on a directory. Two kinds of existing entries are written
//! into instead, never replaced: a character device (only root can make
//! one: `DR_HOOK_PROFILE=/dev/null`), and, for an output named on a
//! command line ([`NewFile::create_output`]), a link that this user or root
//! owns (`-o /dev/stdout`, the user's own link) and a FIFO of theirs.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// A file being written: a temporary file renamed into place by
/// [`NewFile::commit`] (dropped without a commit, the temporary file is
/// removed), or an existing device written directly.
pub struct NewFile {
    path: PathBuf,
    kind: Kind,
}

enum Kind {
    Temp(tempfile::NamedTempFile),
    Direct(File),
}

/// What to do with a link found at the final name.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Links {
    /// Replace it (a file Dr.Hook writes in a directory of the user's
    /// environment).
    Replace,
    /// Write through it when this user or root owns it (an output named
    /// on a command line).
    FollowTrusted,
}

/// This process's effective user.
fn euid() -> u32 {
    // SAFETY: no preconditions.
    unsafe { libc::geteuid() }
}

/// The directory `path` is in (`.` for a bare name).
pub fn dir_of(path: &Path) -> &Path {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

impl NewFile {
    /// Creates the temporary file of `path` (a file Dr.Hook writes: a
    /// profile, its companions, a report, a trace). A link at `path` is
    /// replaced at the commit, never followed; a character device there
    /// is written directly.
    pub fn create(path: &Path) -> io::Result<NewFile> {
        Self::open(path, Links::Replace)
    }

    /// As [`NewFile::create`], for an output a user named on a command
    /// line: a link there that the user or root owns is followed (the
    /// file it names is created the same way, or, a device or a FIFO,
    /// written directly); a link anyone else owns is replaced.
    pub fn create_output(path: &Path) -> io::Result<NewFile> {
        Self::open(path, Links::FollowTrusted)
    }

    fn open(path: &Path, links: Links) -> io::Result<NewFile> {
        if let Ok(m) = std::fs::symlink_metadata(path) {
            let t = m.file_type();
            let trusted = m.uid() == euid() || m.uid() == 0;
            if t.is_char_device() || (links == Links::FollowTrusted && t.is_fifo() && trusted) {
                return Self::direct(path, libc::O_NOFOLLOW);
            }
            if t.is_symlink() && links == Links::FollowTrusted && trusted {
                if let Ok(target) = std::fs::canonicalize(path) {
                    let tm = std::fs::metadata(&target)?;
                    let tt = tm.file_type();
                    if tt.is_char_device() || tt.is_fifo() || tt.is_socket() {
                        return Self::direct(&target, 0);
                    }
                    return Self::temp(&target).map(|mut f| {
                        f.path = target;
                        f
                    });
                }
            }
        }
        Self::temp(path)
    }

    fn direct(path: &Path, extra: i32) -> io::Result<NewFile> {
        let f = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_CLOEXEC | extra)
            .open(path)?;
        Ok(NewFile {
            path: path.to_path_buf(),
            kind: Kind::Direct(f),
        })
    }

    fn temp(path: &Path) -> io::Result<NewFile> {
        let name = path
            .file_name()
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "a file name is missing"))?;
        let mut prefix = std::ffi::OsString::from(".");
        prefix.push(name);
        prefix.push(".");
        let t = tempfile::Builder::new()
            .prefix(&prefix)
            .suffix(".tmp")
            .rand_bytes(12)
            .permissions(std::fs::Permissions::from_mode(0o666))
            .tempfile_in(dir_of(path))?;
        Ok(NewFile {
            path: path.to_path_buf(),
            kind: Kind::Temp(t),
        })
    }

    /// Where the file goes.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The temporary file's path (None: written directly).
    pub fn temp_path(&self) -> Option<&Path> {
        match &self.kind {
            Kind::Temp(t) => Some(t.path()),
            Kind::Direct(_) => None,
        }
    }

    /// The file being written.
    pub fn file(&mut self) -> &mut File {
        match &mut self.kind {
            Kind::Temp(t) => t.as_file_mut(),
            Kind::Direct(f) => f,
        }
    }

    /// Renames the file into place, after an `fsync` with `durable`.
    pub fn commit(self, durable: bool) -> io::Result<()> {
        match self.kind {
            Kind::Temp(t) => {
                if durable {
                    t.as_file().sync_all()?;
                }
                t.persist(&self.path).map(drop).map_err(|e| e.error)
            }
            Kind::Direct(_) => Ok(()),
        }
    }
}

impl Write for NewFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file().write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.file().write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file().flush()
    }
}

/// Writes `bytes` to `path` through a [`NewFile`] (`durable`: `fsync`
/// before the rename).
pub fn write(path: &Path, bytes: &[u8], durable: bool) -> io::Result<()> {
    let mut f = NewFile::create(path)?;
    f.file().write_all(bytes)?;
    f.commit(durable)
}

/// Writes `bytes` to an output named on a command line (see
/// [`NewFile::create_output`]).
pub fn write_output(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut f = NewFile::create_output(path)?;
    f.file().write_all(bytes)?;
    f.commit(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn umask() -> u32 {
        // SAFETY: reads and restores the mask.
        unsafe {
            let m = libc::umask(0o022);
            libc::umask(m);
            m
        }
    }

    #[test]
    fn a_link_at_the_final_name_is_replaced_not_written_through() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let out = d.path().join("drhook.prof.1");
        symlink(&victim, &out).unwrap();
        write(&out, b"profile", false).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert!(
            !std::fs::symlink_metadata(&out)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "profile");
        // Nothing else is left in the directory.
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 2);
    }

    #[test]
    fn the_temporary_name_is_unpredictable_and_exclusive() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("p");
        let a = NewFile::create(&out).unwrap();
        let b = NewFile::create(&out).unwrap();
        let (ta, tb) = (a.temp_path().unwrap().to_path_buf(), b.temp_path().unwrap());
        assert_ne!(ta, tb);
        let name = ta.file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with(".p.") && name.ends_with(".tmp"), "{name}");
        assert!(!name.contains(&std::process::id().to_string()), "{name}");
        drop(a);
        assert!(!ta.exists(), "an uncommitted file is removed");
    }

    #[test]
    fn mode_is_0666_less_the_umask() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("m");
        write(&out, b"x", false).unwrap();
        let mode = std::fs::metadata(&out).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o666 & !umask());
    }

    #[test]
    fn a_device_is_written_not_replaced() {
        write(Path::new("/dev/null"), b"x", false).unwrap();
        assert!(
            std::fs::metadata("/dev/null")
                .unwrap()
                .file_type()
                .is_char_device()
        );
    }

    #[test]
    fn an_output_through_the_users_own_link_lands_at_its_target() {
        let d = tempfile::tempdir().unwrap();
        let target = d.path().join("real.svg");
        let link = d.path().join("out.svg");
        symlink(&target, &link).unwrap();
        // Dangling: the link is the user's own, but canonicalize fails;
        // the link is replaced.
        write_output(&link, b"a").unwrap();
        assert!(
            !std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        std::fs::remove_file(&link).unwrap();
        std::fs::write(&target, "old").unwrap();
        symlink(&target, &link).unwrap();
        write_output(&link, b"new").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
    }

    #[test]
    fn a_directory_at_the_final_name_fails() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("x");
        std::fs::create_dir(&out).unwrap();
        assert!(write(&out, b"x", false).is_err());
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 1);
    }
}
