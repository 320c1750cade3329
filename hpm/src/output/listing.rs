//! The `-l` and `-c` listings shared by `hpmcount` and `hpmstat`.

use std::fmt::Write as _;

use crate::backend::perf::PerfBackend;
use crate::backend::{CounterBackend, OpenErrorKind, Scope};
use crate::events::cpu::CpuInfo;
use crate::events::set::EventSet;
use crate::events::spec::EventSpec;

/// `writeln!` into a `String` (which cannot fail).
macro_rules! wl {
    ($out:expr, $($arg:tt)*) => {
        let _ = writeln!($out, $($arg)*);
    };
}

/// The `-l` listing: the event sets (groups) and their perf groups.
pub fn groups_text(cpu: &CpuInfo) -> String {
    let mut out = String::new();
    wl!(
        out,
        "Event sets (use -g <number|name>[,...] or HPM_EVENT_SET):"
    );
    for s in EventSet::builtin(cpu) {
        out.push('\n');
        wl!(
            out,
            "  {:>2} {:<8} {}",
            s.number.unwrap_or(0),
            s.name,
            s.description
        );
        for (i, g) in s.groups.iter().enumerate() {
            let names: Vec<&str> = g.iter().map(|e| e.name.as_str()).collect();
            wl!(out, "       group {i}: {}", names.join(", "));
        }
    }
    out.push('\n');
    wl!(
        out,
        "  A comma list of perf event names forms a set named 'user' (see -c)."
    );
    out
}

/// The `-c` listing: every known event and whether this machine can count
/// it with `scope` (the calling thread for `hpmcount`, CPU 0 system-wide
/// for `hpmstat`).
pub fn events_text(cpu: &CpuInfo, scope: Scope) -> String {
    let mut out = String::new();
    let perf = PerfBackend::without_rdpmc();
    wl!(
        out,
        "Events on this machine ({}):",
        if cpu.model_name.is_empty() {
            "unknown CPU"
        } else {
            &cpu.model_name
        }
    );
    out.push('\n');
    wl!(
        out,
        "  {:<44} {:<10} {:<16} description",
        "event",
        "kind",
        "status"
    );
    for e in EventSpec::all_known(cpu) {
        let kind = if e.kind.is_hardware() {
            "hardware"
        } else {
            "software"
        };
        let status = match perf.open_group(std::slice::from_ref(&e), scope) {
            Ok(_) => "countable".to_string(),
            Err(err) => match err.kind {
                OpenErrorKind::NotSupported => "not supported".into(),
                OpenErrorKind::Denied => "denied".into(),
                OpenErrorKind::Unavailable => "no perf_event".into(),
                _ => "error".into(),
            },
        };
        wl!(
            out,
            "  {:<44} {:<10} {:<16} {}",
            e.name,
            kind,
            status,
            e.description
        );
    }
    for e in EventSpec::rusage_events() {
        wl!(
            out,
            "  {:<44} {:<10} {:<16} {}",
            e.name,
            "getrusage",
            "fallback only",
            e.description
        );
    }
    out.push('\n');
    wl!(out, "  Raw PMU events: r<hex config> (e.g. r01c0).");
    out
}
