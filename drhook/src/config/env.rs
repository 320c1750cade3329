//! Names of the environment variables the engine reads, and the one place
//! that reads them.
//!
//! Everything that interprets a value is a pure function over strings (see
//! [`crate::config`] and [`crate::config::options`]); this module only knows the names.

/// Master switch: unset, empty, `0`, `false`, `off` or `no` (any case) = off.
pub const DR_HOOK: &str = "DR_HOOK";
/// Comma/space/tab/slash separated option tokens (see [`crate::config::options`]).
pub const DR_HOOK_OPT: &str = "DR_HOOK_OPT";
/// Profile file template; `%d` is the 1-based MPI task number.
pub const DR_HOOK_PROFILE: &str = "DR_HOOK_PROFILE";
/// Which MPI task writes a profile (1-based); `-1` = all.
pub const DR_HOOK_PROFILE_PROC: &str = "DR_HOOK_PROFILE_PROC";
/// Rows whose `% Time` falls below this limit are not printed.
pub const DR_HOOK_PROFILE_LIMIT: &str = "DR_HOOK_PROFILE_LIMIT";
/// Non-zero: no option echo at start-up (profile messages are still printed).
pub const DR_HOOK_SILENT: &str = "DR_HOOK_SILENT";
/// Print the option echo when `-1` or equal to this task's number.
pub const DR_HOOK_SHOW_PROCESS_OPTIONS: &str = "DR_HOOK_SHOW_PROCESS_OPTIONS";
/// Hash-table size of the reference implementation; accepted and ignored.
pub const DR_HOOK_HASHBITS: &str = "DR_HOOK_HASHBITS";
/// Indentation step of call paths in the profile (`callpath`), 1..8.
pub const DR_HOOK_CALLPATH_INDENT: &str = "DR_HOOK_CALLPATH_INDENT";
/// Maximum depth of call paths in the profile (`callpath`).
pub const DR_HOOK_CALLPATH_DEPTH: &str = "DR_HOOK_CALLPATH_DEPTH";
/// Non-zero: print call paths packed as `OUTER/.../NAME`.
pub const DR_HOOK_CALLPATH_PACKED: &str = "DR_HOOK_CALLPATH_PACKED";
/// Non-zero: an exit from C or Fortran must also name the routine it leaves.
pub const DR_HOOK_STRICT_REGIONS: &str = "DR_HOOK_STRICT_REGIONS";
/// Extra signals to catch; `-1` = every signal whose default action ends the process.
pub const DR_HOOK_CATCH_SIGNALS: &str = "DR_HOOK_CATCH_SIGNALS";
/// Signals not to catch; `-1` = none at all. Applied after the catch list.
pub const DR_HOOK_IGNORE_SIGNALS: &str = "DR_HOOK_IGNORE_SIGNALS";
/// Signals reset to their default action at start-up; `-1` = all.
pub const DR_HOOK_RESTORE_DEFAULT_SIGNALS: &str = "DR_HOOK_RESTORE_DEFAULT_SIGNALS";
/// A value starting with `0` disables signal handlers altogether.
pub const DR_HOOK_INIT_SIGNALS: &str = "DR_HOOK_INIT_SIGNALS";
/// Seconds after which a crash handler that has not finished kills the process.
pub const DR_HOOK_HARAKIRI_TIMEOUT: &str = "DR_HOOK_HARAKIRI_TIMEOUT";
/// 1: processes take turns (lock file `drhook_lock`) to print tracebacks.
pub const DR_HOOK_USE_LOCKFILE: &str = "DR_HOOK_USE_LOCKFILE";
/// `-1` or a task number: raise the core-file limit to the hard limit on a crash.
pub const DR_HOOK_ALLOW_COREDUMP: &str = "DR_HOOK_ALLOW_COREDUMP";
/// 1 (default): enable floating-point traps when Dr.Hook is on.
pub const DR_HOOK_TRAPFPE: &str = "DR_HOOK_TRAPFPE";
/// Per-class switch of [`DR_HOOK_TRAPFPE`]: invalid operation.
pub const DR_HOOK_TRAPFPE_INVALID: &str = "DR_HOOK_TRAPFPE_INVALID";
/// Per-class switch of [`DR_HOOK_TRAPFPE`]: division by zero.
pub const DR_HOOK_TRAPFPE_DIVBYZERO: &str = "DR_HOOK_TRAPFPE_DIVBYZERO";
/// Per-class switch of [`DR_HOOK_TRAPFPE`]: overflow.
pub const DR_HOOK_TRAPFPE_OVERFLOW: &str = "DR_HOOK_TRAPFPE_OVERFLOW";
/// Events counted per routine with `DR_HOOK_OPT=hpmprof`: perf event names,
/// `hpm` group names or PAPI presets (`PAPI_TOT_CYC`, `PAPI_TOT_INS`, ...).
pub const DR_HOOK_PAPI_COUNTERS: &str = "DR_HOOK_PAPI_COUNTERS";
/// Project extension: with `DR_HOOK_OPT=trace`, the most enter and exit
/// events recorded per thread (16 bytes each, reserved at the thread's
/// first instrumented call); recording stops when they are used up.
pub const DR_HOOK_TRACE_EVENTS: &str = "DR_HOOK_TRACE_EVENTS";
/// Project extension, with `DR_HOOK_OPT=trace`: an activation shorter than this many
/// microseconds (with nothing recorded inside it) is dropped at its exit.
pub const DR_HOOK_TRACE_MIN_US: &str = "DR_HOOK_TRACE_MIN_US";
/// Project extension, with `DR_HOOK_OPT=trace`: a regular expression; only routines whose name
/// it matches are recorded (decided once per calling-tree node).
pub const DR_HOOK_TRACE_MATCH: &str = "DR_HOOK_TRACE_MATCH";
/// Project extension, with `DR_HOOK_OPT=trace`: only activations at most this deep in the
/// calling tree (1: the outermost routines) are recorded.
pub const DR_HOOK_TRACE_DEPTH: &str = "DR_HOOK_TRACE_DEPTH";
/// Project extension, with `DR_HOOK_OPT=trace`: `1` and the buffer keeps the last
/// `DR_HOOK_TRACE_EVENTS` events of each thread instead of the first.
pub const DR_HOOK_TRACE_RING: &str = "DR_HOOK_TRACE_RING";
/// Project extension: with `DR_HOOK_OPT=summary`, the file the summary
/// goes to (default: stderr).
pub const DR_HOOK_SUMMARY: &str = "DR_HOOK_SUMMARY";
/// Project extension: the most call paths the summary shows (default 40).
pub const DR_HOOK_SUMMARY_LINES: &str = "DR_HOOK_SUMMARY_LINES";
/// Project extension: with `DR_HOOK_OPT=sample`, samples per second of
/// each thread's CPU time (default 1000).
pub const DR_HOOK_SAMPLE_HZ: &str = "DR_HOOK_SAMPLE_HZ";
/// Project extension: `0` skips the native backtrace after a crash (the
/// Dr.Hook calling trees are still printed).
pub const DRHOOK_BACKTRACE: &str = "DRHOOK_BACKTRACE";
/// Project extension: `tsc` (default where the TSC is invariant) or `monotonic`.
pub const DRHOOK_CLOCK: &str = "DRHOOK_CLOCK";

/// Project extension: which child processes of a run write a profile —
/// `all` (default), `none`, or a regular expression on the command name
/// (the file name of `argv[0]`). The first process always does.
pub const DRHOOK_FOLLOW: &str = "DRHOOK_FOLLOW";
/// Project extension: `0` writes no profile for a process that ends with a
/// non-zero exit status, `abort` or a fatal signal (default `1`: every
/// ending writes the profile).
pub const DRHOOK_PROFILE_ON_FAILURE: &str = "DRHOOK_PROFILE_ON_FAILURE";
/// Project extension: `1` makes every file Dr.Hook writes durable before
/// it is renamed into place (`fsync`; default `0`: rename into place
/// without it, so that a process's end costs no disk flush).
pub const DRHOOK_FSYNC: &str = "DRHOOK_FSYNC";
/// Project extension: every process of the run writes
/// `<prefix><command>.<pid>.<profile file name>`; a prefix ending in `/` is
/// a directory (created when missing).
pub const DRHOOK_PROFILE_PREFIX: &str = "DRHOOK_PROFILE_PREFIX";
/// Project extension: how many threads that ended keep their own block in
/// the profile (default 256); later ones are summed per first routine
/// (their root region `thread:<start routine>`), and their trees freed.
pub const DRHOOK_THREAD_BLOCKS: &str = "DRHOOK_THREAD_BLOCKS";
/// Set by drhook for the child processes of a run (`<root pid>,<claimed
/// task>,<heir pid>`): which process writes the plain profile name. Not
/// meant to be set by hand.
pub const DRHOOK_PROCESS_TREE: &str = "DRHOOK_PROCESS_TREE";
/// Project extension: the program's own run metadata, `key=value` pairs
/// separated by `,` or `;` (Adiak's role), written in the JSON companion's
/// `metadata.user` and carried into Hatchet/Thicket exports.
pub const DR_HOOK_META: &str = "DR_HOOK_META";

/// When a variable of the reference that drhook-rs does not implement
/// would change what the reference does (so that its being ignored here is
/// worth a warning).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Acts {
    /// An integer other than 0 (the reference reads it with `atoi`).
    NonZero,
    /// One of the reference's true values (`1`, `yes`, `true`, `on`, any case).
    True,
    /// Any non-blank value.
    NonBlank,
}

/// Variables of the reference implementation that drhook-rs does not
/// support, with the values that would make the reference act; each one
/// set to such a value is reported once at start-up. Values that change
/// nothing in the reference are not reported. Empty now: every variable
/// of the reference's is read. Not listed because they can change nothing here:
/// `DR_HOOK_NCALLSTACK` (handles fit in 4 bytes whatever its value),
/// `DR_HOOK_RANDOM_MEMSTAT` (it makes
/// the reference sample thread 1's heap and stack maxima at random calls;
/// the engine's memory figures are taken at every call).
pub const UNSUPPORTED: &[(&str, Acts)] = &[];

/// `DR_HOOK_ASSERT_MPI_INITIALIZED`: off (`0`, `false`, `off`, `no`) lets
/// the first C or Fortran Dr.Hook call of an MPI-launched process run
/// before `MPI_Init`; otherwise (unset too) that call aborts, as the
/// reference's `DR_HOOK_INIT` (see [`crate::config::mpi_assertion_required`]).
pub const DR_HOOK_ASSERT_MPI_INITIALIZED: &str = "DR_HOOK_ASSERT_MPI_INITIALIZED";
/// `DR_HOOK_NOT_MPI`: true (`1`, `true`, `on`, `yes`) turns the MPI
/// assertion off.
pub const DR_HOOK_NOT_MPI: &str = "DR_HOOK_NOT_MPI";

/// The launcher variables by which the reference decides that a process
/// is MPI-launched (for its MPI assertion): set and not empty.
pub const MPI_LAUNCH_VARS: &[&str] = &[
    "OMPI_COMM_WORLD_SIZE",
    "ALPS_APP_PE",
    "PMI_SIZE",
    "SLURM_STEP_NUM_TASKS",
];

/// `DR_HOOK_FUNCENTER`: the thread whose enters are printed on stdout.
pub const DR_HOOK_FUNCENTER: &str = "DR_HOOK_FUNCENTER";
/// `DR_HOOK_FUNCEXIT`: the thread whose exits are printed on stdout.
pub const DR_HOOK_FUNCEXIT: &str = "DR_HOOK_FUNCEXIT";
/// `DR_HOOK_CALLTRACE`: non-zero prints the calling tree at every enter.
pub const DR_HOOK_CALLTRACE: &str = "DR_HOOK_CALLTRACE";
/// `DR_HOOK_TIMELINE`: the task (`-1`: all) that prints timeline lines.
pub const DR_HOOK_TIMELINE: &str = "DR_HOOK_TIMELINE";
/// `DR_HOOK_TIMELINE_THREAD`: the threads that print them.
pub const DR_HOOK_TIMELINE_THREAD: &str = "DR_HOOK_TIMELINE_THREAD";
/// `DR_HOOK_TIMELINE_FORMAT`: 1 bare numbers, else `name=value`.
pub const DR_HOOK_TIMELINE_FORMAT: &str = "DR_HOOK_TIMELINE_FORMAT";
/// `DR_HOOK_TIMELINE_UNITNO`: 6 stdout, 0 stderr.
pub const DR_HOOK_TIMELINE_UNITNO: &str = "DR_HOOK_TIMELINE_UNITNO";
/// `DR_HOOK_TIMELINE_FREQ`: every n-th enter and exit is printed.
pub const DR_HOOK_TIMELINE_FREQ: &str = "DR_HOOK_TIMELINE_FREQ";
/// `DR_HOOK_TIMELINE_MB`: a memory change that prints a line anyway.
pub const DR_HOOK_TIMELINE_MB: &str = "DR_HOOK_TIMELINE_MB";
/// `DR_HOOK_DUMP_SMAPS`: the signalled thread's `smaps` in a traceback.
pub const DR_HOOK_DUMP_SMAPS: &str = "DR_HOOK_DUMP_SMAPS";
/// `DR_HOOK_DUMP_MAPS`: its `maps`.
pub const DR_HOOK_DUMP_MAPS: &str = "DR_HOOK_DUMP_MAPS";
/// `DR_HOOK_DUMP_BUDDYINFO`: `/proc/buddyinfo` in a traceback.
pub const DR_HOOK_DUMP_BUDDYINFO: &str = "DR_HOOK_DUMP_BUDDYINFO";
/// `DR_HOOK_DUMP_HUGEPAGES`: `task,seconds`, the node's memory report.
pub const DR_HOOK_DUMP_HUGEPAGES: &str = "DR_HOOK_DUMP_HUGEPAGES";
/// `DR_HOOK_DUMP_MEMINFO`: `/proc/meminfo` in a traceback.
pub const DR_HOOK_DUMP_MEMINFO: &str = "DR_HOOK_DUMP_MEMINFO";
/// `DR_HOOK_TRACE_STACK`: abort when thread 1's stack passes this many
/// times `OMP_STACKSIZE` (task 1).
pub const DR_HOOK_TRACE_STACK: &str = "DR_HOOK_TRACE_STACK";
/// `DR_HACK`: a true value writes every enter and exit to `drhack.txt`.
pub const DR_HACK: &str = "DR_HACK";
/// `DR_HOOK_SHOW_LOCK`: `1` prints the Dr.Hook lock's line at start-up.
pub const DR_HOOK_SHOW_LOCK: &str = "DR_HOOK_SHOW_LOCK";
/// `DR_HOOK_TIMED_KILL`: `task:thread:signal:seconds` items, signals sent
/// by timers.
pub const DR_HOOK_TIMED_KILL: &str = "DR_HOOK_TIMED_KILL";
/// `DR_HOOK_GENCORE`: non-zero makes `DR_HOOK_GENCORE_SIGNAL` write a core.
pub const DR_HOOK_GENCORE: &str = "DR_HOOK_GENCORE";
/// `DR_HOOK_GENCORE_SIGNAL`: the signal that writes a core file.
pub const DR_HOOK_GENCORE_SIGNAL: &str = "DR_HOOK_GENCORE_SIGNAL";

/// `DR_HOOK_WATCH_PRINT_MAX`: how many values of a changed watch point are
/// printed (all when unset or negative).
pub const DR_HOOK_WATCH_PRINT_MAX: &str = "DR_HOOK_WATCH_PRINT_MAX";
/// `DR_HOOK_STACKCHECK`: report the growth of each thread's stack use.
pub const DR_HOOK_STACKCHECK: &str = "DR_HOOK_STACKCHECK";
/// `DR_HOOK_HEAPCHECK`: report the growth of the heap at routine boundaries.
pub const DR_HOOK_HEAPCHECK: &str = "DR_HOOK_HEAPCHECK";

/// Launcher variables holding this process's 0-based MPI rank, in the order
/// they are consulted (the same list as `hpm`'s task numbering).
pub const RANK_VARS: &[&str] = &hpm::env_config::vars::RANK_VARS;

/// Launcher variables holding the number of MPI tasks, in the order they are
/// consulted.
pub const SIZE_VARS: &[&str] = &[
    "OMPI_COMM_WORLD_SIZE",
    "PMI_SIZE",
    "PMIX_SIZE",
    "SLURM_NTASKS",
    "SLURM_STEP_NUM_TASKS",
    "MV2_COMM_WORLD_SIZE",
];

/// Reads one variable from the process environment as text (`None` when
/// unset; bytes that are not valid UTF-8 read as U+FFFD, see
/// [`crate::config::decode_value`]). As [`process_env_os`] in
/// secure-execution mode.
pub fn process_env(name: &str) -> Option<String> {
    process_env_os(name).map(|v| crate::config::decode_value(v).0)
}

/// Reads one variable from the process environment as it is (bytes). In
/// secure-execution mode (a set-user-ID or set-group-ID program, file
/// capabilities: [`drhook_secure::secure_execution`]) every `DR_HOOK*`,
/// `DRHOOK*` and `HPM_*` variable reads as unset — the caller of a
/// privileged program does not configure what it writes — and the first
/// such read says so once on stderr when one of them is set.
pub fn process_env_os(name: &str) -> Option<std::ffi::OsString> {
    if drhook_secure::is_tool_variable(name.as_bytes()) && drhook_secure::ignore_tool_variables() {
        return None;
    }
    std::env::var_os(name)
}

/// The beginnings of the names the configuration reads at start-up.
const SNAPSHOT_PREFIXES: [&str; 9] = [
    "DR_HOOK", "DR_HACK", "DRHOOK", "HPM_", "OMPI_", "PMI", "SLURM_", "MV2_", "ALPS_",
];

/// The variables of Dr.Hook and of the launchers, read from the
/// environment in one pass: the configuration reads some eighty names at
/// start-up, and a look-up each (the environment's lock, a C string, a
/// scan of every variable) was a fifth of what a short process spent on
/// Dr.Hook. Other names are read from the environment itself; the
/// secure-execution rule of [`process_env_os`] holds for both.
pub(crate) struct Snapshot(Vec<(std::ffi::OsString, std::ffi::OsString)>);

impl Snapshot {
    /// Reads the variables now.
    pub(crate) fn take() -> Snapshot {
        Snapshot(
            std::env::vars_os()
                .filter(|(k, _)| {
                    let k = k.as_encoded_bytes();
                    SNAPSHOT_PREFIXES
                        .iter()
                        .any(|p| k.starts_with(p.as_bytes()))
                })
                .collect(),
        )
    }

    /// `name`'s value, as [`process_env_os`] would read it.
    pub(crate) fn get(&self, name: &str) -> Option<std::ffi::OsString> {
        if !SNAPSHOT_PREFIXES.iter().any(|p| name.starts_with(p)) {
            return process_env_os(name);
        }
        if drhook_secure::is_tool_variable(name.as_bytes())
            && drhook_secure::ignore_tool_variables()
        {
            return None;
        }
        self.0
            .iter()
            .find(|(k, _)| k.as_encoded_bytes() == name.as_bytes())
            .map(|(_, v)| v.clone())
    }
}

#[cfg(test)]
mod snapshot_tests {
    use super::*;

    #[test]
    fn a_snapshot_reads_as_the_environment() {
        let snap = Snapshot::take();
        for (k, _) in std::env::vars_os() {
            let Some(k) = k.to_str() else { continue };
            assert_eq!(snap.get(k), process_env_os(k), "{k}");
        }
        for k in [
            "DR_HOOK_NO_SUCH_VARIABLE",
            "PMI_NONE",
            "NO_SUCH_VARIABLE_AT_ALL",
        ] {
            assert_eq!(snap.get(k), None);
        }
    }
}
