//! The engine's configuration, built from environment values by pure
//! functions (see [`Config::from_lookup`]): `env` names the variables,
//! `options` parses `DR_HOOK_OPT`, `task` finds the MPI rank and size, and
//! this module assembles the whole [`Config`]. Depends on nothing else in
//! the crate.

pub mod env;
pub mod lines;
pub mod meta;
pub mod options;
pub mod process;
pub mod ranges;
pub mod report;
pub mod task;
pub mod trace;

use self::options::{Options, Warning};
use self::process::{Follow, TreeMarker};
use self::task::Task;

/// Default profile file template.
pub const DEFAULT_PROFILE: &str = "drhook.prof.%d";
/// Default `DR_HOOK_PROFILE_LIMIT`: print every row.
pub const DEFAULT_PROFILE_LIMIT: f64 = -10.0;
/// Default `DR_HOOK_TRACE_EVENTS`: events per thread (16 MB of address
/// space, touched only as events are recorded).
pub const DEFAULT_TRACE_EVENTS: u64 = 1_000_000;
/// Default of `DRHOOK_THREAD_BLOCKS`: threads that ended keeping their own
/// block in the profile.
pub const DEFAULT_THREAD_BLOCKS: u32 = 256;
/// Default `DR_HOOK_SAMPLE_HZ`: samples per second of thread CPU time.
pub const DEFAULT_SAMPLE_HZ: u32 = 1000;

/// Largest `DR_HOOK_TRACE_EVENTS` (1 TiB of events per thread).
pub const MAX_TRACE_EVENTS: u64 = 1 << 36;

/// Which clock measures wall time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockChoice {
    /// Use the time-stamp counter when it is invariant, else `CLOCK_MONOTONIC`.
    Auto,
    /// Always `CLOCK_MONOTONIC` (vDSO).
    Monotonic,
}

/// A list of signal numbers, or "all" (`-1`).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum SignalList {
    /// Nothing.
    #[default]
    None,
    /// These numbers.
    Some(Vec<i32>),
    /// `-1`.
    All,
}

impl SignalList {
    /// Whether `sig` is in the list.
    pub fn contains(&self, sig: i32) -> bool {
        match self {
            SignalList::None => false,
            SignalList::Some(v) => v.contains(&sig),
            SignalList::All => true,
        }
    }
}

/// Parses a list of signal numbers (`", \t/"` separated); `-1` anywhere
/// means all; malformed or out-of-range entries warn and are skipped.
pub fn parse_signal_list(
    name: &str,
    value: Option<&str>,
    warnings: &mut Vec<Warning>,
) -> SignalList {
    let Some(v) = value else {
        return SignalList::None;
    };
    let mut out = Vec::new();
    for tok in options::split_list(v) {
        match tok.parse::<i32>() {
            Ok(-1) => return SignalList::All,
            Ok(0) => {}
            Ok(n) if (1..=64).contains(&n) => out.push(n),
            _ => warnings.push(Warning(format!(
                "Warning - {name}: \"{tok}\" is not a signal number (ignored)"
            ))),
        }
    }
    if out.is_empty() {
        SignalList::None
    } else {
        SignalList::Some(out)
    }
}

/// Signal handling and floating-point trapping (compat §2.3).
#[derive(Clone, Debug, PartialEq)]
pub struct SignalConfig {
    /// `DR_HOOK_INIT_SIGNALS` does not start with `0`.
    pub install: bool,
    /// `DR_HOOK_CATCH_SIGNALS`.
    pub catch: SignalList,
    /// `DR_HOOK_IGNORE_SIGNALS`.
    pub ignore: SignalList,
    /// `DR_HOOK_RESTORE_DEFAULT_SIGNALS`.
    pub restore_default: SignalList,
    /// `DR_HOOK_HARAKIRI_TIMEOUT` in seconds (default 500).
    pub harakiri_timeout: u32,
    /// `DR_HOOK_USE_LOCKFILE`: `None` = default (only when several tasks run).
    pub use_lockfile: Option<bool>,
    /// `DR_HOOK_ALLOW_COREDUMP`: `Some(-1)` all tasks, `Some(n)` task n.
    pub allow_coredump: Option<i64>,
    /// `DR_HOOK_TRAPFPE`: `None` when unset (or malformed), the default
    /// of the front door that starts Dr.Hook (on for `libdrhook` from
    /// Fortran and C, as the reference; off from Rust:
    /// `crate::signals::trap_fpe_by_default`).
    pub trapfpe: Option<bool>,
    /// `DR_HOOK_TRAPFPE_INVALID` (default on).
    pub trap_invalid: bool,
    /// `DR_HOOK_TRAPFPE_DIVBYZERO` (default on).
    pub trap_divbyzero: bool,
    /// `DR_HOOK_TRAPFPE_OVERFLOW` (default on).
    pub trap_overflow: bool,
    /// `DRHOOK_BACKTRACE` (default on): native backtrace after a crash.
    pub native_backtrace: bool,
}

impl SignalConfig {
    /// Parses the signal variables.
    pub fn from_lookup(
        get: &dyn Fn(&str) -> Option<String>,
        warnings: &mut Vec<Warning>,
    ) -> SignalConfig {
        let flag = |name: &str, default: i64, w: &mut Vec<Warning>| {
            parse_int_in(name, get(name).as_deref(), default, 0..=1, w) != 0
        };
        let install =
            !get(env::DR_HOOK_INIT_SIGNALS).is_some_and(|v| v.trim_start().starts_with('0'));
        let timeout = parse_int_in(
            env::DR_HOOK_HARAKIRI_TIMEOUT,
            get(env::DR_HOOK_HARAKIRI_TIMEOUT).as_deref(),
            500,
            1..=u32::MAX as i64,
            warnings,
        );
        let lock = get(env::DR_HOOK_USE_LOCKFILE)
            .filter(|v| !v.trim().is_empty())
            .map(|v| parse_int_in(env::DR_HOOK_USE_LOCKFILE, Some(&v), 1, 0..=1, warnings) != 0);
        let core = parse_int_in(
            env::DR_HOOK_ALLOW_COREDUMP,
            get(env::DR_HOOK_ALLOW_COREDUMP).as_deref(),
            0,
            -1..=i64::MAX,
            warnings,
        );
        SignalConfig {
            install,
            catch: parse_signal_list(
                env::DR_HOOK_CATCH_SIGNALS,
                get(env::DR_HOOK_CATCH_SIGNALS).as_deref(),
                warnings,
            ),
            ignore: parse_signal_list(
                env::DR_HOOK_IGNORE_SIGNALS,
                get(env::DR_HOOK_IGNORE_SIGNALS).as_deref(),
                warnings,
            ),
            restore_default: parse_signal_list(
                env::DR_HOOK_RESTORE_DEFAULT_SIGNALS,
                get(env::DR_HOOK_RESTORE_DEFAULT_SIGNALS).as_deref(),
                warnings,
            ),
            harakiri_timeout: timeout as u32,
            use_lockfile: lock,
            allow_coredump: (core == -1 || core >= 1).then_some(core),
            trapfpe: parse_opt_flag(env::DR_HOOK_TRAPFPE, get(env::DR_HOOK_TRAPFPE), warnings),
            trap_invalid: flag(env::DR_HOOK_TRAPFPE_INVALID, 1, warnings),
            trap_divbyzero: flag(env::DR_HOOK_TRAPFPE_DIVBYZERO, 1, warnings),
            trap_overflow: flag(env::DR_HOOK_TRAPFPE_OVERFLOW, 1, warnings),
            native_backtrace: flag(env::DRHOOK_BACKTRACE, 1, warnings),
        }
    }
}

/// Everything read from the environment at the first instrumented call.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// `DR_HOOK`.
    pub enabled: bool,
    /// `DR_HOOK_STACKCHECK` is true (`1`, `yes`, `true`, `on`).
    pub stackcheck: bool,
    /// `DR_HOOK_HEAPCHECK` is true.
    pub heapcheck: bool,
    /// `DR_HOOK_OPT`.
    pub options: Options,
    /// `DR_HOOK_PROFILE`, with `.%d` appended when it had no `%`.
    pub profile_template: String,
    /// `DR_HOOK_PROFILE_PROC`: `None` = every task writes.
    pub profile_proc: Option<u32>,
    /// `DR_HOOK_PROFILE_LIMIT`.
    pub profile_limit: f64,
    /// `DR_HOOK_SILENT`.
    pub silent: bool,
    /// Whether this task echoes its options (`DR_HOOK_SHOW_PROCESS_OPTIONS`).
    pub show_options: bool,
    /// `DR_HOOK_CALLPATH_INDENT` (1..=8).
    pub callpath_indent: usize,
    /// `DR_HOOK_CALLPATH_DEPTH`.
    pub callpath_depth: usize,
    /// `DR_HOOK_CALLPATH_PACKED`.
    pub callpath_packed: bool,
    /// `DRHOOK_CLOCK`.
    pub clock: ClockChoice,
    /// `DR_HOOK_STRICT_REGIONS`: exits from C/Fortran must name the routine
    /// they leave.
    pub strict_regions: bool,
    /// Signal handling and floating-point traps.
    pub signals: SignalConfig,
    /// `DR_HOOK_PAPI_COUNTERS`: events per routine with `hpmprof`.
    pub counter_events: Option<String>,
    /// `DR_HOOK_TRACE_EVENTS`: events recorded per thread with `trace`.
    pub trace_events: u64,
    /// The timeline's filters and ring mode (`DR_HOOK_TRACE_*`).
    pub trace_filter: trace::TraceFilter,
    /// The summary at exit (`DR_HOOK_SUMMARY*`).
    pub summary: report::SummaryConfig,
    /// `DR_HOOK_SAMPLE_HZ`: samples per second of thread CPU time with
    /// `sample`.
    pub sample_hz: u32,
    /// `DRHOOK_THREAD_BLOCKS`: threads that ended keeping their own block
    /// in the profile (later ones are summed per first routine).
    pub thread_blocks: u32,
    /// MPI task from the launcher.
    pub task: Task,
    /// Whether a launcher variable gave this process its rank (`task` is
    /// otherwise the default 1 of 1).
    pub launcher_rank: bool,
    /// `DRHOOK_FOLLOW`: which child processes write a profile.
    pub follow: Follow,
    /// `DRHOOK_PROFILE_ON_FAILURE`: a failing process writes its profile too.
    pub profile_on_failure: bool,
    /// `DRHOOK_PROFILE_PREFIX`: prefix of every process's profile file.
    pub profile_prefix: Option<String>,
    /// `DRHOOK_FSYNC`: files are made durable (`fsync`) before the rename.
    pub fsync: bool,
    /// `DRHOOK_PROCESS_TREE`: what the parent process passed down.
    pub tree: Option<TreeMarker>,
    /// `DR_HOOK_NVTX` / `DR_HOOK_ROCTX` and their filters.
    pub ranges: ranges::Ranges,
    /// Run metadata: `DR_HOOK_OPT` as given and `DR_HOOK_META`'s pairs.
    pub meta: meta::Meta,
    /// The reference's per-call printing (`DR_HOOK_FUNCENTER`, ...,
    /// `DR_HOOK_TIMELINE`) and `DR_HOOK_GENCORE`.
    pub lines: lines::Lines,
    /// Problems found; printed once at start-up (unless silent).
    pub warnings: Vec<Warning>,
}

/// A raw variable value as text, and whether it was valid UTF-8 (if not,
/// each invalid sequence is replaced by U+FFFD and the rest kept).
pub fn decode_value(raw: std::ffi::OsString) -> (String, bool) {
    match raw.into_string() {
        Ok(s) => (s, true),
        Err(raw) => (raw.to_string_lossy().into_owned(), false),
    }
}

/// The warning for a variable whose value is not valid UTF-8.
pub fn non_utf8_warning(name: &str) -> String {
    format!(
        "Warning - {name} is not valid UTF-8: its invalid bytes are read as U+FFFD (\u{fffd}), the rest is kept"
    )
}

/// `DR_HOOK` semantics: off when unset, empty, `0`, `false`, `off` or `no`
/// (any case); every other value switches Dr.Hook on.
pub fn parse_switch(value: Option<&str>) -> bool {
    match value.map(str::trim) {
        None | Some("") => false,
        Some(v) => !["0", "false", "off", "no"]
            .iter()
            .any(|off| v.eq_ignore_ascii_case(off)),
    }
}

/// Parses an integer variable; a malformed value warns and gives `default`.
pub fn parse_int(
    name: &str,
    value: Option<&str>,
    default: i64,
    warnings: &mut Vec<Warning>,
) -> i64 {
    match value.map(str::trim) {
        None | Some("") => default,
        Some(v) => v.parse().unwrap_or_else(|_| {
            warnings.push(Warning(format!(
                "Warning - {name}=\"{v}\" is not an integer; using the default {default}"
            )));
            default
        }),
    }
}

/// Parses a `0`/`1` variable whose default is decided elsewhere: `None`
/// when unset, empty or malformed (with a warning).
pub fn parse_opt_flag(
    name: &str,
    value: Option<String>,
    warnings: &mut Vec<Warning>,
) -> Option<bool> {
    let v = value?;
    match v.trim() {
        "" => None,
        "0" => Some(false),
        "1" => Some(true),
        v => {
            warnings.push(Warning(format!(
                "Warning - {name}=\"{v}\" is out of range (allowed: 0 or 1); using the default"
            )));
            None
        }
    }
}

/// Parses an integer variable that must lie in `range`; a malformed or
/// out-of-range value (a negative timeout, an indentation of 0) warns and
/// gives `default`.
pub fn parse_int_in(
    name: &str,
    value: Option<&str>,
    default: i64,
    range: std::ops::RangeInclusive<i64>,
    warnings: &mut Vec<Warning>,
) -> i64 {
    let n = parse_int(name, value, default, warnings);
    if range.contains(&n) {
        return n;
    }
    let (lo, hi) = (*range.start(), *range.end());
    let allowed = if hi == i64::MAX {
        format!("at least {lo}")
    } else {
        format!("from {lo} to {hi}")
    };
    warnings.push(Warning(format!(
        "Warning - {name}=\"{}\" is out of range (allowed: {allowed}); using the default {default}",
        value.unwrap_or("").trim()
    )));
    default
}

/// Parses a floating-point variable; a malformed value warns and gives `default`.
pub fn parse_float(
    name: &str,
    value: Option<&str>,
    default: f64,
    warnings: &mut Vec<Warning>,
) -> f64 {
    match value.map(str::trim) {
        None | Some("") => default,
        Some(v) => match v.parse::<f64>() {
            Ok(x) if x.is_finite() => x,
            _ => {
                warnings.push(Warning(format!(
                    "Warning - {name}=\"{v}\" is not a number; using the default {default}"
                )));
                default
            }
        },
    }
}

/// `DR_HOOK_PROFILE` rule: a template without `%` gets `.%d` appended.
pub fn profile_template(value: Option<&str>) -> String {
    match value.map(str::trim) {
        None | Some("") => DEFAULT_PROFILE.to_string(),
        Some(v) if v.contains('%') => v.to_string(),
        Some(v) => format!("{v}.%d"),
    }
}

/// Whether the reference would act on `value` of an unsupported variable
/// (see [`env::Acts`]).
pub fn unsupported_value_acts(acts: env::Acts, value: &str) -> bool {
    let v = value.trim();
    match acts {
        env::Acts::NonZero => atoi(v) != 0,
        env::Acts::True => parse_truthy(v),
        env::Acts::NonBlank => !v.is_empty(),
    }
}

/// Whether the first C or Fortran Dr.Hook call must find MPI initialised
/// (the reference's `DR_HOOK_INIT` assertion): in a process that looks
/// MPI-launched ([`env::MPI_LAUNCH_VARS`] set and not empty), unless
/// `DR_HOOK_ASSERT_MPI_INITIALIZED` is off (`0`, `false`, `off`, `no`; an
/// unset or empty value leaves it on, as in the reference) or
/// `DR_HOOK_NOT_MPI` is true.
pub fn mpi_assertion_required(get: impl Fn(&str) -> Option<String>) -> bool {
    let launched = env::MPI_LAUNCH_VARS
        .iter()
        .any(|v| get(v).is_some_and(|v| !v.trim().is_empty()));
    let off = get(env::DR_HOOK_ASSERT_MPI_INITIALIZED).is_some_and(|v| {
        let v = v.trim();
        ["0", "false", "off", "no"]
            .iter()
            .any(|o| v.eq_ignore_ascii_case(o))
    });
    let not_mpi = get(env::DR_HOOK_NOT_MPI).is_some_and(|v| parse_truthy(&v));
    launched && !off && !not_mpi
}

/// The reference's true values of its Fortran-side switches
/// (`DR_HOOK_STACKCHECK`, `DR_HACK`, ...): `1`, `yes`, `true`, `on` (any
/// case, blanks around ignored).
pub fn parse_truthy(value: &str) -> bool {
    let v = value.trim();
    ["1", "yes", "true", "on"]
        .iter()
        .any(|t| v.eq_ignore_ascii_case(t))
}

/// C's `atoi`: optional blanks and sign, then digits; anything else ends
/// the number (garbage reads 0). Saturates instead of overflowing.
pub fn atoi(value: &str) -> i64 {
    let s = value.trim_start();
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut n: i64 = 0;
    for b in digits.bytes().take_while(u8::is_ascii_digit) {
        n = n.saturating_mul(10).saturating_add(i64::from(b - b'0'));
    }
    if neg { -n } else { n }
}

/// Expands `%d` in a profile template to the 1-based task number.
pub fn profile_path(template: &str, myproc: u32) -> String {
    template.replace("%d", &myproc.to_string())
}

impl Config {
    /// Builds the configuration from a variable lookup (the process
    /// environment in production, a table in tests).
    pub fn from_lookup(get: &dyn Fn(&str) -> Option<String>) -> Config {
        let enabled = parse_switch(get(env::DR_HOOK).as_deref());
        let (options, mut warnings) =
            Options::parse(get(env::DR_HOOK_OPT).as_deref().unwrap_or(""));
        let (task, task_warnings) = Task::from_lookup(get);
        warnings.extend(task_warnings);

        let profile_proc = match parse_int(
            env::DR_HOOK_PROFILE_PROC,
            get(env::DR_HOOK_PROFILE_PROC).as_deref(),
            -1,
            &mut warnings,
        ) {
            n if n >= 1 && n <= u32::MAX as i64 => Some(n as u32),
            -1 => None,
            n => {
                warnings.push(Warning(format!(
                    "Warning - {}={n} is neither -1 nor a task number; every task writes its profile",
                    env::DR_HOOK_PROFILE_PROC
                )));
                None
            }
        };
        let profile_limit = parse_float(
            env::DR_HOOK_PROFILE_LIMIT,
            get(env::DR_HOOK_PROFILE_LIMIT).as_deref(),
            DEFAULT_PROFILE_LIMIT,
            &mut warnings,
        );
        let silent = parse_int_in(
            env::DR_HOOK_SILENT,
            get(env::DR_HOOK_SILENT).as_deref(),
            0,
            0..=i64::MAX,
            &mut warnings,
        ) != 0;
        let show = parse_int_in(
            env::DR_HOOK_SHOW_PROCESS_OPTIONS,
            get(env::DR_HOOK_SHOW_PROCESS_OPTIONS).as_deref(),
            if silent { 0 } else { 1 },
            -1..=i64::MAX,
            &mut warnings,
        );
        let show_options = show == -1 || show == task.myproc as i64;
        // Accepted for compatibility: the tree needs no hash table.
        let _ = parse_int_in(
            env::DR_HOOK_HASHBITS,
            get(env::DR_HOOK_HASHBITS).as_deref(),
            16,
            1..=64,
            &mut warnings,
        );

        let indent = parse_int_in(
            env::DR_HOOK_CALLPATH_INDENT,
            get(env::DR_HOOK_CALLPATH_INDENT).as_deref(),
            2,
            1..=8,
            &mut warnings,
        );
        let depth = parse_int_in(
            env::DR_HOOK_CALLPATH_DEPTH,
            get(env::DR_HOOK_CALLPATH_DEPTH).as_deref(),
            50,
            1..=100_000,
            &mut warnings,
        );
        let packed = parse_int_in(
            env::DR_HOOK_CALLPATH_PACKED,
            get(env::DR_HOOK_CALLPATH_PACKED).as_deref(),
            0,
            0..=i64::MAX,
            &mut warnings,
        ) != 0;
        let clock = match get(env::DRHOOK_CLOCK).as_deref().map(str::trim) {
            None | Some("") => ClockChoice::Auto,
            Some(v) if v.eq_ignore_ascii_case("tsc") || v.eq_ignore_ascii_case("auto") => {
                ClockChoice::Auto
            }
            Some(v) if v.eq_ignore_ascii_case("monotonic") => ClockChoice::Monotonic,
            Some(v) => {
                warnings.push(Warning(format!(
                    "Warning - {}=\"{v}\" is neither tsc nor monotonic; using tsc where invariant",
                    env::DRHOOK_CLOCK
                )));
                ClockChoice::Auto
            }
        };

        let strict_regions = parse_int_in(
            env::DR_HOOK_STRICT_REGIONS,
            get(env::DR_HOOK_STRICT_REGIONS).as_deref(),
            0,
            0..=i64::MAX,
            &mut warnings,
        ) != 0;
        let ranges = ranges::Ranges::from_lookup(get, &mut warnings);
        // As the reference: ranges imply strict regions.
        let strict_regions = strict_regions || ranges.any();
        let signals = SignalConfig::from_lookup(get, &mut warnings);
        for &(var, acts) in env::UNSUPPORTED {
            let Some(v) = get(var) else { continue };
            if unsupported_value_acts(acts, &v) {
                warnings.push(Warning(format!(
                    "Warning - {var}=\"{v}\" is not supported by drhook-rs (ignored)"
                )));
            }
        }
        let counter_events = get(env::DR_HOOK_PAPI_COUNTERS).filter(|v| !v.trim().is_empty());
        let launcher_rank = env::RANK_VARS
            .iter()
            .any(|v| get(v).is_some_and(|x| x.trim().parse::<u32>().is_ok()));
        let follow = Follow::parse(get(env::DRHOOK_FOLLOW).as_deref(), &mut warnings);
        let profile_on_failure = parse_int(
            env::DRHOOK_PROFILE_ON_FAILURE,
            get(env::DRHOOK_PROFILE_ON_FAILURE).as_deref(),
            1,
            &mut warnings,
        ) != 0;
        let fsync = parse_int(
            env::DRHOOK_FSYNC,
            get(env::DRHOOK_FSYNC).as_deref(),
            0,
            &mut warnings,
        ) != 0;
        let profile_prefix = get(env::DRHOOK_PROFILE_PREFIX)
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty());
        let tree = process::parse_marker(get(env::DRHOOK_PROCESS_TREE).as_deref(), &mut warnings);
        let stackcheck = get(env::DR_HOOK_STACKCHECK).is_some_and(|v| parse_truthy(&v));
        let heapcheck = get(env::DR_HOOK_HEAPCHECK).is_some_and(|v| parse_truthy(&v));
        let trace_events = parse_int_in(
            env::DR_HOOK_TRACE_EVENTS,
            get(env::DR_HOOK_TRACE_EVENTS).as_deref(),
            DEFAULT_TRACE_EVENTS as i64,
            2..=MAX_TRACE_EVENTS as i64,
            &mut warnings,
        ) as u64;
        let sample_hz = parse_int_in(
            env::DR_HOOK_SAMPLE_HZ,
            get(env::DR_HOOK_SAMPLE_HZ).as_deref(),
            DEFAULT_SAMPLE_HZ as i64,
            1..=100_000,
            &mut warnings,
        ) as u32;
        let thread_blocks = parse_int_in(
            env::DRHOOK_THREAD_BLOCKS,
            get(env::DRHOOK_THREAD_BLOCKS).as_deref(),
            DEFAULT_THREAD_BLOCKS as i64,
            0..=u32::MAX as i64,
            &mut warnings,
        ) as u32;
        let trace_filter = trace::TraceFilter::from_lookup(get, &mut warnings);
        let summary = report::SummaryConfig::from_lookup(get, &mut warnings);
        let meta = meta::Meta::from_lookup(get, &mut warnings);
        let mut lines = lines::Lines::from_lookup(get, task.myproc, &mut warnings);
        // As the reference, which reads it only with CALLPATH.
        if lines.calltrace && !options.callpath {
            lines.calltrace = false;
            warnings.push(Warning(format!(
                "Warning - {} acts only with DR_HOOK_OPT=callpath (as in the reference); ignored",
                env::DR_HOOK_CALLTRACE
            )));
        }
        Config {
            lines,
            summary,
            sample_hz,
            meta,
            thread_blocks,
            launcher_rank,
            follow,
            profile_on_failure,
            profile_prefix,
            fsync,
            tree,
            stackcheck,
            heapcheck,
            counter_events,
            trace_events,
            trace_filter,
            signals,
            strict_regions,
            ranges,
            enabled,
            options,
            profile_template: profile_template(get(env::DR_HOOK_PROFILE).as_deref()),
            profile_proc,
            profile_limit,
            silent,
            show_options,
            callpath_indent: indent as usize,
            callpath_depth: depth as usize,
            callpath_packed: packed,
            clock,
            task,
            warnings,
        }
    }

    /// As [`Config::from_lookup`], from a lookup of raw values (the process
    /// environment is bytes): a value that is not valid UTF-8 keeps its
    /// valid parts, each invalid sequence read as U+FFFD, and one warning
    /// names the variable. (`DR_HOOK=$'\xff'` is on, as any value not in
    /// the off list; `DR_HOOK_OPT=$'prof,\xff'` keeps `prof`.)
    pub fn from_os_lookup(get: &dyn Fn(&str) -> Option<std::ffi::OsString>) -> Config {
        let bad: std::cell::RefCell<Vec<String>> = std::cell::RefCell::new(Vec::new());
        let text = |name: &str| -> Option<String> {
            let (value, valid) = decode_value(get(name)?);
            if !valid && !bad.borrow().iter().any(|b| b == name) {
                bad.borrow_mut().push(name.to_string());
            }
            Some(value)
        };
        let mut c = Config::from_lookup(&text);
        let encoding: Vec<Warning> = bad
            .into_inner()
            .into_iter()
            .map(|name| Warning(non_utf8_warning(&name)))
            .collect();
        c.warnings.splice(0..0, encoding);
        c
    }

    /// Whether this task writes a profile at all.
    pub fn writes_profile(&self) -> bool {
        self.options.profile.is_some() && self.profile_proc.is_none_or(|p| p == self.task.myproc)
    }

    /// The profile file name of this task.
    pub fn profile_path(&self) -> String {
        profile_path(&self.profile_template, self.task.myproc)
    }

    /// Whether this task writes the profile's JSON companion
    /// (`DR_HOOK_OPT=json`).
    pub fn writes_json(&self) -> bool {
        self.options.json && self.writes_profile()
    }

    /// The JSON companion of this task's profile: `<profile>.json`.
    pub fn json_path(&self) -> String {
        format!("{}.json", self.profile_path())
    }

    /// Whether this task records and writes a timeline (`DR_HOOK_OPT=trace`;
    /// `DR_HOOK_PROFILE_PROC` selects the task as for the profile).
    pub fn writes_trace(&self) -> bool {
        self.options.trace && self.profile_proc.is_none_or(|p| p == self.task.myproc)
    }

    /// This task's timeline: `drhook.trace.<task>.json` in the directory of
    /// the profile.
    pub fn trace_path(&self) -> String {
        let name = format!("drhook.trace.{}.json", self.task.myproc);
        let profile = self.profile_path();
        match std::path::Path::new(&profile).parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir.join(name).display().to_string(),
            _ => name,
        }
    }
}

#[cfg(test)]
mod tests;
