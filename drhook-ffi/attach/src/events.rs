//! Tools on the layer: a [`Monitor`] receives the events of the process
//! (the callbacks of libmonitor, seed 002); [`register`] adds one.
//!
//! Every method has an empty default, so a tool implements only what it
//! needs, and declares which events it wants ([`Monitor::events`]): the
//! layer does no work for events nobody wants (a `pthread_create` is then
//! the real one plus one load and a branch).
//!
//! Guarantees: each event reaches each monitor once (`fini_process` once
//! per process whatever the path; `init_thread`/`fini_thread` once per
//! thread); a panic in a callback is caught and reported, never crosses
//! into the program; a callback may call wrapped functions (`fork`, `exit`,
//! `pthread_create`...) — they are then the real ones where wrapping again
//! would repeat an event. Callbacks run on the thread of the event, with
//! the program stopped at that point: keep them short; `init_thread` and
//! `fini_thread` run on the new thread itself.

use std::ffi::{CStr, c_int, c_void};
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};

/// Sets of events (bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Events(pub u32);

impl Events {
    /// Process start and end.
    pub const PROCESS: Events = Events(1);
    /// Thread start and end.
    pub const THREADS: Events = Events(2);
    /// `fork` (and `vfork`, which the layer turns into `fork`).
    pub const FORK: Events = Events(4);
    /// `exec*` (the process ends — `fini_process(Ending::Exec)` — unless
    /// the `exec` fails).
    pub const EXEC: Events = Events(8);
    /// `dlopen`, `dlclose`.
    pub const DLOPEN: Events = Events(16);
    /// `MPI_Init*`, `MPI_Finalize` (C and Fortran).
    pub const MPI: Events = Events(32);
    /// All of them.
    pub const ALL: Events = Events(63);
    /// None.
    pub const NONE: Events = Events(0);

    /// Whether `self` has every event of `o`.
    pub fn contains(self, o: Events) -> bool {
        self.0 & o.0 == o.0
    }
}

impl std::ops::BitOr for Events {
    type Output = Events;
    fn bitor(self, o: Events) -> Events {
        Events(self.0 | o.0)
    }
}

/// How a process ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// `main` returned this status.
    Return(c_int),
    /// `exit(status)`.
    Exit(c_int),
    /// `_exit(status)` or `_Exit(status)`.
    UnderscoreExit(c_int),
    /// `abort()` or a failed `assert`.
    Abort,
    /// An `exec*` that may succeed (if it fails, `exec_failed` follows and
    /// the process goes on: it will end again later).
    Exec,
    /// `MPI_Finalize`.
    MpiFinalize,
}

impl Ending {
    /// A non-zero status or an abort.
    pub fn is_failure(self) -> bool {
        match self {
            Ending::Return(s) | Ending::Exit(s) | Ending::UnderscoreExit(s) => s != 0,
            Ending::Abort => true,
            Ending::Exec | Ending::MpiFinalize => false,
        }
    }
}

/// The process at `init_process`.
#[derive(Clone, Copy, Debug)]
pub struct Process<'a> {
    /// `argc`.
    pub argc: c_int,
    /// `argv` (null-terminated).
    pub argv: *const *const std::ffi::c_char,
    /// The command name (file name of `argv[0]`).
    pub command: &'a str,
    /// Process id.
    pub pid: u32,
    /// `true` in a `fork` child (the event follows `post_fork`).
    pub forked: bool,
}

/// Which side of a `fork`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ForkSide {
    /// The parent, with the child's pid (or -1 if the fork failed).
    Parent(libc::pid_t),
    /// The child.
    Child,
}

/// Receives the events of the process. See the module documentation.
#[allow(unused_variables)]
pub trait Monitor: Sync + 'static {
    /// The events this monitor wants (read once, at registration).
    fn events(&self) -> Events {
        Events::ALL
    }
    /// Just before `main` (and in a `fork` child, after `post_fork`).
    fn init_process(&self, p: &Process<'_>) {}
    /// The process ends (exactly once; again in a process that went on
    /// after a failed `exec`).
    fn fini_process(&self, how: Ending) {}
    /// On a new thread, before its start routine; `start` is the routine.
    fn init_thread(&self, start: usize) {}
    /// On the creating thread, before a thread is created (`start` its
    /// routine): a word handed to the new thread's
    /// [`init_thread_with`](Monitor::init_thread_with) and to
    /// [`post_thread_create`](Monitor::post_thread_create).
    fn pre_thread_create(&self, start: usize) -> usize {
        0
    }
    /// On the creating thread, the stack size the new thread gets (`old`:
    /// what the program asked, or the default): returns the size wanted.
    fn thread_stack_size(&self, old: usize) -> usize {
        old
    }
    /// On the creating thread, after the thread was created (or its
    /// creation failed), with [`pre_thread_create`](Monitor::pre_thread_create)'s word.
    fn post_thread_create(&self, word: usize) {}
    /// As [`init_thread`](Monitor::init_thread), with the word the
    /// creator's [`pre_thread_create`](Monitor::pre_thread_create) returned
    /// (0 for a thread created before the monitor was registered).
    fn init_thread_with(&self, start: usize, word: usize) {
        self.init_thread(start)
    }
    /// On the thread, after its start routine returned or at
    /// `pthread_exit`. Threads that never end get no call.
    fn fini_thread(&self) {}
    /// In the parent, just before `fork`.
    fn pre_fork(&self) {}
    /// After `fork`, in the parent and in the child.
    fn post_fork(&self, side: ForkSide) {}
    /// An `exec` announced with `fini_process(Ending::Exec)` failed with
    /// `errno`; the process goes on.
    fn exec_failed(&self, errno: c_int) {}
    /// Before `dlopen` (`file` as the program passed it).
    fn pre_dlopen(&self, file: Option<&CStr>, flags: c_int) {}
    /// After a successful `dlopen` (`file` as the program passed it).
    fn dlopen(&self, file: Option<&CStr>, flags: c_int, handle: *mut c_void) {}
    /// Before `dlclose`.
    fn dlclose(&self, handle: *mut c_void) {}
    /// After `dlclose`, with what it returned.
    fn post_dlclose(&self, handle: *mut c_void, ret: c_int) {}
    /// Just before `MPI_Init`/`MPI_Init_thread` (C or Fortran).
    fn pre_init_mpi(&self) {}
    /// After a successful `MPI_Init`/`MPI_Init_thread` (C or Fortran): this
    /// process's rank and the size of `MPI_COMM_WORLD`.
    fn init_mpi(&self, rank: c_int, size: c_int) {}
    /// Just before `MPI_Finalize` (the process then ends with
    /// `fini_process(Ending::MpiFinalize)`).
    fn fini_mpi(&self) {}
    /// After `MPI_Finalize` returned (the process has ended with
    /// `fini_process(Ending::MpiFinalize)`).
    fn post_fini_mpi(&self) {}
}

/// At most this many monitors.
pub const MAX_MONITORS: usize = 16;

type Slot = AtomicPtr<&'static dyn Monitor>;
static MONITORS: [Slot; MAX_MONITORS] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; MAX_MONITORS];
static WANTED: [AtomicU32; MAX_MONITORS] = [const { AtomicU32::new(0) }; MAX_MONITORS];
/// The events some monitor wants (read by the `dlopen` fast path).
#[doc(hidden)]
pub static INTEREST: AtomicU32 = AtomicU32::new(0);

/// Why [`register`] failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooManyMonitors;

impl std::fmt::Display for TooManyMonitors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "at most {MAX_MONITORS} monitors can be registered")
    }
}

impl std::error::Error for TooManyMonitors {}

/// Adds a monitor. Register from the tool library's initialisation (a
/// constructor), before `main`, to get `init_process`; a monitor added
/// later gets the events from then on. Monitors are called in the order
/// they were registered (`fini_*` too).
pub fn register(m: &'static dyn Monitor) -> Result<(), TooManyMonitors> {
    let wanted = m.events().0;
    let boxed = Box::into_raw(Box::new(m));
    for (i, slot) in MONITORS.iter().enumerate() {
        if slot
            .compare_exchange(
                std::ptr::null_mut(),
                boxed,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_ok()
        {
            WANTED[i].store(wanted, Ordering::Release);
            INTEREST.fetch_or(wanted, Ordering::AcqRel);
            return Ok(());
        }
    }
    // SAFETY: not published; ours to free.
    drop(unsafe { Box::from_raw(boxed) });
    Err(TooManyMonitors)
}

/// The events some registered monitor wants (the built-in Dr.Hook monitor
/// aside).
#[inline]
pub fn interest() -> Events {
    Events(INTEREST.load(Ordering::Acquire))
}

/// Calls `f` on every registered monitor that wants `ev`, catching panics.
pub(crate) fn each(ev: Events, f: impl Fn(&dyn Monitor)) {
    each_at(ev, |_, m| f(m));
}

/// As [`each`], with each monitor's place (below [`MAX_MONITORS`]).
pub(crate) fn each_at(ev: Events, mut f: impl FnMut(usize, &dyn Monitor)) {
    if INTEREST.load(Ordering::Acquire) & ev.0 == 0 {
        return;
    }
    for (i, slot) in MONITORS.iter().enumerate() {
        let p = slot.load(Ordering::Acquire);
        if p.is_null() {
            break;
        }
        if WANTED[i].load(Ordering::Acquire) & ev.0 == 0 {
            continue;
        }
        // SAFETY: published slots hold leaked, never freed boxes.
        let m: &'static dyn Monitor = unsafe { *p };
        if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(i, m))).is_err() {
            crate::sys::diag("a monitor's callback panicked; the event goes on");
        }
    }
}

/// What the MPI calls tool hands the I/O tool (a tool never reaches into
/// another: the I/O tool installs this when the I/O report is on, the
/// MPI one calls it): the `MPI_File_*` calls of C, by file handle.
pub struct MpiIoSink {
    /// `MPI_File_open` of `path` gave the handle.
    pub opened: fn(handle: usize, path: &CStr),
    /// A data call on the handle: `write` or read, `bytes`.
    pub data: fn(handle: usize, write: bool, bytes: u64),
    /// Another call on the handle (seek, sync, view, size...).
    pub other: fn(handle: usize),
    /// `MPI_File_close` of the handle.
    pub closed: fn(handle: usize),
}

static MPI_IO: AtomicPtr<MpiIoSink> = AtomicPtr::new(std::ptr::null_mut());

/// Installs the receiver of the `MPI_File_*` calls (once).
pub fn set_mpi_io_sink(s: &'static MpiIoSink) {
    MPI_IO.store(s as *const MpiIoSink as *mut MpiIoSink, Ordering::Release);
}

/// The receiver of the `MPI_File_*` calls, when the I/O report is on.
#[inline]
pub fn mpi_io_sink() -> Option<&'static MpiIoSink> {
    // SAFETY: only `&'static MpiIoSink`s are stored.
    unsafe { MPI_IO.load(Ordering::Acquire).as_ref() }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Counting(std::sync::atomic::AtomicU32, Events);
    impl Monitor for Counting {
        fn events(&self) -> Events {
            self.1
        }
        fn pre_fork(&self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
        fn fini_mpi(&self) {
            panic!("a monitor's panic is caught");
        }
    }

    #[test]
    fn registration_interest_and_delivery() {
        static A: Counting = Counting(AtomicU32::new(0), Events::FORK);
        static B: Counting = Counting(AtomicU32::new(0), Events::MPI);
        register(&A).unwrap();
        register(&B).unwrap();
        assert!(interest().contains(Events::FORK | Events::MPI));
        assert!(!interest().contains(Events::DLOPEN));
        each(Events::FORK, |m| m.pre_fork());
        assert_eq!(A.0.load(Ordering::Relaxed), 1);
        assert_eq!(B.0.load(Ordering::Relaxed), 0, "B does not want fork");
        each(Events::MPI, |m| m.fini_mpi());
        // Room is limited; the error says so.
        static C: Counting = Counting(AtomicU32::new(0), Events::NONE);
        let mut failed = None;
        for _ in 0..MAX_MONITORS {
            if let Err(e) = register(&C) {
                failed = Some(e);
                break;
            }
        }
        assert_eq!(failed, Some(TooManyMonitors));
        assert!(TooManyMonitors.to_string().contains("16"));
    }
}
