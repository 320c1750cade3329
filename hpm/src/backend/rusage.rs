//! Last-resort backend when perf_event is unusable: `getrusage(2)` fields as
//! counters (CPU times, page faults, context switches).

use std::io;
use std::time::Instant;

use crate::backend::getrusage::{Rusage, RusageWho};
use crate::backend::{
    CounterBackend, CounterGroup, GroupTimes, OpenError, OpenErrorKind, Scope, thread_serial,
};
use crate::events::spec::{EventKind, EventSpec, RusageField};

/// Counts `getrusage(2)` fields; never multiplexed.
#[derive(Debug, Default)]
pub struct RusageBackend;

struct RusageGroup {
    fields: Vec<RusageField>,
    scope: Scope,
    owner: u64,
    opened: Instant,
}

impl CounterBackend for RusageBackend {
    fn name(&self) -> &'static str {
        "getrusage"
    }

    fn open_group(
        &self,
        events: &[EventSpec],
        scope: Scope,
    ) -> Result<Box<dyn CounterGroup>, OpenError> {
        let mut fields = Vec::with_capacity(events.len());
        for e in events {
            match e.kind {
                EventKind::Rusage(f) => fields.push(f),
                _ => {
                    return Err(OpenError {
                        kind: OpenErrorKind::NotSupported,
                        event: e.name.clone(),
                        message: "not a getrusage field".into(),
                    });
                }
            }
        }
        Ok(Box::new(RusageGroup {
            fields,
            scope,
            owner: thread_serial(),
            opened: Instant::now(),
        }))
    }

    fn knows(&self, event: &EventSpec) -> bool {
        matches!(event.kind, EventKind::Rusage(_))
    }
}

fn field(ru: &Rusage, f: RusageField) -> u64 {
    let v = match f {
        RusageField::UserTimeNs => return (ru.user_time_s * 1e9).round() as u64,
        RusageField::SystemTimeNs => return (ru.system_time_s * 1e9).round() as u64,
        RusageField::MinorFaults => ru.minor_faults,
        RusageField::MajorFaults => ru.major_faults,
        RusageField::VoluntarySwitches => ru.voluntary_switches,
        RusageField::InvoluntarySwitches => ru.involuntary_switches,
    };
    v.max(0) as u64
}

impl CounterGroup for RusageGroup {
    fn len(&self) -> usize {
        self.fields.len()
    }

    fn read(&self, values: &mut [u64]) -> io::Result<GroupTimes> {
        if values.len() < self.fields.len() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "value buffer too small",
            ));
        }
        let (a, b) = match self.scope {
            Scope::CallingThread => {
                if thread_serial() != self.owner {
                    return Err(io::Error::other("getrusage cannot read another thread"));
                }
                (Rusage::read(RusageWho::Thread), None)
            }
            Scope::ProcessTree | Scope::Child(_) | Scope::Cpu(_) => (
                Rusage::read(RusageWho::Process),
                Rusage::read(RusageWho::Children),
            ),
        };
        let a = a.ok_or_else(io::Error::last_os_error)?;
        for (v, f) in values.iter_mut().zip(&self.fields) {
            *v = field(&a, *f) + b.as_ref().map_or(0, |b| field(b, *f));
        }
        let t = self.opened.elapsed().as_nanos() as u64;
        Ok(GroupTimes {
            enabled_ns: t,
            running_ns: t,
        })
    }

    fn enable(&mut self) -> io::Result<()> {
        Ok(())
    }

    fn disable(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_thread_cpu_time() {
        let g = RusageBackend
            .open_group(&EventSpec::rusage_events(), Scope::CallingThread)
            .unwrap();
        let mut before = [0u64; 6];
        let mut after = [0u64; 6];
        g.read(&mut before).unwrap();
        let t = Instant::now();
        let mut x = 1u64;
        while t.elapsed().as_millis() < 30 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        g.read(&mut after).unwrap();
        assert!(
            after[0] > before[0],
            "user time must grow: {before:?} {after:?}"
        );
        // another thread cannot read this thread's rusage
        std::thread::scope(|s| {
            s.spawn(|| assert!(g.read(&mut [0u64; 6]).is_err()));
        });
        assert!(
            RusageBackend
                .open_group(
                    &[
                        EventSpec::parse("cycles", &crate::events::cpu::CpuInfo::parse_cpuinfo(""))
                            .unwrap()
                    ],
                    Scope::CallingThread
                )
                .is_err()
        );
    }
}
