//! The end-of-run summary (`DR_HOOK_OPT=summary`): its variables, parsed
//! by a pure function like the rest of the configuration.

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
}
