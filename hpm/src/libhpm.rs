//! The process-wide libhpm API, one function per C entry point
//! (`hpmInit` → [`init`], `hpmStart` → [`start`], ...), for a thin C/Fortran
//! ABI layer to wrap one-to-one.
//!
//! None of these functions panics or stops the program: errors (and any
//! panic caught at this boundary) increment [`error_count`] — the C layer's
//! `hpm_error_count` — and print one `hpm ERROR - ...` line on stderr (the
//! first [`MAX_PRINTED_ERRORS`] of them).

use std::cell::UnsafeCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::backend::Scope;
use crate::backend::clock::MonotonicClock;
use crate::backend::getrusage::{Rusage, RusageWho};
use crate::backend::perf::PerfBackend;
use crate::config::env::EnvConfig;
use crate::config::output_plan::{CliOutput, OutputPlan, unique_suffix};
use crate::counting::plan::CountingPlan;
use crate::events::cpu::CpuInfo;
use crate::metrics::MetricContext;
use crate::output::aggregate::Aggregator;
use crate::output::ascii::RenderOptions;
use crate::report::{LocalDateTime, Report, Tool, host_name};
use crate::sections::error::HpmError;
use crate::sections::session::{Session, SessionForkLock};

/// How many error messages are printed; later errors are only counted.
pub const MAX_PRINTED_ERRORS: u64 = 100;

struct Global {
    session: Session,
    task_id: i32,
    prog_name: String,
    config: EnvConfig,
    cpu: CpuInfo,
    started: LocalDateTime,
    notices: Vec<String>,
    errors_at_init: u64,
}

/// The current session. Sessions are leaked (never freed) so that threads
/// racing with `terminate` can never see a dangling pointer.
static CURRENT: AtomicPtr<Global> = AtomicPtr::new(std::ptr::null_mut());
static INIT_LOCK: Mutex<()> = Mutex::new(());
static ERRORS: AtomicU64 = AtomicU64::new(0);
/// The error hook (an `ErrorHook`; null: none), set by one
/// compare-and-swap (no `OnceLock`: a `fork` child must never find it
/// being set by a thread it does not have).
static ERROR_HOOK: AtomicPtr<()> = AtomicPtr::new(std::ptr::null_mut());

/// Called after each counted error with the new total, e.g. by a C layer to
/// keep its `int hpm_error_count` variable current.
pub type ErrorHook = fn(total: u64, error: &HpmError);

/// Installs the error hook (once per process); returns false if one was
/// already installed.
pub fn set_error_hook(hook: ErrorHook) -> bool {
    ERROR_HOOK
        .compare_exchange(
            std::ptr::null_mut(),
            hook as *mut (),
            Ordering::AcqRel,
            Ordering::Acquire,
        )
        .is_ok()
}

/// The locks held by the forking thread across a `fork` (`pthread_atfork`,
/// registered at the first `hpmInit`), so that a child never inherits one
/// held by a thread it does not have: the session's start and end, then
/// the current session's sections and notices (taken, one at a time, under
/// the first).
struct ForkHeld(UnsafeCell<Option<(MutexGuard<'static, ()>, Option<SessionForkLock<'static>>)>>);
// SAFETY: used only by the thread inside `fork` (glibc runs the handlers
// on it, serialised).
unsafe impl Sync for ForkHeld {}
static FORK_HELD: ForkHeld = ForkHeld(UnsafeCell::new(None));

extern "C" fn fork_prepare() {
    let _ = catch_unwind(|| {
        let init = INIT_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let session = current().map(|g| g.session.lock_for_fork());
        // SAFETY: only the forking thread uses it.
        unsafe { *FORK_HELD.0.get() = Some((init, session)) };
    });
}

extern "C" fn fork_release() {
    // SAFETY: only the forking thread uses it.
    let _ = catch_unwind(|| drop(unsafe { (*FORK_HELD.0.get()).take() }));
}

fn register_fork_handlers() {
    static DONE: AtomicBool = AtomicBool::new(false);
    if !DONE.swap(true, Ordering::AcqRel) {
        // SAFETY: plain `extern "C"` functions.
        unsafe { libc::pthread_atfork(Some(fork_prepare), Some(fork_release), Some(fork_release)) };
    }
}

/// Writes `text` to stderr with one `write` per piece (not through
/// `std::io::stderr`, whose lock another thread may hold at a `fork`).
fn to_stderr(text: &str) {
    let mut b = text.as_bytes();
    while !b.is_empty() {
        // SAFETY: a valid buffer.
        let n = unsafe { libc::write(2, b.as_ptr().cast(), b.len()) };
        if n <= 0 {
            if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        b = &b[n as usize..];
    }
}

fn current() -> Option<&'static Global> {
    let p = CURRENT.load(Ordering::Acquire);
    // SAFETY: non-null values stored in CURRENT come from Box::into_raw and
    // are never freed, so the pointee is valid for 'static.
    (!p.is_null()).then(|| unsafe { &*p })
}

/// Number of libhpm errors so far in this process (`hpm_error_count`).
pub fn error_count() -> u64 {
    ERRORS.load(Ordering::Relaxed)
}

/// Counts and prints an error.
pub fn report_error(e: &HpmError) {
    let n = ERRORS.fetch_add(1, Ordering::Relaxed) + 1;
    let hook = ERROR_HOOK.load(Ordering::Acquire);
    if !hook.is_null() {
        // SAFETY: only `ErrorHook` values are stored in ERROR_HOOK.
        let hook = unsafe { std::mem::transmute::<*mut (), ErrorHook>(hook) };
        hook(n, e);
    }
    if n <= MAX_PRINTED_ERRORS {
        let mut text = format!("hpm ERROR - {e}\n");
        if n == MAX_PRINTED_ERRORS {
            text.push_str("hpm ERROR - further errors are counted but not printed\n");
        }
        to_stderr(&text);
    }
}

fn notice(text: &str) {
    to_stderr(&format!("hpm: notice: {text}\n"));
}

fn guard(f: impl FnOnce() -> Result<(), HpmError>) {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => {}
        Ok(Err(e)) => report_error(&e),
        Err(p) => {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".into());
            report_error(&HpmError::Internal(msg));
        }
    }
}

fn with_session(f: impl FnOnce(&Session) -> Result<(), HpmError>) {
    guard(|| match current() {
        Some(g) => f(&g.session),
        None => Err(HpmError::NotInitialized),
    })
}

/// `hpmInit(taskID, progName)`: reads the `HPM_*` environment, runs the
/// distributor, probes the counters (printing one notice if something
/// cannot be counted) and starts the session. `task_id` is deprecated in
/// the guide and only reported.
pub fn init(task_id: i32, prog_name: &str) {
    guard(|| {
        register_fork_handlers();
        let _lock = INIT_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        if current().is_some() {
            return Err(HpmError::AlreadyInitialized);
        }
        let (mut config, warnings) = EnvConfig::from_env();
        let mut notices: Vec<String> = warnings.into_iter().map(|w| w.0).collect();
        notices.extend(config.distribute_event_sets("HPM_AGGREGATE="));
        let cpu = CpuInfo::detect();
        let (selection, w) = config.event_selection(&cpu);
        notices.extend(w);
        let plan = CountingPlan::build(
            &selection,
            Arc::new(PerfBackend::new()),
            Scope::CallingThread,
            &cpu,
        );
        for n in &notices {
            notice(n);
        }
        // The fallback notice: one line here, the reason and remedy once,
        // in the report.
        if let Some(n) = &plan.notice {
            notice(&crate::counting::plan::notice_headline(n));
            notices.push(n.clone());
        }
        let session = Session::with_backend(
            plan,
            Arc::new(MonotonicClock),
            config.num_inst_pts,
            config.exclusive_values,
        );
        session.attach_thread()?;
        let g = Box::new(Global {
            session,
            task_id,
            prog_name: prog_name.to_string(),
            config,
            cpu,
            started: LocalDateTime::now(),
            notices,
            errors_at_init: error_count(),
        });
        CURRENT.store(Box::into_raw(g), Ordering::Release);
        Ok(())
    });
}

/// `hpmStart(instID, label)`; on Linux the same as [`tstart`] (seed §3.5).
pub fn start(id: i32, label: &str) {
    with_session(|s| s.start(id, label));
}

/// `hpmStartx(instID, parID, label)`; on Linux the same as [`tstartx`].
pub fn startx(id: i32, parent: i32, label: &str) {
    with_session(|s| s.startx(id, parent, label));
}

/// `hpmStop(instID)`; on Linux the same as [`tstop`].
pub fn stop(id: i32) {
    with_session(|s| s.stop(id));
}

/// `hpmTstart(instID, label)`: starts a section on the calling thread.
pub fn tstart(id: i32, label: &str) {
    with_session(|s| s.tstart(id, label));
}

/// `hpmTstartx(instID, parID, label)`: `parent` is a section id or one of
/// [`crate::HPM_AUTO_PARENT`], [`crate::HPM_ONLY_EXCLUSIVE`], [`crate::HPM_NO_PARENT`].
pub fn tstartx(id: i32, parent: i32, label: &str) {
    with_session(|s| s.tstartx(id, parent, label));
}

/// `hpmTstop(instID)`.
pub fn tstop(id: i32) {
    with_session(|s| s.tstop(id));
}

/// `hpmTerminate(taskID)`: stops running sections, writes the outputs
/// (`HPM_OUTPUT_NAME` or progName `.hpm`/`.viz`/`.csv`, stdout with
/// `HPM_STDOUT`) and ends the session; a later [`init`] starts a new one.
pub fn terminate(task_id: i32) {
    guard(|| {
        let _lock = INIT_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let Some(g) = current() else {
            return Err(HpmError::NotInitialized);
        };
        CURRENT.store(std::ptr::null_mut(), Ordering::Release);
        let result = g.session.terminate()?;
        let mut notices = g.notices.clone();
        notices.extend(result.notices);
        if task_id != g.task_id {
            notices.push(format!(
                "hpmTerminate task id {task_id} differs from hpmInit's {}",
                g.task_id
            ));
        }
        let mut report = Report {
            tool: Tool::Libhpm,
            program: g.prog_name.clone(),
            host: host_name(),
            pid: std::process::id(),
            rank: g.config.mpi_rank,
            task_id: Some(g.task_id),
            started: g.started,
            wall_s: result.wall_s,
            rusage: Rusage::read(RusageWho::Process),
            backend: g.session.plan().backend.name().to_string(),
            user_space_only: g.session.plan().backend.user_space_only(),
            notices,
            sections: result.sections,
            exit: None,
            error_count: error_count() - g.errors_at_init,
            aggregate: None,
        };
        let aggregator = g.config.aggregate.unwrap_or(Aggregator::Mirror);
        if !aggregator.apply_local(&mut report) {
            return Ok(()); // `single`: only rank 0 prints
        }
        let id = g.config.mpi_rank.unwrap_or_else(std::process::id);
        let suffix = unique_suffix(&report.host, id, &g.started);
        let plan = OutputPlan::resolve(
            Tool::Libhpm,
            &g.config,
            &CliOutput::default(),
            Some(&g.prog_name),
            &suffix,
        );
        let options = RenderOptions {
            print_formula: plan.print_formula,
            metrics: MetricContext::from_config(&g.config, g.cpu.mhz),
        };
        for (path, e) in plan.emit(&report, &options) {
            report_error(&HpmError::Output {
                path,
                message: e.to_string(),
            });
        }
        Ok(())
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fork while another thread holds the session lock (`hpmInit`,
    /// `hpmTerminate`) leaves the child a lock it can take.
    #[test]
    fn a_fork_child_can_take_the_init_lock_a_thread_held() {
        register_fork_handlers();
        let (tx, rx) = std::sync::mpsc::channel();
        let t = std::thread::spawn(move || {
            let g = INIT_LOCK.lock().unwrap_or_else(|e| e.into_inner());
            tx.send(()).unwrap();
            std::thread::sleep(std::time::Duration::from_millis(300));
            drop(g);
        });
        rx.recv().unwrap();
        // SAFETY: the child only takes a lock and leaves with `_exit`.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: plain calls in the child.
            unsafe { libc::alarm(5) };
            drop(INIT_LOCK.lock().unwrap_or_else(|e| e.into_inner()));
            // SAFETY: as above.
            unsafe { libc::_exit(0) };
        }
        let mut status = 0;
        // SAFETY: our child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        t.join().unwrap();
        assert!(
            libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
            "the child could not take the lock (status {status:#x})"
        );
    }
}
