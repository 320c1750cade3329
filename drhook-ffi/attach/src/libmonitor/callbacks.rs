//! The tool's callbacks: looked up once, called from the layer's events.

use std::cell::Cell;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicPtr, AtomicU8, Ordering};

use crate::events::{Ending, Events, ForkSide, Monitor, Process, register};
use crate::sys::diag;

/// `MONITOR_EXIT_NORMAL`, `_SIGNAL`, `_EXEC` of `monitor.h`.
pub const EXIT_NORMAL: c_int = 1;
/// A process ended by a signal (`abort`, or a signal whose action is the
/// default).
pub const EXIT_SIGNAL: c_int = 2;
/// A process about to `exec`.
pub const EXIT_EXEC: c_int = 3;

macro_rules! callbacks {
    ($($idx:ident = $name:literal;)*) => {
        #[allow(non_camel_case_types, clippy::upper_case_acronyms)]
        #[derive(Clone, Copy)]
        #[repr(usize)]
        enum Cb { $($idx,)* }
        const NAMES: &[&CStr] = &[$($name,)*];
    };
}

callbacks! {
    InitLibrary = c"monitor_init_library";
    FiniLibrary = c"monitor_fini_library";
    InitProcess = c"monitor_init_process";
    FiniProcess = c"monitor_fini_process";
    BeginProcessExit = c"monitor_begin_process_exit";
    PreFork = c"monitor_pre_fork";
    PostFork = c"monitor_post_fork";
    InitThreadSupport = c"monitor_init_thread_support";
    InitThread = c"monitor_init_thread";
    FiniThread = c"monitor_fini_thread";
    Dlopen = c"monitor_dlopen";
    Dlclose = c"monitor_dlclose";
    InitMpi = c"monitor_init_mpi";
    FiniMpi = c"monitor_fini_mpi";
    StartMainInit = c"monitor_start_main_init";
    AtMain = c"monitor_at_main";
    ThreadPreCreate = c"monitor_thread_pre_create";
    ThreadPostCreate = c"monitor_thread_post_create";
    ResetStacksize = c"monitor_reset_stacksize";
    PreDlopen = c"monitor_pre_dlopen";
    PostDlclose = c"monitor_post_dlclose";
    MpiPreInit = c"monitor_mpi_pre_init";
    MpiPostFini = c"monitor_mpi_post_fini";
    WrapMain = c"monitor_wrap_main";
}

unsafe extern "C" {
    /// The callback `name` a static program links (`c/monitor_weak.c`).
    fn drhook_attach_monitor_weak(name: *const c_char) -> *mut c_void;
    static mut environ: *mut *mut c_char;
}

/// `MONITOR_IGNORE_NEW_THREAD`: `monitor_thread_pre_create`'s answer for
/// a thread the tool does not want to see.
pub const IGNORE_NEW_THREAD: usize = usize::MAX;

static FOUND: [AtomicPtr<c_void>; NAMES.len()] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; NAMES.len()];
/// 0: not looked up, 1: skipped (no tool seen), 2: looked up.
static LOOKED_UP: AtomicU8 = AtomicU8::new(0);

/// The tool's `name`, if it defines it.
#[inline]
fn cb(c: Cb) -> Option<*mut c_void> {
    let p = FOUND[c as usize].load(Ordering::Acquire);
    (!p.is_null()).then_some(p)
}

/// Looks every callback up once (`dlsym(RTLD_DEFAULT)`: a preloaded tool,
/// or the program itself with `DRHOOK_MONITOR_TOOL=1`). Not in a static
/// program (no dynamic symbols), and not when nothing but Dr.Hook's own
/// libraries is preloaded, unless `sure` (a tool called
/// `monitor_initialize`): the look-ups cost ~44 000 instructions, a sixth
/// of what the layer costs a process.
fn look_up(sure: bool) {
    let state = LOOKED_UP.load(Ordering::Acquire);
    if state == 2 || (state == 1 && !sure) {
        return;
    }
    if crate::real::link_mode() {
        // A static program: the tool is linked in (weak references).
        if LOOKED_UP.swap(2, Ordering::AcqRel) != 2 {
            for (slot, name) in FOUND.iter().zip(NAMES) {
                // SAFETY: a NUL-terminated name; the C table only reads it.
                slot.store(
                    unsafe { drhook_attach_monitor_weak(name.as_ptr()) },
                    Ordering::Release,
                );
            }
        }
        return;
    }
    if !sure && !may_have_a_tool() {
        LOOKED_UP.store(1, Ordering::Release);
        return;
    }
    if LOOKED_UP.swap(2, Ordering::AcqRel) == 2 {
        return;
    }
    for (slot, name) in FOUND.iter().zip(NAMES) {
        // SAFETY: a lookup of a NUL-terminated name in the global scope.
        let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
        slot.store(p, Ordering::Release);
    }
}

/// Whether a libmonitor tool may be in the process: `LD_PRELOAD` names a
/// library that is not one of Dr.Hook's (`libdrhook*`) or valgrind's, or
/// `DRHOOK_MONITOR_TOOL=1` says the program defines the callbacks itself.
fn may_have_a_tool() -> bool {
    if crate::sys::env::env_value(b"DRHOOK_MONITOR_TOOL").is_some_and(|v| v == b"1") {
        return true;
    }
    crate::sys::env::env_value(b"LD_PRELOAD").is_some_and(|v| {
        v.split(|&b| b == b':' || b == b' ')
            .filter(|e| !e.is_empty())
            .any(|e| {
                let name = e.rsplit(|&b| b == b'/').next().unwrap_or(e);
                // Dr.Hook's own, and valgrind's (which a measure of the
                // layer's cost runs under).
                !name.starts_with(b"libdrhook") && !name.starts_with(b"vgpreload_")
            })
    })
}

/// `MONITOR_DEBUG` set: a line on stderr before each callback.
static DEBUG: AtomicBool = AtomicBool::new(false);

fn debug(what: &str) {
    if DEBUG.load(Ordering::Relaxed) {
        // SAFETY: getpid has no preconditions.
        let pid = unsafe { libc::getpid() };
        let msg = format!("monitor debug [{pid},{}] calling {what} ...", thread_num());
        diag(&msg);
    }
}

// --- the data passed through ------------------------------------------------

/// `*argc` as `monitor_init_process` and `monitor_init_mpi` get it.
static ARGC: AtomicI32 = AtomicI32::new(0);
static ARGV: AtomicPtr<*mut c_char> = AtomicPtr::new(std::ptr::null_mut());
/// What `monitor_init_process` returned.
static MAIN_DATA: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
/// Threads started so far (the next one's number less one).
static THREADS: AtomicI32 = AtomicI32::new(0);
static THREAD_SUPPORT: AtomicU8 = AtomicU8::new(0);
static LIBRARY_DONE: AtomicU8 = AtomicU8::new(0);
/// `monitor_set_size_rank`'s values (-1: none).
pub(crate) static SIZE: AtomicI32 = AtomicI32::new(-1);
pub(crate) static RANK: AtomicI32 = AtomicI32::new(-1);

thread_local! {
    /// This thread's number (0: the main thread).
    static TID: Cell<c_int> = const { Cell::new(0) };
    /// What `monitor_init_thread` returned on this thread.
    static THREAD_DATA: Cell<*mut c_void> = const { Cell::new(std::ptr::null_mut()) };
    /// What `monitor_pre_fork` returned on this thread (the child is a
    /// copy of it).
    static FORK_DATA: Cell<*mut c_void> = const { Cell::new(std::ptr::null_mut()) };
    /// This thread's start routine (0: the main thread).
    static START: Cell<usize> = const { Cell::new(0) };
    /// This thread is not seen by the tool (`MONITOR_IGNORE_NEW_THREAD`).
    static IGNORED: Cell<bool> = const { Cell::new(false) };
    /// `monitor_disable_new_threads` on this thread.
    static NO_NEW_THREADS: Cell<bool> = const { Cell::new(false) };
    /// The start routine of the thread this thread is creating, inside
    /// `pthread_create` (0: none), and whether the tool ignores it.
    static CREATING: Cell<(usize, bool)> = const { Cell::new((0, false)) };
}

/// `monitor_get_addr_thread_start`: this thread's start routine (null on
/// the main thread).
pub(crate) fn thread_start() -> *mut c_void {
    START.with(|s| s.get()) as *mut c_void
}

/// `monitor_disable_new_threads` (`false`) / `_enable_` (`true`).
pub(crate) fn set_new_threads(on: bool) {
    NO_NEW_THREADS.with(|n| n.set(!on));
}

/// `monitor_get_new_thread_info`'s start routine: inside `pthread_create`
/// only.
pub(crate) fn creating() -> Option<usize> {
    let (start, _) = CREATING.with(|c| c.get());
    (start != 0).then_some(start)
}

/// `monitor_get_thread_num`.
pub(crate) fn thread_num() -> c_int {
    TID.with(|t| t.get())
}

/// `monitor_get_user_data`.
pub(crate) fn user_data() -> *mut c_void {
    MAIN_DATA.load(Ordering::Acquire)
}

/// `monitor_is_threaded`.
pub(crate) fn is_threaded() -> bool {
    THREADS.load(Ordering::Acquire) > 0
}

/// `*argc`, `argv` of the process (`monitor_init_process`'s).
pub(crate) fn main_args() -> (c_int, *mut *mut c_char) {
    (ARGC.load(Ordering::Acquire), ARGV.load(Ordering::Acquire))
}

// --- the calls ----------------------------------------------------------------

/// Calls the callback `$c` of type `$ty` with `$args`, if the tool has it.
macro_rules! call {
    ($c:expr, $ty:ty, ($($a:expr),*)) => {
        cb($c).map(|p| {
            debug(NAMES[$c as usize].to_str().unwrap_or("?"));
            // SAFETY: the tool's definition of a callback of `monitor.h`,
            // whose C type is `$ty`.
            let f = unsafe { std::mem::transmute::<*mut c_void, $ty>(p) };
            // SAFETY: the arguments `monitor.h` documents.
            unsafe { f($($a),*) }
        })
    };
}

type VoidFn = unsafe extern "C" fn();
type IntFn = unsafe extern "C" fn(c_int);
type PtrFn = unsafe extern "C" fn(*mut c_void);
type GetFn = unsafe extern "C" fn() -> *mut c_void;
type DlFn = unsafe extern "C" fn(*const c_char, c_int);
type PostDlFn = unsafe extern "C" fn(*mut c_void, c_int);
type SizeFn = unsafe extern "C" fn(usize) -> usize;

/// `monitor_init_library` has run (once: from the preload library's
/// constructor, or from an earlier `monitor_initialize`).
static LIBRARY_INIT: AtomicU8 = AtomicU8::new(0);

/// When the preload library is loaded: the callbacks are looked up and
/// `monitor_init_library` runs (libmonitor's order: from its constructor).
pub fn library_init() {
    library_init_for(false);
}

fn library_init_for(sure: bool) {
    if LIBRARY_INIT.swap(1, Ordering::AcqRel) != 0 {
        return;
    }
    let _ = std::panic::catch_unwind(|| {
        DEBUG.store(
            crate::sys::env::env_value(b"MONITOR_DEBUG").is_some(),
            Ordering::Relaxed,
        );
        if let Some(o) = crate::sys::env::env_value(b"MONITOR_OPTIONS") {
            options(o);
        }
        look_up(sure);
        call!(Cb::InitLibrary, VoidFn, ());
    });
}

/// The process has started for the tool: 0 not yet, 1 by
/// `monitor_initialize` (before `main`), 2 at `main` (or in a fork child).
static STARTED: AtomicU8 = AtomicU8::new(0);

/// `monitor_initialize`: a tool that runs before the layer's start (its
/// own constructor) starts the process now, as libmonitor does:
/// `monitor_init_library` if it has not run yet, then
/// `monitor_init_process` with no arguments (`*argc` 0, `argv` null, the
/// data null); at `main` the tool then gets `monitor_at_main` only.
/// Later calls do nothing.
pub fn initialize() {
    library_init_for(true);
    look_up(true);
    let _ = std::panic::catch_unwind(|| {
        if STARTED
            .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            init_process(std::ptr::null_mut());
        }
    });
}

/// In `__libc_start_main`, before the program's constructors:
/// `monitor_start_main_init`.
pub fn start_main_init() {
    let _ = std::panic::catch_unwind(|| {
        call!(Cb::StartMainInit, VoidFn, ());
    });
}

/// The seed's `MONITOR_OPTIONS` (words separated by spaces, commas, `:`
/// or `|`): `MONITOR_DEBUG` as the variable; `MONITOR_NONZERO_EXIT` and
/// `MONITOR_SIGABRT` and `MONITOR_SIGINT` asked for the fini callbacks on
/// those endings, which (as in current libmonitor) always get them;
/// anything else is said and ignored.
fn options(o: &[u8]) {
    for w in o
        .split(|&b| matches!(b, b' ' | b',' | b':' | b'|'))
        .filter(|w| !w.is_empty())
    {
        match w {
            b"MONITOR_DEBUG" => DEBUG.store(true, Ordering::Relaxed),
            b"MONITOR_NONZERO_EXIT" | b"MONITOR_SIGABRT" | b"MONITOR_SIGINT" => {}
            _ => diag(&format!(
                "drhook: MONITOR_OPTIONS: {:?} is not one of MONITOR_DEBUG, MONITOR_NONZERO_EXIT, MONITOR_SIGINT, MONITOR_SIGABRT: ignored",
                String::from_utf8_lossy(w)
            )),
        }
    }
}

fn fini_library() {
    // A static program has no library destructor: libmonitor gives no
    // `monitor_fini_library` there.
    if !crate::real::link_mode() && LIBRARY_DONE.swap(1, Ordering::AcqRel) == 0 {
        call!(Cb::FiniLibrary, VoidFn, ());
    }
}

/// At the process's start (the tools' start, just before the monitors'
/// `init_process`): registers [`CMonitor`] when the process has a tool.
pub fn start() {
    look_up(false);
    if crate::real::link_mode() {
        // A static program (libmonitor's static order: no library
        // constructor, `monitor_start_main_init` then
        // `monitor_init_library` just before `main`).
        let _ = std::panic::catch_unwind(|| call!(Cb::StartMainInit, VoidFn, ()));
        library_init_for(false);
    }
    let wanted = wanted();
    if wanted == Events::NONE {
        return;
    }
    static M: CMonitor = CMonitor;
    static DONE: AtomicU8 = AtomicU8::new(0);
    if DONE.swap(1, Ordering::AcqRel) != 0 {
        return;
    }
    if register(&M).is_err() {
        diag("drhook: no room for libmonitor's callbacks; the tool gets no events");
    }
}

/// The first `fork`, `pthread_create` or `dlopen` before `main` (in a
/// library's constructor): the tool's callbacks are registered there, so
/// that it hears of these events as under libmonitor — `pthread_create`
/// starts the process (`monitor_init_process` with no arguments), a
/// `fork` child starts with `monitor_pre_fork`'s data, the parent (and a
/// process that only opened a library) only at `main`.
pub fn pre_main() {
    static ONCE: AtomicU8 = AtomicU8::new(0);
    if ONCE.swap(1, Ordering::AcqRel) == 0 {
        let _ = std::panic::catch_unwind(start);
    }
}

/// At `main`, after Dr.Hook's engine has installed its signal handlers
/// (the dispatcher goes in front of them): signal endings are watched.
/// Not in a static program, where `sigaction` is not wrapped: the program
/// would see the dispatcher as its disposition.
fn watch_endings() {
    static ONCE: AtomicU8 = AtomicU8::new(0);
    if wants_the_end() && !crate::real::link_mode() && ONCE.swap(1, Ordering::AcqRel) == 0 {
        crate::lifecycle::client_signals::watch_endings(signal_end);
    }
}

/// A signal's default action is about to end the process (on the
/// signalled thread): `monitor_begin_process_exit` and
/// `monitor_fini_process` with `MONITOR_EXIT_SIGNAL`, the other threads'
/// `monitor_fini_thread` between them, then `monitor_fini_library`, as
/// libmonitor's signal handler gives them; an end already in progress on
/// another thread is waited for instead.
fn signal_end(_sig: c_int) {
    use crate::lifecycle::process;
    if STARTED.load(Ordering::Acquire) == 0 {
        return;
    }
    let saved = crate::sys::errno();
    // SAFETY: gettid has no preconditions.
    let me = unsafe { libc::gettid() };
    if process::signal_end_begins() {
        end(EXIT_SIGNAL);
        process::signal_end_done();
    } else if ENDING_TID.load(Ordering::Acquire) != me {
        // Another thread is ending the process: its callbacks finish
        // first. (On the ending thread itself — a fault in a callback —
        // the default action follows at once, as libmonitor's "same
        // thread restarting process exit".)
        process::wait_for_the_end(crate::lifecycle::exit::WAIT_MS);
    }
    crate::sys::set_errno(saved);
}

/// The events the tool's callbacks need.
fn wanted() -> Events {
    let has = |cs: &[Cb]| cs.iter().any(|c| cb(*c).is_some());
    let mut e = Events::NONE;
    if has(&[
        Cb::InitProcess,
        Cb::FiniProcess,
        Cb::BeginProcessExit,
        Cb::FiniLibrary,
    ]) {
        // A fork child and a failed exec start a process again.
        e = e | Events::PROCESS | Events::FORK | Events::EXEC;
    }
    if has(&[Cb::PreFork, Cb::PostFork]) {
        e = e | Events::FORK;
    }
    if has(&[Cb::AtMain]) {
        e = e | Events::PROCESS;
    }
    if has(&[
        Cb::InitThreadSupport,
        Cb::InitThread,
        Cb::FiniThread,
        Cb::ThreadPreCreate,
        Cb::ThreadPostCreate,
        Cb::ResetStacksize,
    ]) {
        e = e | Events::THREADS;
    }
    if has(&[Cb::Dlopen, Cb::Dlclose, Cb::PreDlopen, Cb::PostDlclose]) {
        e = e | Events::DLOPEN;
    }
    if has(&[Cb::InitMpi, Cb::FiniMpi, Cb::MpiPreInit, Cb::MpiPostFini]) {
        e = e | Events::MPI;
    }
    // A tool may broadcast a signal to the threads it sees (libmonitor
    // keeps its list of threads whatever the tool defines).
    if e != Events::NONE {
        e = e | Events::THREADS;
    }
    e
}

/// `monitor_init_thread_support`, once, before the first thread's
/// callbacks (libmonitor: on the creating thread, at the first
/// `pthread_create`).
fn init_thread_support() {
    if THREAD_SUPPORT.swap(1, Ordering::AcqRel) == 0 {
        call!(Cb::InitThreadSupport, VoidFn, ());
    }
}

fn how(e: Ending) -> c_int {
    match e {
        Ending::Return(_) | Ending::Exit(_) | Ending::UnderscoreExit(_) | Ending::MpiFinalize => {
            EXIT_NORMAL
        }
        Ending::Abort => EXIT_SIGNAL,
        Ending::Exec => EXIT_EXEC,
    }
}

/// The thread running the tool's end callbacks (0: none yet).
static ENDING_TID: AtomicI32 = AtomicI32::new(0);

/// The process's end, `h` its `MONITOR_EXIT_*`.
pub(super) fn end(h: c_int) {
    // SAFETY: gettid has no preconditions.
    ENDING_TID.store(unsafe { libc::gettid() }, Ordering::Release);
    call!(Cb::BeginProcessExit, IntFn, (h));
    shootdown();
    type F = unsafe extern "C" fn(c_int, *mut c_void);
    call!(Cb::FiniProcess, F, (h, MAIN_DATA.load(Ordering::Acquire)));
    fini_library();
}

/// Whether the tool wants to hear of the process's end.
pub(super) fn wants_the_end() -> bool {
    [
        Cb::BeginProcessExit,
        Cb::FiniProcess,
        Cb::FiniLibrary,
        Cb::FiniThread,
    ]
    .iter()
    .any(|c| cb(*c).is_some())
}

fn init_process(data: *mut c_void) {
    LIBRARY_DONE.store(0, Ordering::Release);
    type F = unsafe extern "C" fn(*mut c_int, *mut *mut c_char, *mut c_void) -> *mut c_void;
    let r = call!(
        Cb::InitProcess,
        F,
        (ARGC.as_ptr(), ARGV.load(Ordering::Acquire), data)
    );
    MAIN_DATA.store(r.unwrap_or(std::ptr::null_mut()), Ordering::Release);
}

/// The process's end, on the ending thread: each other thread still
/// running runs its `monitor_fini_thread` on itself (a real-time signal
/// the program leaves at its default, with [`on_shootdown`] as handler for
/// the while), then this thread runs its own if it is not the main thread.
/// libmonitor also gives the main thread a `monitor_fini_thread` (with the
/// process's data) when another thread ends the process; here the main
/// thread has only `monitor_fini_process`, as when it ends the process.
fn shootdown() {
    if cb(Cb::FiniThread).is_none() {
        return;
    }
    if super::live::others()
        && let Some(sig) = free_realtime_signal()
    {
        // SAFETY: a zeroed sigaction, filled below.
        let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
        act.sa_sigaction = on_shootdown as *const () as usize;
        act.sa_flags = libc::SA_RESTART;
        // SAFETY: as above.
        let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
        real_sigaction(sig, &act, &mut old);
        super::live::shootdown(sig);
        real_sigaction(sig, &old, std::ptr::null_mut());
    }
    if TID.with(|t| t.get()) > 0 && !IGNORED.with(|i| i.get()) && super::live::begin_fini() {
        call!(Cb::FiniThread, PtrFn, (THREAD_DATA.with(|d| d.get())));
        super::live::fini_done();
    }
}

fn real_sigaction(sig: c_int, act: *const libc::sigaction, old: *mut libc::sigaction) {
    crate::lifecycle::client_signals::real_sigaction(sig, act, old);
}

/// The highest real-time signal whose disposition is the default (the
/// program's are left alone), or none.
fn free_realtime_signal() -> Option<c_int> {
    (libc::SIGRTMIN()..=libc::SIGRTMAX()).rev().find(|&sig| {
        // SAFETY: a zeroed sigaction, filled by the query.
        let mut cur: libc::sigaction = unsafe { std::mem::zeroed() };
        real_sigaction(sig, std::ptr::null(), &mut cur);
        cur.sa_sigaction == libc::SIG_DFL
    })
}

/// The shootdown signal's handler: this thread's `monitor_fini_thread`,
/// unless it is not seen by the tool, has held the shootdown off
/// (`monitor_block_shootdown`), or has run it already.
extern "C" fn on_shootdown(_sig: c_int) {
    let saved = crate::sys::errno();
    if !IGNORED.with(|i| i.get()) && !super::live::blocked() && super::live::begin_fini() {
        call!(Cb::FiniThread, PtrFn, (THREAD_DATA.with(|d| d.get())));
        super::live::fini_done();
    }
    crate::sys::set_errno(saved);
}

/// libmonitor's callbacks on the layer's events.
pub struct CMonitor;

impl Monitor for CMonitor {
    fn events(&self) -> Events {
        wanted()
    }

    fn init_process(&self, p: &Process<'_>) {
        super::live::process_start(p.forked);
        if p.forked {
            // libmonitor: the child starts again with the parent's
            // arguments and `monitor_pre_fork`'s data; the forking thread
            // is its main thread (number 0); new threads go on numbering
            // from the parent's count.
            TID.with(|t| t.set(0));
            library_init_for(false);
            // Forked before `main`: `main` brings `monitor_at_main` only.
            let pre_main = crate::lifecycle::start::before_main();
            STARTED.store(if pre_main { 1 } else { 2 }, Ordering::Release);
            init_process(FORK_DATA.with(|d| d.get()));
        } else {
            watch_endings();
            ARGC.store(p.argc, Ordering::Release);
            ARGV.store(p.argv as *mut *mut c_char, Ordering::Release);
            // Started already by `monitor_initialize`: `monitor_at_main`
            // only, as libmonitor.
            if STARTED.swap(2, Ordering::AcqRel) != 1 {
                init_process(std::ptr::null_mut());
            }
            call!(Cb::AtMain, VoidFn, ());
            if crate::real::link_mode() {
                // libmonitor's static mode: the tool may take over `main`
                // here (its `monitor_wrap_main` calls `__real_main` and
                // exits); the default returns 0.
                type F = unsafe extern "C" fn(c_int, *mut *mut c_char, *mut *mut c_char) -> c_int;
                // SAFETY: the process's environment, read once.
                let env = unsafe { environ };
                call!(Cb::WrapMain, F, (p.argc, p.argv as *mut *mut c_char, env));
            }
        }
    }

    fn fini_process(&self, e: Ending) {
        end(how(e));
    }

    fn exec_failed(&self, _errno: c_int) {
        // libmonitor leaves the process unmonitored after a failed exec
        // (its fini already ran); here it starts again, so that the end it
        // will have is seen too.
        init_process(std::ptr::null_mut());
    }

    fn pre_thread_create(&self, start: usize) -> usize {
        // libmonitor: an ignored thread gets no callbacks at all.
        if NO_NEW_THREADS.with(|n| n.get()) {
            CREATING.with(|c| c.set((start, true)));
            return IGNORE_NEW_THREAD;
        }
        CREATING.with(|c| c.set((start, false)));
        // A thread created before `main` starts the process, as libmonitor.
        if STARTED
            .compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            library_init_for(false);
            init_process(std::ptr::null_mut());
        }
        init_thread_support();
        let data = call!(Cb::ThreadPreCreate, GetFn, ()).unwrap_or(std::ptr::null_mut()) as usize;
        if data == IGNORE_NEW_THREAD {
            CREATING.with(|c| c.set((start, true)));
        }
        data
    }

    fn thread_stack_size(&self, old: usize) -> usize {
        if CREATING.with(|c| c.get().1) {
            return old;
        }
        call!(Cb::ResetStacksize, SizeFn, (old)).map_or(old, |n| if n == 0 { old } else { n })
    }

    fn post_thread_create(&self, word: usize) {
        CREATING.with(|c| c.set((0, false)));
        if word != IGNORE_NEW_THREAD {
            call!(Cb::ThreadPostCreate, PtrFn, (word as *mut c_void));
        }
    }

    fn init_thread_with(&self, start: usize, word: usize) {
        START.with(|s| s.set(start));
        if word == IGNORE_NEW_THREAD {
            IGNORED.with(|i| i.set(true));
            TID.with(|t| t.set(-1));
            return;
        }
        super::live::thread_start();
        // A thread created before the tool's start (a constructor's).
        init_thread_support();
        let tid = THREADS.fetch_add(1, Ordering::AcqRel) + 1;
        TID.with(|t| t.set(tid));
        type F = unsafe extern "C" fn(c_int, *mut c_void) -> *mut c_void;
        let r = call!(Cb::InitThread, F, (tid, word as *mut c_void));
        THREAD_DATA.with(|d| d.set(r.unwrap_or(std::ptr::null_mut())));
    }

    fn fini_thread(&self) {
        if !IGNORED.with(|i| i.get()) && super::live::begin_fini() {
            call!(Cb::FiniThread, PtrFn, (THREAD_DATA.with(|d| d.get())));
            super::live::fini_done();
        }
        super::live::thread_end();
    }

    fn pre_fork(&self) {
        let r = call!(Cb::PreFork, GetFn, ());
        FORK_DATA.with(|d| d.set(r.unwrap_or(std::ptr::null_mut())));
    }

    fn post_fork(&self, side: ForkSide) {
        // libmonitor calls `monitor_post_fork` in the parent only; the
        // child gets `monitor_init_process`.
        if let ForkSide::Parent(pid) = side {
            type F = unsafe extern "C" fn(libc::pid_t, *mut c_void);
            call!(Cb::PostFork, F, (pid, FORK_DATA.with(|d| d.get())));
        }
    }

    fn pre_dlopen(&self, file: Option<&CStr>, flags: c_int) {
        let path = file.map_or(std::ptr::null(), |f| f.as_ptr());
        call!(Cb::PreDlopen, DlFn, (path, flags));
    }

    // The handle goes to the tool as it came; nothing here reads through it.
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    fn post_dlclose(&self, handle: *mut c_void, ret: c_int) {
        call!(Cb::PostDlclose, PostDlFn, (handle, ret));
    }

    // The handle goes to the tool as it came; nothing here reads through it.
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    fn dlopen(&self, file: Option<&CStr>, flags: c_int, handle: *mut c_void) {
        type F = unsafe extern "C" fn(*const c_char, c_int, *mut c_void);
        let path = file.map_or(std::ptr::null(), |f| f.as_ptr());
        call!(Cb::Dlopen, F, (path, flags, handle));
    }

    // The handle goes to the tool as it came; nothing here reads through it.
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    fn dlclose(&self, handle: *mut c_void) {
        call!(Cb::Dlclose, PtrFn, (handle));
    }

    fn pre_init_mpi(&self) {
        call!(Cb::MpiPreInit, VoidFn, ());
    }

    fn post_fini_mpi(&self) {
        call!(Cb::MpiPostFini, VoidFn, ());
    }

    fn init_mpi(&self, _rank: c_int, _size: c_int) {
        type F = unsafe extern "C" fn(*mut c_int, *mut *mut *mut c_char);
        call!(Cb::InitMpi, F, (ARGC.as_ptr(), ARGV.as_ptr()));
    }

    fn fini_mpi(&self) {
        call!(Cb::FiniMpi, VoidFn, ());
    }
}
