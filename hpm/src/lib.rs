//! # hpm — HPM Toolkit-style performance counters on Linux perf_event
//!
//! A Rust rebuild of IBM's HPM Toolkit (`hpmcount`, `libhpm`) on
//! `perf_event_open(2)`: event sets, multiplexing with scaling, derived
//! metrics, inclusive and exclusive values of instrumented sections,
//! ASCII/XML/CSV reports and aggregation across MPI tasks without MPI.
//!
//! Where hardware events are not available (VMs without a virtual PMU,
//! `perf_event_paranoid`, containers) the crate falls back to software
//! events and then to `getrusage(2)`, printing one notice with the reason
//! and the remedy; it never fails the measured program.
//!
//! ## Layout, in dependency order
//!
//! Each module uses only the modules above it in this list (checked by
//! `tests/layering.rs`):
//!
//! 1. [`events`] — what can be counted: the CPU, one event (perf programming,
//!    role in metrics), the event sets of `HPM_EVENT_SET`.
//! 2. [`metrics`] — derived metrics (MIPS, IPC, MFlop/s, latency estimates)
//!    from event values.
//! 3. [`backend`] — where the numbers come from: the counter backend traits,
//!    `perf_event`, `getrusage`, the fake backend for tests, the wall clock.
//! 4. [`counting`] — the counting plan (probing, fallback, one notice), a
//!    plan's groups on one thread with snapshots and accumulators, and the
//!    per-routine group of a profiler.
//! 5. [`report`] — the measured data of one task, independent of the format.
//! 6. [`sections`] — what is measured: libhpm sessions of instrumented
//!    sections (inclusive/exclusive values, interval arithmetic, API errors)
//!    and `hpmcount`'s whole program, `hpmstat`'s system-wide counting.
//! 7. [`output`] — reports as ASCII, XML and CSV (and CSV read back), and
//!    the aggregators, the `-l`/`-c` listings.
//! 8. [`config`] — the `HPM_*` environment and the output plan resolved from
//!    it and `hpmcount`'s options.
//! 9. [`libhpm`] — the process-wide C-shaped API that wires them all.
//!
//! The most used types are re-exported at the root. The flat module paths of
//! earlier versions (`hpm::derived_metric`, `hpm::session`,
//! `hpm::counter_backend`, ...) still resolve, as hidden aliases of the
//! modules above.
//!
//! ## libhpm (seed §3)
//!
//! The functions of [`libhpm`] map one-to-one to the C API, for a thin ABI
//! layer (`hpmInit` → [`libhpm::init`], `hpmStart` → [`libhpm::start`],
//! `hpmStartx` → [`libhpm::startx`], `hpmStop` → [`libhpm::stop`],
//! `hpmTstart`/`hpmTstartx`/`hpmTstop` → [`libhpm::tstart`]/[`libhpm::tstartx`]/[`libhpm::tstop`],
//! `hpmTerminate` → [`libhpm::terminate`], `hpm_error_count` →
//! [`libhpm::error_count`]). They never panic; errors are counted and printed.
//!
//! ```no_run
//! hpm::libhpm::init(0, "my program");
//! hpm::libhpm::start(1, "outer call");
//! // do_work();
//! hpm::libhpm::start(2, "computing meaning of life");
//! // do_more_work();
//! hpm::libhpm::stop(2);
//! hpm::libhpm::stop(1);
//! hpm::libhpm::terminate(0); // writes my program.hpm and my program.viz
//! assert_eq!(hpm::libhpm::error_count(), 0);
//! ```
//!
//! [`Session`] is the same engine as an object, e.g. with the
//! [`FakeBackend`] in tests.
//!
//! ## Per-routine counters for a profiler
//!
//! [`ThreadCounterGroup`] is one counter group on the calling thread, read
//! with at most one `read(2)` — or `rdpmc` for hardware-only groups where the
//! kernel allows it — into a caller-provided slice, with no allocation and no
//! lock:
//!
//! ```no_run
//! use hpm::{MetricContext, ThreadCounterGroup};
//!
//! // Once per process: probe, fall back, print the notices.
//! let (plan, notices) = ThreadCounterGroup::plan(Some("cycles,instructions"));
//! for n in &notices {
//!     eprintln!("notice: {n}");
//! }
//! // On every thread:
//! let group = ThreadCounterGroup::from_plan(&plan).expect("open counters");
//! let mut at_entry = vec![0u64; group.len()];
//! let mut at_exit = vec![0u64; group.len()];
//! let t_entry = group.read(&mut at_entry).unwrap(); // routine entry
//! // ... routine body ...
//! let t_exit = group.read(&mut at_exit).unwrap(); // routine exit
//! let deltas: Vec<u64> = at_entry
//!     .iter()
//!     .zip(&at_exit)
//!     .map(|(a, b)| ThreadCounterGroup::scale_delta(b - a, t_entry, t_exit))
//!     .collect();
//! for m in group.derived(&deltas, 0.001, &MetricContext::default()) {
//!     println!("{:<30} {:>12.3} {}", m.name, m.value, m.unit);
//! }
//! println!("events: {:?}", group.event_names());
//! ```
//!
//! ## hpmcount
//!
//! The `hpmcount` binary counts a whole program (with inheritance), prints
//! wall time, getrusage, counters and derived metrics, writes the files and
//! exits with the program's status; `hpmcount merge` combines per-task CSV
//! files with an aggregator. See the crate README.

// In dependency order (the list above); the blank lines keep rustfmt from
// sorting them.
pub mod events;

pub mod metrics;

pub mod backend;

pub mod counting;

pub mod report;

pub mod sections;

pub mod output;

pub mod config;

pub mod libhpm;

pub use backend::clock::{Clock, MonotonicClock};
pub use backend::fake::FakeBackend;
pub use backend::getrusage::{Rusage, RusageWho};
pub use backend::perf::PerfBackend;
pub use backend::rusage::RusageBackend;
pub use backend::{CounterBackend, CounterGroup, GroupTimes, OpenError, OpenErrorKind, Scope};
pub use config::env::{ConfigWarning, EnvConfig};
pub use config::output_plan::{CliOutput, OutputPlan};
pub use counting::plan::{CounterLayout, CountingPlan};
pub use counting::routine::{DEFAULT_ROUTINE_EVENTS, ThreadCounterGroup};
pub use events::cpu::{CpuInfo, CpuVendor};
pub use events::set::{EventSelection, EventSet};
pub use events::spec::{EventKind, EventRole, EventSpec};
pub use metrics::{DerivedMetric, MetricContext, compute_metrics};
pub use output::aggregate::Aggregator;
pub use output::ascii::{AsciiWriter, RenderOptions};
pub use output::csv::CsvCodec;
pub use output::viz::VizWriter;
pub use report::{ExitInfo, Measurement, Report, SectionReport, Tool};
pub use sections::error::HpmError;
pub use sections::intervals::IntervalSet;
pub use sections::session::{
    HPM_AUTO_PARENT, HPM_NO_PARENT, HPM_ONLY_EXCLUSIVE, Session, SessionResult,
};

// The flat module paths of earlier versions, kept for existing users.
#[doc(hidden)]
pub use backend as counter_backend;
#[doc(hidden)]
pub use backend::clock;
#[doc(hidden)]
pub use backend::fake as fake_backend;
#[doc(hidden)]
pub use backend::getrusage as rusage;
#[doc(hidden)]
pub use backend::perf as perf_backend;
#[doc(hidden)]
pub use backend::rusage as rusage_backend;
#[doc(hidden)]
pub use config::output_plan;
#[doc(hidden)]
pub use counting::plan as counting_plan;
#[doc(hidden)]
pub use counting::routine as thread_counter_group;
#[doc(hidden)]
pub use counting::thread as thread_counters;
#[doc(hidden)]
pub use events::cpu as cpu_info;
#[doc(hidden)]
pub use events::set as event_set;
#[doc(hidden)]
pub use events::spec as event_spec;
#[doc(hidden)]
pub use metrics as derived_metric;
#[doc(hidden)]
pub use output::aggregate as aggregator;
#[doc(hidden)]
pub use output::ascii as ascii_writer;
#[doc(hidden)]
pub use output::csv as csv_codec;
#[doc(hidden)]
pub use output::viz as viz_writer;
#[doc(hidden)]
pub use sections::error as hpm_error;
#[doc(hidden)]
pub use sections::intervals as interval_set;
#[doc(hidden)]
pub use sections::program as program_counter;
#[doc(hidden)]
pub use sections::session;

/// `hpm::env_config`: the module [`config::env`], plus [`metrics::Latencies`]
/// (the type of [`EnvConfig::latencies`], which lives with the metrics).
#[doc(hidden)]
pub mod env_config {
    pub use crate::config::env::*;
    pub use crate::metrics::Latencies;
}
