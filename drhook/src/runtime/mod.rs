//! Start-up: reads the configuration, builds the process state
//! ([`crate::setup`]) and wires every subsystem — the calling tree's hooks,
//! per-routine metrics, the profile at exit (which measures the overhead), the
//! signal handlers. The only module that knows them all; the hot path
//! (`engine`) reaches it only on its cold first-call path.

mod fork;

#[cfg(feature = "tracing")]
pub(crate) use fork::ForkHeld;
#[cfg(all(test, feature = "tracing"))]
pub(crate) use fork::assert_child_can_take;
pub use fork::hold_across_fork;

use std::sync::atomic::{AtomicPtr, Ordering};

use crate::config::process::{command_name, decide};
use crate::config::{ClockChoice, Config, env};
use crate::setup::{ENGINE, Engine, MODE};
use crate::sys::clock::{self, ClockPair, WallSource};
use crate::sys::sysinfo;
use crate::tree::bits;
use crate::tree::overhead::Measured;

/// The mode word, initialising the engine on first use.
#[inline]
pub(crate) fn mode() -> u32 {
    let m = MODE.load(Ordering::Relaxed);
    if m & bits::UNINIT == 0 { m } else { init() }
}

/// Whether Dr.Hook is on (reads the environment on first use).
#[inline]
pub fn is_enabled() -> bool {
    mode() != 0
}

/// The engine state, once initialised and on.
pub(crate) fn engine() -> Option<&'static Engine> {
    if mode() == 0 { None } else { ENGINE.get() }
}

#[cold]
#[inline(never)]
fn init() -> u32 {
    let e = ENGINE.get_or_init(|| crate::sys::own::own_work(start));
    MODE.store(e.mode, Ordering::Release);
    start_gpu(e);
    start_sampling(e);
    start_dump(e);
    e.mode
}

/// `DR_HOOK_OPT=sample`: the sampler starts once the engine is up.
fn start_sampling(e: &Engine) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    if e.mode == 0 || !e.config.options.sample {
        return;
    }
    ONCE.call_once(|| {
        crate::sample::set_foreign_handler(crate::crash::signals::call_program);
        let r = crate::sys::own::own_work(|| crate::sample::start(e.config.sample_hz));
        if e.config.silent {
            return;
        }
        match r {
            Ok(sig) => crate::diag!(
                "drhook_init",
                "sample: {} Hz of each thread's CPU time, signal {sig}",
                e.config.sample_hz
            ),
            Err(why) => crate::diag!(
                "drhook_init",
                "Warning - DR_HOOK_OPT=sample: {why}; no sampled profile"
            ),
        }
    });
}

/// Per-thread set-up at a thread's first instrumented call.
fn on_new_thread() {
    crate::crash::signals::on_new_thread();
    if let Some(e) = ENGINE.get() {
        crate::crash::timed_kill::arm_for_current_thread(&e.config.lines.timed_kill);
    }
    crate::sample::on_new_thread();
}

/// The end of a thread's tree.
fn on_thread_end() {
    crate::sample::on_thread_end();
    crate::profile::ended::retire_current();
}

/// The dump signal's handler and the hang watchdog (`crash::dump`), once,
/// when Dr.Hook is on.
fn start_dump(e: &Engine) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    if e.mode == 0 {
        return;
    }
    ONCE.call_once(|| {
        crate::sys::own::own_work(|| {
            crate::crash::dump::install();
            crate::crash::dump::hang::start();
        })
    });
}

/// `DR_HOOK_OPT=gpu`: the GPU backend starts once the engine is up (its
/// library may start threads, which enter the engine).
fn start_gpu(e: &Engine) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    if e.mode == 0 || !e.config.options.gpu {
        return;
    }
    ONCE.call_once(|| {
        let r = crate::sys::own::own_work(crate::gpu::start);
        if e.config.silent {
            return;
        }
        match r {
            Ok(b) => crate::diag!("drhook_init", "gpu: GPU time per region through {b}"),
            Err(why) => crate::diag!(
                "drhook_init",
                "Warning - DR_HOOK_OPT=gpu: {why}; no GPU profile"
            ),
        }
    });
}

/// The engine, built from the environment (the engine's own work: what it
/// allocates is not the program's).
fn start() -> Engine {
    let _starting = fork::starting();
    // Off, no other variable is read: every process the preload
    // library enters starts the engine, most of them with Dr.Hook off.
    if crate::config::parse_switch(env::process_env(env::DR_HOOK).as_deref()) {
        let snapshot = env::Snapshot::take();
        build(Config::from_os_lookup(&|name| snapshot.get(name)))
    } else {
        build(Config::from_lookup(&|_| None))
    }
}

/// Initialises the engine from `lookup` instead of the environment; false
/// (and nothing changed) if it was already initialised. See
/// [`crate::Settings`].
pub(crate) fn init_with(lookup: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> bool {
    let mut ours = false;
    let e = ENGINE.get_or_init(|| {
        let _starting = fork::starting();
        ours = true;
        crate::sys::own::own_work(|| build(Config::from_os_lookup(lookup)))
    });
    MODE.store(e.mode, Ordering::Release);
    start_gpu(e);
    start_sampling(e);
    start_dump(e);
    ours
}

/// Connects the calling tree to the subsystems above it: the tree calls
/// them through these hooks, so it depends on none of them.
fn wire(config: &Config) {
    crate::tree::site::set_case_insensitive(config.options.trim);
    crate::tree::mismatch::set_default_handler(crate::crash::mismatch::default_handler);
    crate::tree::thread::set_new_thread_hook(on_new_thread);
    // A thread's tree ends with the thread (a thread-specific key's
    // destructor, `sys::exit_key`), kept in compact form for the profile.
    crate::tree::thread::set_thread_end_hook(on_thread_end);
    crate::metrics::watch::set_checker(crate::crash::watch::check_boundary);
    crate::crash::watch::set_enabler(enable_watch_checks);
}

/// Makes every enter and exit call the stampers (the watch-point check):
/// sets the `METRICS` bit of the mode word, once a watch point is set.
/// Nothing when Dr.Hook is off or not initialised (a watch point then
/// watches nothing, as in the reference).
fn enable_watch_checks() {
    // The watch checks print: they run behind the panic guard
    // (`SLOW_STAMPS`), also when `METRICS` was on already (memprof).
    let both = bits::METRICS | bits::SLOW_STAMPS;
    let added = MODE.fetch_update(Ordering::AcqRel, Ordering::Acquire, |m| {
        (m != 0 && m & bits::UNINIT == 0 && m & both != both).then_some(m | both)
    });
    if added.is_ok() {
        // The exits and the foreign enters read the mode of the thread's
        // tree: every tree gains the bits too.
        crate::tree::thread::add_mode_bits(both);
    }
}

/// Decides this process's place among the processes of a run (which
/// profile name it writes, what it passes to its children). Returns
/// whether it is followed at all (`DRHOOK_FOLLOW`) and whether it is the
/// very first process of the run (only that one echoes the options and the
/// signals it catches: a run of hundreds of processes, or a chain of
/// `exec`s, prints them once).
fn place(config: &Config, program: &str) -> (bool, bool) {
    let command = command_name(program);
    // SAFETY: getpid has no preconditions.
    let pid = unsafe { libc::getpid() } as u32;
    let rank_task = config.launcher_rank.then_some(config.task.myproc);
    let p = decide(config.tree, pid, rank_task, &command);
    crate::setup::set_main(p.main);
    crate::setup::set_marker(p.marker);
    (
        p.root || config.follow.follows(&command),
        config.tree.is_none(),
    )
}

fn build(config: Config) -> Engine {
    wire(&config);
    let start_ns = clock::monotonic_ns();
    // Off, nothing more is read or decided: every process the preload
    // library enters starts the engine, most with Dr.Hook off.
    let program = if config.enabled {
        sysinfo::program_name()
    } else {
        String::new()
    };
    let (followed, first) = if config.enabled {
        crate::diag::set_label(config.task.myproc, start_ns);
        place(&config, &program)
    } else {
        (false, false)
    };
    let wall_source = match config.clock {
        ClockChoice::Auto if clock::tsc_is_invariant() => WallSource::Tsc,
        _ => WallSource::Monotonic,
    };
    let o = &config.options;
    let mut mode = 0;
    if config.enabled && followed {
        mode = bits::ON;
        if o.walltime {
            mode |= bits::WALL;
        }
        if o.cputime {
            mode |= bits::CPU;
        }
        if !o.nosize {
            mode |= bits::SIZES;
        }
        if o.walltime && wall_source == WallSource::Monotonic {
            mode |= bits::WALL_MONO;
        }
        if config.strict_regions {
            mode |= bits::STRICT;
        }
        // The ranges' filter reads each node's wall time.
        if config.ranges.any() {
            mode |= bits::WALL;
            if wall_source == WallSource::Monotonic {
                mode |= bits::WALL_MONO;
            }
        }
    }
    // Per-routine metrics, installed before any tree exists.
    let mut counter_notices = Vec::new();
    let mut metrics: Vec<&'static dyn crate::metrics::Metric> = Vec::new();
    if mode != 0 && o.counters {
        counter_notices = crate::metrics::counters::init(config.counter_events.as_deref());
        if let Some(c) = crate::metrics::counters::metric() {
            metrics.push(c);
        }
    }
    if mode != 0 && o.io {
        metrics.push(crate::metrics::io::init());
    }
    if mode != 0 && o.mpi {
        metrics.push(crate::metrics::mpi::init());
    }
    if mode != 0 && o.mem.any() {
        metrics.push(crate::metrics::mem::init(o.mem.paging));
    }
    if mode != 0 && config.ranges.any() {
        let tools = crate::metrics::ranges::available(&config.ranges, config.silent);
        if tools.any() {
            let p = ClockPair::now(wall_source);
            let tps = clock::ticks_per_second(wall_source, p, p);
            metrics.push(crate::metrics::ranges::init(&tools, tps, config.silent));
        }
    }
    if mode != 0 && config.writes_trace() {
        let p = ClockPair::now(wall_source);
        crate::metrics::trace::init(
            config.trace_events,
            wall_source == WallSource::Monotonic,
            clock::ticks_per_second(wall_source, p, p),
            &config.trace_filter,
        );
        metrics.extend(crate::metrics::trace::metric());
    }
    // Stamped from the start: the counters. The watch-point metric is
    // installed whenever Dr.Hook is on (so that every thread has its
    // stamper) but stamped only from the first watch point on
    // (`enable_watch_checks`).
    if metrics.iter().any(|m| m.stamped()) {
        mode |= bits::METRICS;
    }
    if metrics
        .iter()
        .any(|m| m.stamped() && !m.stamps_on_fast_paths())
    {
        mode |= bits::SLOW_STAMPS;
    }
    // DR_HOOK_STACKCHECK / DR_HOOK_HEAPCHECK: the same stampers, from the
    // start.
    if mode != 0 && (config.stackcheck || config.heapcheck) {
        crate::crash::watch::enable_stack_heap(config.stackcheck, config.heapcheck);
        mode |= bits::METRICS | bits::SLOW_STAMPS;
    }
    // DR_HOOK_FUNCENTER/FUNCEXIT/CALLTRACE/TIMELINE: the same stampers,
    // from the start; nothing on enter and exit when none is set.
    if mode != 0 && config.lines.per_call() {
        crate::metrics::watch::LINES.store(true, Ordering::Release);
        mode |= bits::METRICS | bits::SLOW_STAMPS;
        if config.lines.timeline.is_some() {
            // SAFETY: registers a plain `extern "C" fn()`.
            unsafe { libc::atexit(crate::crash::lines::timeline_end) };
        }
        if config.lines.drhack && config.task.myproc == 1 {
            // SAFETY: as above.
            unsafe { libc::atexit(crate::crash::drhack::end) };
        }
    }
    if mode != 0 {
        metrics.push(crate::metrics::watch::metric());
        if config.lines.show_lock {
            crate::crash::watch::show_lock();
        }
    }
    let layout = crate::metrics::install(metrics);
    if let Some(m) = layout.find("memory") {
        crate::metrics::mem::placed(m.offset);
    }
    if let Some(m) = layout.find("io") {
        crate::metrics::io::placed(m.offset);
    }
    if let Some(m) = layout.find("mpi") {
        crate::metrics::mpi::placed(m.offset);
    }
    let start = ClockPair::now(wall_source);
    let engine = Engine {
        mode,
        wall_source,
        start,
        start_unix: clock::realtime().0,
        overhead: Measured::new(),
        program,
        config,
    };
    if mode != 0 {
        if first {
            announce(&engine);
        }
        if !engine.config.silent {
            for n in &counter_notices {
                crate::diag!("drhook_init", "hpmprof: {n}");
            }
            if crate::metrics::layout().find("counters").is_some() {
                let names: Vec<&str> = crate::metrics::counters::events()
                    .iter()
                    .map(|e| e.name.as_str())
                    .collect();
                let read = crate::metrics::counters::read_cost_ns();
                crate::diag!(
                    "drhook_init",
                    "hpmprof: counting per routine: {}; one read of the counters costs {:.2} us, two per instrumented call, {}",
                    names.join(","),
                    read / 1e3,
                    if engine.config.options.self_mode == crate::config::options::SelfMode::Off {
                        "NOT removed from the times (noself): each caller's self time includes its callees' reads"
                    } else {
                        "removed from the profile's times with the instrumentation's cost"
                    }
                );
            }
        }
        crate::profile::write::set_fsync(engine.config.fsync);
        // Whether this task writes is decided at the end (MPI may still
        // tell the rank); whether a profile is asked for at all, now.
        if engine.config.options.profile.is_some()
            || engine.config.options.mem.memprof
            || engine.config.options.io
            || engine.config.writes_trace()
            || engine.config.options.gpu
            || engine.config.options.summary
            || engine.config.options.sample
        {
            crate::profile::write::register_at_exit();
        }
        if crate::profile::name::writes_profile(&engine) {
            crate::profile::write::check_profile_dir(
                &crate::profile::name::profile_path(&engine)
                    .display()
                    .to_string(),
                engine.config.profile_prefix.as_deref(),
            );
        } else if engine.config.writes_trace() {
            crate::profile::write::check_profile_dir(
                &crate::profile::name::trace_path(&engine)
                    .display()
                    .to_string(),
                engine.config.profile_prefix.as_deref(),
            );
        }
        crate::crash::signals::install(&engine.config, first);
    }
    engine
}

/// The configuration read from the environment (reads it on first use,
/// whether Dr.Hook is on or not).
pub(crate) fn config() -> &'static Config {
    mode();
    let c = &ENGINE.get().expect("initialised by mode()").config;
    if c.enabled {
        return c;
    }
    // Off, the engine read only DR_HOOK; the rest when asked for, published
    // by one compare-and-swap (no `OnceLock`: a `fork` child must never find
    // it being initialised by a thread it does not have).
    static FULL: AtomicPtr<Config> = AtomicPtr::new(std::ptr::null_mut());
    let p = FULL.load(Ordering::Acquire);
    if !p.is_null() {
        // SAFETY: published configurations are leaked, never freed.
        return unsafe { &*p };
    }
    let new = Box::into_raw(Box::new(Config::from_os_lookup(&env::process_env_os)));
    match FULL.compare_exchange(
        std::ptr::null_mut(),
        new,
        Ordering::AcqRel,
        Ordering::Acquire,
    ) {
        // SAFETY: leaked, never freed.
        Ok(_) => unsafe { &*new },
        Err(first) => {
            // SAFETY: ours, never published.
            drop(unsafe { Box::from_raw(new) });
            // SAFETY: leaked, never freed.
            unsafe { &*first }
        }
    }
}

fn announce(e: &Engine) {
    let c = &e.config;
    if !c.show_options || c.silent {
        return;
    }
    let f = "drhook_init";
    crate::diag::raw_line(crate::diag::LEGEND);
    // As the reference: the recognised options only when there are some.
    if !c.options.canonical.is_empty() {
        crate::diag!(f, "DR_HOOK_OPT=\"{}\"", c.options.echo());
    }
    for w in &c.warnings {
        crate::diag!(f, "{w}");
    }
    for l in c.ranges.echo() {
        crate::diag!(f, "{l}");
    }
    if crate::profile::name::writes_profile(e) {
        crate::diag!(
            f,
            "DR_HOOK_PROFILE=\"{}\" : profile of proc#{} goes to '{}'",
            c.profile_template,
            c.task.myproc,
            crate::profile::name::profile_path(e).display()
        );
    }
    if c.writes_json() {
        crate::diag!(f, "JSON profile goes to '{}'", c.json_path());
    }
    if c.writes_trace() {
        crate::diag!(
            f,
            "timeline of proc#{} goes to '{}' (at most {} events per thread: DR_HOOK_TRACE_EVENTS)",
            c.task.myproc,
            c.trace_path(),
            c.trace_events
        );
        if !c.trace_filter.is_default() {
            crate::diag!(f, "timeline: {}", c.trace_filter.describe());
        }
    }
    if e.mode & (bits::WALL | bits::CPU) != 0 {
        crate::diag!(
            f,
            "clock={} ; the instrumentation's cost per call pair is measured when the profile is written",
            e.wall_source.name()
        );
    }
}

/// Installs the signal handlers now (the reference's `C_DRHOOK_INIT_SIGNALS`),
/// e.g. after MPI initialisation has installed its own handlers. Works even
/// when Dr.Hook is off (tracebacks then have no calling tree). Returns
/// whether handlers are installed (`DR_HOOK_INIT_SIGNALS=0` prevents it).
pub fn init_signals() -> bool {
    let cfg = config();
    if !crate::sys::linebuf::label_is_set() {
        crate::diag::set_label(cfg.task.myproc, clock::monotonic_ns());
    }
    crate::crash::signals::install(cfg, true)
}

/// Writes this task's profile now (`DR_HOOK_OPT=prof` or `cpuprof`), with
/// the numbers so far — and its JSON companion with `json`, the timeline
/// with `trace`; the write at process exit still happens, with the final
/// numbers. Returns the path of the profile written, or `None` when Dr.Hook
/// is off, no profile was asked for, or `DR_HOOK_PROFILE_PROC` selects
/// another task. A failure is also reported once on stderr, naming the path.
pub fn write_profile() -> Result<Option<std::path::PathBuf>, crate::profile::write::ProfileError> {
    if engine().is_none() {
        return Ok(None);
    }
    crate::profile::write::write_profile()
}

/// Writes this task's profile now and cancels the write at exit, as the
/// reference's `c_drhook_prof_()` does: the file keeps the numbers of this
/// moment. Returns what [`write_profile`] returns.
pub fn write_final_profile()
-> Result<Option<std::path::PathBuf>, crate::profile::write::ProfileError> {
    if engine().is_none() {
        return Ok(None);
    }
    let r = crate::profile::write::write_profile();
    crate::profile::write::cancel_write_at_exit();
    r
}
