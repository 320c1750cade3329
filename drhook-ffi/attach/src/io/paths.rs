//! The files of the profile: paths interned (absolute, once per file, the
//! opening routine recorded) in a lock-free table, and the descriptors the
//! program did not open through us classified at their first use (a
//! regular file by its path, else by kind: pipes, sockets, devices, the
//! standard streams).
//!
//! No lock: an open runs inside the program's own locks and may be
//! interrupted by a `fork` on another thread at any point, so a lock here
//! would be inherited held by a child (which hung in `exit` or `exec`), or
//! taken in the wrong order by a `pthread_atfork` handler. An entry is
//! made whole (path, opener, whether it is traced) before its index is
//! published by one compare-and-swap into an open-addressing table of
//! indices by path; entries are never changed or freed.

use std::ffi::{CStr, c_int};
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

use super::table::{FD_FILE, FILES, FileStats, MAX_FD, MAX_FILES, OTHER_FILES, SYSTEM_FILES};
use super::{guard, trace};
use crate::engine::hooks;

/// One file of the table: its path and the routine (`NAME@thread`) that
/// opened it first. Made once, never changed or freed. A path the program
/// named that is not the file's own (`a/../b`, a symbolic link) is an
/// alias: an entry that only points to the file's (`alias_of`), so that
/// the next open by the same name needs no resolution.
pub(super) struct Entry {
    pub(super) path: &'static [u8],
    pub(super) opener: &'static str,
    /// The file's entry when this one is an alias (0: it is a file).
    pub(super) alias_of: u32,
}

static OTHER: Entry = Entry {
    path: b"<other files>",
    opener: "",
    alias_of: 0,
};

static SYSTEM: Entry = Entry {
    path: b"<system files>",
    opener: "",
    alias_of: 0,
};

/// The entries by index (null: index 0, "other files", or not made yet).
static ENTRIES: [AtomicPtr<Entry>; MAX_FILES] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; MAX_FILES];
/// The next index to hand out (0 is no file, 1 "other files", 2 the
/// system files).
static NEXT: AtomicU32 = AtomicU32::new(SYSTEM_FILES + 1);
/// Indices by path's hash (0: empty), open addressing, at most half full.
const SLOTS: usize = 2 * MAX_FILES;
static BY_PATH: [AtomicU32; SLOTS] = [const { AtomicU32::new(0) }; SLOTS];

/// Entry `i` (None: no such file).
pub(super) fn entry(i: u32) -> Option<&'static Entry> {
    if i == OTHER_FILES {
        return Some(&OTHER);
    }
    if i == SYSTEM_FILES {
        return Some(&SYSTEM);
    }
    let p = ENTRIES.get(i as usize)?.load(Ordering::Acquire);
    // SAFETY: published entries are leaked boxes, never freed.
    (!p.is_null()).then(|| unsafe { &*p })
}

/// The indices entries may have (1 up to the last handed out).
pub(super) fn indices() -> std::ops::Range<u32> {
    OTHER_FILES..NEXT.load(Ordering::Acquire).min(MAX_FILES as u32)
}

fn hash(path: &[u8]) -> usize {
    // FNV-1a: short keys, no state to seed.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in path {
        h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
    }
    (h ^ (h >> 29)) as usize
}

/// A new entry for `path` (an alias of `alias_of` unless 0), made whole
/// before anyone can find it (None: the table is full).
fn make(path: &[u8], alias_of: u32) -> Option<u32> {
    let i = NEXT
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            ((n as usize) < MAX_FILES).then_some(n + 1)
        })
        .ok()?;
    let e = Box::new(Entry {
        path: Box::leak(path.to_vec().into_boxed_slice()),
        opener: if alias_of == 0 {
            Box::leak(current_routine().into_boxed_str())
        } else {
            ""
        },
        alias_of,
    });
    if alias_of == 0 {
        trace::classify(i, path);
    }
    ENTRIES[i as usize].store(Box::into_raw(e), Ordering::Release);
    Some(i)
}

/// The entry already made for `path`, if any (an alias as it is).
fn find(path: &[u8]) -> Option<u32> {
    let mut at = hash(path) % SLOTS;
    loop {
        let i = BY_PATH[at].load(Ordering::Acquire);
        if i == 0 {
            return None;
        }
        if entry(i).is_some_and(|e| e.path == path) {
            return Some(i);
        }
        at = (at + 1) % SLOTS;
    }
}

/// The file entry the profile has for the name `named` (absolute), as it
/// is or with `.` and `..` taken out (None: none; no link resolved, and
/// no entry made).
pub(super) fn known(named: &[u8]) -> Option<u32> {
    let via = |i: u32| {
        let a = entry(i).map_or(0, |e| e.alias_of);
        if a == 0 { i } else { a }
    };
    find(named).or_else(|| find(&lexical(named))).map(via)
}

/// The file entry of a file the program opened as `named` (absolute, as
/// [`absolute`] made it) and got `fd` for: by the file's own path —
/// `..`, `.` and symbolic links resolved (the kernel's name of the open
/// descriptor) — so that a file reached two ways is one entry. The name
/// the program used is kept as an alias: opening it again costs no
/// resolution.
pub(super) fn intern_opened(fd: c_int, named: &[u8]) -> u32 {
    if let Some(i) = find(named) {
        let e = entry(i).map_or(0, |e| e.alias_of);
        return if e == 0 { i } else { e };
    }
    let own = own_path(fd).unwrap_or_else(|| lexical(named));
    let i = if super::pattern::is_system(&own) {
        SYSTEM_FILES
    } else {
        intern(&own)
    };
    if own.as_slice() != named && i != OTHER_FILES {
        intern_as(named, i);
    }
    i
}

/// The kernel's path of `fd`, when it is a path (not a deleted file's, a
/// pipe's or a socket's name).
fn own_path(fd: c_int) -> Option<Vec<u8>> {
    let p = std::fs::read_link(format!("/proc/self/fd/{fd}")).ok()?;
    let p = p.into_os_string().into_encoded_bytes();
    (p.first() == Some(&b'/') && !p.ends_with(b" (deleted)")).then_some(p)
}

/// `path` (absolute) with `.`, `..` and repeated slashes taken out, no
/// link resolved (where the kernel cannot say: `/proc` not mounted).
pub(super) fn lexical(path: &[u8]) -> Vec<u8> {
    let mut parts: Vec<&[u8]> = Vec::new();
    for c in path.split(|&b| b == b'/') {
        match c {
            b"" | b"." => {}
            b".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    let mut out = Vec::with_capacity(path.len());
    for c in parts {
        out.push(b'/');
        out.extend_from_slice(c);
    }
    if out.is_empty() {
        out.push(b'/');
    }
    out
}

/// The file entry for `path` (interned; the opener recorded the first
/// time).
pub(super) fn intern(path: &[u8]) -> u32 {
    intern_as(path, 0)
}

/// The entry for `path`, made as an alias of `alias_of` (0: a file) when
/// there is none.
fn intern_as(path: &[u8], alias_of: u32) -> u32 {
    let mut at = hash(path) % SLOTS;
    // The entry this call made, once it had to make one.
    let mut made: Option<u32> = None;
    // At most half the slots are ever used: the probe ends.
    loop {
        let mut i = BY_PATH[at].load(Ordering::Acquire);
        if i == 0 {
            let new = match made {
                Some(n) => n,
                None => match make(path, alias_of) {
                    Some(n) => {
                        made = Some(n);
                        n
                    }
                    None => return OTHER_FILES,
                },
            };
            match BY_PATH[at].compare_exchange(0, new, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return new,
                // Another thread took the slot: its entry may be this path
                // (then the one made here stays unused, never counted).
                Err(other) => i = other,
            }
        }
        if let Some(e) = entry(i).filter(|e| e.path == path) {
            return if e.alias_of == 0 { i } else { e.alias_of };
        }
        at = (at + 1) % SLOTS;
    }
}

/// The path of entry `i` (for the trace of its opens).
pub(super) fn path_of(i: u32) -> &'static [u8] {
    entry(i).map_or(&[], |e| e.path)
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
                match std::fs::read_link(format!("/proc/self/fd/{fd}")) {
                    Ok(d) => {
                        let p = d.into_os_string().into_encoded_bytes();
                        if super::pattern::is_system(&p) {
                            return SYSTEM_FILES;
                        }
                        p
                    }
                    Err(_) => b"<unknown descriptors>".to_vec(),
                }
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
            // On a work stack: classifying (fstat, the path table) needs more
            // stack than the smallest threads have left (a printf on a 16 KiB
            // thread).
            let f =
                drhook::lifecycle::on_work_stack(|| guard(|| classify(fd))).unwrap_or(OTHER_FILES);
            FD_FILE[fd as usize].store(f, Ordering::Relaxed);
            f
        }
    } else {
        OTHER_FILES
    }
}
