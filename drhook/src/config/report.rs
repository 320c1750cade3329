//! The end-of-run summary (`DR_HOOK_OPT=summary`) and the timeline's
//! filters and modes (`DR_HOOK_OPT=trace`): their variables, parsed by a
//! pure function like the rest of the configuration.

use super::options::Warning;
use super::{env, parse_int_in};

/// Default `DR_HOOK_SUMMARY_LINES`: call paths shown by the summary.
pub const DEFAULT_SUMMARY_LINES: u64 = 40;

/// Where and how much of the summary is written.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct SummaryConfig {
    /// `DR_HOOK_SUMMARY`: the file the summary goes to (`.<task>` appended
    /// in runs of more than one task); `None`: stderr.
    pub path: Option<String>,
    /// `DR_HOOK_SUMMARY_LINES`: call paths shown at most.
    pub lines: usize,
}

/// What the timeline keeps, and how it is written.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct TraceConfig {
    /// `DR_HOOK_TRACE_MIN_US`: activations shorter than this (microseconds)
    /// are left out of the trace.
    pub min_us: f64,
    /// `DR_HOOK_TRACE_MATCH`: only routines whose name matches one of these
    /// patterns (`*` and `?` wildcards, case-insensitive) are written.
    pub patterns: Vec<String>,
    /// `DR_HOOK_TRACE_DEPTH`: only activations at most this deep (1: the
    /// outermost routines of each thread); 0: no limit.
    pub depth: usize,
    /// `DR_HOOK_TRACE_RING=1`: when the buffer is full, the oldest events
    /// are overwritten (the end of the run is kept) instead of recording
    /// stopping.
    pub ring: bool,
    /// `DR_HOOK_TRACE_FORMAT=be`: `B`/`E` pairs instead of complete `X`
    /// events (the default, about half the size).
    pub begin_end: bool,
}

impl SummaryConfig {
    pub(crate) fn from_lookup(
        get: &dyn Fn(&str) -> Option<String>,
        warnings: &mut Vec<Warning>,
    ) -> SummaryConfig {
        SummaryConfig {
            path: get(env::DR_HOOK_SUMMARY)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty() && v != "-" && !v.eq_ignore_ascii_case("stderr")),
            lines: parse_int_in(
                env::DR_HOOK_SUMMARY_LINES,
                get(env::DR_HOOK_SUMMARY_LINES).as_deref(),
                DEFAULT_SUMMARY_LINES as i64,
                1..=100_000,
                warnings,
            ) as usize,
        }
    }
}

impl TraceConfig {
    pub(crate) fn from_lookup(
        get: &dyn Fn(&str) -> Option<String>,
        warnings: &mut Vec<Warning>,
    ) -> TraceConfig {
        let min_us = match get(env::DR_HOOK_TRACE_MIN_US) {
            None => 0.0,
            Some(v) => match v.trim().parse::<f64>() {
                Ok(x) if x.is_finite() && x >= 0.0 => x,
                _ => {
                    warnings.push(Warning(format!(
                        "Warning - {}=\"{}\" is not a duration in microseconds (at least 0); using 0",
                        env::DR_HOOK_TRACE_MIN_US,
                        v.trim()
                    )));
                    0.0
                }
            },
        };
        let patterns = get(env::DR_HOOK_TRACE_MATCH)
            .map(|v| {
                v.split(',')
                    .map(|p| p.trim().to_ascii_uppercase())
                    .filter(|p| !p.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        let depth = parse_int_in(
            env::DR_HOOK_TRACE_DEPTH,
            get(env::DR_HOOK_TRACE_DEPTH).as_deref(),
            0,
            0..=i64::from(u32::MAX),
            warnings,
        ) as usize;
        let ring = parse_int_in(
            env::DR_HOOK_TRACE_RING,
            get(env::DR_HOOK_TRACE_RING).as_deref(),
            0,
            0..=1,
            warnings,
        ) != 0;
        let begin_end = match get(env::DR_HOOK_TRACE_FORMAT)
            .map(|v| v.trim().to_ascii_lowercase())
            .as_deref()
        {
            None | Some("" | "x" | "complete") => false,
            Some("be" | "b/e") => true,
            Some(other) => {
                warnings.push(Warning(format!(
                    "Warning - {}=\"{other}\" is not one of x, be; using x",
                    env::DR_HOOK_TRACE_FORMAT
                )));
                false
            }
        };
        TraceConfig {
            min_us,
            patterns,
            depth,
            ring,
            begin_end,
        }
    }

    /// Whether the routine `name` is written (`DR_HOOK_TRACE_MATCH`).
    pub fn matches(&self, name: &str) -> bool {
        self.patterns.is_empty()
            || self
                .patterns
                .iter()
                .any(|p| wildcard(p.as_bytes(), name.to_ascii_uppercase().as_bytes()))
    }
}

/// `*` (any run) and `?` (any one byte) wildcard match of the whole name.
fn wildcard(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() && (p[pi] == b'?' || p[pi] == s[si]) {
            pi += 1;
            si += 1;
        } else if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, si));
            pi += 1;
        } else if let Some((sp, ss)) = star {
            pi = sp + 1;
            si = ss + 1;
            star = Some((sp, ss + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lookup(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let v: Vec<(String, String)> = vars
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        move |k| v.iter().find(|(a, _)| a == k).map(|(_, b)| b.clone())
    }

    #[test]
    fn summary_defaults_and_values() {
        let mut w = Vec::new();
        let s = SummaryConfig::from_lookup(&lookup(&[]), &mut w);
        assert_eq!((s.path, s.lines), (None, 40));
        let s = SummaryConfig::from_lookup(
            &lookup(&[
                ("DR_HOOK_SUMMARY", "out.txt"),
                ("DR_HOOK_SUMMARY_LINES", "5"),
            ]),
            &mut w,
        );
        assert_eq!((s.path.as_deref(), s.lines), (Some("out.txt"), 5));
        assert!(w.is_empty());
        let s = SummaryConfig::from_lookup(&lookup(&[("DR_HOOK_SUMMARY_LINES", "0")]), &mut w);
        assert_eq!(s.lines, 40);
        assert_eq!(w.len(), 1);
    }

    #[test]
    fn trace_filters_parse_and_match() {
        let mut w = Vec::new();
        let t = TraceConfig::from_lookup(
            &lookup(&[
                ("DR_HOOK_TRACE_MIN_US", "2.5"),
                ("DR_HOOK_TRACE_MATCH", "solve*, io_?"),
                ("DR_HOOK_TRACE_DEPTH", "3"),
                ("DR_HOOK_TRACE_RING", "1"),
                ("DR_HOOK_TRACE_FORMAT", "be"),
            ]),
            &mut w,
        );
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(
            (t.min_us, t.depth, t.ring, t.begin_end),
            (2.5, 3, true, true)
        );
        assert!(t.matches("SOLVE:STEP") && t.matches("io_a") && !t.matches("io_ab"));
        assert!(!t.matches("MAIN"));
        let t = TraceConfig::from_lookup(
            &lookup(&[
                ("DR_HOOK_TRACE_MIN_US", "-1"),
                ("DR_HOOK_TRACE_FORMAT", "y"),
            ]),
            &mut w,
        );
        assert_eq!(w.len(), 2);
        assert!(t.matches("anything") && !t.begin_end && t.min_us == 0.0);
        assert!(wildcard(b"*", b"") && wildcard(b"A*B*C", b"AXXBYC") && !wildcard(b"A*B", b"AXC"));
    }
}
