//! Counting a whole program with everything it spawns (`hpmcount`, seed §2.6).
//!
//! The counters are opened on `hpmcount` itself with perf inheritance,
//! enabled right before the program is spawned and disabled after it has
//! been waited for; every thread and process the program creates inherits
//! them and adds its counts on exit. (Like the guide's `taskset` example, the
//! tiny spawn and wait of `hpmcount` itself is included.)

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;
use std::process::Command;

use crate::backend::clock::Clock;
use crate::backend::getrusage::Rusage;
use crate::backend::{CounterGroup, OpenError};
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
struct IgnoreInterrupts {
    old: [libc::sighandler_t; 2],
}

impl IgnoreInterrupts {
    fn new() -> IgnoreInterrupts {
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
fn wait_with_usage(
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

/// Runs `program args` with stdin/stdout/stderr inherited and counts it
/// with `plan` (whose scope must be [`crate::Scope::ProcessTree`]).
pub fn run_counted(
    plan: &CountingPlan,
    clock: &dyn Clock,
    program: &OsString,
    args: &[OsString],
) -> Result<ProgramRun, SpawnError> {
    let layout = &plan.layout;
    let (mut groups, open_errors) = plan.open_groups();
    let mut before = Snapshot::new(layout);
    let mut after = Snapshot::new(layout);
    let read = |groups: &[Option<Box<dyn CounterGroup>>], snap: &mut Snapshot| {
        snap.read_groups(groups, layout, || {});
        snap.t_ns = clock.now_ns();
    };
    read(&groups, &mut before);
    for g in groups.iter_mut().flatten() {
        let _ = g.enable();
    }
    let t0 = clock.now_ns();
    let spawned = Command::new(program).args(args).spawn();
    let mut child = match spawned {
        Ok(c) => c,
        Err(error) => {
            return Err(SpawnError {
                program: program.to_string_lossy().into_owned(),
                error,
            });
        }
    };
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
    read(&groups, &mut after);
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
