//! The JSON document of profiles (`docs/profile-schema.json`, format
//! `drhook-profile`, version 1): one entry per task with the header facts,
//! the rows as printed (when read from text) and the call-path tree (when
//! known). The engine can write the same document for its own task, with
//! the full tree; the tools read either.

use serde::{Deserialize, Serialize};

use super::{
    Cluster, Columns, Header, IoColumns, Kind, MemColumns, MemItem, Node, PerCall, Profile, Row,
    RowSizes, ThreadInfo,
};
use crate::error::{Error, Result};

/// Value of the `format` member.
pub const FORMAT: &str = "drhook-profile";
/// Value of the `version` member.
pub const VERSION: u32 = 1;

/// The whole document.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Document {
    /// Always `drhook-profile`.
    pub format: String,
    /// Schema version (1).
    pub version: u32,
    /// What wrote the document (free text, e.g. `drhook 0.1.0`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generator: Option<String>,
    /// One entry per task.
    pub tasks: Vec<Task>,
}

/// One task (MPI rank).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    /// File the task was read from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Program name.
    pub program: String,
    /// 1-based task number (`proc#N`).
    pub proc: u32,
    /// Number of tasks.
    pub nprocs: u32,
    /// Number of threads.
    pub nthreads: u32,
    /// `wall`, `cpu`, `memory` or `io`.
    pub kind: Kind,
    /// Distinct routines called.
    pub routines_called: u64,
    /// Start, `YYYYMMDD HHMMSS` local time.
    pub started: String,
    /// End, same format.
    pub ended: String,
    /// Instrumentation overhead in percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead_pct: Option<f64>,
    /// The reference's `Wall-time is` (or `Total CPU-time is`) in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_s: Option<f64>,
    /// The task's elapsed wall-clock time in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elapsed_s: Option<f64>,
    /// The run's metadata (engine companions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<serde_json::Value>,
    /// Items of the `Memory usage` line, in order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_usage: Option<Vec<MemItem>>,
    /// Per-thread lines.
    #[serde(default)]
    pub threads: Vec<ThreadInfo>,
    /// `per_call` (ms/call columns) or `counters` (MIPS/MFlops).
    #[serde(default)]
    pub columns: Columns,
    /// Counter event names, in the order of node counter arrays.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub counters: Vec<String>,
    /// Rows carry `[id,size]`.
    #[serde(default)]
    pub clusterinfo: bool,
    /// Rows carry size lines.
    #[serde(default)]
    pub sizeinfo: bool,
    /// Spaces less per call-path level in the text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub callpath_indent: Option<usize>,
    /// Header lines not otherwise known, without their leading tab.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra_header: Vec<String>,
    /// The rows as printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rows: Option<Vec<JsonRow>>,
    /// The call-path tree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tree: Option<Vec<Node>>,
}

/// One row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JsonRow {
    /// `#`.
    pub rank: u64,
    /// `% Time` (or `Memory-%`).
    pub pct: f64,
    /// Cumulative seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cumul_s: Option<f64>,
    /// Self seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_s: Option<f64>,
    /// Total seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_s: Option<f64>,
    /// Calls.
    pub calls: u64,
    /// Self ms per call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_ms_per_call: Option<f64>,
    /// Total ms per call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total_ms_per_call: Option<f64>,
    /// MIPS (`null` for `-`); only with `columns: counters`.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "serde_with_null"
    )]
    pub mips: Option<Option<f64>>,
    /// MFlops (`null` for `-`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "serde_with_null"
    )]
    pub mflops: Option<Option<f64>>,
    /// The `*` mark.
    pub star: bool,
    /// Routine name.
    pub routine: String,
    /// Thread number.
    pub thread: u32,
    /// File shown after the thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// `[id,size]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cluster: Option<Cluster>,
    /// Size line.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<RowSizes>,
    /// Callers, nearest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub path: Vec<String>,
    /// Memory-profile columns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemColumns>,
    /// I/O-profile columns.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io: Option<IoColumns>,
}

/// `Option<Option<T>>`: absent / `null` / value.
mod serde_with_null {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<Option<f64>>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(inner) => inner.serialize(s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<f64>>, D::Error> {
        Ok(Some(Option::<f64>::deserialize(d)?))
    }
}

impl JsonRow {
    fn from_row(r: &Row, kind: Kind) -> JsonRow {
        let times = kind.has_times();
        let (self_ms, total_ms, mips, mflops) = match r.per_call {
            PerCall::Ms { self_ms, total_ms } => (Some(self_ms), Some(total_ms), None, None),
            PerCall::Counters { mips, mflops } => (None, None, Some(mips), Some(mflops)),
            PerCall::None => (None, None, None, None),
        };
        JsonRow {
            rank: r.rank,
            pct: r.pct,
            cumul_s: times.then_some(r.cumul_s),
            self_s: (times || kind == Kind::Io).then_some(r.self_s),
            total_s: times.then_some(r.total_s),
            calls: r.calls,
            self_ms_per_call: self_ms,
            total_ms_per_call: total_ms,
            mips,
            mflops,
            star: r.star,
            routine: r.routine.clone(),
            thread: r.thread,
            file: r.file.clone(),
            cluster: r.cluster,
            sizes: r.sizes,
            path: r.path.clone(),
            memory: r.memory,
            io: r.io,
        }
    }

    fn to_row(&self) -> Row {
        let per_call = match (
            self.self_ms_per_call,
            self.total_ms_per_call,
            self.mips,
            self.mflops,
        ) {
            (Some(s), Some(t), _, _) => PerCall::Ms {
                self_ms: s,
                total_ms: t,
            },
            (_, _, Some(m), Some(f)) => PerCall::Counters { mips: m, mflops: f },
            _ => PerCall::None,
        };
        Row {
            rank: self.rank,
            pct: self.pct,
            cumul_s: self.cumul_s.unwrap_or(0.0),
            self_s: self.self_s.unwrap_or(0.0),
            total_s: self.total_s.unwrap_or(0.0),
            calls: self.calls,
            per_call,
            star: self.star,
            routine: self.routine.clone(),
            thread: self.thread,
            file: self.file.clone(),
            cluster: self.cluster,
            sizes: self.sizes,
            path: self.path.clone(),
            memory: self.memory,
            io: self.io,
        }
    }
}

impl Task {
    /// The JSON form of a profile.
    pub fn from_profile(p: &Profile) -> Task {
        let h = &p.header;
        Task {
            source: p.source.clone(),
            program: h.program.clone(),
            proc: h.proc,
            nprocs: h.nprocs,
            nthreads: h.nthreads,
            kind: h.kind,
            routines_called: h.routines_called,
            started: h.started.clone(),
            ended: h.ended.clone(),
            overhead_pct: h.overhead_pct,
            total_s: h.total_s,
            elapsed_s: h.elapsed_s,
            metadata: h.metadata.clone(),
            memory_usage: h.memory_usage.clone(),
            threads: h.threads.clone(),
            columns: h.columns,
            counters: h.counters.clone(),
            clusterinfo: h.clusterinfo,
            sizeinfo: h.sizeinfo,
            callpath_indent: h.callpath_indent,
            extra_header: h.extra_header.clone(),
            rows: Some(
                p.rows
                    .iter()
                    .map(|r| JsonRow::from_row(r, h.kind))
                    .collect(),
            ),
            tree: p.tree.clone(),
        }
    }

    /// Back to a profile; checks what the schema cannot (tree ids).
    pub fn to_profile(&self) -> std::result::Result<Profile, String> {
        if let Some(tree) = &self.tree {
            check_tree(tree)?;
        }
        Ok(Profile {
            source: self.source.clone(),
            header: Header {
                kind: self.kind,
                program: self.program.clone(),
                proc: self.proc,
                nprocs: self.nprocs,
                nthreads: self.nthreads,
                routines_called: self.routines_called,
                started: self.started.clone(),
                ended: self.ended.clone(),
                overhead_pct: self.overhead_pct,
                memory_usage: self.memory_usage.clone(),
                total_s: self.total_s,
                elapsed_s: self.elapsed_s,
                threads: self.threads.clone(),
                columns: self.columns,
                clusterinfo: self.clusterinfo,
                sizeinfo: self.sizeinfo,
                callpath_indent: self.callpath_indent,
                counters: self.counters.clone(),
                extra_header: self.extra_header.clone(),
                metadata: self.metadata.clone(),
            },
            rows: self
                .rows
                .as_ref()
                .map(|r| r.iter().map(JsonRow::to_row).collect())
                .unwrap_or_default(),
            tree: self.tree.clone(),
        })
    }
}

/// Ids unique, parents known, same thread as their children, no cycles.
fn check_tree(nodes: &[Node]) -> std::result::Result<(), String> {
    let mut by_id = std::collections::HashMap::with_capacity(nodes.len());
    for (i, n) in nodes.iter().enumerate() {
        if by_id.insert(n.id, i).is_some() {
            return Err(format!("tree: node id {} appears twice", n.id));
        }
    }
    for n in nodes {
        let mut p = n.parent;
        let mut steps = 0usize;
        while let Some(id) = p {
            let Some(&k) = by_id.get(&id) else {
                return Err(format!("tree: node {} has an unknown parent {id}", n.id));
            };
            if nodes[k].thread != n.thread {
                return Err(format!(
                    "tree: node {} (thread {}) has a parent on thread {}",
                    n.id, n.thread, nodes[k].thread
                ));
            }
            steps += 1;
            if steps > nodes.len() {
                return Err(format!("tree: node {} is on a cycle of parents", n.id));
            }
            p = nodes[k].parent;
        }
    }
    Ok(())
}

/// A document of the given profiles.
pub fn document(profiles: &[Profile]) -> Document {
    Document {
        format: FORMAT.into(),
        version: VERSION,
        generator: Some(format!("drhook {}", env!("CARGO_PKG_VERSION"))),
        tasks: profiles.iter().map(Task::from_profile).collect(),
    }
}

/// Parses a document; errors name `what` (the file).
pub fn parse(text: &str, what: &std::path::Path) -> Result<Vec<Profile>> {
    let doc: Document = serde_json::from_str(text).map_err(|e| Error {
        path: Some(what.to_path_buf()),
        line: Some(e.line()),
        message: format!("not a drhook-profile JSON document: {e}"),
    })?;
    if doc.format != FORMAT {
        return Err(Error::file(
            what,
            format!("\"format\" is \"{}\", expected \"{FORMAT}\"", doc.format),
        ));
    }
    if doc.version != VERSION {
        return Err(Error::file(
            what,
            format!(
                "\"version\" is {}, this drhook reads version {VERSION}",
                doc.version
            ),
        ));
    }
    doc.tasks
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mut p = t
                .to_profile()
                .map_err(|m| Error::file(what, format!("task #{}: {m}", i + 1)))?;
            if p.source.is_none() {
                p.source = Some(what.display().to_string());
            }
            Ok(p)
        })
        .collect()
}
