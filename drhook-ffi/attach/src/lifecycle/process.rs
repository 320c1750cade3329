//! The process's events, each delivered once: to the engine (built-in
//! monitor) first at start, last at the end, and to the registered
//! monitors. The wrappers of the other files of this folder call these.
//!
//! The end is last: a process that returns from `main` or calls `exit`
//! ends in [`at_the_very_end`], an `on_exit` handler registered before
//! any other (so it runs after every `atexit` handler, C++ static
//! destructor and library destructor, just before the C library's own
//! stdio clean-up and `_exit`): their work is in the reports. Other
//! endings (`_exit`, `abort`, `exec`, `MPI_Finalize`, a fatal signal)
//! end at once, since nothing of the program runs after them.

use std::ffi::{c_char, c_int};
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};

use crate::engine;
use crate::events::{self, Ending, Events, ForkSide, Process};
use crate::sys::tls;

/// Delivers an event to the monitors that want it, as the layer's own
/// work (see `engine::own_work`).
fn tell(ev: Events, f: impl Fn(&dyn crate::events::Monitor)) {
    engine::own_work(|| events::each(ev, f));
}

/// 0 before `main`, 1 running, 2 ended.
static STATE: AtomicU8 = AtomicU8::new(0);
/// The end's work is done (the reports written): an `_exit` on another
/// thread waits for it rather than cut it short.
static DONE: AtomicU8 = AtomicU8::new(0);
/// `main` returned this status (bit 32 set), or 0.
static RETURNED: AtomicU64 = AtomicU64::new(0);
static START_CYCLES: AtomicU64 = AtomicU64::new(0);
static START_NS: AtomicU64 = AtomicU64::new(0);

/// When the library is loaded: the process's start stamps (so `main`
/// covers the whole run), and the real `dlopen` for its fast path.
extern "C" fn library_init() {
    let s = drhook::lifecycle::Start::now();
    START_CYCLES.store(s.cycles, Ordering::Relaxed);
    START_NS.store(s.monotonic_ns, Ordering::Relaxed);
    super::dlopen::resolve_early();
}

#[used]
#[unsafe(link_section = ".init_array")]
static LIBRARY_INIT: extern "C" fn() = library_init;

fn start() -> drhook::lifecycle::Start {
    let cycles = START_CYCLES.load(Ordering::Relaxed);
    if cycles == 0 {
        // Linked with --wrap the library has no constructor before main.
        return drhook::lifecycle::Start::now();
    }
    drhook::lifecycle::Start {
        cycles,
        monotonic_ns: START_NS.load(Ordering::Relaxed),
    }
}

fn command(argv: *const *const c_char) -> String {
    let argv0 = if argv.is_null() {
        std::ptr::null()
    } else {
        // SAFETY: argv is main's argument vector.
        unsafe { *argv }
    };
    let s = if argv0.is_null() {
        String::new()
    } else {
        // SAFETY: NUL-terminated argument.
        unsafe { std::ffi::CStr::from_ptr(argv0) }
            .to_string_lossy()
            .into_owned()
    };
    drhook::config::process::command_name(&s)
}

/// Whether the process has not reached `main` yet.
#[inline]
pub(crate) fn before_main() -> bool {
    STATE.load(Ordering::Relaxed) == 0
}

/// Just before `main`: the engine starts, then the tools (`tools`, see
/// `start::libc_start_main`), then the monitors hear of it.
pub(crate) fn init_process(argc: c_int, argv: *const *const c_char, tools: Option<fn()>) {
    if STATE
        .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        return;
    }
    let _ = std::panic::catch_unwind(|| engine::process_begin(start()));
    if let Some(tools) = tools {
        let _ = std::panic::catch_unwind(tools);
    }
    if events::interest().contains(Events::PROCESS) {
        let cmd = command(argv);
        let p = Process {
            argc,
            argv,
            command: &cmd,
            // SAFETY: getpid has no preconditions.
            pid: unsafe { libc::getpid() } as u32,
            forked: false,
        };
        tell(Events::PROCESS, |m| m.init_process(&p));
    }
}

/// The process ends: `true` for the one call that ends it.
#[inline]
pub(crate) fn fini_process(how: Ending) -> bool {
    // Nobody to tell (Dr.Hook off, no monitor): nothing to do, nothing
    // written (a fork child that only _exits touches no page of ours).
    if !engine::on() && !events::interest().contains(Events::PROCESS) {
        return false;
    }
    fini_process_slow(how)
}

#[inline(never)]
fn fini_process_slow(how: Ending) -> bool {
    if STATE.swap(2, Ordering::AcqRel) == 2 {
        return false;
    }
    super::mpi::ending_unfinalised(how);
    // The reports' files and tables, made now, find descriptors and
    // memory even when the program ends with all it may have.
    let room = drhook::__private::MoreRoom::hold();
    tell(Events::PROCESS, |m| m.fini_process(how));
    let _ = std::panic::catch_unwind(|| engine::process_end(how));
    drop(room);
    DONE.store(1, Ordering::Release);
    true
}

/// A signal's default action is about to end the process (a tool asked to
/// hear of it, see `client_signals::watch_endings`): `true` for the one
/// call that ends it, whose caller tells its tool and then calls
/// [`signal_end_done`]. The engine is not told: its own handler, when it
/// catches the signal, reports the end. Async-signal-safe.
pub(crate) fn signal_end_begins() -> bool {
    STATE.swap(2, Ordering::AcqRel) != 2
}

/// The end begun by [`signal_end_begins`] is done.
pub(crate) fn signal_end_done() {
    DONE.store(1, Ordering::Release);
}

/// Waits (at most `ms` milliseconds) for an end in progress on another
/// thread to finish its reports: an `_exit` or a second `exit` must not cut
/// them short.
pub(crate) fn wait_for_the_end(ms: u64) {
    if STATE.load(Ordering::Acquire) != 2 {
        return;
    }
    let mut waited = 0;
    while DONE.load(Ordering::Acquire) == 0 && waited < ms {
        let ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 1_000_000,
        };
        // SAFETY: a valid timespec.
        unsafe { libc::nanosleep(&ts, std::ptr::null_mut()) };
        waited += 1;
    }
}

/// `main` returned `status`: its root region ends now; the process ends
/// at the very end ([`at_the_very_end`]), after the exit handlers.
pub(crate) fn main_returned(status: c_int) {
    RETURNED.store(1 << 32 | status as u32 as u64, Ordering::Release);
    let _ = std::panic::catch_unwind(|| engine::main_returned(status));
}

/// `quick_exit(status)` was called with this status.
static QUICK: AtomicU64 = AtomicU64::new(0);

/// `quick_exit(status)` is about to run the `at_quick_exit` handlers.
pub(crate) fn quick_exit_called(status: c_int) {
    QUICK.store(status as u32 as u64, Ordering::Release);
}

/// The `at_quick_exit` handler registered before any other: the process
/// ends after the program's own.
pub(crate) extern "C" fn at_the_very_end_quick() {
    fini_process(Ending::Exit(QUICK.load(Ordering::Acquire) as u32 as c_int));
}

/// The `on_exit` handler registered before any other (see the module
/// documentation): the process ends after everything the program runs at
/// its exit.
pub(crate) extern "C" fn at_the_very_end(status: c_int, _arg: *mut std::ffi::c_void) {
    let r = RETURNED.load(Ordering::Acquire);
    let how = if r != 0 {
        Ending::Return(r as u32 as c_int)
    } else {
        Ending::Exit(status)
    };
    fini_process(how);
}

/// An `exec` is about to happen: the process ends (unless it was already
/// ending), and the environment entry the new program gets is written into
/// `buf`.
pub(crate) fn pre_exec(buf: &mut [u8]) -> Option<&std::ffi::CStr> {
    if STATE.swap(2, Ordering::AcqRel) == 2 {
        return None;
    }
    tell(Events::PROCESS | Events::EXEC, |m| {
        m.fini_process(Ending::Exec)
    });
    let n = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| engine::exec_begin(buf)))
        .unwrap_or(0);
    if n == 0 {
        return None;
    }
    std::ffi::CStr::from_bytes_with_nul(&buf[..=n]).ok()
}

/// The `exec` failed: the process goes on.
pub(crate) fn exec_failed(errno: c_int) {
    if STATE
        .compare_exchange(2, 1, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        return;
    }
    let _ = std::panic::catch_unwind(engine::exec_failed);
    tell(Events::EXEC, |m| m.exec_failed(errno));
}

/// Before `fork`, in the parent.
pub(crate) fn pre_fork() {
    tell(Events::FORK, |m| m.pre_fork());
}

/// After `fork`.
pub(crate) fn post_fork(pid: libc::pid_t, argv0_command: impl FnOnce() -> String) {
    if pid == 0 {
        // A new process: it will end on its own (a child forked before
        // `main`, in a library's constructor, starts at `main` as its
        // parent does).
        if STATE.load(Ordering::Acquire) != 0 {
            STATE.store(1, Ordering::Release);
        }
        tell(Events::FORK, |m| m.post_fork(ForkSide::Child));
        if events::interest().contains(Events::PROCESS) {
            let cmd = argv0_command();
            let p = Process {
                argc: 0,
                argv: std::ptr::null(),
                command: &cmd,
                // SAFETY: getpid has no preconditions.
                pid: unsafe { libc::getpid() } as u32,
                forked: true,
            };
            tell(Events::PROCESS, |m| m.init_process(&p));
        }
    } else {
        tell(Events::FORK, |m| m.post_fork(ForkSide::Parent(pid)));
    }
}

/// Whether the layer does anything for threads.
#[inline]
pub(crate) fn wants_threads() -> bool {
    engine::on() || events::interest().contains(Events::THREADS)
}

/// Before a thread is created, on the creating thread: the engine's number
/// for it (0: none).
pub(crate) fn thread_reserve() -> u32 {
    std::panic::catch_unwind(engine::thread_reserve).unwrap_or(0)
}

/// The monitors' words for a thread being created (by their place).
pub(crate) type Words = [usize; events::MAX_MONITORS];

/// Before a thread is created, on the creating thread: each monitor's
/// word for it.
pub(crate) fn thread_pre_create(start: usize) -> Words {
    let mut words = [0; events::MAX_MONITORS];
    engine::own_work(|| {
        events::each_at(Events::THREADS, |i, m| {
            words[i] = m.pre_thread_create(start)
        })
    });
    words
}

/// The stack size the monitors want for the new thread (`old`: the one
/// it would get).
pub(crate) fn thread_stack_size(old: usize) -> usize {
    let mut size = old;
    engine::own_work(|| events::each_at(Events::THREADS, |_, m| size = m.thread_stack_size(size)));
    size
}

/// After a thread was created (or not), on the creating thread.
pub(crate) fn thread_post_create(words: &Words) {
    engine::own_work(|| events::each_at(Events::THREADS, |i, m| m.post_thread_create(words[i])));
}

/// Thread start, on the thread, with the words of
/// [`thread_pre_create`].
pub(crate) fn thread_begin(start: usize, reserved: u32, words: &Words) {
    let _ = std::panic::catch_unwind(|| engine::thread_begin(start, reserved));
    engine::own_work(|| {
        events::each_at(Events::THREADS, |i, m| m.init_thread_with(start, words[i]))
    });
}

/// Thread end, on the thread (once: a thread calling `pthread_exit` and
/// then unwinding through the start routine ends once).
pub(crate) fn thread_end() {
    let w = tls::get(tls::THREAD);
    if w & 2 != 0 {
        return;
    }
    tls::set(tls::THREAD, w | 2);
    tell(Events::THREADS, |m| m.fini_thread());
    let _ = std::panic::catch_unwind(|| engine::thread_end(w));
}
