//! The summary at the end of the run (`DR_HOOK_OPT=summary`): a compact
//! tree of the call paths that took the most time, with their total and
//! self times and calls, summed over the task's threads — Caliper's
//! `runtime-report`, GPTL's `timing.summary`.
//!
//! Built from the same per-node figures as the profile (`compute`), while
//! the profile is collected at the end: the threads' trees are merged by
//! call path, then the `DR_HOOK_SUMMARY_LINES` call paths of largest total
//! time whose callers are shown (so the lines form a tree) are printed,
//! callers first, callees indented and by decreasing total. Written on
//! stderr (through the engine's own writer, one `write` for the block:
//! never counted as the program's I/O) by task 1 (or `DR_HOOK_PROFILE_PROC`'s
//! task), or by every task into its own `DR_HOOK_SUMMARY` file.
//!
//! MPI: each task summarises its own ranks' threads. Min / mean / max over
//! ranks need the in-job reduction (`DR_HOOK_OPT=reduce`): it plugs in at
//! [`over_ranks`], which today returns the task's own tree.

use std::collections::{BinaryHeap, HashMap};
use std::fmt::Write as _;
use std::path::PathBuf;

use super::compute::NodeFigures;
use super::snapshot::ThreadSnap;
use super::text::Header;
use crate::setup::Engine;
use crate::sys::linebuf;

/// A call path merged over threads.
#[derive(Clone, Debug, Default)]
pub(crate) struct PathNode {
    pub routine: u32,
    pub calls: u64,
    pub self_s: f64,
    pub total_s: f64,
    pub children: Vec<usize>,
}

/// The task's call paths, merged over its threads (node 0: the root).
pub(crate) struct CallTree {
    pub nodes: Vec<PathNode>,
    index: HashMap<(usize, u32), usize>,
    pub threads: usize,
}

impl CallTree {
    pub(crate) fn new() -> CallTree {
        CallTree {
            nodes: vec![PathNode::default()],
            index: HashMap::new(),
            threads: 0,
        }
    }

    /// Adds a thread's tree (parents come before their children).
    pub(crate) fn add(&mut self, t: &ThreadSnap, f: &NodeFigures) {
        self.threads += t.threads.max(1) as usize;
        let mut at = vec![0usize; t.nodes.len()];
        for (i, n) in t.nodes.iter().enumerate().skip(1) {
            let parent = at.get(n.parent as usize).copied().unwrap_or(0);
            let next = self.nodes.len();
            let m = *self.index.entry((parent, n.routine)).or_insert(next);
            if m == next {
                self.nodes.push(PathNode {
                    routine: n.routine,
                    ..PathNode::default()
                });
                self.nodes[parent].children.push(m);
            }
            at[i] = m;
            let p = &mut self.nodes[m];
            p.calls += n.calls;
            p.self_s += f.self_value(i) * f.scale;
            p.total_s += f.total_value(t, i) * f.scale;
        }
    }
}

/// The hook point of the in-job reduction: with `DR_HOOK_OPT=reduce` the
/// trees of all ranks are to be reduced here into min / mean / max per
/// call path. Until then, every task's summary is its own (per rank).
fn over_ranks(tree: CallTree) -> CallTree {
    tree
}

/// The lines of the summary (no trailing newline on the last).
pub(crate) fn render(tree: &CallTree, h: &Header, names: &[&str], lines: usize) -> String {
    // The largest totals first, a node becoming eligible once its caller
    // is shown.
    #[derive(PartialEq)]
    struct Cand(f64, usize);
    impl Eq for Cand {}
    impl PartialOrd for Cand {
        fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
            Some(self.cmp(o))
        }
    }
    impl Ord for Cand {
        fn cmp(&self, o: &Self) -> std::cmp::Ordering {
            self.0.total_cmp(&o.0).then(o.1.cmp(&self.1))
        }
    }
    let mut shown = vec![false; tree.nodes.len()];
    let mut heap: BinaryHeap<Cand> = tree.nodes[0]
        .children
        .iter()
        .map(|&c| Cand(tree.nodes[c].total_s, c))
        .collect();
    let mut count = 0;
    while count < lines {
        let Some(Cand(_, n)) = heap.pop() else { break };
        shown[n] = true;
        count += 1;
        heap.extend(
            tree.nodes[n]
                .children
                .iter()
                .map(|&c| Cand(tree.nodes[c].total_s, c)),
        );
    }
    let hidden = tree.nodes.len() - 1 - count;
    let name = |r: u32| -> &str {
        (r as usize)
            .checked_sub(1)
            .and_then(|i| names.get(i))
            .copied()
            .unwrap_or("?")
    };
    let program = h.program.rsplit('/').next().unwrap_or(&h.program);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Dr.Hook summary of proc#{} of {} ({}): elapsed {:.3} s; {} thread{}, times summed over threads",
        h.myproc,
        h.nproc,
        linebuf::escape_controls(program),
        h.elapsed_s.unwrap_or(0.0),
        tree.threads,
        if tree.threads == 1 { "" } else { "s" }
    );
    let _ = writeln!(
        s,
        "{:>12} {:>12} {:>12}  routine",
        "total (s)", "self (s)", "calls"
    );
    let mut stack: Vec<(usize, usize)> = Vec::new();
    let kids = |n: usize| -> Vec<usize> {
        let mut c: Vec<usize> = tree.nodes[n]
            .children
            .iter()
            .copied()
            .filter(|&c| shown[c])
            .collect();
        c.sort_by(|&a, &b| tree.nodes[b].total_s.total_cmp(&tree.nodes[a].total_s));
        c
    };
    stack.extend(kids(0).into_iter().rev().map(|c| (c, 0)));
    while let Some((n, depth)) = stack.pop() {
        let p = &tree.nodes[n];
        let _ = writeln!(
            s,
            "{:>12.6} {:>12.6} {:>12}  {:indent$}{}",
            p.total_s,
            p.self_s,
            p.calls,
            "",
            linebuf::escape_controls(name(p.routine)),
            indent = 2 * depth
        );
        stack.extend(kids(n).into_iter().rev().map(|c| (c, depth + 1)));
    }
    if hidden > 0 {
        let _ = writeln!(
            s,
            "({hidden} more call path{} not shown: DR_HOOK_SUMMARY_LINES={lines})",
            if hidden == 1 { "" } else { "s" }
        );
    }
    if h.nproc > 1 {
        let _ = writeln!(
            s,
            "(this task's own summary; min/mean/max over ranks need the in-job reduction, not built yet)"
        );
    }
    s
}

/// Whether this process writes a summary at its end.
pub(crate) fn wanted(e: &Engine) -> bool {
    let c = &e.config;
    c.options.summary
        && crate::setup::is_main()
        && (c.summary.path.is_some() || c.profile_proc.unwrap_or(1) == crate::setup::task(e).myproc)
}

/// Writes the summary of `tree` (stderr, or the `DR_HOOK_SUMMARY` file).
pub(crate) fn write(e: &Engine, tree: CallTree, h: &Header, names: &[&str]) {
    let tree = over_ranks(tree);
    let text = render(&tree, h, names, e.config.summary.lines);
    let Some(path) = &e.config.summary.path else {
        linebuf::write_all(2, text.as_bytes());
        return;
    };
    let wanted = if h.nproc > 1 {
        PathBuf::from(format!("{path}.{}", h.myproc))
    } else {
        PathBuf::from(path)
    };
    let written = super::write::create_with_fallback(&wanted).and_then(|mut file| {
        file.writer().write_all(text.as_bytes())?;
        let at = file.path().to_path_buf();
        file.commit()?;
        Ok(at)
    });
    let f = "write_summary";
    match written {
        Ok(at) if at == wanted => {}
        Ok(at) => crate::diag!(
            f,
            "Error: unable to write the summary to '{}'; it was written to '{}' instead",
            wanted.display(),
            at.display()
        ),
        Err(err) => crate::diag!(
            f,
            "Error: unable to write the summary to '{}': {err}",
            wanted.display()
        ),
    }
}
