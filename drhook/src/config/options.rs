//! `DR_HOOK_OPT`: the option tokens, their synonyms and what they switch on.
//!
//! Parsing is a pure function ([`Options::parse`]) that returns the options
//! and the warnings to print; nothing here reads the environment.

use std::fmt;

/// Which clock the profile file is built from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProfileKind {
    /// `prof`, `wallprof`, `cycles`: wall-clock profile.
    Wall,
    /// `cpuprof`: per-thread CPU-time profile.
    Cpu,
}

/// How Dr.Hook's own cost is treated (`self` / `noself`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SelfMode {
    /// Default: the measured instrumentation overhead is removed from the
    /// routines' times but not printed.
    #[default]
    Account,
    /// `self`: as `Account`, and print `$drhook@<tid>` rows.
    Print,
    /// `noself`: raw measured times, no compensation.
    Off,
}

/// The parsed `DR_HOOK_OPT`.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Options {
    /// Count calls per routine (`calls`, `count`). Always counted; this only
    /// controls whether tracebacks show the counts.
    pub calls: bool,
    /// Accumulate wall-clock time per routine (`walltime`, `times`, `prof`).
    pub walltime: bool,
    /// Accumulate per-thread CPU time per routine (`cputime`, `times`, `cpuprof`).
    pub cputime: bool,
    /// Write a profile file, and from which clock.
    pub profile: Option<ProfileKind>,
    /// `self` / `noself`.
    pub self_mode: SelfMode,
    /// `trim`: routine names are compared case-insensitively (upper-cased).
    pub trim: bool,
    /// `callpath`: one profile row per call path instead of per routine.
    pub callpath: bool,
    /// `clusterinfo`: print `[cluster-id,cluster-size]` after routine names.
    pub clusterinfo: bool,
    /// `nosize`: ignore size information attached at exit.
    pub nosize: bool,
    /// `noprop`: do not chain to a previously installed signal handler.
    pub noprop: bool,
    /// `hpmprof`, `hpm`, `mflops`, `counters`: counters per routine (implies `wallprof`).
    pub counters: bool,
    /// `json`: the profile also as a `drhook-profile` JSON document
    /// (`<profile>.json`, the full call-path tree); a wall profile when no
    /// other profile token is given.
    pub json: bool,
    /// `reduce`: in an MPI run, the ranks reduce their profiles inside
    /// `MPI_Finalize` and rank 0 writes one job profile `<profile>.job`
    /// (the preload library, `drhook run`); per-rank profiles are then off
    /// unless `ranks` is given too. Project extension.
    pub reduce: bool,
    /// `ranks`: with `reduce`, the per-rank profiles are written too.
    pub ranks: bool,
    /// `trace`, `timeline`: record every enter and exit and write a
    /// Chrome/Perfetto trace (`drhook.trace.N.json`). Project extension.
    pub trace: bool,
    /// `summary`: a compact tree of the top routines (self, total, calls)
    /// at the end of the run, on stderr or in `DR_HOOK_SUMMARY` (project
    /// extension; Caliper's `runtime-report`, GPTL's `timing.summary`).
    pub summary: bool,
    /// `io`: I/O per routine (bytes, operations, time in I/O calls) from
    /// the preload library's interposers, in `<profile>-io`; the per-file
    /// report `drhook.io.*` (project extension).
    pub io: bool,
    /// `mpi`: every MPI call a row of the calling tree (the preload
    /// library's PMPI wrappers), with bytes sent and received, a
    /// message-size histogram and communicator sizes in `<profile>-mpi`
    /// (project extension). A wall profile unless a profile token chose
    /// the clock.
    pub mpi: bool,
    /// `gpu`: GPU time, kernel launches and bytes copied per region,
    /// through CUPTI loaded at run time, in `<profile>-gpu` (project
    /// extension).
    pub gpu: bool,
    /// `sample`: a per-thread CPU-time timer samples the native stack,
    /// credited to the region active on the thread, in `<profile>-sample`
    /// (project extension).
    pub sample: bool,
    /// Memory statistics per routine (`mem`, `heap`, `stack`, `rss`,
    /// `paging`, `memprof`, `all`): which of them are on.
    pub mem: MemOptions,
    /// Canonical names of the tokens recognised, in the order given
    /// (echoed at start-up as `DR_HOOK_OPT="WALLPROF,CALLPATH"`).
    pub canonical: Vec<&'static str>,
}

/// The memory statistics asked for (`DR_HOOK_OPT` memory tokens).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct MemOptions {
    /// `heap`, `hwm`: the heap high-water mark per routine (and the
    /// allocation counts behind it).
    pub heap: bool,
    /// `stack`, `stk`: the deepest stack reached per routine.
    pub stack: bool,
    /// `rss`: the resident set size (process-wide, at coarse points).
    pub rss: bool,
    /// `paging`, `pag`: page faults (process-wide, at coarse points).
    pub paging: bool,
    /// `memprof`: the memory profile `<profile>-mem`.
    pub memprof: bool,
}

impl MemOptions {
    /// Whether any memory statistic is on (the per-routine memory metric
    /// is installed).
    pub fn any(&self) -> bool {
        self.heap || self.stack || self.rss || self.paging || self.memprof
    }
}

/// A problem found while parsing an environment value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning(pub String);

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Every token accepted, as `(synonyms, canonical name)`.
pub const TOKENS: &[(&[&str], &str)] = &[
    (&["CALLS", "COUNT"], "CALLS"),
    (&["WALL", "WALLTIME"], "WALLTIME"),
    (&["CPU", "CPUTIME"], "CPUTIME"),
    (&["TIME", "TIMES"], "TIMES"),
    (&["PROF", "WALLPROF", "CYCLES"], "WALLPROF"),
    (&["CPUPROF"], "CPUPROF"),
    (&["SELF"], "SELF"),
    (&["NOSELF"], "NOSELF"),
    (&["TRIM"], "TRIM"),
    (&["CALLPATH"], "CALLPATH"),
    (&["CLUSTER", "CLUSTERINFO"], "CLUSTERINFO"),
    (&["NOSIZE", "NOSIZEINFO"], "NOSIZEINFO"),
    (
        &["NOPROP", "NOPROPAGATE", "NOPROPAGATE_SIGNALS"],
        "NOPROPAGATE_SIGNALS",
    ),
    (&["NONE"], "NONE"),
    (&["ALL"], "ALL"),
    (&["MEM", "MEMORY"], "MEMORY"),
    (&["HWM", "HEAP"], "HEAP"),
    (&["STK", "STACK"], "STACK"),
    (&["RSS"], "RSS"),
    (&["PAG", "PAGING"], "PAGING"),
    (&["MEMPROF"], "MEMPROF"),
    (&["HPMPROF", "HPM", "MFLOPS"], "HPMPROF"),
    (&["COUNTERS"], "COUNTERS"),
    (&["JSON"], "JSON"),
    (&["TRACE", "TIMELINE"], "TRACE"),
    (&["IO", "IOPROF"], "IO"),
    (&["MPI"], "MPI"),
    (&["GPU"], "GPU"),
    (&["SUMMARY"], "SUMMARY"),
    (&["SAMPLE", "SAMPLING"], "SAMPLE"),
    (&["REDUCE"], "REDUCE"),
    (&["RANKS"], "RANKS"),
];

/// Separators of list-valued variables (as in the reference: `", \t/"`).
pub fn split_list(value: &str) -> impl Iterator<Item = &str> {
    value.split([',', ' ', '\t', '/']).filter(|t| !t.is_empty())
}

fn canonical_of(token: &str) -> Option<&'static str> {
    let upper = token.to_ascii_uppercase();
    TOKENS
        .iter()
        .find(|(syn, _)| syn.contains(&upper.as_str()))
        .map(|(_, c)| *c)
}

impl Options {
    /// Parses a `DR_HOOK_OPT` value. Unknown tokens produce a warning;
    /// parsing never fails.
    pub fn parse(value: &str) -> (Options, Vec<Warning>) {
        let mut o = Options::default();
        let mut warnings = Vec::new();
        // The reference upper-cases the value, then reports every unknown
        // token in one line, joined by commas, in the order given.
        let mut unknown: Vec<String> = Vec::new();
        for token in split_list(value) {
            let Some(canon) = canonical_of(token) else {
                unknown.push(token.to_ascii_uppercase());
                continue;
            };
            // A repeated token moves to the end: the echo's order is the
            // order in which the tokens took effect (`prof,cpuprof,prof`
            // is a wall profile, echoed `CPUPROF,WALLPROF`).
            o.canonical.retain(|&c| c != canon);
            o.canonical.push(canon);
            match canon {
                "CALLS" => o.calls = true,
                "WALLTIME" => {
                    o.walltime = true;
                    o.calls = true;
                }
                "CPUTIME" => {
                    o.cputime = true;
                    o.calls = true;
                }
                "TIMES" => {
                    o.walltime = true;
                    o.cputime = true;
                    o.calls = true;
                }
                "WALLPROF" => o.set_wallprof(),
                "CPUPROF" => {
                    o.profile = Some(ProfileKind::Cpu);
                    o.cputime = true;
                    o.calls = true;
                }
                "SELF" => o.self_mode = SelfMode::Print,
                "NOSELF" => o.self_mode = SelfMode::Off,
                "TRIM" => o.trim = true,
                "CALLPATH" => o.callpath = true,
                "CLUSTERINFO" => o.clusterinfo = true,
                "NOSIZEINFO" => o.nosize = true,
                "NOPROPAGATE_SIGNALS" => o.noprop = true,
                "NONE" => {}
                "ALL" => {
                    o.walltime = true;
                    o.cputime = true;
                    o.calls = true;
                    o.mem.heap = true;
                    o.mem.stack = true;
                    o.mem.rss = true;
                    o.mem.paging = true;
                }
                "MEMORY" => {
                    o.mem.heap = true;
                    o.mem.stack = true;
                    o.mem.rss = true;
                    o.calls = true;
                }
                "HEAP" => {
                    o.mem.heap = true;
                    o.calls = true;
                }
                "STACK" => {
                    o.mem.stack = true;
                    o.calls = true;
                }
                "RSS" => {
                    o.mem.rss = true;
                    o.calls = true;
                }
                "PAGING" => {
                    o.mem.paging = true;
                    o.calls = true;
                }
                "MEMPROF" => {
                    // Not `paging`: it costs two system calls per enter
                    // and exit (`memprof,paging` asks for them).
                    o.mem.heap = true;
                    o.mem.stack = true;
                    o.mem.rss = true;
                    o.mem.memprof = true;
                    o.calls = true;
                }
                "HPMPROF" | "COUNTERS" => {
                    o.set_wallprof();
                    o.counters = true;
                }
                "JSON" => o.json = true,
                "REDUCE" => o.reduce = true,
                "RANKS" => o.ranks = true,
                "TRACE" => o.trace = true,
                "SUMMARY" => {
                    o.summary = true;
                    o.walltime = true;
                    o.calls = true;
                }
                "GPU" => {
                    // Reported beside the profile: a wall profile unless
                    // a profile token chose the clock.
                    o.gpu = true;
                    if o.profile.is_none() {
                        o.set_wallprof();
                    }
                }
                "SAMPLE" => {
                    // Reported beside the profile: a wall profile unless
                    // a profile token chose the clock.
                    o.sample = true;
                    if o.profile.is_none() {
                        o.set_wallprof();
                    }
                }
                "IO" => {
                    // Self time splits into I/O and compute.
                    o.io = true;
                    o.walltime = true;
                    o.calls = true;
                }
                "MPI" => {
                    o.mpi = true;
                    if o.profile.is_none() {
                        o.set_wallprof();
                    }
                }
                _ => {}
            }
        }
        if !unknown.is_empty() {
            let valid: Vec<&str> = TOKENS.iter().flat_map(|(s, _)| s.iter().copied()).collect();
            warnings.insert(
                0,
                Warning(format!(
                    "Warning - no match for DR_HOOK_OPT=\"{}\"",
                    unknown.join(",")
                )),
            );
            // Our hint, on its own line so that the reference's line stays
            // byte for byte what scripts match.
            warnings.insert(
                1,
                Warning(format!(
                    "(ignored; valid DR_HOOK_OPT tokens are: {})",
                    valid.join(",")
                )),
            );
        }
        // `json` asks for the profile as JSON: a wall profile unless a
        // profile token chose the clock (in any order, so the echo parses
        // back to the same options).
        if o.json && o.profile.is_none() {
            o.set_wallprof();
        }
        if o.reduce && o.profile.is_none() {
            warnings.push(Warning(
                "Warning - DR_HOOK_OPT=REDUCE reduces wall and CPU profiles only (add PROF or CPUPROF): ignored; memory and I/O profiles stay per task".into(),
            ));
        }
        if o.ranks && !o.reduce {
            warnings.push(Warning(
                "Warning - DR_HOOK_OPT=RANKS has a meaning only with REDUCE (per-task profiles are written anyway): ignored".into(),
            ));
        }
        (o, warnings)
    }

    fn set_wallprof(&mut self) {
        self.profile = Some(ProfileKind::Wall);
        self.walltime = true;
        self.calls = true;
    }

    /// The canonical echo, e.g. `WALLPROF,CALLPATH`.
    pub fn echo(&self) -> String {
        self.canonical.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_echo_keeps_the_effective_order() {
        let (o, _) = Options::parse("callpath prof/cpuprof/prof");
        assert_eq!(o.profile, Some(ProfileKind::Wall));
        assert_eq!(o.echo(), "CALLPATH,CPUPROF,WALLPROF");
        assert_eq!(Options::parse(&o.echo()).0.profile, Some(ProfileKind::Wall));
    }

    #[test]
    fn empty_means_call_tree_only() {
        let (o, w) = Options::parse("");
        assert!(w.is_empty());
        assert_eq!(o, Options::default());
        assert_eq!(o.profile, None);
    }

    #[test]
    fn synonyms_and_separators_case_insensitive() {
        let (o, w) = Options::parse("prof/CallPath\tcluster, noself");
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(o.profile, Some(ProfileKind::Wall));
        assert!(o.walltime && o.calls && o.callpath && o.clusterinfo);
        assert_eq!(o.self_mode, SelfMode::Off);
        assert_eq!(o.echo(), "WALLPROF,CALLPATH,CLUSTERINFO,NOSELF");
        for syn in ["wallprof", "CYCLES", "Prof"] {
            assert_eq!(
                Options::parse(syn).0.profile,
                Some(ProfileKind::Wall),
                "{syn}"
            );
        }
    }

    #[test]
    fn last_profile_kind_wins() {
        assert_eq!(
            Options::parse("prof,cpuprof").0.profile,
            Some(ProfileKind::Cpu)
        );
        assert_eq!(
            Options::parse("cpuprof,prof").0.profile,
            Some(ProfileKind::Wall)
        );
        let (o, _) = Options::parse("cpuprof,prof");
        assert!(
            o.cputime && o.walltime,
            "both clocks stay on for tracebacks"
        );
    }

    #[test]
    fn times_is_wall_and_cpu_without_file() {
        let (o, _) = Options::parse("times");
        assert!(o.walltime && o.cputime && o.calls);
        assert_eq!(o.profile, None);
        let (o, _) = Options::parse("cpu");
        assert!(o.cputime && !o.walltime);
    }

    #[test]
    fn reduce_and_ranks_are_options_and_warn_when_they_cannot_act() {
        let (o, w) = Options::parse("prof,reduce,ranks");
        assert!(o.reduce && o.ranks && w.is_empty(), "{w:?}");
        let (o, w) = Options::parse("memprof,reduce");
        assert!(o.reduce && o.profile.is_none());
        assert!(
            w.iter()
                .any(|w| w.0.contains("REDUCE reduces wall and CPU")),
            "{w:?}"
        );
        let (_, w) = Options::parse("prof,ranks");
        assert!(
            w.iter()
                .any(|w| w.0.contains("RANKS has a meaning only with REDUCE")),
            "{w:?}"
        );
    }

    #[test]
    fn unknown_tokens_warn_in_one_line_upper_cased() {
        let (o, w) = Options::parse("prof,bogus");
        assert_eq!(o.profile, Some(ProfileKind::Wall));
        assert_eq!(w.len(), 2);
        assert_eq!(w[0].0, "Warning - no match for DR_HOOK_OPT=\"BOGUS\"");
        assert!(w[1].0.contains("WALLPROF") && w[1].0.contains("CPUPROF"));
        // All unknown tokens in one line, as given (repeats kept), before
        // any other warning.
        let (o, w) = Options::parse("foo/heap, Bar\tfoo");
        assert_eq!(o.echo(), "HEAP");
        assert_eq!(w[0].0, "Warning - no match for DR_HOOK_OPT=\"FOO,BAR,FOO\"");
        assert_eq!(w.len(), 2, "heap is implemented: {w:?}");
        // Only unknown tokens: nothing to echo.
        let (o, w) = Options::parse("x");
        assert_eq!(o.echo(), "");
        assert_eq!(w[0].0, "Warning - no match for DR_HOOK_OPT=\"X\"");
        // Blank: nothing at all.
        let (o, w) = Options::parse(" ,\t/ ");
        assert!(w.is_empty() && o.echo().is_empty());
    }

    #[test]
    fn memory_tokens_switch_their_statistics_on() {
        let (o, w) = Options::parse("heap,rss,hpm");
        assert!(w.is_empty(), "{w:?}");
        assert!(o.counters && o.mem.heap && o.mem.rss && !o.mem.stack && !o.mem.memprof);
        for syn in ["hpmprof", "MFLOPS", "counters"] {
            assert!(Options::parse(syn).0.counters, "{syn}");
        }
        assert_eq!(o.profile, Some(ProfileKind::Wall), "hpm implies wallprof");
        let (o, w) = Options::parse("memprof");
        assert!(w.is_empty() && o.mem.memprof && o.mem.heap && o.mem.stack && o.calls);
        assert_eq!(o.profile, None, "memprof alone writes only the -mem file");
        let (o, _) = Options::parse("mem");
        assert!(o.mem.heap && o.mem.stack && o.mem.rss && !o.mem.paging && !o.mem.memprof);
        let (o, w) = Options::parse("all");
        assert!(w.is_empty(), "{w:?}");
        assert!(o.walltime && o.cputime && o.calls && o.profile.is_none());
        assert!(o.mem.any() && !o.mem.memprof);
        assert!(!Options::parse("prof").0.mem.any());
    }

    #[test]
    fn json_is_a_wall_profile_unless_a_clock_is_chosen() {
        let (o, w) = Options::parse("json");
        assert!(w.is_empty(), "{w:?}");
        assert!(o.json && o.walltime);
        assert_eq!(o.profile, Some(ProfileKind::Wall));
        assert_eq!(o.echo(), "JSON");
        for v in ["cpuprof,json", "json,cpuprof", "Json/CPUPROF"] {
            let (o, _) = Options::parse(v);
            assert_eq!(o.profile, Some(ProfileKind::Cpu), "{v}");
            assert!(o.json, "{v}");
            assert_eq!(Options::parse(&o.echo()).0, o, "{v}: the echo parses back");
        }
    }

    #[test]
    fn trace_alone_records_a_timeline_without_a_profile() {
        let (o, w) = Options::parse("trace");
        assert!(w.is_empty(), "{w:?}");
        assert!(o.trace && o.profile.is_none() && !o.walltime);
        assert_eq!(o.echo(), "TRACE");
        let (o, _) = Options::parse("timeline,prof,json");
        assert!(o.trace && o.json);
        assert_eq!(o.echo(), "TRACE,WALLPROF,JSON");
        assert_eq!(Options::parse(&o.echo()).0, o);
    }

    #[test]
    fn self_modes() {
        assert_eq!(Options::parse("prof").0.self_mode, SelfMode::Account);
        assert_eq!(Options::parse("prof,self").0.self_mode, SelfMode::Print);
        assert_eq!(Options::parse("self,noself").0.self_mode, SelfMode::Off);
    }

    #[test]
    fn every_synonym_is_recognised() {
        for (syns, canon) in TOKENS {
            for s in *syns {
                assert_eq!(canonical_of(s), Some(*canon));
                assert_eq!(canonical_of(&s.to_lowercase()), Some(*canon));
            }
        }
    }
}
