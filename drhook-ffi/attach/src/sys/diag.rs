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
