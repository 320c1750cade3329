//! The files of the profile: paths interned (absolute, once per file, the
//! opening routine recorded) under the one lock of the data path, and the
//! descriptors the program did not open through us classified at their
//! first use (a regular file by its path, else by kind: pipes, sockets,
//! devices, the standard streams).

use std::collections::HashMap;
use std::ffi::{CStr, c_int};
use std::sync::Mutex;
use std::sync::atomic::Ordering;

use super::table::{FD_FILE, FILES, FileStats, MAX_FD, MAX_FILES, OTHER_FILES};
use super::{guard, trace};
use crate::engine::hooks;

pub(super) struct Names {
    pub(super) paths: Vec<Vec<u8>>,
    pub(super) openers: Vec<String>,
    by_path: HashMap<Vec<u8>, u32>,
}

pub(super) static NAMES: Mutex<Option<Names>> = Mutex::new(None);

/// The file entry for `path` (interned; the opener recorded the first
/// time).
pub(super) fn intern(path: &[u8]) -> u32 {
    let mut g = NAMES.lock().unwrap_or_else(|p| p.into_inner());
    let n = g.get_or_insert_with(|| Names {
        paths: vec![Vec::new(), b"<other files>".to_vec()],
        openers: vec![String::new(), String::new()],
        by_path: HashMap::new(),
    });
    if let Some(&i) = n.by_path.get(path) {
        return i;
    }
    if n.paths.len() >= MAX_FILES {
        return OTHER_FILES;
    }
    let i = n.paths.len() as u32;
    n.paths.push(path.to_vec());
    n.openers.push(current_routine());
    n.by_path.insert(path.to_vec(), i);
    trace::classify(i, path);
    i
}

/// The path of entry `i` (for the trace of its opens).
pub(super) fn path_of(i: u32) -> Vec<u8> {
    let g = NAMES.lock().unwrap_or_else(|p| p.into_inner());
    g.as_ref()
        .and_then(|n| n.paths.get(i as usize).cloned())
        .unwrap_or_default()
}

fn current_routine() -> String {
    let mut buf = [0u8; 256];
    let h = hooks();
    let n = (h.current_routine)(buf.as_mut_ptr(), buf.len()).min(buf.len());
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// The absolute form of `path` (relative to the working directory, or to
/// `dirfd`'s directory for the `*at` calls); no symbolic link resolved.
pub(super) fn absolute(dirfd: c_int, path: &CStr) -> Vec<u8> {
    let p = path.to_bytes();
    if p.first() == Some(&b'/') {
        return p.to_vec();
    }
    let base = if dirfd == libc::AT_FDCWD {
        std::env::current_dir()
            .map(|d| d.into_os_string().into_encoded_bytes())
            .unwrap_or_default()
    } else {
        std::fs::read_link(format!("/proc/self/fd/{dirfd}"))
            .map(|d| d.into_os_string().into_encoded_bytes())
            .unwrap_or_default()
    };
    let mut v = base;
    if !v.ends_with(b"/") {
        v.push(b'/');
    }
    v.extend_from_slice(p.strip_prefix(b"./").unwrap_or(p));
    v
}

/// The entry of a descriptor the program did not open through us: by its
/// path for a regular file or directory, else by kind.
#[cold]
pub(super) fn classify(fd: c_int) -> u32 {
    let std_name = |fd: c_int| -> Vec<u8> {
        // A standard stream redirected to a file is that file.
        // SAFETY: plain data written by fstat.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: valid pointer.
        if unsafe { libc::fstat(fd, &mut st) } == 0 && st.st_mode & libc::S_IFMT == libc::S_IFREG {
            if let Ok(p) = std::fs::read_link(format!("/proc/self/fd/{fd}")) {
                return p.into_os_string().into_encoded_bytes();
            }
        }
        match fd {
            0 => b"<stdin>".to_vec(),
            1 => b"<stdout>".to_vec(),
            _ => b"<stderr>".to_vec(),
        }
    };
    let name: Vec<u8> = match fd {
        0..=2 => std_name(fd),
        _ => {
            // SAFETY: plain data written by fstat.
            let mut st: libc::stat = unsafe { std::mem::zeroed() };
            // SAFETY: valid pointer.
            let ok = unsafe { libc::fstat(fd, &mut st) } == 0;
            let kind = st.st_mode & libc::S_IFMT;
            if !ok {
                b"<unknown descriptors>".to_vec()
            } else if kind == libc::S_IFIFO {
                b"<pipes>".to_vec()
            } else if kind == libc::S_IFSOCK {
                b"<sockets>".to_vec()
            } else if kind == libc::S_IFCHR {
                b"<devices>".to_vec()
            } else {
                std::fs::read_link(format!("/proc/self/fd/{fd}"))
                    .map(|d| d.into_os_string().into_encoded_bytes())
                    .unwrap_or_else(|_| b"<unknown descriptors>".to_vec())
            }
        }
    };
    intern(&name)
}

/// The file entry of descriptor `fd` (classified at its first use).
#[inline]
pub(super) fn file_of(fd: c_int) -> &'static FileStats {
    &FILES[file_index(fd) as usize]
}

/// The entry index of descriptor `fd` (classified at its first use).
#[inline]
pub(super) fn file_index(fd: c_int) -> u32 {
    if fd >= 0 && (fd as usize) < MAX_FD {
        let f = FD_FILE[fd as usize].load(Ordering::Relaxed);
        if f != 0 {
            f
        } else {
            let f = guard(|| classify(fd)).unwrap_or(OTHER_FILES);
            FD_FILE[fd as usize].store(f, Ordering::Relaxed);
            f
        }
    } else {
        OTHER_FILES
    }
}
