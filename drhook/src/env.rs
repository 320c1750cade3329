//! Names of the environment variables the engine reads, and the one place
//! that reads them.
//!
//! Everything that interprets a value is a pure function over strings (see
//! [`crate::config`] and [`crate::options`]); this module only knows the names.

/// Master switch: unset, empty, `0`, `false`, `off` or `no` (any case) = off.
pub const DR_HOOK: &str = "DR_HOOK";
/// Comma/space/tab/slash separated option tokens (see [`crate::options`]).
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
/// Project extension: `tsc` (default where the TSC is invariant) or `monotonic`.
pub const DRHOOK_CLOCK: &str = "DRHOOK_CLOCK";

/// Launcher variables holding this process's 0-based MPI rank, in the order
/// they are consulted.
pub const RANK_VARS: &[&str] = &[
    "OMPI_COMM_WORLD_RANK",
    "PMI_RANK",
    "PMIX_RANK",
    "SLURM_PROCID",
    "MV2_COMM_WORLD_RANK",
    "ALPS_APP_PE",
];

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

/// Reads one variable from the process environment (`None` when unset or not
/// valid UTF-8).
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}
