//! The call-path tree of a task from `callpath` rows.
//!
//! With `DR_HOOK_OPT=callpath` every row is one call path of one thread
//! (the routine and its callers, printed under it, nearest first). Each
//! distinct (thread, path) is a node; its parent is the node of the path
//! without its last routine. A caller without a row of its own (cut by
//! `DR_HOOK_PROFILE_LIMIT`) becomes an `inferred` node with no calls, no
//! self time and the sum of its children's totals.
//!
//! Nodes are numbered 1.. in depth-first order, thread by thread, children
//! by decreasing total time.

use std::collections::HashMap;

use super::{Node, NodeSizes, Row};

/// Builds the tree of every thread from rows with call paths.
pub fn from_rows(rows: &[Row]) -> Vec<Node> {
    struct Tmp {
        path_len: usize,
        node: Node,
        children: Vec<usize>,
        parent: Option<usize>,
    }
    // A trie: (thread, parent index or NONE, routine) -> index in `tmp`.
    const NONE: usize = usize::MAX;
    let mut index: HashMap<(u32, usize, String), usize> = HashMap::new();
    let mut tmp: Vec<Tmp> = Vec::new();
    for r in rows {
        let mut parent = NONE;
        let names = r.path.iter().rev().chain(std::iter::once(&r.routine));
        for (depth, name) in names.enumerate() {
            let key = (r.thread, parent, name.clone());
            let i = match index.get(&key) {
                Some(&i) => i,
                None => {
                    let i = tmp.len();
                    tmp.push(Tmp {
                        path_len: depth + 1,
                        node: Node {
                            id: 0,
                            parent: None,
                            routine: name.clone(),
                            thread: r.thread,
                            file: None,
                            calls: 0,
                            self_s: 0.0,
                            total_s: 0.0,
                            sizes: None,
                            counters: None,
                            inferred: true,
                        },
                        children: Vec::new(),
                        parent: (parent != NONE).then_some(parent),
                    });
                    if parent != NONE {
                        tmp[parent].children.push(i);
                    }
                    index.insert(key, i);
                    i
                }
            };
            parent = i;
        }
        let i = parent;
        let n = &mut tmp[i].node;
        if n.inferred {
            n.inferred = false;
            n.file = r.file.clone();
        }
        n.calls += r.calls;
        n.self_s += r.self_s;
        n.total_s += r.total_s;
        if let Some(s) = r.sizes {
            let add = NodeSizes {
                count: None,
                sum: s.sum,
                min: s.min,
                max: s.max,
            };
            n.sizes = Some(match n.sizes {
                None => add,
                Some(o) => NodeSizes {
                    count: None,
                    sum: o.sum.saturating_add(add.sum),
                    min: o.min.min(add.min),
                    max: o.max.max(add.max),
                },
            });
        }
    }
    // Inferred totals, deepest first (children were pushed after parents).
    for i in (0..tmp.len()).rev() {
        if tmp[i].node.inferred {
            let sum: f64 = tmp[i].children.iter().map(|&c| tmp[c].node.total_s).sum();
            tmp[i].node.total_s = sum;
        }
    }
    let order = |a: &usize, b: &usize, tmp: &[Tmp]| {
        tmp[*b]
            .node
            .total_s
            .total_cmp(&tmp[*a].node.total_s)
            .then_with(|| tmp[*a].node.routine.cmp(&tmp[*b].node.routine))
            .then_with(|| tmp[*a].path_len.cmp(&tmp[*b].path_len))
    };
    let mut roots: Vec<usize> = (0..tmp.len())
        .filter(|&i| tmp[i].parent.is_none())
        .collect();
    roots.sort_by(|a, b| {
        tmp[*a]
            .node
            .thread
            .cmp(&tmp[*b].node.thread)
            .then_with(|| order(a, b, &tmp))
    });
    for i in 0..tmp.len() {
        let mut ch = std::mem::take(&mut tmp[i].children);
        ch.sort_by(|a, b| order(a, b, &tmp));
        tmp[i].children = ch;
    }
    let mut out = Vec::with_capacity(tmp.len());
    let mut id_of = vec![0u64; tmp.len()];
    let mut stack: Vec<usize> = roots.into_iter().rev().collect();
    while let Some(i) = stack.pop() {
        let id = out.len() as u64 + 1;
        id_of[i] = id;
        let mut n = tmp[i].node.clone();
        n.id = id;
        n.parent = tmp[i].parent.map(|p| id_of[p]);
        out.push(n);
        stack.extend(tmp[i].children.iter().rev());
    }
    out
}

/// Root-first routine names of every node's path, indexed like `nodes`
/// (ids are looked up, so any order of nodes works; a node whose parent is
/// missing starts a path).
pub fn paths(nodes: &[Node]) -> Vec<Vec<&str>> {
    let pos: HashMap<u64, usize> = nodes.iter().enumerate().map(|(i, n)| (n.id, i)).collect();
    nodes
        .iter()
        .map(|n| {
            let mut v = vec![n.routine.as_str()];
            let mut p = n.parent;
            let mut guard = 0;
            while let Some(id) = p {
                let Some(&k) = pos.get(&id) else { break };
                v.push(nodes[k].routine.as_str());
                p = nodes[k].parent;
                guard += 1;
                if guard > nodes.len() {
                    break; // a cycle in hand-written JSON
                }
            }
            v.reverse();
            v
        })
        .collect()
}

/// The tasks given as one profile of one thread (`drhook top --merge`):
/// nodes with the same call path (rows with the same routine and callers)
/// on any thread of any task are summed — calls, self and total seconds;
/// sizes and counters are left out. Everything is on thread 0 (no thread
/// of a profile: Dr.Hook's are 1-based), which `top` shows as "all threads
/// merged". The header is the first task's, with `nthreads` the most
/// threads of a task, one thread line holding the sum of the threads'
/// times, and the longest elapsed time.
pub fn merge_all(profiles: &[super::Profile]) -> Option<super::Profile> {
    let first = profiles.first()?;
    let mut header = first.header.clone();
    header.nthreads = profiles
        .iter()
        .map(|p| p.header.nthreads)
        .max()
        .unwrap_or(1);
    header.elapsed_s = profiles
        .iter()
        .filter_map(|p| p.header.elapsed_s)
        .reduce(f64::max);
    header.total_s = profiles
        .iter()
        .filter_map(|p| p.header.total_s)
        .reduce(|a, b| a + b);
    let busy: f64 = profiles
        .iter()
        .flat_map(|p| &p.header.threads)
        .map(|t| t.time_s)
        .sum();
    header.threads = vec![super::ThreadInfo {
        id: 0,
        time_s: busy,
        pct: 100.0,
        self_cycles: None,
        cycles: None,
    }];
    let tree = profiles.iter().any(|p| p.tree.is_some()).then(|| {
        let mut ids: HashMap<Vec<&str>, usize> = HashMap::new();
        let mut out: Vec<Node> = Vec::new();
        for p in profiles {
            let Some(nodes) = &p.tree else { continue };
            for (n, path) in nodes.iter().zip(paths(nodes)) {
                let parent = (path.len() > 1)
                    .then(|| ids.get(&path[..path.len() - 1]).map(|&i| out[i].id))
                    .flatten();
                let i = *ids.entry(path).or_insert_with(|| {
                    out.push(Node {
                        id: out.len() as u64 + 1,
                        parent,
                        routine: n.routine.clone(),
                        thread: 0,
                        file: n.file.clone(),
                        calls: 0,
                        self_s: 0.0,
                        total_s: 0.0,
                        sizes: None,
                        counters: None,
                        inferred: true,
                    });
                    out.len() - 1
                });
                let m = &mut out[i];
                m.calls += n.calls;
                m.self_s += n.self_s;
                m.total_s += n.total_s;
                m.inferred &= n.inferred;
            }
        }
        out
    });
    let mut rows: Vec<Row> = Vec::new();
    let mut at: HashMap<(String, Vec<String>), usize> = HashMap::new();
    for r in profiles.iter().flat_map(|p| &p.rows) {
        let i = *at
            .entry((r.routine.clone(), r.path.clone()))
            .or_insert_with(|| {
                let mut c = r.clone();
                (c.calls, c.self_s, c.total_s, c.thread) = (0, 0.0, 0.0, 0);
                (c.sizes, c.cluster, c.star) = (None, None, false);
                rows.push(c);
                rows.len() - 1
            });
        rows[i].calls += r.calls;
        rows[i].self_s += r.self_s;
        rows[i].total_s += r.total_s;
    }
    Some(super::Profile {
        source: first.source.clone(),
        header,
        rows,
        tree,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, thread: u32, path: &[&str], calls: u64, self_s: f64, total_s: f64) -> Row {
        let mut r = Row::empty();
        r.routine = name.into();
        r.thread = thread;
        r.path = path.iter().map(|s| s.to_string()).collect();
        r.calls = calls;
        r.self_s = self_s;
        r.total_s = total_s;
        r
    }

    #[test]
    fn tree_from_paths_with_an_inferred_caller() {
        let rows = vec![
            row("KERNEL", 1, &["WORKER", "DRIVER", "MAIN"], 10, 0.5, 0.5),
            row("WORKER", 1, &["DRIVER", "MAIN"], 2, 0.1, 0.6),
            row("MAIN", 1, &[], 1, 0.0, 1.0),
            row("KERNEL", 2, &["WORKER"], 8, 0.4, 0.4),
            row("WORKER", 2, &[], 2, 0.1, 0.5),
        ];
        let t = from_rows(&rows);
        let names: Vec<(u64, Option<u64>, &str, u32, bool)> = t
            .iter()
            .map(|n| (n.id, n.parent, n.routine.as_str(), n.thread, n.inferred))
            .collect();
        assert_eq!(
            names,
            vec![
                (1, None, "MAIN", 1, false),
                (2, Some(1), "DRIVER", 1, true),
                (3, Some(2), "WORKER", 1, false),
                (4, Some(3), "KERNEL", 1, false),
                (5, None, "WORKER", 2, false),
                (6, Some(5), "KERNEL", 2, false),
            ]
        );
        assert_eq!(t[1].total_s, 0.6, "inferred total = children's");
        assert_eq!(t[1].calls, 0);
        let p = paths(&t);
        assert_eq!(p[3], vec!["MAIN", "DRIVER", "WORKER", "KERNEL"]);
        assert_eq!(p[5], vec!["WORKER", "KERNEL"]);
    }
}
