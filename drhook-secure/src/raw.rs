//! Exclusive creation without allocating and without the C library's
//! wrappers (the system calls themselves, so no interposer sees them):
//! for the preload library's I/O trace, which is created from inside the
//! program's own I/O calls.

use std::ffi::CStr;

/// Fills `out` with random bytes: `getrandom(2)` (non-blocking), mixed
/// with the time-stamp counter, the pid and a stack address when it cannot
/// give them (so the bytes are never all predictable).
pub fn random_bytes(out: &mut [u8]) {
    // SAFETY: a valid buffer of out.len() bytes.
    let n = unsafe {
        libc::syscall(
            libc::SYS_getrandom,
            out.as_mut_ptr(),
            out.len(),
            libc::GRND_NONBLOCK,
        )
    };
    if n == out.len() as libc::c_long {
        return;
    }
    // SAFETY: no preconditions.
    let pid = unsafe { libc::syscall(libc::SYS_getpid) } as u64;
    let mut x = ticks() ^ pid.rotate_left(32) ^ (out.as_ptr() as u64);
    for b in out.iter_mut() {
        // splitmix64
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        *b = (z ^ (z >> 31)) as u8 ^ (ticks() as u8);
    }
}

fn ticks() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: rdtsc has no preconditions.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mut t: libc::timespec = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: a valid timespec.
        unsafe { libc::syscall(libc::SYS_clock_gettime, libc::CLOCK_MONOTONIC, &mut t) };
        (t.tv_sec as u64) << 30 ^ t.tv_nsec as u64
    }
}

/// Writes into `buf` the NUL-terminated temporary name beside `path`:
/// its directory, then `.<file name>.<24 random hex digits>.tmp`. None
/// when `buf` is too small.
pub fn temp_name<'b>(path: &CStr, buf: &'b mut [u8]) -> Option<&'b CStr> {
    let p = path.to_bytes();
    let (dir, name) = match p.iter().rposition(|&c| c == b'/') {
        Some(i) => (&p[..=i], &p[i + 1..]),
        None => (&p[..0], p),
    };
    let mut rnd = [0u8; 12];
    random_bytes(&mut rnd);
    let need = dir.len() + 1 + name.len() + 1 + 2 * rnd.len() + 4 + 1;
    if buf.len() < need || name.is_empty() {
        return None;
    }
    let mut at = 0;
    let mut put = |b: &[u8]| {
        buf[at..at + b.len()].copy_from_slice(b);
        at += b.len();
    };
    put(dir);
    put(b".");
    put(name);
    put(b".");
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for r in rnd {
        put(&[HEX[(r >> 4) as usize], HEX[(r & 15) as usize]]);
    }
    put(b".tmp\0");
    CStr::from_bytes_with_nul(&buf[..at]).ok()
}

/// Creates `path` exclusively: opens a temporary name beside it (from
/// [`temp_name`], in `scratch`) with `O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC`
/// and `flags` (say `O_WRONLY|O_APPEND`), mode `mode` less the umask, then
/// renames it to `path` (replacing what is there, a link never written
/// through). Returns the descriptor, or the error number. Allocation-free
/// and async-signal-safe.
pub fn create_renamed(
    path: &CStr,
    flags: libc::c_int,
    mode: libc::mode_t,
    scratch: &mut [u8],
) -> Result<libc::c_int, libc::c_int> {
    let errno = || {
        std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO)
    };
    for _ in 0..8 {
        let Some(tmp) = temp_name(path, scratch) else {
            return Err(libc::ENAMETOOLONG);
        };
        // SAFETY: a NUL-terminated path.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_openat,
                libc::AT_FDCWD,
                tmp.as_ptr(),
                flags | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                mode,
            )
        } as libc::c_int;
        if fd < 0 {
            let e = errno();
            if e == libc::EEXIST {
                continue;
            }
            return Err(e);
        }
        // SAFETY: two NUL-terminated paths.
        let r = unsafe {
            libc::syscall(
                libc::SYS_renameat,
                libc::AT_FDCWD,
                tmp.as_ptr(),
                libc::AT_FDCWD,
                path.as_ptr(),
            )
        };
        if r != 0 {
            let e = errno();
            // SAFETY: our own temporary file and descriptor.
            unsafe {
                libc::syscall(libc::SYS_unlinkat, libc::AT_FDCWD, tmp.as_ptr(), 0);
                libc::syscall(libc::SYS_close, fd);
            }
            return Err(e);
        }
        return Ok(fd);
    }
    Err(libc::EEXIST)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;

    #[test]
    fn names_differ_and_sit_beside_the_file() {
        let mut a = [0u8; 128];
        let mut b = [0u8; 128];
        let x = temp_name(c"/some/dir/drhook.iotrace.1", &mut a).unwrap();
        let y = temp_name(c"/some/dir/drhook.iotrace.1", &mut b).unwrap();
        assert_ne!(x, y);
        let s = x.to_str().unwrap();
        assert!(s.starts_with("/some/dir/.drhook.iotrace.1.") && s.ends_with(".tmp"));
        assert_eq!(s.len(), "/some/dir/.drhook.iotrace.1.".len() + 24 + 4);
        let bare = temp_name(c"f", &mut a).unwrap().to_str().unwrap();
        assert!(bare.starts_with(".f."), "{bare}");
        assert!(temp_name(c"/long/name", &mut [0u8; 10]).is_none());
    }

    #[test]
    fn a_planted_link_at_the_name_is_replaced() {
        let d = tempfile::tempdir().unwrap();
        let victim = d.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let out = d.path().join("drhook.iotrace.1");
        std::os::unix::fs::symlink(&victim, &out).unwrap();
        let c = CString::new(out.as_os_str().as_bytes()).unwrap();
        let fd =
            create_renamed(&c, libc::O_WRONLY | libc::O_APPEND, 0o644, &mut [0u8; 512]).unwrap();
        // SAFETY: our descriptor and a valid buffer.
        unsafe {
            libc::write(fd, b"trace".as_ptr().cast(), 5);
            libc::close(fd);
        }
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "trace");
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 2);
    }
}
