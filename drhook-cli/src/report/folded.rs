//! Folded stacks (`frame;frame;frame count`), the input of flame graphs.
//!
//! The stacks come from the call-path tree when the profile has one
//! (`callpath` profiles, JSON with a tree), else each routine is one frame.
//! The count is the self time in microseconds (rounded; zero stacks are
//! left out), so that a frame of the graph is as wide as its inclusive
//! time (its own stacks and those of its callees). With several tasks each
//! stack starts with a `task N` frame, with several threads (and no thread
//! chosen) with a `thread N` frame, unless [`Options::merge_tasks`] /
//! [`Options::merge_threads`] sum them into one tree. Equal stacks are
//! summed, and the lines are sorted.
//! A `;` in a routine name would split the frame, so it is written `,`.

use std::collections::BTreeMap;

use crate::profile::{Profile, tree};

/// Which stacks [`folded`] writes.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// Only this thread.
    pub thread: Option<u32>,
    /// One tree for all threads (no `thread N` frame).
    pub merge_threads: bool,
    /// One tree for all tasks (no `task N` frame).
    pub merge_tasks: bool,
}

/// Self time in whole microseconds.
fn micros(s: f64) -> u64 {
    if s.is_finite() && s > 0.0 {
        (s * 1e6).round() as u64
    } else {
        0
    }
}

fn frame(name: &str) -> String {
    name.replace(';', ",")
}

/// The stacks of the given tasks and their self microseconds, equal
/// stacks summed.
pub fn stacks(profiles: &[Profile], o: Options) -> BTreeMap<String, u64> {
    let mut out: BTreeMap<String, u64> = BTreeMap::new();
    let many_tasks = !o.merge_tasks && profiles.len() > 1;
    for p in profiles {
        let threads = p.thread_ids();
        let many_threads = !o.merge_threads && o.thread.is_none() && threads.len() > 1;
        let prefix = |t: u32| {
            let mut s = String::new();
            if many_tasks {
                s.push_str(&format!("task {};", p.header.proc));
            }
            if many_threads {
                s.push_str(&format!("thread {t};"));
            }
            s
        };
        let mut add = |t: u32, stack: String, v: u64| {
            if v > 0 {
                *out.entry(format!("{}{stack}", prefix(t))).or_default() += v;
            }
        };
        match &p.tree {
            Some(nodes) => {
                let paths = tree::paths(nodes);
                for (n, path) in nodes.iter().zip(&paths) {
                    if o.thread.is_some_and(|t| t != n.thread) {
                        continue;
                    }
                    let frames: Vec<String> = path.iter().map(|f| frame(f)).collect();
                    add(n.thread, frames.join(";"), micros(n.self_s));
                }
            }
            None => {
                for r in &p.rows {
                    if o.thread.is_some_and(|t| t != r.thread) {
                        continue;
                    }
                    add(r.thread, frame(&r.routine), micros(r.self_s));
                }
            }
        }
    }
    out
}

/// Whether `text` is a sampled profile (`<profile>-sample.json`, format
/// `drhook-sample`).
pub fn is_sampled(text: &str) -> bool {
    text.trim_start().starts_with('{') && text.contains("\"drhook-sample\"")
}

/// The folded stacks of sampled profiles (`drhook-sample` documents):
/// the Dr.Hook regions, outermost first, then the sampled native frames
/// as `[sampled] function`; the count is the samples. Frames as in
/// [`folded`] (`task N`, `thread N` prefixes).
pub fn sampled(docs: &[serde_json::Value], thread: Option<u32>) -> Vec<String> {
    use std::collections::BTreeMap;
    let many_tasks = docs.len() > 1;
    let mut out = BTreeMap::<String, u64>::new();
    for d in docs {
        let stacks = d["stacks"].as_array().map(Vec::as_slice).unwrap_or(&[]);
        let tids: std::collections::BTreeSet<u64> =
            stacks.iter().filter_map(|s| s["tid"].as_u64()).collect();
        let many_threads = thread.is_none() && tids.len() > 1;
        for s in stacks {
            let tid = s["tid"].as_u64().unwrap_or(0);
            if thread.is_some_and(|t| u64::from(t) != tid) {
                continue;
            }
            let count = s["count"].as_u64().unwrap_or(0);
            if count == 0 {
                continue;
            }
            let mut fr: Vec<String> = Vec::new();
            if many_tasks {
                fr.push(format!("task {}", d["proc"].as_u64().unwrap_or(0)));
            }
            if many_threads {
                fr.push(format!("thread {tid}"));
            }
            let names = |k: &str| -> Vec<String> {
                s[k].as_array()
                    .map(|a| a.iter().filter_map(|v| v.as_str()).map(frame).collect())
                    .unwrap_or_default()
            };
            fr.extend(names("regions"));
            fr.extend(
                names("frames")
                    .into_iter()
                    .map(|f| format!("[sampled] {f}")),
            );
            *out.entry(fr.join(";")).or_default() += count;
        }
    }
    out.into_iter().map(|(k, v)| format!("{k} {v}")).collect()
}

/// The folded stacks of the given tasks (`stack count` lines, sorted).
pub fn folded(profiles: &[Profile], o: Options) -> Vec<String> {
    stacks(profiles, o)
        .into_iter()
        .map(|(s, v)| format!("{s} {v}"))
        .collect()
}

/// Differential folded stacks (`stack before after` lines, sorted), which
/// inferno draws with the frames coloured by their change: every stack of
/// either side, 0 where a side does not have it.
pub fn differential(before: &[Profile], after: &[Profile], o: Options) -> Vec<String> {
    let a = stacks(before, o);
    let b = stacks(after, o);
    let mut all: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for (s, v) in &a {
        all.entry(s).or_default().0 = *v;
    }
    for (s, v) in &b {
        all.entry(s).or_default().1 = *v;
    }
    all.into_iter()
        .map(|(s, (x, y))| format!("{s} {x} {y}"))
        .collect()
}
