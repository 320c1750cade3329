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
//!
//! ## Modules

pub mod aggregator;
pub mod ascii_writer;
pub mod clock;
pub mod counter_backend;
pub mod counting_plan;
pub mod cpu_info;
pub mod csv_codec;
pub mod derived_metric;
pub mod env_config;
pub mod event_set;
pub mod event_spec;
pub mod fake_backend;
pub mod hpm_error;
pub mod interval_set;
pub mod libhpm;
pub mod output_plan;
pub mod perf_backend;
pub mod program_counter;
pub mod report;
pub mod rusage;
pub mod rusage_backend;
pub mod session;
pub mod thread_counter_group;
pub mod thread_counters;
pub mod viz_writer;

pub use aggregator::Aggregator;
pub use ascii_writer::{AsciiWriter, RenderOptions};
pub use clock::{Clock, MonotonicClock};
pub use counter_backend::{
    CounterBackend, CounterGroup, GroupTimes, OpenError, OpenErrorKind, Scope,
};
pub use counting_plan::{CounterLayout, CountingPlan};
pub use cpu_info::{CpuInfo, CpuVendor};
pub use csv_codec::CsvCodec;
pub use derived_metric::{DerivedMetric, MetricContext, compute_metrics};
pub use env_config::{ConfigWarning, EnvConfig};
pub use event_set::{EventSelection, EventSet};
pub use event_spec::{EventKind, EventRole, EventSpec};
pub use fake_backend::FakeBackend;
pub use hpm_error::HpmError;
pub use interval_set::IntervalSet;
pub use output_plan::{CliOutput, OutputPlan};
pub use perf_backend::PerfBackend;
pub use report::{ExitInfo, Measurement, Report, SectionReport, Tool};
pub use rusage::{Rusage, RusageWho};
pub use rusage_backend::RusageBackend;
pub use session::{HPM_AUTO_PARENT, HPM_NO_PARENT, HPM_ONLY_EXCLUSIVE, Session, SessionResult};
pub use thread_counter_group::{DEFAULT_ROUTINE_EVENTS, ThreadCounterGroup};
pub use viz_writer::VizWriter;
