//! `DR_HOOK_NVTX` / `DR_HOOK_ROCTX`: Dr.Hook regions as NVTX or ROCTX
//! ranges (Nsight Systems, rocprof timelines), with the reference's "spam"
//! filter (`DR_HOOK_NVTX_SPAM_CALL_COUNT`, `DR_HOOK_NVTX_SPAM_WT`, and the
//! `DR_HOOK_ROCTX_SPAM_*` twins). Pure parsing; `metrics::ranges` acts.

use super::{Warning, parse_float, parse_int};

/// `DR_HOOK_NVTX`.
pub const DR_HOOK_NVTX: &str = "DR_HOOK_NVTX";
/// `DR_HOOK_ROCTX`.
pub const DR_HOOK_ROCTX: &str = "DR_HOOK_ROCTX";

/// The reference's default call count above which a region may be skipped.
pub const DEFAULT_SPAM_CALLS: u64 = 10;
/// The reference's default accumulated wall time (seconds) under which a
/// region called more than the call count is skipped.
pub const DEFAULT_SPAM_WT: f64 = 1e-4;

/// One tool's filter: a region whose node has been entered more than
/// `calls` times (this call included) and whose accumulated wall time is
/// still under `wall_secs` gets no range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spam {
    /// `*_SPAM_CALL_COUNT`.
    pub calls: u64,
    /// `*_SPAM_WT`, seconds.
    pub wall_secs: f64,
}

/// What `DR_HOOK_NVTX` / `DR_HOOK_ROCTX` ask for (`None`: off).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Ranges {
    /// `DR_HOOK_NVTX` and its filter.
    pub nvtx: Option<Spam>,
    /// `DR_HOOK_ROCTX` and its filter.
    pub roctx: Option<Spam>,
}

impl Ranges {
    /// Reads the variables, as the reference does: the switch is an
    /// integer (non-zero: on); a negative count or time gives the default.
    pub fn from_lookup(
        get: &dyn Fn(&str) -> Option<String>,
        warnings: &mut Vec<Warning>,
    ) -> Ranges {
        let mut one = |tool: &str| -> Option<Spam> {
            let on = parse_int(tool, get(tool).as_deref(), 0, warnings) != 0;
            if !on {
                return None;
            }
            let cc = format!("{tool}_SPAM_CALL_COUNT");
            let wt = format!("{tool}_SPAM_WT");
            let calls = parse_int(
                &cc,
                get(&cc).as_deref(),
                DEFAULT_SPAM_CALLS as i64,
                warnings,
            );
            let wall = parse_float(&wt, get(&wt).as_deref(), DEFAULT_SPAM_WT, warnings);
            Some(Spam {
                calls: u64::try_from(calls).unwrap_or(DEFAULT_SPAM_CALLS),
                wall_secs: if wall < 0.0 { DEFAULT_SPAM_WT } else { wall },
            })
        };
        let nvtx = one(DR_HOOK_NVTX);
        let roctx = one(DR_HOOK_ROCTX);
        Ranges { nvtx, roctx }
    }

    /// Whether either tool is asked for.
    pub fn any(&self) -> bool {
        self.nvtx.is_some() || self.roctx.is_some()
    }

    /// The start-up echo: the values in force (the reference echoes the
    /// default wall time whatever was set).
    pub fn echo(&self) -> Vec<String> {
        let mut v = Vec::new();
        for (tool, s) in [(DR_HOOK_NVTX, self.nvtx), (DR_HOOK_ROCTX, self.roctx)] {
            if let Some(s) = s {
                v.push(format!("{tool}=1"));
                v.push(format!("{tool}_SPAM_CALL_COUNT={}", s.calls));
                v.push(format!("{tool}_SPAM_WT={}", s.wall_secs));
            }
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(vars: &[(&str, &str)]) -> (Ranges, Vec<Warning>) {
        let mut w = Vec::new();
        let get = |k: &str| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        };
        (Ranges::from_lookup(&get, &mut w), w)
    }

    #[test]
    fn off_unless_non_zero() {
        assert!(!parse(&[]).0.any());
        assert!(!parse(&[("DR_HOOK_NVTX", "0")]).0.any());
        let (r, w) = parse(&[("DR_HOOK_NVTX", "1")]);
        assert!(w.is_empty());
        assert_eq!(
            r.nvtx,
            Some(Spam {
                calls: 10,
                wall_secs: 1e-4
            })
        );
        assert_eq!(r.roctx, None);
    }

    #[test]
    fn spam_values_and_negative_defaults() {
        let (r, _) = parse(&[
            ("DR_HOOK_ROCTX", "2"),
            ("DR_HOOK_ROCTX_SPAM_CALL_COUNT", "3"),
            ("DR_HOOK_ROCTX_SPAM_WT", "0.5"),
            ("DR_HOOK_NVTX", "1"),
            ("DR_HOOK_NVTX_SPAM_CALL_COUNT", "-4"),
            ("DR_HOOK_NVTX_SPAM_WT", "-1"),
        ]);
        assert_eq!(
            r.roctx,
            Some(Spam {
                calls: 3,
                wall_secs: 0.5
            })
        );
        assert_eq!(
            r.nvtx,
            Some(Spam {
                calls: 10,
                wall_secs: 1e-4
            })
        );
        assert_eq!(
            r.echo(),
            [
                "DR_HOOK_NVTX=1",
                "DR_HOOK_NVTX_SPAM_CALL_COUNT=10",
                "DR_HOOK_NVTX_SPAM_WT=0.0001",
                "DR_HOOK_ROCTX=1",
                "DR_HOOK_ROCTX_SPAM_CALL_COUNT=3",
                "DR_HOOK_ROCTX_SPAM_WT=0.5"
            ]
        );
    }
}
