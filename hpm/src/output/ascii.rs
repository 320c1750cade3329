//! The ASCII report (`<name>.hpm` and stdout, seed §3.9): header, the
//! getrusage block, and per section the counters, the multiplexing scaling,
//! the derived metrics (with `-x`/`HPM_PRINT_FORMULA` their formulas),
//! exclusive values and the measurement overhead.

use std::fmt::Write;

use crate::metrics::{MetricContext, compute_metrics};
use crate::report::{ExitInfo, Measurement, Report, SectionReport, Tool};

/// Options shared by the writers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RenderOptions {
    /// Print each derived metric's formula (`-x`, `HPM_PRINT_FORMULA`).
    pub print_formula: bool,
    /// Weight, latencies and clock rate for the derived metrics.
    pub metrics: MetricContext,
}

/// Formats a float for the reports; NaN and infinities print as `n/a`.
pub fn fmt_value(v: f64, decimals: usize) -> String {
    if v.is_finite() {
        format!("{v:.decimals$}")
    } else {
        "n/a".to_string()
    }
}

/// Renders reports as text.
#[derive(Clone, Debug, Default)]
pub struct AsciiWriter {
    /// Rendering options.
    pub options: RenderOptions,
}

impl AsciiWriter {
    /// A writer with `options`.
    pub fn new(options: RenderOptions) -> AsciiWriter {
        AsciiWriter { options }
    }

    /// The full report.
    pub fn render(&self, r: &Report) -> String {
        let mut o = String::new();
        let version = env!("CARGO_PKG_VERSION");
        let _ = writeln!(o, "{} (hpm-rs {version}) summary", r.tool.name());
        let _ = writeln!(o);
        match r.tool {
            Tool::Hpmcount => {
                let _ = writeln!(o, " Command: {}", r.program);
            }
            Tool::Hpmstat => {
                let _ = writeln!(o, " System-wide, during: {}", r.program);
            }
            Tool::Libhpm => {
                let _ = writeln!(o, " Program: {}", r.program);
            }
        }
        if let Some(a) = &r.aggregate {
            let _ = writeln!(o, " Aggregate: {a}");
        }
        let rank = r.rank.map_or("-".to_string(), |x| x.to_string());
        let pid = if r.pid == 0 {
            "-".to_string()
        } else {
            r.pid.to_string()
        };
        let _ = write!(o, " Host: {}   PID: {pid}   MPI rank: {rank}", r.host);
        if let Some(t) = r.task_id {
            let _ = write!(o, "   Task ID: {t}");
        }
        let _ = writeln!(o);
        let _ = writeln!(o, " Date: {}", r.started.iso());
        match r.exit {
            Some(ExitInfo::Code(c)) => {
                let _ = writeln!(o, " Exit status: {c}");
            }
            Some(ExitInfo::Signal(s)) => {
                let _ = writeln!(o, " Exit status: killed by signal {s} (status {})", 128 + s);
            }
            None => {}
        }
        let what = match r.tool {
            Tool::Hpmcount => "Execution time (wall clock time)",
            Tool::Hpmstat => "Counting time (wall clock time)",
            Tool::Libhpm => "Total execution time of instrumented code (wall time)",
        };
        let _ = writeln!(o, " {what}: {:.6} seconds", r.wall_s);
        let _ = writeln!(
            o,
            " Counter backend: {}{}",
            r.backend,
            if r.user_space_only {
                " (user-space counting only)"
            } else {
                ""
            }
        );
        if r.tool == Tool::Libhpm {
            let _ = writeln!(o, " Error count: {}", r.error_count);
        }
        for n in &r.notices {
            let _ = writeln!(o, " Notice: {n}");
        }
        if let Some(ru) = &r.rusage {
            let _ = writeln!(o);
            let _ = writeln!(o, " ######## Resource Usage Statistics ########");
            let _ = writeln!(o);
            for (label, value, unit) in ru.lines() {
                let v = value.unwrap_or_else(|| "n/a".into());
                let line = format!(" {label:<45}: {v:>14} {unit}");
                let _ = writeln!(o, "{}", line.trim_end());
            }
            let _ = writeln!(o);
            let _ = writeln!(o, " #######  End of Resource Statistics  ########");
        }
        for s in &r.sections {
            let _ = writeln!(o);
            match r.tool {
                Tool::Hpmcount | Tool::Hpmstat => {
                    self.measurement(&mut o, &s.inclusive, " ", "Counting duration")
                }
                Tool::Libhpm => self.section(&mut o, s),
            }
        }
        o
    }

    fn section(&self, o: &mut String, s: &SectionReport) {
        let _ = writeln!(
            o,
            " Instrumented section: {} - Label: {} - thread: {}",
            s.id, s.label, s.tid
        );
        let _ = writeln!(o, "   Count: {}", s.calls);
        let parent = s.parent.map_or("none".to_string(), |p| p.to_string());
        let _ = writeln!(o, "   Parent: {parent}");
        let _ = writeln!(o, "   Measurement overhead: {:.6} seconds", s.overhead_s);
        if s.overhead_warning() {
            let _ = writeln!(
                o,
                "   WARNING: the measurement overhead ({:.6} s) exceeds 20% of the wall clock time ({:.6} s)",
                s.overhead_s, s.inclusive.wall_s
            );
        }
        self.measurement(o, &s.inclusive, "   ", "Wall clock time");
        if let Some(ex) = &s.exclusive {
            let _ = writeln!(o);
            let _ = writeln!(o, "   Exclusive values (time when no child section runs):");
            self.measurement(o, ex, "   ", "Exclusive duration");
        }
    }

    fn measurement(&self, o: &mut String, m: &Measurement, indent: &str, duration: &str) {
        let _ = writeln!(o, "{indent}{duration}: {:.6} seconds", m.wall_s);
        if let Some(u) = m.user_s {
            let _ = writeln!(o, "{indent}CPU time (user_time): {u:.6} seconds");
        }
        for set in &m.sets {
            let _ = writeln!(o);
            let _ = writeln!(o, "{indent}Set: {}", set.name);
            for g in &set.groups {
                let note = match g.running_fraction() {
                    Some(f) if f < 0.9999 => {
                        format!("  (scaled: counted {:.1}% of the time)", 100.0 * f)
                    }
                    Some(_) => String::new(),
                    None => "  (group never enabled)".to_string(),
                };
                for c in &g.counters {
                    let v = c
                        .value
                        .map_or("<not counted>".to_string(), |v| format!("{v:.0}"));
                    let _ = writeln!(o, "{indent}  {:<42}: {v:>18}{note}", c.name);
                }
            }
            let metrics = compute_metrics(&m.metric_input(set), &self.options.metrics);
            if !metrics.is_empty() {
                let _ = writeln!(o);
            }
            for d in metrics {
                let line = format!(
                    "{indent}  {:<42}: {:>18} {}",
                    d.name,
                    fmt_value(d.value, 3),
                    d.unit
                );
                let _ = writeln!(o, "{}", line.trim_end());
                if self.options.print_formula {
                    let _ = writeln!(o, "{indent}      = {}", d.formula);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_formatting() {
        assert_eq!(fmt_value(1.23456, 3), "1.235");
        assert_eq!(fmt_value(f64::NAN, 3), "n/a");
        assert_eq!(fmt_value(f64::INFINITY, 1), "n/a");
    }
}
