//! The timeline's filters and ring mode (`DR_HOOK_TRACE_*`, with
//! `DR_HOOK_OPT=trace`).

use super::env::{
    DR_HOOK_TRACE_DEPTH, DR_HOOK_TRACE_MATCH, DR_HOOK_TRACE_MIN_US, DR_HOOK_TRACE_RING,
};
use super::{Warning, parse_float, parse_int_in, parse_opt_flag};

/// What the timeline records.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceFilter {
    /// Minimum duration of a recorded activation, microseconds (0: all).
    pub min_us: f64,
    /// Regular expression on routine names (validated).
    pub pattern: Option<String>,
    /// Deepest level recorded (0: all).
    pub depth: u32,
    /// Keep the last events, not the first.
    pub ring: bool,
}

impl TraceFilter {
    /// Reads the variables through `get`; malformed values warn and are
    /// ignored.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>, warnings: &mut Vec<Warning>) -> Self {
        let mut min_us = parse_float(
            DR_HOOK_TRACE_MIN_US,
            get(DR_HOOK_TRACE_MIN_US).as_deref(),
            0.0,
            warnings,
        );
        if min_us < 0.0 {
            warnings.push(Warning(format!(
                "Warning - {DR_HOOK_TRACE_MIN_US}=\"{min_us}\" is negative; every activation is recorded"
            )));
            min_us = 0.0;
        }
        let pattern = get(DR_HOOK_TRACE_MATCH).filter(|p| !p.is_empty()).and_then(|p| {
            match regex_lite::Regex::new(&p) {
                Ok(_) => Some(p),
                Err(e) => {
                    warnings.push(Warning(format!(
                        "Warning - {DR_HOOK_TRACE_MATCH}=\"{p}\" is not a regular expression ({e}); every routine is recorded"
                    )));
                    None
                }
            }
        });
        let depth = parse_int_in(
            DR_HOOK_TRACE_DEPTH,
            get(DR_HOOK_TRACE_DEPTH).as_deref(),
            0,
            0..=i64::from(u16::MAX),
            warnings,
        ) as u32;
        let ring =
            parse_opt_flag(DR_HOOK_TRACE_RING, get(DR_HOOK_TRACE_RING), warnings).unwrap_or(false);
        TraceFilter {
            min_us,
            pattern,
            depth,
            ring,
        }
    }

    /// Whether anything but the first events of every activation would be
    /// recorded.
    pub fn is_default(&self) -> bool {
        *self == TraceFilter::default()
    }

    /// The filters in words, for the start-up notice.
    pub fn describe(&self) -> String {
        let mut v = Vec::new();
        if self.ring {
            v.push("the last events kept (DR_HOOK_TRACE_RING)".to_string());
        }
        if self.min_us > 0.0 {
            v.push(format!("activations under {} us dropped", self.min_us));
        }
        if let Some(p) = &self.pattern {
            v.push(format!("routines matching '{p}'"));
        }
        if self.depth > 0 {
            v.push(format!("depth at most {}", self.depth));
        }
        v.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(vars: &[(&str, &str)]) -> (TraceFilter, Vec<Warning>) {
        let mut w = Vec::new();
        let f = TraceFilter::from_lookup(
            |k| {
                vars.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            },
            &mut w,
        );
        (f, w)
    }

    #[test]
    fn variables_and_bad_values() {
        let (f, w) = parse(&[]);
        assert!(f.is_default() && w.is_empty());
        let (f, w) = parse(&[
            ("DR_HOOK_TRACE_MIN_US", "2.5"),
            ("DR_HOOK_TRACE_MATCH", "^PHYS:"),
            ("DR_HOOK_TRACE_DEPTH", "3"),
            ("DR_HOOK_TRACE_RING", "1"),
        ]);
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(
            f,
            TraceFilter {
                min_us: 2.5,
                pattern: Some("^PHYS:".into()),
                depth: 3,
                ring: true
            }
        );
        let (f, w) = parse(&[
            ("DR_HOOK_TRACE_MIN_US", "-1"),
            ("DR_HOOK_TRACE_MATCH", "(unclosed"),
            ("DR_HOOK_TRACE_DEPTH", "x"),
            ("DR_HOOK_TRACE_RING", "2"),
        ]);
        assert!(f.is_default(), "{f:?}");
        assert_eq!(w.len(), 4, "{w:?}");
        assert!(w[1].0.contains("not a regular expression"), "{w:?}");
    }
}
