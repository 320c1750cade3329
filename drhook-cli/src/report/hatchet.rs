//! Hatchet's "literal" format: a list of root nodes, each
//! `{"frame": {"name", "type"}, "metrics": {...}, "children": [...]}`, which
//! `hatchet.GraphFrame.from_literal` reads.
//!
//! One root per task and thread, `{"name": "task P thread T", "type":
//! "thread"}`, whose children are the thread's call-path tree (or, without
//! call paths, one child per routine). Metrics of every node: `time` (self
//! seconds), `time (inc)` (total seconds), `calls`, `task`, `thread`; a
//! thread root has no calls or self time and the thread's busy time (Σ
//! self) as `time (inc)`.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::profile::Profile;

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
