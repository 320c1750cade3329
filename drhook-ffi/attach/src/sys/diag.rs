//! The layer's messages: one line on stderr, written with `write` and no
//! allocation, so that they work anywhere (before `main`, in a fork
//! child, inside an interposed `malloc`).

/// One line on stderr, without allocating (usable anywhere).
pub(crate) fn diag(msg: &str) {
    diag_name(msg, c"");
}

/// As [`diag`], with a name appended.
pub(crate) fn diag_name(msg: &str, name: &std::ffi::CStr) {
    diag_parts(&[msg.as_bytes(), name.to_bytes()]);
}

/// As [`diag`], the line made of `parts`.
pub(crate) fn diag_parts(parts: &[&[u8]]) {
    let prefix = b"[drhook-attach] ";
    // SAFETY: writes of valid buffers to stderr.
    unsafe {
        libc::write(2, prefix.as_ptr().cast(), prefix.len());
        for p in parts {
            libc::write(2, p.as_ptr().cast(), p.len());
        }
        libc::write(2, b"\n".as_ptr().cast(), 1);
    }
}
