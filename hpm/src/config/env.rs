//! The `HPM_*` environment variables (seed §5.1), parsed by pure functions over
//! strings.
//!
//! Reading the process environment happens in exactly one place,
//! [`EnvConfig::from_env`]; everything else works on a lookup closure so that
//! tests can feed any environment they like. Malformed values never stop the
//! program: they produce a [`ConfigWarning`] and the default is used.

use std::fmt;

use crate::events::cpu::CpuInfo;
use crate::events::set::EventSelection;
use crate::metrics::Latencies;
use crate::metrics::MetricContext;
use crate::output::aggregate::Aggregator;

/// Names of the environment variables understood by this crate.
pub mod vars {
    /// Event set(s) to count: group name, group number, comma list of groups and/or perf event names.
    pub const HPM_EVENT_SET: &str = "HPM_EVENT_SET";
    /// Base name of the output files (`<name>.hpm`, `.viz`, `.csv`).
    pub const HPM_OUTPUT_NAME: &str = "HPM_OUTPUT_NAME";
    /// Insert `_<host>_<pid|rank>_<dd.mm.yyyy>_<hh.mm.ss>` into the output name.
    pub const HPM_UNIQUE_FILE_NAME: &str = "HPM_UNIQUE_FILE_NAME";
    /// Copy the ASCII report to stdout (`yes`/`no`).
    pub const HPM_STDOUT: &str = "HPM_STDOUT";
    /// Print the formula after each derived metric.
    pub const HPM_PRINT_FORMULA: &str = "HPM_PRINT_FORMULA";
    /// Write `<name>.hpm`.
    pub const HPM_ASC_OUTPUT: &str = "HPM_ASC_OUTPUT";
    /// Write `<name>.viz`.
    pub const HPM_VIZ_OUTPUT: &str = "HPM_VIZ_OUTPUT";
    /// Write `<name>.csv`.
    pub const HPM_CSV_OUTPUT: &str = "HPM_CSV_OUTPUT";
    /// Aggregation strategy (`mirror`, `single`, `average`, `loc_merge`, `min`, `max`).
    pub const HPM_AGGREGATE: &str = "HPM_AGGREGATE";
    /// Number of instrumentation points (largest valid section id); default 1000.
    pub const HPM_NUM_INST_PTS: &str = "HPM_NUM_INST_PTS";
    /// Compute exclusive values for every section.
    pub const HPM_EXCLUSIVE_VALUES: &str = "HPM_EXCLUSIVE_VALUES";
    /// Weight of floating-point divides in the weighted flop metrics.
    pub const HPM_DIV_WEIGHT: &str = "HPM_DIV_WEIGHT";
    /// Memory load latency in cycles.
    pub const HPM_MEM_LATENCY: &str = "HPM_MEM_LATENCY";
    /// Average L3 load latency in cycles.
    pub const HPM_AVG_L3_LATENCY: &str = "HPM_AVG_L3_LATENCY";
    /// L3 load latency in cycles.
    pub const HPM_L3_LATENCY: &str = "HPM_L3_LATENCY";
    /// Latency of an L3 load outside the MCM (POWER only; no Linux event).
    pub const HPM_L35_LATENCY: &str = "HPM_L35_LATENCY";
    /// Average L2 load latency in cycles.
    pub const HPM_AVG_L2_LATENCY: &str = "HPM_AVG_L2_LATENCY";
    /// L2 load latency in cycles.
    pub const HPM_L2_LATENCY: &str = "HPM_L2_LATENCY";
    /// Latency of an L2 load from the same MCM (POWER only; no Linux event).
    pub const HPM_L25_LATENCY: &str = "HPM_L25_LATENCY";
    /// Latency of an L2 load from another MCM (POWER only; no Linux event).
    pub const HPM_L275_LATENCY: &str = "HPM_L275_LATENCY";
    /// TLB miss latency in cycles.
    pub const HPM_TLB_LATENCY: &str = "HPM_TLB_LATENCY";
    /// Multiplexing slice (AIX only; Linux sets it system-wide).
    pub const HPM_SLICE_DURATION: &str = "HPM_SLICE_DURATION";
    /// Suppress the libhpm mutexes (no effect here: there is no global mutex).
    pub const HPM_USE_PTHREAD_MUTEX: &str = "HPM_USE_PTHREAD_MUTEX";
    /// Test-suite switch: fail instead of skipping tests that need hardware counters.
    pub const HPM_REQUIRE_HW_COUNTERS: &str = "HPM_REQUIRE_HW_COUNTERS";

    /// Launcher variables holding the MPI rank, in the order they are tried.
    pub const RANK_VARS: [&str; 6] = [
        "OMPI_COMM_WORLD_RANK",
        "PMI_RANK",
        "PMIX_RANK",
        "SLURM_PROCID",
        "MV2_COMM_WORLD_RANK",
        "ALPS_APP_PE",
    ];
}

/// Default largest section id (seed §3.7).
pub const DEFAULT_NUM_INST_PTS: u32 = 1000;

/// A malformed or unsupported environment setting; printed once, never fatal.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigWarning(pub String);

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Everything the `HPM_*` variables can configure.
#[derive(Clone, Debug, PartialEq)]
pub struct EnvConfig {
    /// `HPM_EVENT_SET`, unparsed (parsed by [`crate::EventSelection::parse`]).
    pub event_set: Option<String>,
    /// `HPM_OUTPUT_NAME`.
    pub output_name: Option<String>,
    /// `HPM_UNIQUE_FILE_NAME`.
    pub unique_file_name: bool,
    /// `HPM_STDOUT`: `Some(true)` yes, `Some(false)` no, `None` unset.
    pub stdout: Option<bool>,
    /// `HPM_PRINT_FORMULA`.
    pub print_formula: bool,
    /// `HPM_ASC_OUTPUT`: `None` when unset.
    pub asc_output: Option<bool>,
    /// `HPM_VIZ_OUTPUT`: `None` when unset.
    pub viz_output: Option<bool>,
    /// `HPM_CSV_OUTPUT`: `None` when unset.
    pub csv_output: Option<bool>,
    /// `HPM_AGGREGATE`.
    pub aggregate: Option<Aggregator>,
    /// `HPM_NUM_INST_PTS` (default 1000).
    pub num_inst_pts: u32,
    /// `HPM_EXCLUSIVE_VALUES`.
    pub exclusive_values: bool,
    /// `HPM_DIV_WEIGHT` (positive integer).
    pub div_weight: Option<u32>,
    /// `HPM_*_LATENCY`.
    pub latencies: Latencies,
    /// The launcher's MPI rank, from [`vars::RANK_VARS`].
    pub mpi_rank: Option<u32>,
}

impl Default for EnvConfig {
    fn default() -> Self {
        EnvConfig {
            event_set: None,
            output_name: None,
            unique_file_name: false,
            stdout: None,
            print_formula: false,
            asc_output: None,
            viz_output: None,
            csv_output: None,
            aggregate: None,
            num_inst_pts: DEFAULT_NUM_INST_PTS,
            exclusive_values: false,
            div_weight: None,
            latencies: Latencies::default(),
            mpi_rank: None,
        }
    }
}

/// Parses the guide's yes/no convention: `Y[...]`, `y[...]`, `1` are yes;
/// `N[...]`, `n[...]`, `0` are no; anything else is `None` (malformed).
pub fn parse_flag(value: &str) -> Option<bool> {
    let v = value.trim();
    match v.chars().next() {
        Some('Y' | 'y') => Some(true),
        Some('N' | 'n') => Some(false),
        _ if v == "1" => Some(true),
        _ if v == "0" => Some(false),
        _ => None,
    }
}

/// First rank found in the launcher variables ([`vars::RANK_VARS`]).
pub fn mpi_rank_from(lookup: &dyn Fn(&str) -> Option<String>) -> Option<u32> {
    vars::RANK_VARS
        .iter()
        .find_map(|name| lookup(name).and_then(|v| v.trim().parse::<u32>().ok()))
}

impl EnvConfig {
    /// Reads the process environment (the only place that does). In
    /// secure-execution mode (a set-user-ID program, file capabilities:
    /// [`drhook_secure::secure_execution`]) every `HPM_*` variable reads as
    /// unset, and that is said once on stderr when one was set.
    pub fn from_env() -> (EnvConfig, Vec<ConfigWarning>) {
        let secure = drhook_secure::ignore_tool_variables();
        EnvConfig::from_os_lookup(&|name| {
            if secure && drhook_secure::is_tool_variable(name.as_bytes()) {
                None
            } else {
                std::env::var_os(name)
            }
        })
    }

    /// As [`EnvConfig::from_lookup`], from raw values (the environment is
    /// bytes): a value that is not valid UTF-8 keeps its valid parts, each
    /// invalid sequence read as U+FFFD, and one warning names the variable.
    pub fn from_os_lookup(
        lookup: &dyn Fn(&str) -> Option<std::ffi::OsString>,
    ) -> (EnvConfig, Vec<ConfigWarning>) {
        let bad: std::cell::RefCell<Vec<String>> = std::cell::RefCell::new(Vec::new());
        let text = |name: &str| -> Option<String> {
            match lookup(name)?.into_string() {
                Ok(v) => Some(v),
                Err(raw) => {
                    if !bad.borrow().iter().any(|b| b == name) {
                        bad.borrow_mut().push(name.to_string());
                    }
                    Some(raw.to_string_lossy().into_owned())
                }
            }
        };
        let (cfg, mut w) = EnvConfig::from_lookup(&text);
        let encoding: Vec<ConfigWarning> = bad
            .into_inner()
            .into_iter()
            .map(|name| {
                ConfigWarning(format!(
                    "{name} is not valid UTF-8: its invalid bytes are read as U+FFFD (\u{fffd}), the rest is kept"
                ))
            })
            .collect();
        w.splice(0..0, encoding);
        (cfg, w)
    }

    /// Parses the configuration from any variable lookup.
    pub fn from_lookup(lookup: &dyn Fn(&str) -> Option<String>) -> (EnvConfig, Vec<ConfigWarning>) {
        let mut w = Vec::new();
        let mut cfg = EnvConfig {
            event_set: lookup(vars::HPM_EVENT_SET).filter(|s| !s.trim().is_empty()),
            output_name: lookup(vars::HPM_OUTPUT_NAME).filter(|s| !s.trim().is_empty()),
            mpi_rank: mpi_rank_from(lookup),
            ..EnvConfig::default()
        };
        let flag = |name: &str, w: &mut Vec<ConfigWarning>| -> Option<bool> {
            let v = lookup(name)?;
            match parse_flag(&v) {
                Some(b) => Some(b),
                None => {
                    w.push(ConfigWarning(format!(
                        "{name}='{v}' is not a yes/no value (use Y[...], y[...], 1, N[...], n[...] or 0); treated as no"
                    )));
                    Some(false)
                }
            }
        };
        cfg.unique_file_name = flag(vars::HPM_UNIQUE_FILE_NAME, &mut w).unwrap_or(false);
        cfg.stdout = flag(vars::HPM_STDOUT, &mut w);
        cfg.print_formula = flag(vars::HPM_PRINT_FORMULA, &mut w).unwrap_or(false);
        cfg.asc_output = flag(vars::HPM_ASC_OUTPUT, &mut w);
        cfg.viz_output = flag(vars::HPM_VIZ_OUTPUT, &mut w);
        cfg.csv_output = flag(vars::HPM_CSV_OUTPUT, &mut w);
        cfg.exclusive_values = flag(vars::HPM_EXCLUSIVE_VALUES, &mut w).unwrap_or(false);

        if let Some(v) = lookup(vars::HPM_AGGREGATE) {
            match Aggregator::parse(&v) {
                Ok(a) => cfg.aggregate = Some(a),
                Err(e) => w.push(ConfigWarning(format!(
                    "{}: {e}; using mirror",
                    vars::HPM_AGGREGATE
                ))),
            }
        }
        if let Some(v) = lookup(vars::HPM_NUM_INST_PTS) {
            match v.trim().parse::<u32>() {
                Ok(n) if n > 0 => cfg.num_inst_pts = n,
                _ => w.push(ConfigWarning(format!(
                    "{}='{v}' is not a positive integer; using {DEFAULT_NUM_INST_PTS}",
                    vars::HPM_NUM_INST_PTS
                ))),
            }
        }
        if let Some(v) = lookup(vars::HPM_DIV_WEIGHT) {
            match v.trim().parse::<u32>() {
                Ok(n) if n > 0 => cfg.div_weight = Some(n),
                _ => w.push(ConfigWarning(format!(
                    "{}='{v}' is not a positive integer; weighted flops are not computed",
                    vars::HPM_DIV_WEIGHT
                ))),
            }
        }
        let lat = |name: &str, w: &mut Vec<ConfigWarning>| -> Option<f64> {
            let v = lookup(name)?;
            match v.trim().parse::<f64>() {
                Ok(x) if x.is_finite() && x >= 0.0 => Some(x),
                _ => {
                    w.push(ConfigWarning(format!(
                        "{name}='{v}' is not a non-negative number of cycles; ignored"
                    )));
                    None
                }
            }
        };
        cfg.latencies = Latencies {
            mem: lat(vars::HPM_MEM_LATENCY, &mut w),
            avg_l3: lat(vars::HPM_AVG_L3_LATENCY, &mut w),
            l3: lat(vars::HPM_L3_LATENCY, &mut w),
            l35: lat(vars::HPM_L35_LATENCY, &mut w),
            avg_l2: lat(vars::HPM_AVG_L2_LATENCY, &mut w),
            l2: lat(vars::HPM_L2_LATENCY, &mut w),
            l25: lat(vars::HPM_L25_LATENCY, &mut w),
            l275: lat(vars::HPM_L275_LATENCY, &mut w),
            tlb: lat(vars::HPM_TLB_LATENCY, &mut w),
        };
        for (name, set) in [
            (vars::HPM_L35_LATENCY, cfg.latencies.l35.is_some()),
            (vars::HPM_L25_LATENCY, cfg.latencies.l25.is_some()),
            (vars::HPM_L275_LATENCY, cfg.latencies.l275.is_some()),
        ] {
            if set {
                w.push(ConfigWarning(format!(
                    "{name} is accepted but not used: Linux perf has no event for loads from another MCM"
                )));
            }
        }
        if let Some(v) = lookup(vars::HPM_SLICE_DURATION) {
            w.push(ConfigWarning(format!(
                "{}='{v}' is not implemented: on Linux the multiplexing interval is system-wide \
                 (/sys/bus/event_source/devices/cpu/perf_event_mux_interval_ms, root only)",
                vars::HPM_SLICE_DURATION
            )));
        }
        if let Some(v) = lookup(vars::HPM_USE_PTHREAD_MUTEX) {
            w.push(ConfigWarning(format!(
                "{}='{v}' has no effect: this libhpm takes no global mutex on start/stop",
                vars::HPM_USE_PTHREAD_MUTEX
            )));
        }
        (cfg, w)
    }

    /// Runs the aggregator's distributor (seed §2.7.4): with `average`, `min`
    /// or `max` and a comma list in `event_set`, this rank keeps one set of
    /// the list. Returns the notices to print; `source` is how the aggregator
    /// was chosen, as the notice names it (`"HPM_AGGREGATE="`, `"-a "`).
    pub fn distribute_event_sets(&mut self, source: &str) -> Vec<String> {
        let mut notices = Vec::new();
        let Some(agg) = self.aggregate else {
            return notices;
        };
        if let Some(set) = agg.distribute(self.event_set.as_deref(), self.mpi_rank) {
            notices.push(format!(
                "{agg} distributor: rank {} counts event set '{set}'",
                self.mpi_rank.unwrap_or(0)
            ));
            self.event_set = Some(set);
        }
        if agg.is_cross_task() {
            notices.push(format!(
                "{source}{agg}: each task writes its own CSV file; combine them with \
                 `hpmcount merge -a {agg} <files>`"
            ));
        }
        notices
    }

    /// The event sets to count: `event_set` parsed for `cpu` (with the
    /// parser's warnings), or the default selection.
    pub fn event_selection(&self, cpu: &CpuInfo) -> (EventSelection, Vec<String>) {
        match self.event_set.as_deref() {
            Some(text) => EventSelection::parse(text, cpu),
            None => (EventSelection::default_for(cpu), Vec::new()),
        }
    }
}

/// The derived metrics take their settings from the environment here, so
/// that the metrics know nothing of the configuration.
impl MetricContext {
    /// Takes weight and latencies from the environment configuration.
    pub fn from_config(cfg: &EnvConfig, cpu_mhz: Option<f64>) -> MetricContext {
        MetricContext {
            div_weight: cfg.div_weight,
            latencies: cfg.latencies.clone(),
            cpu_mhz,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn cfg(pairs: &[(&str, &str)]) -> (EnvConfig, Vec<ConfigWarning>) {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        EnvConfig::from_lookup(&move |k| map.get(k).cloned())
    }

    #[test]
    fn flags_follow_the_guide() {
        for yes in ["Y", "yes", "YES", "y", "1", "Yep"] {
            assert_eq!(parse_flag(yes), Some(true), "{yes}");
        }
        for no in ["N", "no", "NO", "0"] {
            assert_eq!(parse_flag(no), Some(false), "{no}");
        }
        assert_eq!(parse_flag("maybe"), None);
        assert_eq!(parse_flag(""), None);
        assert_eq!(parse_flag("2"), None);
    }

    #[test]
    fn empty_environment_gives_defaults() {
        let (c, w) = cfg(&[]);
        assert_eq!(c, EnvConfig::default());
        assert!(w.is_empty());
        assert_eq!(c.num_inst_pts, 1000);
    }

    #[test]
    fn malformed_values_warn_and_default() {
        let (c, w) = cfg(&[
            ("HPM_NUM_INST_PTS", "lots"),
            ("HPM_DIV_WEIGHT", "-3"),
            ("HPM_MEM_LATENCY", "fast"),
            ("HPM_VIZ_OUTPUT", "perhaps"),
            ("HPM_AGGREGATE", "median.so"),
        ]);
        assert_eq!(c.num_inst_pts, 1000);
        assert_eq!(c.div_weight, None);
        assert_eq!(c.latencies.mem, None);
        assert_eq!(c.viz_output, Some(false));
        assert_eq!(c.aggregate, None);
        assert_eq!(w.len(), 5, "{w:?}");
        assert!(w.iter().any(|m| m.0.contains("HPM_NUM_INST_PTS='lots'")));
        assert!(w.iter().any(|m| m.0.contains("median.so")));
    }

    #[test]
    fn values_are_parsed() {
        let (c, w) = cfg(&[
            ("HPM_EVENT_SET", "fp,sw"),
            ("HPM_OUTPUT_NAME", "run"),
            ("HPM_UNIQUE_FILE_NAME", "1"),
            ("HPM_STDOUT", "no"),
            ("HPM_PRINT_FORMULA", "yes"),
            ("HPM_CSV_OUTPUT", "y"),
            ("HPM_AGGREGATE", "average.so"),
            ("HPM_NUM_INST_PTS", "5000"),
            ("HPM_EXCLUSIVE_VALUES", "Y"),
            ("HPM_DIV_WEIGHT", "5"),
            ("HPM_AVG_L3_LATENCY", "40"),
            ("HPM_L2_LATENCY", "12"),
            ("PMI_RANK", "7"),
        ]);
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(c.event_set.as_deref(), Some("fp,sw"));
        assert_eq!(c.output_name.as_deref(), Some("run"));
        assert!(c.unique_file_name && c.print_formula && c.exclusive_values);
        assert_eq!(c.stdout, Some(false));
        assert_eq!(
            (c.asc_output, c.viz_output, c.csv_output),
            (None, None, Some(true))
        );
        assert_eq!(c.aggregate, Some(Aggregator::Average));
        assert_eq!(c.num_inst_pts, 5000);
        assert_eq!(c.div_weight, Some(5));
        assert_eq!(c.latencies.effective_l3(), Some(40.0));
        assert_eq!(c.latencies.effective_l2(), Some(12.0));
        assert_eq!(c.mpi_rank, Some(7));
    }

    #[test]
    fn average_latency_only_when_specific_one_is_missing() {
        let (c, _) = cfg(&[("HPM_AVG_L3_LATENCY", "40"), ("HPM_L3_LATENCY", "30")]);
        assert_eq!(c.latencies.effective_l3(), Some(30.0));
    }

    #[test]
    fn unsupported_variables_warn() {
        let (_, w) = cfg(&[
            ("HPM_SLICE_DURATION", "50"),
            ("HPM_USE_PTHREAD_MUTEX", "0"),
            ("HPM_L25_LATENCY", "72"),
        ]);
        assert_eq!(w.len(), 3, "{w:?}");
        assert!(
            w.iter()
                .any(|m| m.0.contains("HPM_SLICE_DURATION='50' is not implemented"))
        );
        assert!(
            w.iter()
                .any(|m| m.0.contains("HPM_L25_LATENCY is accepted but not used"))
        );
    }

    #[test]
    fn distributor_picks_this_ranks_set_and_says_so() {
        let (mut c, _) = cfg(&[
            ("HPM_EVENT_SET", "fp,cache,sw"),
            ("HPM_AGGREGATE", "average"),
            ("PMI_RANK", "4"),
        ]);
        let notices = c.distribute_event_sets("HPM_AGGREGATE=");
        assert_eq!(c.event_set.as_deref(), Some("cache"));
        assert_eq!(
            notices,
            [
                "average distributor: rank 4 counts event set 'cache'",
                "HPM_AGGREGATE=average: each task writes its own CSV file; combine them with \
                 `hpmcount merge -a average <files>`",
            ]
        );
        let (mut c, _) = cfg(&[("HPM_EVENT_SET", "fp,sw"), ("HPM_AGGREGATE", "loc_merge")]);
        assert!(c.distribute_event_sets("-a ").is_empty());
        assert_eq!(c.event_set.as_deref(), Some("fp,sw"));
        let (mut c, _) = cfg(&[("HPM_EVENT_SET", "fp,sw")]);
        assert!(c.distribute_event_sets("-a ").is_empty());
    }

    #[test]
    fn event_selection_from_the_set_or_the_default() {
        let cpu = CpuInfo::parse_cpuinfo("");
        let (c, _) = cfg(&[]);
        let (sel, w) = c.event_selection(&cpu);
        assert_eq!(sel, EventSelection::default_for(&cpu));
        assert!(w.is_empty());
        let (c, _) = cfg(&[("HPM_EVENT_SET", "sw,nonsense")]);
        let (sel, w) = c.event_selection(&cpu);
        assert_eq!(sel.sets[0].name, "sw");
        assert_eq!(w.len(), 1, "{w:?}");
    }

    #[test]
    fn rank_variables_in_order() {
        let (c, _) = cfg(&[("SLURM_PROCID", "3"), ("OMPI_COMM_WORLD_RANK", "1")]);
        assert_eq!(c.mpi_rank, Some(1));
        let (c, _) = cfg(&[("ALPS_APP_PE", "12")]);
        assert_eq!(c.mpi_rank, Some(12));
        let (c, _) = cfg(&[("PMIX_RANK", "x"), ("SLURM_PROCID", "4")]);
        assert_eq!(c.mpi_rank, Some(4));
    }

    #[test]
    fn non_utf8_values_keep_their_valid_parts_and_warn_once() {
        use std::os::unix::ffi::OsStringExt;
        let (cfg, w) = EnvConfig::from_os_lookup(&|k| match k {
            "HPM_EVENT_SET" => Some(std::ffi::OsString::from_vec(b"cycles,\xff".to_vec())),
            "HPM_NUM_INST_PTS" => Some(std::ffi::OsString::from_vec(b"\xfe".to_vec())),
            _ => None,
        });
        assert_eq!(cfg.event_set.as_deref(), Some("cycles,\u{fffd}"));
        assert_eq!(cfg.num_inst_pts, DEFAULT_NUM_INST_PTS);
        let text: Vec<&str> = w.iter().map(|w| w.0.as_str()).collect();
        assert_eq!(
            text.iter()
                .filter(|t| t.contains("is not valid UTF-8"))
                .count(),
            2,
            "{text:?}"
        );
        assert!(
            text[0].starts_with("HPM_EVENT_SET is not valid UTF-8"),
            "{text:?}"
        );
        assert!(
            text.iter()
                .any(|t| t.contains("HPM_NUM_INST_PTS='\u{fffd}' is not a positive integer")),
            "{text:?}"
        );
    }
}
