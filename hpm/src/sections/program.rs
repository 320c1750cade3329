//! Counting a whole program with everything it spawns (`hpmcount`, seed §2.6).
//!
//! The program is spawned held before its `exec`; the counters are opened
//! on its pid with perf inheritance and `enable_on_exec` (as `perf stat`
//! counts a command), then it is let go. Counting starts at the `exec` and
//! every thread and process the program creates inherits the counters and
//! adds its counts on exit. Counters opened on `hpmcount` itself and
//! inherited by the program lose the program's whole count in some runs
//! (see [`crate::Scope::ProcessTree`]); this way neither `hpmcount` nor the
//! child's set-up is counted.

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command};

use crate::backend::clock::Clock;
use crate::backend::getrusage::Rusage;
use crate::backend::{OpenError, Scope};
use crate::counting::plan::CountingPlan;
use crate::counting::thread::{Accumulator, Snapshot};
use crate::report::{ExitInfo, Measurement};

/// What a counted run produced.
#[derive(Clone, Debug, PartialEq)]
pub struct ProgramRun {
    /// How the program ended.
    pub exit: ExitInfo,
    /// Counter values, wall and user time of the run.
    pub measurement: Measurement,
    /// The program's own resource usage (`wait4`).
    pub rusage: Option<Rusage>,
    /// Groups that could not be opened (their values are missing).
    pub open_errors: Vec<OpenError>,
}

/// Why the program could not be run.
#[derive(Debug)]
pub struct SpawnError {
    /// The program.
    pub program: String,
    /// The OS error.
    pub error: std::io::Error,
}

impl SpawnError {
    /// Shell convention: 127 if not found, 126 if not executable.
    pub fn exit_status(&self) -> i32 {
        if self.error.kind() == std::io::ErrorKind::NotFound {
            127
        } else {
            126
        }
    }
}

impl std::fmt::Display for SpawnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot execute '{}': {}", self.program, self.error)
    }
}

/// Keeps SIGINT and SIGQUIT from killing the counting process while the
/// program runs (the program gets them from the terminal and decides).
pub(crate) struct IgnoreInterrupts {
    old: [libc::sighandler_t; 2],
}

impl IgnoreInterrupts {
    pub(crate) fn new() -> IgnoreInterrupts {
        // SAFETY: installing SIG_IGN is async-signal-safe and affects only
        // this process; the child has already exec'd, so it keeps its own
        // dispositions.
        let old = unsafe {
            [
                libc::signal(libc::SIGINT, libc::SIG_IGN),
                libc::signal(libc::SIGQUIT, libc::SIG_IGN),
            ]
        };
        IgnoreInterrupts { old }
    }
}

impl Drop for IgnoreInterrupts {
    fn drop(&mut self) {
        // SAFETY: restores the dispositions saved in `new`.
        unsafe {
            libc::signal(libc::SIGINT, self.old[0]);
            libc::signal(libc::SIGQUIT, self.old[1]);
        }
    }
}

/// Waits for `child` with `wait4`, returning its status and its own
/// resource usage (with that of its waited-for descendants, as the kernel
/// accounts them). Falls back to `wait` (and no usage) if `wait4` fails.
pub(crate) fn wait_with_usage(
    child: &mut std::process::Child,
) -> (std::io::Result<std::process::ExitStatus>, Option<Rusage>) {
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: plain old data; all-zero bytes are a valid value.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: waits for our own child; valid pointers.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
        if r == pid {
            return (
                Ok(std::process::ExitStatus::from_raw(status)),
                Some(Rusage::from_raw(&ru)),
            );
        }
        if r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        return (child.wait(), None);
    }
}

/// A pipe whose two ends are closed on `exec`.
fn pipe_cloexec() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded: both descriptors are new and ours alone.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Spawns `cmd` held before its `exec` until `prepare` has run on another
/// thread with the child's pid, and returns the spawn's result with what
/// `prepare` returned (`None` if the child never got as far as its
/// `exec`). The child sends its pid down one pipe and waits for a byte on
/// another; both pipes close on `exec`, so the program never sees them.
fn spawn_held<T: Send>(
    cmd: &mut Command,
    prepare: impl FnOnce(libc::pid_t) -> T + Send,
) -> (io::Result<Child>, Option<T>) {
    let pipes = pipe_cloexec().and_then(|a| Ok((a, pipe_cloexec()?)));
    let ((pid_r, pid_w), (go_r, go_w)) = match pipes {
        Ok(p) => p,
        Err(e) => return (Err(e), None),
    };
    let (child_pid_w, child_go_r) = (pid_w.as_raw_fd(), go_r.as_raw_fd());
    let (child_pid_r, child_go_w) = (pid_r.as_raw_fd(), go_w.as_raw_fd());
    // SAFETY: the closure runs in the forked child before exec and calls
    // only async-signal-safe functions (close, getpid, write, read) on
    // descriptors this process opened above.
    unsafe {
        cmd.pre_exec(move || {
            // The child's copies of the parent's ends: without them a
            // parent that gives up makes the read below end.
            libc::close(child_pid_r);
            libc::close(child_go_w);
            let pid = libc::getpid().to_ne_bytes();
            if libc::write(child_pid_w, pid.as_ptr().cast(), pid.len()) != pid.len() as isize {
                return Err(io::Error::last_os_error());
            }
            let mut go = 0u8;
            loop {
                match libc::read(child_go_r, (&raw mut go).cast(), 1) {
                    1 => return Ok(()),
                    // The parent gave up before the counters were ready.
                    0 => return Err(io::Error::from_raw_os_error(libc::ECANCELED)),
                    _ => {}
                }
                if *libc::__errno_location() != libc::EINTR {
                    return Err(io::Error::last_os_error());
                }
            }
        });
    }
    std::thread::scope(|s| {
        let helper = s.spawn(move || {
            let mut pid = [0u8; 4];
            let mut f = std::fs::File::from(pid_r);
            // EOF (the child died before its pre-exec step, or the spawn
            // failed) leaves the child to the spawn's own error.
            io::Read::read_exact(&mut f, &mut pid).ok()?;
            let prepared = prepare(libc::pid_t::from_ne_bytes(pid));
            // The child may already be gone; the spawn reports it.
            let _ = io::Write::write_all(&mut std::fs::File::from(go_w), &[1]);
            Some(prepared)
        });
        // The spawn returns once the child has exec'd (or failed to), that
        // is after the helper let it go.
        let spawned = cmd.spawn();
        drop(pid_w);
        drop(go_r);
        match helper.join() {
            Ok(prepared) => (spawned, prepared),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    })
}

/// Runs `program args` with stdin/stdout/stderr inherited and counts it
/// with `plan` (probed for [`crate::Scope::ProcessTree`], opened on the
/// program with [`crate::Scope::Child`]).
pub fn run_counted(
    plan: &CountingPlan,
    clock: &dyn Clock,
    program: &OsString,
    args: &[OsString],
) -> Result<ProgramRun, SpawnError> {
    let layout = &plan.layout;
    let t0 = clock.now_ns();
    let (spawned, prepared) = spawn_held(Command::new(program).args(args), |pid| {
        let (groups, open_errors) = plan.open_groups_in(Scope::Child(pid));
        // Read before the exec: zero, unless a backend counts regardless.
        let mut before = Snapshot::new(layout);
        before.read_groups(&groups, layout, || {});
        (groups, open_errors, before)
    });
    let mut child = match spawned {
        Ok(c) => c,
        Err(error) => {
            return Err(SpawnError {
                program: program.to_string_lossy().into_owned(),
                error,
            });
        }
    };
    // A child that exec'd passed its pre-exec step, which waited for the
    // groups; without them (never seen) the values read as not counted.
    let (mut groups, open_errors, mut before) =
        prepared.unwrap_or_else(|| (Vec::new(), Vec::new(), Snapshot::new(layout)));
    let mut after = Snapshot::new(layout);
    // wait4 gives this child's own resource usage: RUSAGE_CHILDREN would
    // also hold whatever this process's image inherited (run through
    // `cargo run`, which execs us, it holds cargo's compilers).
    let (status, own_usage) = {
        let _quiet = IgnoreInterrupts::new();
        wait_with_usage(&mut child)
    };
    let t1 = clock.now_ns();
    for g in groups.iter_mut().flatten() {
        let _ = g.disable();
    }
    after.read_groups(&groups, layout, || {});
    before.t_ns = t0;
    after.t_ns = t1;
    let exit = match status {
        Ok(s) => match (s.code(), s.signal()) {
            (Some(c), _) => ExitInfo::Code(c),
            (None, Some(sig)) => ExitInfo::Signal(sig),
            (None, None) => ExitInfo::Code(1),
        },
        Err(_) => ExitInfo::Code(1),
    };
    let mut acc = Accumulator::new(layout);
    acc.add(layout, &before, &after);
    let mut measurement = Measurement::from_accumulator(layout, &acc);
    let rusage = own_usage;
    if let Some(ru) = &rusage {
        measurement.user_s = Some(ru.user_time_s);
    }
    Ok(ProgramRun {
        exit,
        measurement,
        rusage,
        open_errors,
    })
}
