//! The per-operation I/O trace (seed 001's `ECIOPROF_LLTRACE_PATHS`): with
//! the I/O profile on (`DR_HOOK_OPT=io`) and `DRHOOK_IO_TRACE` (or
//! `ECIOPROF_LLTRACE_PATHS`) set to a POSIX extended regular expression,
//! every operation on a file whose absolute path matches is written as one
//! line to `drhook.iotrace.<task>` (`drhook.iotrace.<task>.<command>.<pid>`
//! for the processes it started; in `DRHOOK_IO_DIR`), with its time, kind,
//! bytes, offset, duration, the Dr.Hook calling tree and the native return
//! address of the call; each open of such a file also gets its native
//! traceback.
//!
//! Cost: whether a file is traced is decided once, when its path is first
//! seen (`regexec`, before its entry is published); an operation on a
//! file that is not traced pays one load. A traced operation walks the
//! native stack (`backtrace`, no allocation), formats its line into a
//! stack buffer, checks the trace's descriptor (one `fstat`) and writes
//! the line with one system call (made directly: no interposer sees it),
//! so a line is on disk even if the process is killed. The I/O wrappers
//! call it under their guard bit: nothing it does is recorded.
//!
//! The program's descriptors are the program's: the trace's is placed high
//! (`sys::fd::place_high`: out of the numbers the program gets, not
//! counted against its limit where the hard limit allows), close-on-exec,
//! and written only while it still refers to the trace file (its device
//! and inode, checked before each operation's lines). A program that
//! closes its descriptors (`closefrom`, `close_range`, a close loop) gets
//! the trace reopened in append mode, with a `#reopened` line; if it
//! cannot be, the trace stops there with one message. (Between the check
//! and the write the program could still close the descriptor and open a
//! file that gets its number: the number is high, and the window one
//! system call.)

use std::ffi::{CStr, c_int};
use std::io::Write as _;
use std::sync::atomic::{AtomicI32, AtomicPtr, AtomicU8, AtomicU64, Ordering};

/// The variable naming the paths to trace.
pub const VAR: &str = "DRHOOK_IO_TRACE";
/// Its name in ECIOPROF (seed 001), accepted as well.
pub const ECIOPROF_VAR: &str = "ECIOPROF_LLTRACE_PATHS";

/// The paths traced (`DRHOOK_IO_TRACE`, or `ECIOPROF_LLTRACE_PATHS`).
static PATTERN: super::pattern::Pattern =
    super::pattern::Pattern::new(&[VAR, ECIOPROF_VAR], None, "I/O trace");

const OFF: u8 = 1;
const ON: u8 = 2;

/// Per file entry of the I/O table: traced or not.
static TRACED: [AtomicU8; super::table::MAX_FILES] =
    [const { AtomicU8::new(0) }; super::table::MAX_FILES];

/// The trace file's descriptor (-1: not open), placed high
/// (`sys::fd::place_high`); `OPENING` guards its creation and its
/// reopening.
static OUT: AtomicI32 = AtomicI32::new(-1);
static OUT_STATE: AtomicU8 = AtomicU8::new(0);
const OUT_NONE: u8 = 0;
const OUT_OPENING: u8 = 1;
const OUT_OPEN: u8 = 2;
const OUT_FAILED: u8 = 3;
/// The trace file's identity (device, inode): the descriptor is written
/// only while it still refers to it.
static OUT_DEV: AtomicU64 = AtomicU64::new(0);
static OUT_INO: AtomicU64 = AtomicU64::new(0);
/// The trace file's absolute path (a leaked C string; null: none yet), to
/// reopen it.
static OUT_PATH: AtomicPtr<std::ffi::c_char> = AtomicPtr::new(std::ptr::null_mut());

/// A new entry `i` of the I/O table for `path` (called once per entry,
/// before the entry is published).
pub(crate) fn classify(i: u32, path: &[u8]) {
    let Some(t) = TRACED.get(i as usize) else {
        return;
    };
    let hit = path.first() != Some(&b'<') && PATTERN.matches(path) == Some(true);
    t.store(if hit { ON } else { OFF }, Ordering::Relaxed);
}

/// Whether operations on entry `i` are traced (one load).
#[inline(always)]
pub(crate) fn traced(i: u32) -> bool {
    TRACED
        .get(i as usize)
        .is_some_and(|t| t.load(Ordering::Relaxed) == ON)
}

/// In every `fork` child, from a `pthread_atfork` handler (so also after
/// the forks the lifecycle does not see: `daemon`, the C library's own):
/// what a thread of the parent may have left half done. The pattern is
/// compiled again at the child's next new file (the C library's `regexec`
/// takes a lock inside the pattern, which that thread may have held); a
/// trace file being opened is given up (no thread will finish opening it;
/// a child the lifecycle sees then opens its own, [`after_fork_child`]).
pub(crate) fn after_any_fork() {
    PATTERN.after_fork();
    super::pattern::after_any_fork();
    let _ =
        OUT_STATE.compare_exchange(OUT_OPENING, OUT_FAILED, Ordering::AcqRel, Ordering::Acquire);
}

/// In a `fork` child: its trace is a file of its own, opened at its first
/// traced operation (the parent's descriptor is closed here).
pub(crate) fn after_fork_child() {
    let fd = OUT.swap(-1, Ordering::AcqRel);
    if fd >= 0 && is_ours(fd) {
        // SAFETY: our own descriptor, inherited by the child.
        unsafe { libc::syscall(libc::SYS_close, fd) };
    }
    OUT_STATE.store(OUT_NONE, Ordering::Release);
}

/// Before an `exec`: a trace this image wrote under the plain name is
/// renamed to a child's (the program the process becomes takes the plain
/// name, as for the report).
pub(crate) fn before_exec() {
    if OUT_STATE.load(Ordering::Acquire) != OUT_OPEN {
        return;
    }
    let plain = super::naming::output_path("drhook.iotrace");
    let child = super::naming::output_path_as("drhook.iotrace", true);
    if plain != child
        && let Err(e) = std::fs::rename(&plain, &child)
    {
        crate::sys::diag(&format!(
            "drhook io: cannot rename the I/O trace '{}' before exec: {e}",
            plain.display()
        ));
    }
}

/// Writes all of `b` to `fd` with the system call directly (no
/// interposer, ours included, sees the trace's own writes; SIGXFSZ and
/// SIGPIPE held); the error number of a failure.
fn raw_write(fd: c_int, b: &[u8]) -> Result<(), c_int> {
    let _held = drhook::__private::OwnWrites::hold();
    let mut off = 0;
    while off < b.len() {
        // SAFETY: a valid buffer.
        let n = unsafe { libc::syscall(libc::SYS_write, fd, b[off..].as_ptr(), b.len() - off) };
        if n <= 0 {
            let e = crate::sys::errno();
            if n < 0 && e == libc::EINTR {
                continue;
            }
            return Err(e);
        }
        off += n as usize;
    }
    Ok(())
}

/// Whether descriptor `fd` still refers to the trace file (the program
/// may have closed it — `closefrom`, `close_range`, a close loop — and
/// its number may now be one of the program's files).
fn is_ours(fd: c_int) -> bool {
    crate::sys::fd::identity(fd)
        == Some((
            OUT_DEV.load(Ordering::Acquire),
            OUT_INO.load(Ordering::Acquire),
        ))
}

/// Keeps `fd` as the trace's descriptor: placed high, its file's identity
/// recorded.
fn keep(fd: c_int) -> c_int {
    let fd = crate::sys::fd::place_high(fd);
    let (dev, ino) = crate::sys::fd::identity(fd).unwrap_or((0, 0));
    OUT_DEV.store(dev, Ordering::Release);
    OUT_INO.store(ino, Ordering::Release);
    fd
}

/// Writes `b` (whole lines) to the trace: created at the first traced
/// operation; its descriptor checked before each write (one `fstat`) and
/// the file reopened in append mode when the program closed it.
fn emit(b: &[u8]) {
    // A write that finds the descriptor closed since the check: once more,
    // the check then reopens.
    for _ in 0..2 {
        let Some(fd) = out() else { return };
        match raw_write(fd, b) {
            Err(libc::EBADF) => continue,
            _ => return,
        }
    }
}

/// The trace's descriptor, checked: the trace file created at the first
/// traced operation, reopened when the program closed its descriptor (None:
/// no trace).
fn out() -> Option<c_int> {
    loop {
        match OUT_STATE.load(Ordering::Acquire) {
            OUT_OPEN => {
                let fd = OUT.load(Ordering::Acquire);
                if is_ours(fd) {
                    return Some(fd);
                }
                if OUT_STATE
                    .compare_exchange(OUT_OPEN, OUT_OPENING, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    // Another thread may have reopened it meanwhile.
                    let now = OUT.load(Ordering::Acquire);
                    let fd = if is_ours(now) { now } else { reopen() };
                    OUT.store(fd, Ordering::Release);
                    OUT_STATE.store(
                        if fd >= 0 { OUT_OPEN } else { OUT_FAILED },
                        Ordering::Release,
                    );
                }
            }
            OUT_FAILED => return None,
            OUT_OPENING => std::hint::spin_loop(),
            _ => {
                if OUT_STATE
                    .compare_exchange(OUT_NONE, OUT_OPENING, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    let fd = create();
                    OUT.store(fd, Ordering::Release);
                    OUT_STATE.store(
                        if fd >= 0 { OUT_OPEN } else { OUT_FAILED },
                        Ordering::Release,
                    );
                }
            }
        }
    }
}

/// Opens the trace file again in append mode, after the program closed
/// its descriptor (the number is left alone: it may be the program's now);
/// -1, said once, if it cannot: the trace stops there.
fn reopen() -> c_int {
    let path = OUT_PATH.load(Ordering::Acquire);
    let fd = if path.is_null() {
        -1
    } else {
        // SAFETY: a leaked C string; the system call directly (not ours).
        // The file this process created, never created again here nor
        // reached through a link: one put at its name meanwhile is refused.
        let r = unsafe {
            libc::syscall(
                libc::SYS_openat,
                libc::AT_FDCWD,
                path,
                libc::O_WRONLY | libc::O_APPEND | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        } as c_int;
        if r >= 0
            && crate::sys::fd::identity(r)
                != Some((
                    OUT_DEV.load(Ordering::Acquire),
                    OUT_INO.load(Ordering::Acquire),
                ))
        {
            // Another file now has the name: not ours to write.
            // SAFETY: the descriptor just opened.
            unsafe { libc::syscall(libc::SYS_close, r) };
            crate::sys::set_errno(libc::ESTALE);
            -1
        } else {
            r
        }
    };
    let shown = if path.is_null() {
        String::new()
    } else {
        // SAFETY: as above.
        unsafe { CStr::from_ptr(path) }
            .to_string_lossy()
            .into_owned()
    };
    if fd < 0 {
        crate::sys::diag(&format!(
            "drhook io: the program closed the I/O trace's descriptor and '{shown}' cannot be \
             opened again ({}); the I/O trace stops here",
            std::io::Error::from_raw_os_error(crate::sys::errno())
        ));
        return -1;
    }
    let fd = keep(fd);
    let _ = raw_write(fd, b"#reopened!the program closed the trace's descriptor\n");
    fd
}

fn create() -> c_int {
    let path = super::naming::output_path("drhook.iotrace");
    let cwd = std::env::current_dir().unwrap_or_default();
    let Ok(c) = std::ffi::CString::new(cwd.join(&path).into_os_string().into_encoded_bytes())
    else {
        return -1;
    };
    // Created exclusively under an unpredictable name beside it, then
    // renamed to its name (a link planted at either is never written
    // through); the system calls directly (not ours).
    let mut scratch = vec![0u8; c.as_bytes().len() + 64];
    let created = drhook_secure::dir::check_not_planted(drhook_secure::file::dir_of(&path))
        .and_then(|()| {
            drhook_secure::raw::create_renamed(
                &c,
                libc::O_WRONLY | libc::O_APPEND,
                0o644,
                &mut scratch,
            )
            .map_err(std::io::Error::from_raw_os_error)
        });
    let fd = match created {
        Ok(fd) => fd,
        Err(e) => {
            crate::sys::diag(&format!(
                "drhook io: cannot create the I/O trace '{}' ({e}); no I/O trace",
                path.display(),
            ));
            return -1;
        }
    };
    let fd = keep(fd);
    // The path of this process's trace (one per process image: a `fork`
    // child makes its own; the one before stays allocated).
    OUT_PATH.store(c.into_raw(), Ordering::Release);
    let realtime = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0);
    let since_start =
        super::clock::mono_ns().saturating_sub(super::clock::start_ns()) as f64 * 1e-9;
    let header = format!(
        "#drhook-iotrace!1\n#program!{}\n#pid!{}!ppid!{}\n#ancestry!{}\n#cwd!{}\n#timebase!{:.6}\n\
         #fields!t_us!dur_us!op!fd!bytes!offset!calling-tree!caller\n\
         #ops!r read!w write!R stdio read!W stdio write!o open (bytes: the path, offset: the flags)!c close\n",
        std::env::args().next().unwrap_or_default(),
        std::process::id(),
        std::os::unix::process::parent_id(),
        super::naming::ancestry_text(),
        cwd.display(),
        realtime - since_start,
    );
    let _ = raw_write(fd, header.as_bytes());
    fd
}

/// A traced operation: `op` (see the header's `#ops` line) on `fd`,
/// `bytes` moved (-1: failed), at `offset` (None: the descriptor's), over
/// the ticks `t0..t1`.
pub(crate) fn op(op: u8, fd: c_int, bytes: isize, offset: Option<u64>, t0: u64, t1: u64) {
    if OUT_STATE.load(Ordering::Acquire) == OUT_FAILED {
        return;
    }
    let mut buf = [0u8; 2048];
    let mut w = std::io::Cursor::new(&mut buf[..]);
    line_start(&mut w, op, fd, t0, t1);
    let _ = write!(w, "{bytes}!");
    let _ = match offset {
        Some(o) => write!(w, "{o}!"),
        None => write!(w, "-!"),
    };
    line_end(&mut w);
}

/// A traced open: the path (in the bytes field), the flags (in the
/// offset field), then the native traceback of the open.
pub(crate) fn open(fd: c_int, path: &[u8], flags: c_int, t0: u64, t1: u64) {
    if OUT_STATE.load(Ordering::Acquire) == OUT_FAILED {
        return;
    }
    let mut buf = [0u8; 4096];
    let mut w = std::io::Cursor::new(&mut buf[..]);
    line_start(&mut w, b'o', fd, t0, t1);
    escaped(&mut w, path);
    let _ = write!(w, "!{flags:#o}!");
    line_end(&mut w);
    let mut w = std::io::Cursor::new(&mut buf[..]);
    let _ = w.write_all(b"#trcbk_open!");
    escaped(&mut w, path);
    let _ = w.write_all(b"!");
    let mut n = 0;
    frames(|ip| {
        let _ = w.write_all(if n == 0 { b"" } else { b":" });
        location(&mut w, ip);
        n += 1;
        n < 32
    });
    finish_line(&mut w);
}

fn line_start(w: &mut std::io::Cursor<&mut [u8]>, op: u8, fd: c_int, t0: u64, t1: u64) {
    let npt = super::clock::ns_per_tick_cached();
    let now_ns = super::clock::mono_ns();
    let start = super::clock::start_ns();
    // The call began `t1 - t0` ticks before it ended, just before now.
    let dur_ns = t1.wrapping_sub(t0) as f64 * npt;
    let t_us = (now_ns.saturating_sub(start) as f64 - dur_ns).max(0.0) / 1e3;
    let _ = write!(w, "{t_us:.3}!{:.3}!{}!{fd}!", dur_ns / 1e3, op as char);
}

fn line_end(w: &mut std::io::Cursor<&mut [u8]>) {
    let mut tree = [0u8; 1024];
    let n = (crate::engine::hooks().current_path)(tree.as_mut_ptr(), tree.len()).min(tree.len());
    escaped(w, &tree[..n]);
    let _ = w.write_all(b"!");
    // The first frame outside this library: the caller of the call.
    frames(|ip| {
        location(w, ip);
        false
    });
    finish_line(w);
}

/// Ends the line in `w` with a newline (in place of its last byte when
/// the buffer is full: a long line is cut, never run into the next) and
/// writes it.
fn finish_line(w: &mut std::io::Cursor<&mut [u8]>) {
    let _ = w.write_all(b"\n");
    let len = (w.position() as usize).min(w.get_ref().len());
    let buf = &mut w.get_mut()[..len];
    if let Some(last) = buf.last_mut() {
        *last = b'\n';
    }
    emit(buf);
}

/// Bytes with `!`, `\` and control bytes as `\xNN` (one field, one line).
fn escaped(w: &mut std::io::Cursor<&mut [u8]>, b: &[u8]) {
    for &c in b {
        let _ = if c < 0x20 || c == 0x7f || c == b'!' || c == b'\\' {
            write!(w, "\\x{c:02x}")
        } else {
            w.write_all(&[c])
        };
    }
}

/// `object+0xoffset` of a code address (the object's file name without
/// its directory: `addr2line -e <object> <offset>` resolves it), or the
/// bare address.
fn location(w: &mut std::io::Cursor<&mut [u8]>, ip: usize) {
    // SAFETY: plain data that dladdr fills in.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the address.
    if unsafe { libc::dladdr(ip as *const libc::c_void, &mut info) } != 0
        && !info.dli_fname.is_null()
    {
        // SAFETY: a NUL-terminated name from the loader.
        let f = unsafe { CStr::from_ptr(info.dli_fname) }.to_bytes();
        let base = f.rsplit(|&c| c == b'/').next().unwrap_or(f);
        escaped(w, base);
        let _ = write!(w, "+{:#x}", ip.wrapping_sub(info.dli_fbase as usize));
    } else {
        let _ = write!(w, "{ip:#x}");
    }
}

/// The return addresses of the native stack above this library's own
/// frames, innermost first, while `f` returns true.
fn frames(mut f: impl FnMut(usize) -> bool) {
    let ours = crate::sys::object_base(raw_write as *const libc::c_void);
    let mut outside = false;
    // SAFETY: on Linux the walk is the unwinder's `_Unwind_Backtrace`,
    // which is thread-safe; the synchronized `trace` would only add a
    // process-wide lock (not wanted in an interposed call).
    unsafe {
        backtrace::trace_unsynchronized(|frame| {
            let ip = frame.ip() as usize;
            if ip == 0 {
                return false;
            }
            if !outside && crate::sys::object_base(ip as *const libc::c_void) == ours {
                return true;
            }
            outside = true;
            f(ip)
        });
    }
}
