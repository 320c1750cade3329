//! Hatchet's formats.
//!
//! [`graphframe`]: the JSON of `GraphFrame.to_json()` that
//! `hatchet.GraphFrame.from_json` reads — one call tree for the whole job
//! (the union of every task's and thread's call paths) and a dataframe
//! indexed by `(node, rank, thread)`, as Hatchet's Caliper and HPCToolkit
//! readers make it, so that `drop_index_levels()` and per-rank group-bys
//! work as on theirs; plus a `metadata` member (the run: command, args,
//! hosts, ranks, threads, start time, Dr.Hook options and the program's
//! `DR_HOOK_META` pairs) that `from_json` does not read and a caller puts in
//! `gf.metadata` (Thicket's metadata table). `rank` is the MPI rank
//! (0-based: Dr.Hook's `proc#N` less one), `thread` Dr.Hook's thread number
//! (as after `@` in the profile, 1-based).
//!
//! [`literal`]: Hatchet's "literal" format: a list of root nodes, each
//! `{"frame": {"name", "type"}, "metrics": {...}, "children": [...]}`, which
//! `hatchet.GraphFrame.from_literal` reads.
//!
//! One root per task and thread, `{"name": "task P thread T", "type":
//! "thread"}`, whose children are the thread's call-path tree (or, without
//! call paths, one child per routine). Metrics of every node: `time` (self
//! seconds), `time (inc)` (total seconds), `calls`, `task`, `thread`; a
//! thread root has no calls or self time and the thread's busy time (Σ
//! self) as `time (inc)`.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde_json::{Value, json};

use crate::profile::{Profile, tree};

/// Σ self, Σ total and Σ calls of a (node, rank, thread).
type Cell = (f64, f64, u64);

/// The call paths of every task and thread as one tree: node ids by
/// (parent id, name), in order of first appearance.
#[derive(Default)]
struct Union {
    ids: HashMap<(Option<usize>, String), usize>,
    names: Vec<String>,
    children: Vec<Vec<usize>>,
    roots: Vec<usize>,
}

impl Union {
    fn node(&mut self, path: &[&str]) -> usize {
        let mut parent: Option<usize> = None;
        for name in path {
            let key = (parent, (*name).to_string());
            let id = match self.ids.get(&key) {
                Some(&id) => id,
                None => {
                    let id = self.names.len();
                    self.ids.insert(key, id);
                    self.names.push((*name).to_string());
                    self.children.push(Vec::new());
                    match parent {
                        Some(p) => self.children[p].push(id),
                        None => self.roots.push(id),
                    }
                    id
                }
            };
            parent = Some(id);
        }
        parent.expect("a path has a frame")
    }
}

/// The run's metadata of the given tasks, flat (strings and numbers), for
/// Thicket's metadata table: the first task's engine metadata when read
/// from a JSON companion, the header facts otherwise; the program's
/// `DR_HOOK_META` pairs as their own keys (a key that is one of ours gets
/// the prefix `user.`).
pub fn run_metadata(profiles: &[Profile]) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    let Some(first) = profiles.first() else {
        return m;
    };
    let h = &first.header;
    let hosts: BTreeSet<&str> = profiles
        .iter()
        .filter_map(|p| p.header.metadata.as_ref()?.get("host")?.as_str())
        .collect();
    let md = h.metadata.as_ref();
    let s = |k: &str| md.and_then(|v| v.get(k));
    let args: Vec<&str> = s("args")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    m.insert("command".into(), json!(h.program));
    m.insert("args".into(), json!(args.join(" ")));
    m.insert(
        "hosts".into(),
        json!(hosts.into_iter().collect::<Vec<_>>().join(",")),
    );
    m.insert("ranks".into(), json!(h.nprocs.max(profiles.len() as u32)));
    m.insert(
        "threads".into(),
        json!(
            profiles
                .iter()
                .map(|p| p.header.nthreads)
                .max()
                .unwrap_or(0)
        ),
    );
    m.insert("start_time".into(), json!(h.started));
    if let Some(u) = s("start_unix") {
        m.insert("start_unix".into(), u.clone());
    }
    m.insert("kind".into(), json!(h.kind));
    m.insert(
        "dr_hook_opt".into(),
        s("options").cloned().unwrap_or(Value::Null),
    );
    m.insert(
        "elapsed_s".into(),
        json!(
            profiles
                .iter()
                .filter_map(|p| p.header.elapsed_s)
                .reduce(f64::max)
        ),
    );
    if let Some(Value::Object(user)) = s("user") {
        for (k, v) in user {
            let k = if m.contains_key(k) {
                format!("user.{k}")
            } else {
                k.clone()
            };
            m.insert(k, v.clone());
        }
    }
    m
}

/// The GraphFrame JSON of the given tasks (see the module's comment).
pub fn graphframe(profiles: &[Profile]) -> Value {
    let mut u = Union::default();
    let mut cells: BTreeMap<(usize, u32, u32), Cell> = BTreeMap::new();
    for p in profiles {
        let rank = p.header.proc.saturating_sub(1);
        let mut add = |u: &mut Union, path: &[&str], t: u32, c: Cell| {
            let e = cells.entry((u.node(path), rank, t)).or_default();
            e.0 += c.0;
            e.1 += c.1;
            e.2 += c.2;
        };
        match &p.tree {
            Some(nodes) => {
                for (n, path) in nodes.iter().zip(tree::paths(nodes)) {
                    add(&mut u, &path, n.thread, (n.self_s, n.total_s, n.calls));
                }
            }
            None => {
                for r in &p.rows {
                    add(
                        &mut u,
                        &[r.routine.as_str()],
                        r.thread,
                        (r.self_s, r.total_s, r.calls),
                    );
                }
            }
        }
    }
    let mut graph = serde_json::Map::new();
    for (id, name) in u.names.iter().enumerate() {
        graph.insert(
            id.to_string(),
            json!({"data": {"name": name, "type": "function"}, "children": u.children[id]}),
        );
    }
    let dataframe: Vec<Value> = cells
        .iter()
        .map(|(&(node, rank, thread), &(s, t, c))| {
            json!({"node": node, "rank": rank, "thread": thread, "name": u.names[node],
                   "time": s, "time (inc)": t, "calls": c})
        })
        .collect();
    json!({
        "graph": [graph],
        "dataframe_indices": ["node", "rank", "thread"],
        "dataframe": dataframe,
        "exclusive_metrics": ["time", "calls"],
        "inclusive_metrics": ["time (inc)"],
        "metadata": run_metadata(profiles),
    })
}

fn metrics(self_s: f64, total_s: f64, calls: u64, task: u32, thread: u32) -> Value {
    json!({
        "time": self_s,
        "time (inc)": total_s,
        "calls": calls,
        "task": task,
        "thread": thread,
    })
}

fn node(name: &str, kind: &str, metrics: Value, children: Vec<Value>) -> Value {
    let mut m = serde_json::Map::new();
    m.insert("frame".into(), json!({"name": name, "type": kind}));
    m.insert("metrics".into(), metrics);
    if !children.is_empty() {
        m.insert("children".into(), Value::Array(children));
    }
    Value::Object(m)
}

/// The literal list of the given tasks.
pub fn literal(profiles: &[Profile]) -> Value {
    let mut roots = Vec::new();
    for p in profiles {
        let task = p.header.proc;
        for t in p.thread_ids() {
            let (children, busy) = match &p.tree {
                Some(nodes) => {
                    let mine: Vec<usize> =
                        (0..nodes.len()).filter(|&i| nodes[i].thread == t).collect();
                    let busy: f64 = mine.iter().map(|&i| nodes[i].self_s).sum();
                    let pos: HashMap<u64, usize> = mine.iter().map(|&i| (nodes[i].id, i)).collect();
                    let mut kids: HashMap<usize, Vec<usize>> = HashMap::new();
                    let mut tops = Vec::new();
                    for &i in &mine {
                        match nodes[i].parent.and_then(|id| pos.get(&id)) {
                            Some(&par) => kids.entry(par).or_default().push(i),
                            None => tops.push(i),
                        }
                    }
                    // Post-order without recursion: build children first.
                    let mut built: HashMap<usize, Value> = HashMap::new();
                    let mut stack: Vec<(usize, bool)> =
                        tops.iter().rev().map(|&i| (i, false)).collect();
                    while let Some((i, done)) = stack.pop() {
                        let ch = kids.get(&i).cloned().unwrap_or_default();
                        if !done {
                            stack.push((i, true));
                            stack.extend(ch.iter().rev().map(|&c| (c, false)));
                            continue;
                        }
                        let n = &nodes[i];
                        let children: Vec<Value> =
                            ch.iter().filter_map(|c| built.remove(c)).collect();
                        built.insert(
                            i,
                            node(
                                &n.routine,
                                "function",
                                metrics(n.self_s, n.total_s, n.calls, task, t),
                                children,
                            ),
                        );
                    }
                    let v: Vec<Value> = tops.iter().filter_map(|i| built.remove(i)).collect();
                    (v, busy)
                }
                None => {
                    let rows: Vec<_> = p.rows.iter().filter(|r| r.thread == t).collect();
                    let busy = rows.iter().map(|r| r.self_s).sum();
                    let v = rows
                        .iter()
                        .map(|r| {
                            node(
                                &r.routine,
                                "function",
                                metrics(r.self_s, r.total_s, r.calls, task, t),
                                Vec::new(),
                            )
                        })
                        .collect();
                    (v, busy)
                }
            };
            roots.push(node(
                &format!("task {task} thread {t}"),
                "thread",
                metrics(0.0, busy, 0, task, t),
                children,
            ));
        }
    }
    Value::Array(roots)
}
