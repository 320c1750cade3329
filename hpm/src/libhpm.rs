//! The process-wide libhpm API, one function per C entry point
//! (`hpmInit` → [`init`], `hpmStart` → [`start`], ...), for a thin C/Fortran
//! ABI layer to wrap one-to-one.
//!
//! None of these functions panics or stops the program: errors (and any
//! panic caught at this boundary) increment [`error_count`] — the C layer's
//! `hpm_error_count` — and print one `hpm ERROR - ...` line on stderr (the
//! first [`MAX_PRINTED_ERRORS`] of them).

use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

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
use crate::sections::session::Session;

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
static ERROR_HOOK: OnceLock<ErrorHook> = OnceLock::new();

/// Called after each counted error with the new total, e.g. by a C layer to
/// keep its `int hpm_error_count` variable current.
pub type ErrorHook = fn(total: u64, error: &HpmError);

/// Installs the error hook (once per process); returns false if one was
/// already installed.
pub fn set_error_hook(hook: ErrorHook) -> bool {
    ERROR_HOOK.set(hook).is_ok()
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
    if let Some(hook) = ERROR_HOOK.get() {
        hook(n, e);
    }
    if n <= MAX_PRINTED_ERRORS {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "hpm ERROR - {e}");
        if n == MAX_PRINTED_ERRORS {
            let _ = writeln!(
                err,
                "hpm ERROR - further errors are counted but not printed"
            );
        }
    }
}

fn notice(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "hpm: notice: {text}");
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
