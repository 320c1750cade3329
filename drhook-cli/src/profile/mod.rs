//! The profile of one task (MPI rank) as the tools see it: the header facts
//! and the rows of a `drhook.prof.N` file, and the call-path tree when it is
//! known.
//!
//! * [`text`] reads the text files (ours and the reference Dr.Hook's, wall,
//!   CPU, counters and memory profiles), whole or row by row;
//! * [`write`](mod@write) writes the same text back (used by tests and the benchmark's
//!   synthetic profiles);
//! * [`json`] is the JSON document (`docs/profile-schema.json`);
//! * [`tree`] builds the call-path tree from `callpath` rows;
//! * [`input`] finds profiles in files and directories and reads text or
//!   JSON alike.

pub mod input;
pub mod json;
pub mod number;
pub mod text;
pub mod tree;
pub mod write;

use serde::{Deserialize, Serialize};

/// What the times of a profile measure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// Wall-clock profile (`DR_HOOK_OPT=prof`): "Wall-time is ...".
    Wall,
    /// CPU-time profile (`cpuprof`): "Total CPU-time is ...".
    Cpu,
    /// Memory profile (`memprof`, `drhook.prof.N-mem`): no times.
    Memory,
    /// I/O profile (`DR_HOOK_OPT=io`, `drhook.prof.N-io`): per row its
    /// self time and its I/O ([`IoColumns`]); no total, no calls.
    Io,
}

impl Kind {
    /// Whether rows carry self and total times (wall and CPU profiles).
    pub fn has_times(self) -> bool {
        matches!(self, Kind::Wall | Kind::Cpu)
    }
}

/// What the two columns after `# of calls` hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Columns {
    /// `Self` and `Total` in ms per call.
    #[default]
    PerCall,
    /// `MIPS` and `MFlops` (`hpmprof`).
    Counters,
}

/// One item of the `Memory usage :` header line, e.g. `110 MB (heap)`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MemItem {
    /// The label in parentheses (`heap`, `rss`, `max.seen`, `paging`, ...).
    pub name: String,
    /// The number.
    pub value: u64,
    /// `MB`, or empty for a plain count (`paging`).
    pub unit: String,
}

/// One `Thread#N:` header line.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ThreadInfo {
    /// Thread number (1-based, as after `@` in rows).
    pub id: u32,
    /// Seconds of self time of the thread's rows.
    pub time_s: f64,
    /// Percentage of the task's time.
    pub pct: f64,
    /// Σ self cycles (the first number after `Cycles:`), when printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_cycles: Option<u64>,
    /// Cycles over the thread's life (the number in parentheses), when printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cycles: Option<u64>,
}

/// The size line under a row: `(Size; Size/sec; Size/call; MinSize; MaxSize)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RowSizes {
    /// Σ sizes.
    pub sum: u64,
    /// Σ sizes per second of self time.
    pub per_sec: u64,
    /// Σ sizes per call.
    pub per_call: u64,
    /// Smallest size.
    pub min: u64,
    /// Largest size.
    pub max: u64,
}

/// `[id,size]` after a name with `clusterinfo`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cluster {
    /// Routine id (0 for `$drhook`).
    pub id: u64,
    /// Number of threads on which the routine appears.
    pub size: u64,
}

/// The columns of a memory-profile row (`memprof`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemColumns {
    /// `Self-alloc` bytes.
    pub self_alloc: i64,
    /// `+ Children` bytes.
    pub children_alloc: i64,
    /// `Self-Leaked` bytes.
    pub self_leaked: i64,
    /// `Heap` bytes.
    pub heap: i64,
    /// `Max.Stack` bytes.
    pub max_stack: i64,
    /// `Paging` delta.
    pub paging: i64,
    /// `#Allocs`.
    pub allocs: u64,
    /// `#Frees`.
    pub frees: u64,
}

/// The columns of an I/O-profile row (`drhook.prof.N-io`): what the
/// routine did while it was the top of its thread's stack.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct IoColumns {
    /// `I/O(sec)`: seconds inside I/O calls.
    pub io_s: f64,
    /// `Compute(sec)`: self seconds less I/O seconds.
    pub compute_s: f64,
    /// `Read(bytes)`.
    pub read_bytes: u64,
    /// `Written(bytes)`.
    pub write_bytes: u64,
    /// `#Reads`.
    pub reads: u64,
    /// `#Writes`.
    pub writes: u64,
    /// `#Other`: other I/O calls (open, close, seek, sync, metadata...).
    pub other: u64,
}

/// The two columns after `# of calls`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PerCall {
    /// Self and total milliseconds per call.
    Ms {
        /// Self ms per call.
        self_ms: f64,
        /// Total ms per call.
        total_ms: f64,
    },
    /// MIPS and MFlops (`None` where the profile prints `-`).
    Counters {
        /// MIPS.
        mips: Option<f64>,
        /// MFlops.
        mflops: Option<f64>,
    },
    /// Memory profiles have neither.
    None,
}

/// One row of a profile: a routine on a thread (or a call path with
/// `callpath`).
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The `#` column (1-based).
    pub rank: u64,
    /// `% Time` (self), `Memory-%` in a memory profile, `I/O-%` in an
    /// I/O profile.
    pub pct: f64,
    /// `Cumul` seconds (0 in memory profiles).
    pub cumul_s: f64,
    /// `Self` seconds (0 in memory profiles).
    pub self_s: f64,
    /// `Total` seconds (0 in memory profiles).
    pub total_s: f64,
    /// `# of calls` (0 in I/O profiles, which do not print it).
    pub calls: u64,
    /// ms/call or MIPS/MFlops.
    pub per_call: PerCall,
    /// The `*` before the name: the busiest thread of the routine.
    pub star: bool,
    /// Routine name (without `@thread`).
    pub routine: String,
    /// Thread number.
    pub thread: u32,
    /// File name shown after the thread (`@1:file.c`).
    pub file: Option<String>,
    /// `[id,size]` with `clusterinfo`.
    pub cluster: Option<Cluster>,
    /// The size line, if printed.
    pub sizes: Option<RowSizes>,
    /// Callers printed under the row with `callpath`, nearest first.
    pub path: Vec<String>,
    /// Memory-profile columns.
    pub memory: Option<MemColumns>,
    /// I/O-profile columns.
    pub io: Option<IoColumns>,
}

impl Row {
    /// An empty row (for reuse with [`text::RowReader::next_into`]).
    pub fn empty() -> Row {
        Row {
            rank: 0,
            pct: 0.0,
            cumul_s: 0.0,
            self_s: 0.0,
            total_s: 0.0,
            calls: 0,
            per_call: PerCall::None,
            star: false,
            routine: String::new(),
            thread: 0,
            file: None,
            cluster: None,
            sizes: None,
            path: Vec::new(),
            memory: None,
            io: None,
        }
    }
}

/// Header facts of a task's profile.
#[derive(Clone, Debug, PartialEq)]
pub struct Header {
    /// What the times measure.
    pub kind: Kind,
    /// `program='...'`.
    pub program: String,
    /// `proc#N`: the 1-based MPI task.
    pub proc: u32,
    /// Number of tasks (`(P procs, T threads)`).
    pub nprocs: u32,
    /// Number of threads (`(P procs, T threads)`).
    pub nthreads: u32,
    /// `No. of instrumented routines called`.
    pub routines_called: u64,
    /// `Instrumentation started` (`YYYYMMDD HHMMSS`, local time).
    pub started: String,
    /// `Instrumentation   ended`.
    pub ended: String,
    /// `Instrumentation overhead` in percent (not in memory profiles).
    pub overhead_pct: Option<f64>,
    /// The `Memory usage :` items, in order (absent from stderr echoes).
    pub memory_usage: Option<Vec<MemItem>>,
    /// `Wall-time is X sec` / `Total CPU-time is X sec` (not in memory
    /// profiles): the reference's figure, the sum over routines of the
    /// busiest thread's self time (wall) or of every row's (CPU) — not the
    /// elapsed time.
    pub total_s: Option<f64>,
    /// `Elapsed time is X sec`: the task's wall-clock time from the
    /// instrumentation's start to the profile (drhook-rs engines only).
    pub elapsed_s: Option<f64>,
    /// The `Thread#N:` lines.
    pub threads: Vec<ThreadInfo>,
    /// What the columns after `# of calls` hold.
    pub columns: Columns,
    /// `[Cluster:(id,size)]` in the column header.
    pub clusterinfo: bool,
    /// The `(Size; Size/sec; ...)` column header line.
    pub sizeinfo: bool,
    /// Spaces less per level of the call-path lines (`DR_HOOK_CALLPATH_INDENT`),
    /// when the profile has call paths.
    pub callpath_indent: Option<usize>,
    /// Counter event names (known from JSON written by the engine).
    pub counters: Vec<String>,
    /// Header lines this reader does not know, kept as they are.
    pub extra_header: Vec<String>,
    /// The run's metadata of an engine JSON companion (host, pid, args,
    /// options, start_unix, user: `DR_HOOK_META`'s pairs); `None` from text.
    pub metadata: Option<serde_json::Value>,
}

/// A node of a thread's call-path tree.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Node {
    /// Unique within the task, ≥ 1.
    pub id: u64,
    /// The caller's id; `None` for a root of the thread's tree.
    #[serde(default)]
    pub parent: Option<u64>,
    /// Routine name.
    pub routine: String,
    /// Thread number.
    pub thread: u32,
    /// Source file, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Number of calls.
    pub calls: u64,
    /// Self seconds.
    pub self_s: f64,
    /// Total (inclusive) seconds.
    pub total_s: f64,
    /// Size information.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<NodeSizes>,
    /// Counter values, in the order of the task's `counters`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counters: Option<NodeCounters>,
    /// True when the node had no row of its own (a caller cut from the
    /// profile by `DR_HOOK_PROFILE_LIMIT`): its calls and self time are 0 and
    /// its total is the sum of its children's.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub inferred: bool,
}

/// Size information of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeSizes {
    /// Number of activations that passed a size (unknown when read from
    /// text).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// Σ sizes.
    pub sum: u64,
    /// Smallest size.
    pub min: u64,
    /// Largest size.
    pub max: u64,
}

/// Counter values of a node.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeCounters {
    /// Exclusive counts (self).
    pub excl: Vec<u64>,
    /// Inclusive counts (total).
    pub incl: Vec<u64>,
}

/// The profile of one task.
#[derive(Clone, Debug, PartialEq)]
pub struct Profile {
    /// Where it was read from.
    pub source: Option<String>,
    /// Header facts.
    pub header: Header,
    /// The rows as printed (possibly cut by `DR_HOOK_PROFILE_LIMIT`).
    pub rows: Vec<Row>,
    /// The call-path tree, when known (from `callpath` rows or from JSON).
    pub tree: Option<Vec<Node>>,
}

impl Profile {
    /// Whether any row has callers printed under it.
    pub fn has_callpaths(&self) -> bool {
        self.rows.iter().any(|r| !r.path.is_empty())
    }

    /// Thread numbers of the rows (or nodes), sorted, without repeats.
    pub fn thread_ids(&self) -> Vec<u32> {
        let mut v: Vec<u32> = match &self.tree {
            Some(t) => t.iter().map(|n| n.thread).collect(),
            None => self.rows.iter().map(|r| r.thread).collect(),
        };
        v.sort_unstable();
        v.dedup();
        v
    }
}
