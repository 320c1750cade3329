//! A deterministic backend and clock for tests of everything above the
//! counters (derived metrics, exclusive values, reports, fallback notices).
//!
//! Every event counts at a fixed rate per nanosecond of the shared fake clock
//! (plus manual increments), so expected values are easy to compute. Events
//! can be made unsupported or denied, and groups can be made to run only a
//! fraction of the time to exercise multiplexing scaling.

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use crate::backend::clock::Clock;
use crate::backend::{CounterBackend, CounterGroup, GroupTimes, OpenError, OpenErrorKind, Scope};
use crate::events::spec::{EventKind, EventSpec};

#[derive(Default)]
struct Config {
    rates: HashMap<String, f64>,
    offsets: HashMap<String, u64>,
    failures: Vec<(Failure, OpenErrorKind)>,
    running_fraction: Option<f64>,
}

#[derive(Clone, PartialEq)]
enum Failure {
    Named(String),
    AllHardware,
    Everything,
}

#[derive(Default)]
struct State {
    now_ns: AtomicU64,
    reads: AtomicU64,
    config: Mutex<Config>,
}

/// The fake backend; clones share state (clock, rates, failures).
#[derive(Clone, Default)]
pub struct FakeBackend {
    state: Arc<State>,
}

impl FakeBackend {
    /// All events supported, every event counting 1 per ns unless set otherwise.
    pub fn new() -> FakeBackend {
        FakeBackend::default()
    }

    fn config(&self) -> std::sync::MutexGuard<'_, Config> {
        self.state.config.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sets `event` to count `per_ns` per nanosecond of fake time.
    pub fn set_rate(&self, event: &str, per_ns: f64) -> &Self {
        self.config().rates.insert(event.to_string(), per_ns);
        self
    }

    /// Adds `amount` to `event` right now.
    pub fn bump(&self, event: &str, amount: u64) -> &Self {
        *self.config().offsets.entry(event.to_string()).or_default() += amount;
        self
    }

    /// Makes opening `event` fail with `kind`.
    pub fn fail_event(&self, event: &str, kind: OpenErrorKind) -> &Self {
        self.config()
            .failures
            .push((Failure::Named(event.to_string()), kind));
        self
    }

    /// Makes every hardware event fail with `kind` (a VM: `NotSupported`;
    /// perf_event_paranoid: `Denied`).
    pub fn fail_hardware(&self, kind: OpenErrorKind) -> &Self {
        self.config().failures.push((Failure::AllHardware, kind));
        self
    }

    /// Makes every event fail with `kind` (perf_event_open unusable).
    pub fn fail_everything(&self, kind: OpenErrorKind) -> &Self {
        self.config().failures.push((Failure::Everything, kind));
        self
    }

    /// Groups count only this fraction of the time (multiplexing).
    pub fn set_running_fraction(&self, fraction: f64) -> &Self {
        self.config().running_fraction = Some(fraction);
        self
    }

    /// Advances the fake clock.
    pub fn advance_ns(&self, ns: u64) {
        self.state.now_ns.fetch_add(ns, Ordering::SeqCst);
    }

    /// Sets the fake clock.
    pub fn set_now_ns(&self, ns: u64) {
        self.state.now_ns.store(ns, Ordering::SeqCst);
    }

    /// Number of group reads so far.
    pub fn reads(&self) -> u64 {
        self.state.reads.load(Ordering::SeqCst)
    }

    /// The clock of this backend, for [`crate::Session::with_backend`].
    pub fn clock(&self) -> Arc<dyn Clock> {
        Arc::new(self.clone())
    }
}

impl Clock for FakeBackend {
    fn now_ns(&self) -> u64 {
        self.state.now_ns.load(Ordering::SeqCst)
    }
}

struct FakeGroup {
    backend: FakeBackend,
    names: Vec<String>,
    opened_ns: u64,
    enabled: bool,
}

impl CounterBackend for FakeBackend {
    fn name(&self) -> &'static str {
        "fake"
    }

    fn open_group(
        &self,
        events: &[EventSpec],
        scope: Scope,
    ) -> Result<Box<dyn CounterGroup>, OpenError> {
        {
            let cfg = self.config();
            for e in events {
                for (f, kind) in &cfg.failures {
                    let hit = match f {
                        Failure::Named(n) => *n == e.name,
                        Failure::AllHardware => e.kind.is_hardware(),
                        Failure::Everything => true,
                    };
                    if hit {
                        let message = match kind {
                            OpenErrorKind::NotSupported => "No such file or directory (os error 2)",
                            OpenErrorKind::Denied => "Permission denied (os error 13)",
                            OpenErrorKind::Unavailable => "Function not implemented (os error 38)",
                            OpenErrorKind::TooManyFiles => "Too many open files (os error 24)",
                            OpenErrorKind::Other => "Input/output error (os error 5)",
                        };
                        return Err(OpenError {
                            kind: *kind,
                            event: e.name.clone(),
                            message: message.into(),
                        });
                    }
                }
            }
        }
        Ok(Box::new(FakeGroup {
            backend: self.clone(),
            names: events.iter().map(|e| e.name.clone()).collect(),
            opened_ns: self.now_ns(),
            // No exec here: a Child group counts from its opening.
            enabled: !matches!(scope, Scope::ProcessTree | Scope::Cpu(_)),
        }))
    }

    fn knows(&self, event: &EventSpec) -> bool {
        !matches!(event.kind, EventKind::Rusage(_))
    }
}

impl CounterGroup for FakeGroup {
    fn len(&self) -> usize {
        self.names.len()
    }

    fn read(&self, values: &mut [u64]) -> io::Result<GroupTimes> {
        if values.len() < self.names.len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "value buffer too small",
            ));
        }
        self.backend.state.reads.fetch_add(1, Ordering::SeqCst);
        let now = self.backend.now_ns();
        let cfg = self.backend.config();
        let enabled = if self.enabled {
            now.saturating_sub(self.opened_ns)
        } else {
            0
        };
        let fraction = cfg.running_fraction.unwrap_or(1.0);
        for (v, name) in values.iter_mut().zip(&self.names) {
            let rate = cfg.rates.get(name).copied().unwrap_or(1.0);
            let offset = cfg.offsets.get(name).copied().unwrap_or(0);
            *v = ((rate * now as f64 + offset as f64) * fraction).round() as u64;
        }
        Ok(GroupTimes {
            enabled_ns: enabled,
            running_ns: (enabled as f64 * fraction).round() as u64,
        })
    }

    fn enable(&mut self) -> io::Result<()> {
        self.enabled = true;
        Ok(())
    }

    fn disable(&mut self) -> io::Result<()> {
        self.enabled = false;
        Ok(())
    }
}
