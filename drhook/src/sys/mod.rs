//! Building blocks with no knowledge of Dr.Hook: clocks, process facts,
//! async-signal-safe line formatting, never-moving chunked storage, and
//! work stacks (the engine's own work at a thread's start and end), and
//! the mark of that own work where no calling tree can carry it; names of
//! code addresses (`symbols`); POSIX
//! extended regular expressions (`ere`), the dialect of every pattern.

pub mod clock;
pub mod ere;
pub(crate) mod exit_key;
/// Dr.Hook's own heap for the C-ABI libraries (see `__private::heap`).
pub mod heap;
pub mod held;
pub mod linebuf;
pub(crate) mod own;
pub(crate) mod segmented;
pub mod symbols;
pub mod sysinfo;
pub(crate) mod workstack;

/// Ends the process now with `code`, as `_exit` does, but by the system
/// call itself: under the preload layer `_exit` is a wrapped function, and
/// the crash handlers must not run the layer's end-of-process work (they
/// are in a signal handler, or in the crash helper process).
pub(crate) fn exit_now(code: i32) -> ! {
    // SAFETY: exit_group has no preconditions and does not return.
    unsafe {
        libc::syscall(libc::SYS_exit_group, code as libc::c_long);
    }
    unreachable!("exit_group returned")
}
