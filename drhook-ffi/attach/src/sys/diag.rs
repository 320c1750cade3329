//! The layer's messages: one line on stderr, written with `write` and no
//! allocation, so that they work anywhere (before `main`, in a fork
//! child, inside an interposed `malloc`).

/// One line on stderr, without allocating (usable anywhere).
pub(crate) fn diag(msg: &str) {
    diag_name(msg, c"");
}

/// As [`diag`], with a name appended.
pub(crate) fn diag_name(msg: &str, name: &std::ffi::CStr) {
    let prefix = b"[drhook-attach] ";
    let n = name.to_bytes();
    // SAFETY: writes of valid buffers to stderr.
    unsafe {
        libc::write(2, prefix.as_ptr().cast(), prefix.len());
        libc::write(2, msg.as_ptr().cast(), msg.len());
        libc::write(2, n.as_ptr().cast(), n.len());
        libc::write(2, b"\n".as_ptr().cast(), 1);
    }
}

/// As [`diag`], the line made of `parts`, written with the `write`
/// system call itself rather than the C library's function: usable where
/// no interposable function may be called (inside the first `malloc`,
/// which may come while another runtime — AddressSanitizer's — is still
/// setting up its own wrappers of `write`), and seen by no interposer
/// (the I/O profile's included).
pub(crate) fn diag_parts(parts: &[&[u8]]) {
    let raw = |b: &[u8]| {
        // SAFETY: a write of a valid buffer to stderr.
        unsafe { libc::syscall(libc::SYS_write, 2, b.as_ptr(), b.len()) };
    };
    // One write when the line fits, so that the lines of processes
    // writing at once (MPI ranks) do not interleave.
    let mut line = [0u8; 512];
    let mut n = 0;
    for p in [b"[drhook-attach] ".as_slice()]
        .iter()
        .chain(parts)
        .chain([b"\n".as_slice()].iter())
    {
        if n + p.len() > line.len() {
            n = usize::MAX;
            break;
        }
        line[n..n + p.len()].copy_from_slice(p);
        n += p.len();
    }
    if n != usize::MAX {
        raw(&line[..n]);
        return;
    }
    raw(b"[drhook-attach] ");
    for p in parts {
        raw(p);
    }
    raw(b"\n");
}
