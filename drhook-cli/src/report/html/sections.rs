//! The sections of the page, each appended to the HTML being built.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::{Inputs, esc, json_in_script};
use crate::profile::{Kind, Node, Profile, tree};
use crate::report::{folded, merge::Merger, top};

/// Tree nodes shown at most (per page); the rest are counted.
const MAX_TREE_NODES: usize = 3000;
/// Callees shown under a node before the rest are folded into one entry.
const MAX_CHILDREN: usize = 12;
/// Rows of the memory, I/O and merge tables.
const TABLE_ROWS: usize = 30;

/// `wall-clock profile`, `CPU-time profile, memory, I/O`...
pub fn kind_words(inp: &Inputs) -> String {
    let mut w = Vec::new();
    match inp.times.first().map(|p| p.header.kind) {
        Some(Kind::Cpu) => w.push("CPU-time profile"),
        Some(_) => w.push("wall-clock profile"),
        None => {}
    }
    if !inp.memory.is_empty() {
        w.push("memory");
    }
    if !inp.io.is_empty() || !inp.io_reports.is_empty() {
        w.push("I/O");
    }
    w.join(", ")
}

fn secs(s: f64) -> String {
    if s != 0.0 && s.abs() < 0.01 {
        format!("{s:.6}")
    } else {
        format!("{s:.3}")
    }
}

fn row(h: &mut String, k: &str, v: &str) {
    let _ = writeln!(h, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
}

/// The run's facts.
pub fn meta(h: &mut String, inp: &Inputs) {
    h.push_str("<section id=\"meta\"><h2>Run</h2><table>\n");
    let all: Vec<&Profile> = inp.times.iter().chain(&inp.memory).chain(&inp.io).collect();
    if let Some(p) = all.first() {
        let hd = &p.header;
        row(h, "program", &hd.program);
        let tasks: Vec<u32> = {
            let mut v: Vec<u32> = all.iter().map(|p| p.header.proc).collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        row(
            h,
            "tasks",
            &format!("{} read (of {} in the run)", tasks.len(), hd.nprocs),
        );
        let threads = all.iter().map(|p| p.header.nthreads).max().unwrap_or(0);
        row(h, "threads", &format!("{threads} (most in a task)"));
        let started = all.iter().map(|p| p.header.started.as_str()).min();
        let ended = all.iter().map(|p| p.header.ended.as_str()).max();
        row(h, "started", started.unwrap_or(""));
        row(h, "ended", ended.unwrap_or(""));
        let elapsed = inp
            .times
            .iter()
            .filter_map(|p| p.header.elapsed_s)
            .fold(None, |m: Option<f64>, e| Some(m.map_or(e, |m| m.max(e))));
        row(
            h,
            "elapsed",
            &match elapsed {
                Some(e) => format!("{e:.3} s (the longest task)"),
                None => "not recorded (a profile of the reference Dr.Hook)".into(),
            },
        );
        if let Some(p) = inp.times.first() {
            if let Some(note) = top::reference_time_note(&p.header) {
                row(h, "header figure", &note);
            }
            if let Some(o) = p.header.overhead_pct {
                row(
                    h,
                    "instrumentation overhead",
                    &format!("{o:.2} % (task {})", p.header.proc),
                );
            }
            if let Some(m) = &p.header.memory_usage {
                let items: Vec<String> = m
                    .iter()
                    .map(|i| format!("{} {} ({})", i.value, i.unit, i.name))
                    .collect();
                row(h, "memory usage", &items.join(", "));
            }
        }
    } else if let Some(r) = inp.io_reports.first() {
        row(h, "program", &r.program);
    }
    row(h, "files read", &inp.files.join(", "));
    h.push_str("</table></section>\n");
}

/// Self seconds per thread (from the tree when the profile has one: JSON
/// documents carry no rows), by thread number.
fn per_thread_self(p: &Profile) -> Vec<(u32, f64)> {
    let mut per: HashMap<u32, f64> = HashMap::new();
    match &p.tree {
        Some(t) => t
            .iter()
            .for_each(|n| *per.entry(n.thread).or_default() += n.self_s),
        None => p
            .rows
            .iter()
            .for_each(|r| *per.entry(r.thread).or_default() += r.self_s),
    }
    let mut v: Vec<(u32, f64)> = per.into_iter().collect();
    v.sort_by_key(|x| x.0);
    v
}

fn bar(frac: f64, class: &str) -> String {
    let px = (frac.clamp(0.0, 1.0) * 300.0).round();
    format!("<span class=\"bar {class}\" style=\"width:{px}px\"></span>")
}

/// Per task and per thread: how the time is spread.
pub fn balance(h: &mut String, inp: &Inputs) {
    h.push_str("<section id=\"balance\"><h2>Balance over tasks and threads</h2>\n");
    if inp.times.is_empty() {
        h.push_str("<p class=\"note\">No time profile given.</p></section>\n");
        return;
    }
    // Per task: elapsed and the self time of its rows.
    let self_of = |p: &Profile| per_thread_self(p).iter().map(|x| x.1).sum::<f64>();
    let max_task = inp.times.iter().map(self_of).fold(0.0, f64::max);
    h.push_str("<h3>Tasks</h3><table id=\"task-balance\"><tr><th>task</th><th class=\"n\">elapsed (s)</th><th class=\"n\">self time, all threads (s)</th><th></th></tr>\n");
    for p in &inp.times {
        let s = self_of(p);
        let _ = writeln!(
            h,
            "<tr><td>proc#{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            p.header.proc,
            p.header.elapsed_s.map_or("-".into(), secs),
            secs(s),
            bar(if max_task > 0.0 { s / max_task } else { 0.0 }, "")
        );
    }
    h.push_str("</table>\n<h3>Threads</h3><table id=\"thread-balance\"><tr><th>task</th><th>thread</th><th class=\"n\">self time (s)</th><th class=\"n\">% of task</th><th></th></tr>\n");
    for p in &inp.times {
        let ids = per_thread_self(p);
        let max = ids.iter().map(|x| x.1).fold(0.0, f64::max);
        let sum: f64 = ids.iter().map(|x| x.1).sum();
        for (t, s) in ids {
            let _ = writeln!(
                h,
                "<tr><td>proc#{}</td><td>{t}</td><td class=\"n\">{}</td><td class=\"n\">{:.1}</td><td>{}</td></tr>",
                p.header.proc,
                secs(s),
                if sum > 0.0 { 100.0 * s / sum } else { 0.0 },
                bar(if max > 0.0 { s / max } else { 0.0 }, "self")
            );
        }
    }
    h.push_str("</table>\n");
    if inp.times.len() > 1 {
        let mut m = Merger::new();
        let ok = inp.times.iter().all(|p| {
            m.add_profile(p, std::path::Path::new(p.source.as_deref().unwrap_or("")))
                .is_ok()
        });
        if ok {
            let t = m.finish();
            h.push_str("<h3>Routines over tasks (self time, s)</h3><table id=\"rank-balance\"><tr><th>routine</th><th class=\"n\">min</th><th class=\"n\">mean</th><th class=\"n\">max</th><th class=\"n\">max task</th><th class=\"n\">max/mean</th><th class=\"n\">Imbal-% (max&minus;min)/max</th></tr>\n");
            for r in t.routines.iter().take(TABLE_ROWS) {
                let _ = writeln!(
                    h,
                    "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                    esc(&r.routine),
                    secs(r.self_s.min),
                    secs(r.self_s.mean),
                    secs(r.self_s.max),
                    r.self_s.max_task,
                    r.imbalance.map_or("-".into(), |x| format!("{x:.2}")),
                    r.imbalance_pct.map_or("-".into(), |x| format!("{x:.1}"))
                );
            }
            h.push_str("</table>\n");
        }
    }
    h.push_str("</section>\n");
}

/// The calling tree of every task and thread, as nested `<details>`.
pub fn tree(h: &mut String, inp: &Inputs) {
    h.push_str("<section id=\"tree\"><h2>Calling tree</h2>\n<p class=\"note\">total / self seconds, calls; children by decreasing total. <button type=\"button\" data-expand=\"1\">expand all</button> <button type=\"button\" data-expand=\"0\">collapse all</button></p>\n<div class=\"tree\">\n");
    let mut budget = MAX_TREE_NODES;
    let mut hidden = 0usize;
    for p in &inp.times {
        let nodes: Vec<Node> = match &p.tree {
            Some(t) => t.clone(),
            None if p.has_callpaths() => tree::from_rows(&p.rows),
            None => flat_nodes(p),
        };
        let mut kids: HashMap<Option<u64>, Vec<usize>> = HashMap::new();
        for (i, n) in nodes.iter().enumerate() {
            kids.entry(n.parent).or_default().push(i);
        }
        for v in kids.values_mut() {
            v.sort_by(|&a, &b| nodes[b].total_s.total_cmp(&nodes[a].total_s));
        }
        let mut threads: Vec<u32> = nodes.iter().map(|n| n.thread).collect();
        threads.sort_unstable();
        threads.dedup();
        for t in threads {
            let _ = writeln!(
                h,
                "<details open><summary><b>proc#{} thread {t}</b></summary>",
                p.header.proc
            );
            let roots: Vec<usize> = kids
                .get(&None)
                .map(|v| {
                    v.iter()
                        .copied()
                        .filter(|&i| nodes[i].thread == t)
                        .collect()
                })
                .unwrap_or_default();
            for r in roots {
                node(h, &nodes, &kids, r, 0, &mut budget, &mut hidden);
            }
            h.push_str("</details>\n");
        }
    }
    h.push_str("</div>\n");
    if hidden > 0 {
        let _ = writeln!(
            h,
            "<p class=\"note\">{hidden} more nodes not shown (at most {MAX_TREE_NODES} on a page).</p>"
        );
    }
    h.push_str("</section>\n");
}

/// A profile without call paths: each row a root.
fn flat_nodes(p: &Profile) -> Vec<Node> {
    p.rows
        .iter()
        .enumerate()
        .map(|(i, r)| Node {
            id: i as u64 + 1,
            parent: None,
            routine: r.routine.clone(),
            thread: r.thread,
            file: r.file.clone(),
            calls: r.calls,
            self_s: r.self_s,
            total_s: r.total_s,
            sizes: None,
            counters: None,
            inferred: false,
        })
        .collect()
}

fn node(
    h: &mut String,
    nodes: &[Node],
    kids: &HashMap<Option<u64>, Vec<usize>>,
    i: usize,
    depth: usize,
    budget: &mut usize,
    hidden: &mut usize,
) {
    let n = &nodes[i];
    let children = kids.get(&Some(n.id)).map(Vec::as_slice).unwrap_or(&[]);
    if *budget == 0 {
        *hidden += 1 + count(nodes, kids, n.id);
        return;
    }
    *budget -= 1;
    let label = format!(
        "<span class=\"t\">{}</span><span class=\"s\">{}</span><span class=\"c\">{}</span>{}",
        secs(n.total_s),
        secs(n.self_s),
        n.calls,
        esc(&n.routine)
    );
    if children.is_empty() {
        let _ = writeln!(h, "<div class=\"leaf\">{label}</div>");
        return;
    }
    let _ = writeln!(
        h,
        "<details{}><summary>{label}</summary>",
        if depth < 2 { " open" } else { "" }
    );
    let (first, rest) = children.split_at(children.len().min(MAX_CHILDREN));
    for &c in first {
        node(h, nodes, kids, c, depth + 1, budget, hidden);
    }
    if !rest.is_empty() {
        let total: f64 = rest.iter().map(|&c| nodes[c].total_s).sum();
        let _ = writeln!(
            h,
            "<details><summary><span class=\"t\">{}</span><span class=\"s\"></span><span class=\"c\"></span><i>{} more callees</i></summary>",
            secs(total),
            rest.len()
        );
        for &c in rest {
            node(h, nodes, kids, c, depth + 1, budget, hidden);
        }
        h.push_str("</details>\n");
    }
    h.push_str("</details>\n");
}

fn count(nodes: &[Node], kids: &HashMap<Option<u64>, Vec<usize>>, id: u64) -> usize {
    let mut n = 0;
    let mut stack = vec![id];
    while let Some(x) = stack.pop() {
        if let Some(v) = kids.get(&Some(x)) {
            n += v.len();
            stack.extend(v.iter().map(|&i| nodes[i].id));
        }
    }
    n
}

/// The flame graph: the folded stacks as JSON for the script.
pub fn flame(h: &mut String, inp: &Inputs) {
    h.push_str("<section id=\"flame\"><h2>Flame graph</h2>\n<p class=\"note\">The width of a frame is its inclusive time (its self time plus its callees'); hover for the figures, click to zoom (click again to zoom out).</p>\n<div id=\"flame-info\"></div><div id=\"flamegraph\"></div>\n");
    let stacks = folded::folded(&inp.times, folded::Options::default());
    let v = serde_json::Value::from(stacks);
    let _ = writeln!(
        h,
        "<script type=\"application/json\" id=\"flame-data\">{}</script>",
        json_in_script(&v)
    );
    h.push_str("</section>\n");
}

/// The memory profiles' heaviest rows.
pub fn memory(h: &mut String, inp: &Inputs) {
    if inp.memory.is_empty() {
        return;
    }
    h.push_str("<section id=\"memory\"><h2>Memory</h2><table id=\"memory-table\"><tr><th>task</th><th>routine</th><th>thread</th><th class=\"n\">self alloc (B)</th><th class=\"n\">+ children (B)</th><th class=\"n\">leaked (B)</th><th class=\"n\">heap (B)</th><th class=\"n\">max stack (B)</th><th class=\"n\">allocs</th><th class=\"n\">frees</th></tr>\n");
    let mut rows: Vec<(u32, &crate::profile::Row)> = inp
        .memory
        .iter()
        .flat_map(|p| p.rows.iter().map(move |r| (p.header.proc, r)))
        .filter(|(_, r)| r.memory.is_some())
        .collect();
    rows.sort_by_key(|(_, r)| std::cmp::Reverse(r.memory.map_or(0, |m| m.self_alloc)));
    for (proc, r) in rows.iter().take(TABLE_ROWS) {
        let Some(m) = r.memory else { continue };
        let _ = writeln!(
            h,
            "<tr><td>{proc}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            esc(&r.routine),
            r.thread,
            m.self_alloc,
            m.children_alloc,
            m.self_leaked,
            m.heap,
            m.max_stack,
            m.allocs,
            m.frees
        );
    }
    h.push_str("</table></section>\n");
}

/// The I/O profiles' heaviest rows and the per-file reports.
pub fn io(h: &mut String, inp: &Inputs) {
    if inp.io.is_empty() && inp.io_reports.is_empty() {
        return;
    }
    h.push_str("<section id=\"io\"><h2>I/O</h2>\n");
    if !inp.io.is_empty() {
        h.push_str("<h3>Per routine</h3><table id=\"io-table\"><tr><th>task</th><th>routine</th><th>thread</th><th class=\"n\">I/O (s)</th><th class=\"n\">compute (s)</th><th class=\"n\">read (B)</th><th class=\"n\">written (B)</th><th class=\"n\">reads</th><th class=\"n\">writes</th><th class=\"n\">other</th></tr>\n");
        let mut rows: Vec<(u32, &crate::profile::Row)> = inp
            .io
            .iter()
            .flat_map(|p| p.rows.iter().map(move |r| (p.header.proc, r)))
            .filter(|(_, r)| r.io.is_some())
            .collect();
        rows.sort_by(|a, b| {
            let k = |r: &crate::profile::Row| r.io.map_or(0.0, |x| x.io_s);
            k(b.1).total_cmp(&k(a.1))
        });
        for (proc, r) in rows.iter().take(TABLE_ROWS) {
            let Some(x) = r.io else { continue };
            let _ = writeln!(
                h,
                "<tr><td>{proc}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                esc(&r.routine),
                r.thread,
                secs(x.io_s),
                secs(x.compute_s),
                x.read_bytes,
                x.write_bytes,
                x.reads,
                x.writes,
                x.other
            );
        }
        h.push_str("</table>\n");
    }
    if !inp.io_reports.is_empty() {
        h.push_str("<h3>Per file (drhook.io reports)</h3><table id=\"io-files\"><tr><th>process</th><th>file</th><th class=\"n\">read (B)</th><th class=\"n\">written (B)</th><th class=\"n\">time (s)</th><th>opened by</th></tr>\n");
        let mut files: Vec<(String, &crate::report::io_read::File)> = inp
            .io_reports
            .iter()
            .flat_map(|r| r.files.iter().map(move |f| (r.id(), f)))
            .collect();
        files.sort_by_key(|f| std::cmp::Reverse(f.1.bytes()));
        for (id, f) in files.iter().take(TABLE_ROWS) {
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
                esc(id),
                esc(&f.path),
                f.read_bytes,
                f.write_bytes,
                secs(f.time()),
                esc(&f.opened_by)
            );
        }
        h.push_str("</table>\n");
    }
    h.push_str("</section>\n");
}
