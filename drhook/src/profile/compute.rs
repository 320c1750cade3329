//! From tree snapshots to profile rows: [`compute`] is a pure function from
//! the snapshots to the rows and totals of the Dr.Hook profile:
//!
//! * per node: inclusive time `I` (minus the measured instrumentation cost
//!   unless `noself`), self time `S = I - Σ I(children)`, never negative;
//! * per routine and thread (or per call path with `callpath`): calls =
//!   Σ calls, self = Σ S, and total = Σ I over the nodes that have no
//!   ancestor of the same routine — so a recursive routine's total counts
//!   only its outermost activations and direct or mutual recursion is exact;
//! * Wall profile: the total time is Σ over routines of the largest
//!   per-thread self time, that thread's row is starred and only it adds to
//!   the cumulative column; CPU profile: every row adds.

use std::collections::HashMap;

use super::snapshot::{SizeSnap, ThreadSnap};
use crate::config::options::{ProfileKind, SelfMode};
use crate::metrics::Agg;
use crate::tree::overhead::Overhead;

/// How to compute the rows.
#[derive(Clone, Debug)]
pub(crate) struct Params<'a> {
    pub kind: ProfileKind,
    pub self_mode: SelfMode,
    /// `Some(depth)` with `callpath`.
    pub callpath: Option<usize>,
    pub routine_names: &'a [&'a str],
    /// Wall ticks per second.
    pub ticks_per_sec: f64,
    pub overhead: Overhead,
    /// How each metric word adds up (`crate::metrics::Layout::aggs`;
    /// empty when no metric is installed).
    pub aggs: &'a [Agg],
}

/// One profile row. Kept small (no owned strings: names are routine ids
/// into [`Summary::names`]), because a profile of many threads holds one
/// row per routine and thread until the rows are sorted and written.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Row {
    /// Routine id (0 = `$drhook`, the overhead rows): the cluster id.
    pub cluster: u32,
    pub tid: u32,
    /// Number of threads on which the routine appears.
    pub cluster_size: u32,
    pub star: bool,
    pub calls: u64,
    pub self_s: f64,
    pub total_s: f64,
    pub pct: f64,
    pub cumul: f64,
    pub size: SizeSnap,
    /// Source file of a site that shows its file (`:basename` after the
    /// name), as the site holds it.
    pub file: Option<&'static str>,
    /// Routine ids of the ancestors (nearest first) with `callpath`.
    pub path: Box<[u32]>,
    /// Per metric word the row's self values, then its total values
    /// (outermost activations); empty without metrics and for `$drhook`
    /// rows. See [`Agg`] for the rules.
    pub metrics: Box<[u64]>,
}

impl Row {
    /// The self and total values of the metric words `offset..offset+len`
    /// (empty slices when the row has none).
    pub fn metric(&self, offset: usize, len: usize) -> (&[u64], &[u64]) {
        let (own, total) = self.metrics.split_at(self.metrics.len() / 2);
        let r = offset..offset + len;
        (
            own.get(r.clone()).unwrap_or(&[]),
            total.get(r).unwrap_or(&[]),
        )
    }
}

/// Per-thread header line.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ThreadLine {
    pub tid: u32,
    pub secs: f64,
    pub pct: f64,
    /// Σ self wall ticks (wall profile only).
    pub self_ticks: Option<u64>,
    pub lifetime_ticks: u64,
    /// Threads the line stands for (more than 1: threads that ended,
    /// summed), and the routine id of their first routine.
    pub threads: u64,
    pub first_routine: u32,
}

/// Everything the report prints below its first lines.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Summary<'a> {
    pub rows: Vec<Row>,
    pub total: f64,
    pub threads: Vec<ThreadLine>,
    pub routines_called: usize,
    pub overhead_pct: f64,
    /// Routine names by routine id - 1.
    pub names: &'a [&'a str],
}

impl Summary<'_> {
    /// The name of routine `routine` (`$drhook` for 0).
    pub fn name(&self, routine: u32) -> &str {
        name_of(self.names, routine)
    }

    /// The name of a row's routine.
    pub fn row_name(&self, r: &Row) -> &str {
        self.name(r.cluster)
    }
}

struct Acc {
    routine: u32,
    calls: u64,
    self_m: f64,
    total_m: f64,
    size: SizeSnap,
    file: Option<&'static str>,
    first_node: usize,
    mself: Vec<u64>,
    mtotal: Vec<u64>,
}

/// Computes the rows of all threads (tests; the writer feeds a [`Builder`]
/// one thread at a time).
#[cfg(test)]
pub(crate) fn compute<'a>(threads: &[ThreadSnap], p: &Params<'a>) -> Summary<'a> {
    let mut b = Builder::new(p);
    for t in threads {
        b.add_thread(t);
    }
    b.finish()
}

/// The rows of a profile, built one thread snapshot at a time, so that
/// only one thread's copy of its tree exists at any moment: per thread the
/// snapshot is reduced to rows at once ([`Builder::add_thread`]), and the
/// cross-thread figures (clusters, stars, totals, order) come at the end
/// ([`Builder::finish`]).
pub(crate) struct Builder<'p, 'a> {
    p: &'p Params<'a>,
    rows: Vec<Row>,
    thread_lines: Vec<ThreadLine>,
    overheads: Vec<f64>,
}

impl<'p, 'a> Builder<'p, 'a> {
    /// No rows yet.
    pub(crate) fn new(p: &'p Params<'a>) -> Self {
        Builder {
            p,
            rows: Vec::new(),
            thread_lines: Vec::new(),
            overheads: Vec::new(),
        }
    }

    /// Adds the rows of one thread (tests; the writer shares the figures
    /// with the JSON tree through [`Builder::add_thread_with`]).
    #[cfg(test)]
    pub(crate) fn add_thread(&mut self, t: &ThreadSnap) {
        let figures = NodeFigures::of(t, self.p);
        self.add_thread_with(t, &figures);
    }

    /// Adds the rows of one thread whose per-node figures are computed
    /// (the writer shares them with the JSON tree).
    pub(crate) fn add_thread_with(&mut self, t: &ThreadSnap, f: &NodeFigures) {
        let p = self.p;
        let (scale, t_out) = (f.scale, f.t_out);
        let w = p.aggs.len();
        let n = t.nodes.len();
        if n <= 1 {
            return;
        }
        // Row keys.
        let mut keys = vec![u32::MAX; n];
        let mut path_ids: HashMap<Vec<u32>, u32> = HashMap::new();
        for (i, key) in keys.iter_mut().enumerate().skip(1) {
            *key = match p.callpath {
                None => t.nodes[i].routine,
                Some(depth) => {
                    let mut path = vec![t.nodes[i].routine];
                    let mut q = t.nodes[i].parent as usize;
                    while q != 0 && q < n && path.len() <= depth {
                        path.push(t.nodes[q].routine);
                        q = t.nodes[q].parent as usize;
                    }
                    let next = path_ids.len() as u32;
                    *path_ids.entry(path).or_insert(next)
                }
            };
        }
        let n_keys = match p.callpath {
            None => keys
                .iter()
                .skip(1)
                .map(|&k| k as usize + 1)
                .max()
                .unwrap_or(0),
            Some(_) => path_ids.len(),
        };
        drop(path_ids);
        // Depth-first walk: a node adds to its row's total only when no
        // ancestor belongs to the same row (outermost activations).
        let mut first_child = vec![usize::MAX; n];
        let mut next_sibling = vec![usize::MAX; n];
        for i in (1..n).rev() {
            let par = t.nodes[i].parent as usize;
            if par < n {
                next_sibling[i] = first_child[par];
                first_child[par] = i;
            }
        }
        // Keys are dense (routine ids, or path ids in first-seen order), so
        // plain vectors index them.
        let mut accs: Vec<Acc> = Vec::new();
        let mut acc_of_key: Vec<u32> = vec![u32::MAX; n_keys];
        let mut active: Vec<u32> = vec![0; n_keys];
        let mut stack: Vec<(usize, bool)> = vec![(0, false)];
        while let Some((i, leaving)) = stack.pop() {
            if i != 0 {
                let k = keys[i] as usize;
                if leaving {
                    active[k] -= 1;
                    continue;
                }
                let node = &t.nodes[i];
                if acc_of_key[k] == u32::MAX {
                    acc_of_key[k] = accs.len() as u32;
                    accs.push(Acc {
                        routine: node.routine,
                        calls: 0,
                        self_m: 0.0,
                        total_m: 0.0,
                        size: SizeSnap::default(),
                        file: node.site.filter(|s| s.shows_file()).map(|s| s.file()),
                        first_node: i,
                        mself: vec![0; w],
                        mtotal: vec![0; w],
                    });
                }
                let a = &mut accs[acc_of_key[k] as usize];
                a.calls += node.calls;
                a.self_m += f.self_value(i);
                a.size.merge(node.size);
                for (k, &agg) in p.aggs.iter().enumerate() {
                    agg.add(&mut a.mself[k], f.word_self(t, p.aggs, i, k));
                }
                let depth_in_row = &mut active[k];
                if *depth_in_row == 0 {
                    a.total_m += f.total_value(t, i);
                    for (k, &agg) in p.aggs.iter().enumerate() {
                        agg.add(&mut a.mtotal[k], f.word_total(t, p.aggs, i, k));
                    }
                }
                *depth_in_row += 1;
                stack.push((i, true));
            }
            let mut c = first_child[i];
            while c != usize::MAX {
                stack.push((c, false));
                c = next_sibling[c];
            }
        }
        let pairs: u64 = t.nodes[1..].iter().map(|x| x.calls + x.resumes).sum();
        let overhead_s = pairs as f64 * t_out * scale;
        self.overheads.push(overhead_s);
        let mut self_ticks = 0f64;
        self.rows.reserve(accs.len() + 1);
        for a in accs {
            if a.calls == 0 && a.self_m == 0.0 && a.total_m == 0.0 {
                // Nothing since counting started again (a fork child's
                // nodes from before the fork): not this process's routine.
                continue;
            }
            let path: Box<[u32]> = match p.callpath {
                None => Box::default(),
                Some(depth) => {
                    let mut v = Vec::new();
                    let mut q = t.nodes[a.first_node].parent as usize;
                    while q != 0 && q < n && v.len() < depth {
                        v.push(t.nodes[q].routine);
                        q = t.nodes[q].parent as usize;
                    }
                    v.into_boxed_slice()
                }
            };
            self_ticks += a.self_m;
            let mut metrics = a.mself;
            metrics.extend_from_slice(&a.mtotal);
            self.rows.push(Row {
                cluster: a.routine,
                tid: t.tid,
                cluster_size: 0,
                star: false,
                calls: a.calls,
                self_s: a.self_m * scale,
                total_s: a.total_m * scale,
                pct: 0.0,
                cumul: 0.0,
                size: a.size,
                file: a.file,
                path,
                metrics: metrics.into_boxed_slice(),
            });
        }
        if p.self_mode == SelfMode::Print {
            self.rows.push(Row {
                cluster: 0,
                tid: t.tid,
                cluster_size: 0,
                star: false,
                calls: 2 * pairs,
                self_s: overhead_s,
                total_s: overhead_s,
                pct: 0.0,
                cumul: 0.0,
                size: SizeSnap::default(),
                file: None,
                path: Box::default(),
                metrics: Box::default(),
            });
        }
        self.thread_lines.push(ThreadLine {
            tid: t.tid,
            secs: 0.0,
            pct: 0.0,
            self_ticks: (p.kind == ProfileKind::Wall).then_some(self_ticks.round() as u64),
            lifetime_ticks: t.lifetime_ticks,
            threads: t.threads,
            first_routine: t.nodes.get(1).map_or(0, |n| n.routine),
        });
    }

    /// Clusters, stars, percentages, the order of the rows and the totals.
    /// Sorts in place: nothing of the size of the rows is allocated.
    pub(crate) fn finish(self) -> Summary<'a> {
        let p = self.p;
        let names = p.routine_names;
        let Builder {
            mut rows,
            mut thread_lines,
            overheads,
            ..
        } = self;
        // Clusters: per routine, the per-thread self sums and the thread
        // with the most. Rows of one (routine, thread) are adjacent once
        // sorted by them (several with `callpath`).
        rows.sort_unstable_by(|a, b| a.cluster.cmp(&b.cluster).then(a.tid.cmp(&b.tid)));
        // Per routine id: (busiest thread, its self time, threads).
        let max_routine = rows.iter().map(|r| r.cluster).max().unwrap_or(0) as usize;
        let mut busiest: Vec<(u32, f64, u32)> = vec![(u32::MAX, f64::MIN, 0); max_routine + 1];
        let mut i = 0;
        while i < rows.len() {
            let (routine, tid) = (rows[i].cluster, rows[i].tid);
            let mut s = 0.0;
            while i < rows.len() && rows[i].cluster == routine && rows[i].tid == tid {
                s += rows[i].self_s;
                i += 1;
            }
            let b = &mut busiest[routine as usize];
            if s > b.1 || (s == b.1 && tid < b.0) {
                (b.0, b.1) = (tid, s);
            }
            b.2 += 1;
        }
        let total: f64 = match p.kind {
            ProfileKind::Wall => busiest.iter().filter(|b| b.2 > 0).map(|b| b.1).sum(),
            ProfileKind::Cpu => rows.iter().map(|r| r.self_s).sum(),
        };
        for r in &mut rows {
            let (tmax, _, span) = busiest[r.cluster as usize];
            r.cluster_size = span;
            r.star = span > 1 && r.tid == tmax;
            r.pct = if total > 0.0 {
                100.0 * r.self_s / total
            } else {
                0.0
            };
        }
        // `$drhook` (routine 0) counts as one, as in the reference.
        let routines_called = busiest.iter().filter(|b| b.2 > 0).count();
        drop(busiest);
        // The (cluster, thread, path) of a row is unique, so this order is
        // total and an unstable (in-place) sort is deterministic.
        rows.sort_unstable_by(|a, b| {
            b.self_s
                .total_cmp(&a.self_s)
                .then(a.cluster.cmp(&b.cluster))
                .then(a.tid.cmp(&b.tid))
                .then(a.path.len().cmp(&b.path.len()))
                .then_with(|| {
                    a.path
                        .iter()
                        .map(|&r| name_of(names, r))
                        .cmp(b.path.iter().map(|&r| name_of(names, r)))
                })
        });
        let mut cumul = 0.0;
        let mut secs_of: HashMap<u32, f64> = HashMap::new();
        for r in &mut rows {
            let adds = match p.kind {
                ProfileKind::Cpu => true,
                ProfileKind::Wall => r.cluster_size == 1 || r.star,
            };
            if adds {
                cumul += r.self_s;
            }
            r.cumul = cumul;
            *secs_of.entry(r.tid).or_insert(0.0) += r.self_s;
        }
        for tl in &mut thread_lines {
            tl.secs = secs_of.get(&tl.tid).copied().unwrap_or(0.0);
            tl.pct = if total > 0.0 {
                100.0 * tl.secs / total
            } else {
                0.0
            };
        }
        thread_lines.sort_by_key(|t| t.tid);
        let program_time: f64 = rows
            .iter()
            .filter(|r| r.cluster != 0)
            .map(|r| r.self_s)
            .sum::<f64>()
            .max(match p.kind {
                ProfileKind::Wall => total - overheads.iter().copied().fold(0.0, f64::max),
                ProfileKind::Cpu => total - overheads.iter().sum::<f64>(),
            });
        let max_overhead = overheads.iter().copied().fold(0.0, f64::max);
        let overhead_pct = if program_time > 0.0 {
            100.0 * max_overhead / program_time
        } else {
            0.0
        };
        Summary {
            routines_called,
            rows,
            total,
            threads: thread_lines,
            overhead_pct,
            names,
        }
    }
}

/// (seconds per unit, cost outside, cost inside) of the profile's clock.
fn scales(p: &Params<'_>) -> (f64, f64, f64) {
    match p.kind {
        ProfileKind::Wall => (
            1.0 / p.ticks_per_sec,
            p.overhead.wall_out,
            p.overhead.wall_in,
        ),
        ProfileKind::Cpu => (1e-9, p.overhead.cpu_out, p.overhead.cpu_in),
    }
}

/// The figures of every node of one thread snapshot, from which both the
/// profile's rows ([`Builder::add_thread_with`]) and the JSON tree
/// (`profile::json`) are made, so the two apply the same compensation and
/// the same self/total rules:
///
/// * inclusive value `I` (clock units: wall ticks or CPU ns), minus the
///   measured instrumentation cost of the node's activations (`in`) and of
///   the activations below it (`out`) unless `noself`, never negative;
/// * self value `S = max(I − Σ I(children), 0)`;
/// * total value `I` plus, in wall profiles, the time the node's calls spent
///   suspended between activations (futures, spans): total, not self;
/// * per metric word, the node's self and total value by the word's
///   [`Agg`] rule.
pub(crate) struct NodeFigures {
    /// Seconds per clock unit.
    pub scale: f64,
    /// Cost of one pair seen by the caller, clock units.
    t_out: f64,
    incl: Vec<f64>,
    child_sum: Vec<f64>,
    wall: bool,
    child_words: Vec<u64>,
    subtree: Vec<u64>,
}

impl NodeFigures {
    /// The figures of the nodes of `t`.
    pub(crate) fn of(t: &ThreadSnap, p: &Params<'_>) -> NodeFigures {
        let (scale, t_out, t_in) = scales(p);
        let compensate = p.self_mode != SelfMode::Off;
        let n = t.nodes.len();
        debug_assert!(
            n <= 1 || t.width == p.aggs.len(),
            "snapshot and layout disagree"
        );
        let metric = |i: usize| match p.kind {
            ProfileKind::Wall => t.nodes[i].wall as f64,
            ProfileKind::Cpu => t.nodes[i].cpu as f64,
        };
        // Activations (calls and resumptions) below each node, then
        // compensated inclusive times.
        let acts = |i: usize| t.nodes[i].calls + t.nodes[i].resumes;
        let mut desc = vec![0u64; n];
        for i in (1..n).rev() {
            let par = t.nodes[i].parent as usize;
            if par < n {
                desc[par] += acts(i) + desc[i];
            }
        }
        let incl: Vec<f64> = (0..n)
            .map(|i| {
                let raw = metric(i);
                if compensate && i > 0 {
                    (raw - acts(i) as f64 * t_in - desc[i] as f64 * t_out).max(0.0)
                } else {
                    raw
                }
            })
            .collect();
        drop(desc);
        let mut child_sum = vec![0f64; n];
        for (node, &inc) in t.nodes.iter().zip(&incl).skip(1) {
            let par = node.parent as usize;
            if par < n {
                child_sum[par] += inc;
            }
        }
        let (child_words, subtree) = metric_sums(t, p.aggs);
        NodeFigures {
            scale,
            t_out,
            incl,
            child_sum,
            wall: p.kind == ProfileKind::Wall,
            child_words,
            subtree,
        }
    }

    /// Self value of node `i` (clock units).
    #[inline]
    pub(crate) fn self_value(&self, i: usize) -> f64 {
        (self.incl[i] - self.child_sum[i]).max(0.0)
    }

    /// Total value of node `i` (clock units): its compensated inclusive
    /// value, plus its suspended time in wall profiles.
    #[inline]
    pub(crate) fn total_value(&self, t: &ThreadSnap, i: usize) -> f64 {
        if self.wall {
            self.incl[i] + t.nodes[i].suspended as f64
        } else {
            self.incl[i]
        }
    }

    /// The self value of metric word `k` of node `i`: inclusive words minus
    /// the children's, event and peak words as they are (0 for scratch).
    #[inline]
    pub(crate) fn word_self(&self, t: &ThreadSnap, aggs: &[Agg], i: usize, k: usize) -> u64 {
        let w = aggs.len();
        let v = t.words[i * w + k];
        match aggs[k] {
            Agg::Inclusive => v.saturating_sub(self.child_words[i * w + k]),
            Agg::Event | Agg::Peak => v,
            Agg::Scratch => 0,
        }
    }

    /// The total value of metric word `k` of node `i`: inclusive words as
    /// they are, event words summed and peak words maximised over the
    /// subtree (0 for scratch).
    #[inline]
    pub(crate) fn word_total(&self, t: &ThreadSnap, aggs: &[Agg], i: usize, k: usize) -> u64 {
        let w = aggs.len();
        match aggs[k] {
            Agg::Inclusive => t.words[i * w + k],
            Agg::Event | Agg::Peak => self.subtree[i * w + k],
            Agg::Scratch => 0,
        }
    }
}

impl Agg {
    /// Adds a node's value to a row's (sum; maximum for peaks).
    #[inline]
    fn add(self, acc: &mut u64, v: u64) {
        match self {
            Agg::Peak => *acc = (*acc).max(v),
            _ => *acc = acc.saturating_add(v),
        }
    }
}

/// Per node and metric word: the sum of the children's values (for
/// [`Agg::Inclusive`]) and the subtree's sum or maximum (for
/// [`Agg::Event`] and [`Agg::Peak`]), both `n × width`. Nodes are in
/// creation order (a parent before its children), so one backward pass
/// completes every subtree before it is added to its parent.
fn metric_sums(t: &ThreadSnap, aggs: &[Agg]) -> (Vec<u64>, Vec<u64>) {
    let w = aggs.len();
    let n = t.nodes.len();
    if w == 0 {
        return (Vec::new(), Vec::new());
    }
    let mut child = vec![0u64; n * w];
    let mut subtree = t.words.clone();
    for i in (1..n).rev() {
        let par = t.nodes[i].parent as usize;
        if par >= n {
            continue;
        }
        for (k, agg) in aggs.iter().enumerate() {
            let (c, pc) = (i * w + k, par * w + k);
            match agg {
                Agg::Inclusive => child[pc] = child[pc].saturating_add(t.words[c]),
                Agg::Event => subtree[pc] = subtree[pc].saturating_add(subtree[c]),
                Agg::Peak => subtree[pc] = subtree[pc].max(subtree[c]),
                Agg::Scratch => {}
            }
        }
    }
    (child, subtree)
}

fn name_of<'a>(names: &[&'a str], routine: u32) -> &'a str {
    if routine == 0 {
        return "$drhook";
    }
    names
        .get(routine as usize - 1)
        .copied()
        .unwrap_or("<unknown routine>")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::profile::snapshot::NodeSnap;

    /// Builds a thread snapshot from `(parent, routine, calls, wall)` rows
    /// (node 0, the root, is added).
    pub(crate) fn thread(tid: u32, nodes: &[(u32, u32, u64, u64)]) -> ThreadSnap {
        let mut v = vec![NodeSnap::root()];
        for &(parent, routine, calls, wall) in nodes {
            v.push(NodeSnap {
                parent,
                routine,
                site: None,
                calls,
                resumes: 0,
                suspended: 0,
                wall,
                cpu: wall,
                size: SizeSnap::default(),
            });
        }
        ThreadSnap {
            tid,
            nodes: v,
            lifetime_ticks: 0,
            width: 0,
            words: Vec::new(),
            threads: 1,
        }
    }

    /// Gives every node of `t` `width` metric words, all 0.
    pub(crate) fn with_width(t: &mut ThreadSnap, width: usize) {
        t.width = width;
        t.words = vec![0; t.nodes.len() * width];
    }

    pub(crate) fn names() -> Vec<&'static str> {
        vec!["MAIN", "A", "B", "C"]
    }

    fn params<'a>(names: &'a [&'a str], kind: ProfileKind) -> Params<'a> {
        Params {
            kind,
            self_mode: SelfMode::Off,
            callpath: None,
            routine_names: names,
            ticks_per_sec: 1000.0,
            overhead: Overhead::default(),
            aggs: &[],
        }
    }

    fn row<'a>(s: &'a Summary<'_>, name: &str, tid: u32) -> &'a Row {
        s.rows
            .iter()
            .find(|r| s.row_name(r) == name && r.tid == tid)
            .unwrap()
    }

    #[test]
    fn self_and_total() {
        let names = names();
        // MAIN(1000) -> A(600) -> B(100); MAIN -> B(50)
        let t = thread(
            1,
            &[
                (0, 1, 1, 1000),
                (1, 2, 3, 600),
                (2, 3, 6, 100),
                (1, 3, 2, 50),
            ],
        );
        let s = compute(&[t], &params(&names, ProfileKind::Wall));
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        let main = row(&s, "MAIN", 1);
        assert!(
            main.calls == 1 && close(main.self_s, 0.35) && close(main.total_s, 1.0),
            "{main:?}"
        );
        let a = row(&s, "A", 1);
        assert!(
            a.calls == 3 && close(a.self_s, 0.5) && close(a.total_s, 0.6),
            "{a:?}"
        );
        let b = row(&s, "B", 1);
        assert_eq!(b.calls, 8);
        assert!((b.self_s - 0.15).abs() < 1e-12 && (b.total_s - 0.15).abs() < 1e-12);
        assert!((s.total - 1.0).abs() < 1e-12);
        assert_eq!(s.row_name(&s.rows[0]), "A");
        assert!((s.rows[0].pct - 50.0).abs() < 1e-9);
        assert!((s.rows.last().unwrap().cumul - 1.0).abs() < 1e-12);
        assert_eq!(s.routines_called, 3);
    }

    #[test]
    fn suspended_time_counts_in_total_not_in_self() {
        let names = names();
        // MAIN(1000) -> A: one call in 3 activations, 300 ticks busy, 500
        // ticks suspended between them; A -> B(100).
        let mut t = thread(1, &[(0, 1, 1, 1000), (1, 2, 1, 300), (2, 3, 1, 100)]);
        t.nodes[2].resumes = 2;
        t.nodes[2].suspended = 500;
        let s = compute(&[t.clone()], &params(&names, ProfileKind::Wall));
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        let a = row(&s, "A", 1);
        assert!(
            a.calls == 1 && close(a.self_s, 0.2) && close(a.total_s, 0.8),
            "{a:?}"
        );
        // The parent's self time is not reduced by A's suspension.
        assert!(close(row(&s, "MAIN", 1).self_s, 0.7));
        // CPU profiles ignore suspension.
        let s = compute(&[t.clone()], &params(&names, ProfileKind::Cpu));
        assert!(close(row(&s, "A", 1).total_s, 300e-9));
        // Overhead compensation counts every activation: 3 for A, not 1.
        let mut p = params(&names, ProfileKind::Wall);
        p.self_mode = SelfMode::Account;
        p.overhead.wall_in = 10.0;
        let s = compute(&[t], &p);
        assert!(close(
            row(&s, "A", 1).self_s,
            (300.0 - 30.0 - 100.0 + 10.0) / 1000.0
        ));
    }

    #[test]
    fn direct_recursion_total_counts_outermost_only() {
        let names = names();
        // A -> A -> A (each level 100 ticks of self)
        let t = thread(1, &[(0, 2, 1, 300), (1, 2, 1, 200), (2, 2, 1, 100)]);
        let s = compute(&[t], &params(&names, ProfileKind::Wall));
        let a = row(&s, "A", 1);
        assert_eq!(a.calls, 3);
        assert!((a.total_s - 0.3).abs() < 1e-12, "{}", a.total_s);
        assert!((a.self_s - 0.3).abs() < 1e-12);
    }

    #[test]
    fn mutual_recursion_is_exact() {
        let names = names();
        // A(400) -> B(300) -> A(200) -> B(100)
        let t = thread(
            1,
            &[
                (0, 2, 1, 400),
                (1, 3, 1, 300),
                (2, 2, 1, 200),
                (3, 3, 1, 100),
            ],
        );
        let s = compute(&[t], &params(&names, ProfileKind::Wall));
        let (a, b) = (row(&s, "A", 1), row(&s, "B", 1));
        assert!((a.total_s - 0.4).abs() < 1e-12 && (b.total_s - 0.3).abs() < 1e-12);
        assert!((a.self_s - 0.2).abs() < 1e-12 && (b.self_s - 0.2).abs() < 1e-12);
        assert_eq!((a.calls, b.calls), (2, 2));
    }

    #[test]
    fn wallprof_stars_and_cumul_take_the_busiest_thread() {
        let names = names();
        let t1 = thread(1, &[(0, 1, 1, 1000), (1, 2, 10, 600)]);
        let t2 = thread(2, &[(0, 2, 12, 700)]);
        let s = compute(&[t1, t2], &params(&names, ProfileKind::Wall));
        let a1 = row(&s, "A", 1);
        let a2 = row(&s, "A", 2);
        assert!(a2.star && !a1.star);
        assert_eq!((a1.cluster_size, a2.cluster_size), (2, 2));
        // total = max(A) + MAIN self = 0.7 + 0.4
        assert!((s.total - 1.1).abs() < 1e-12);
        assert_eq!(s.row_name(&s.rows[0]), "A");
        assert_eq!(s.rows[0].tid, 2);
        assert!(
            (s.rows[1].cumul - 0.7).abs() < 1e-12,
            "A@1 does not add: {:?}",
            s.rows[1]
        );
        assert!(!row(&s, "MAIN", 1).star);
        assert_eq!(s.threads.len(), 2);
        assert!((s.threads[1].secs - 0.7).abs() < 1e-12);
    }

    #[test]
    fn cpuprof_sums_every_row() {
        let names = names();
        let t1 = thread(1, &[(0, 2, 10, 600_000_000)]);
        let t2 = thread(2, &[(0, 2, 12, 700_000_000)]);
        let s = compute(&[t1, t2], &params(&names, ProfileKind::Cpu));
        assert!((s.total - 1.3).abs() < 1e-9);
        assert!((s.rows[1].cumul - 1.3).abs() < 1e-9);
        assert!(s.rows[0].star);
    }

    #[test]
    fn compensation_removes_instrumentation_cost() {
        let names = names();
        // MAIN 1 call, 1000 ticks, with A called 100 times (empty, 2 ticks each measured)
        let t = thread(1, &[(0, 1, 1, 1000), (1, 2, 100, 200)]);
        let mut p = params(&names, ProfileKind::Wall);
        p.self_mode = SelfMode::Print;
        p.overhead = Overhead {
            wall_out: 5.0,
            wall_in: 2.0,
            ..Overhead::default()
        };
        let s = compute(&[t], &p);
        let a = row(&s, "A", 1);
        assert_eq!(a.self_s, 0.0, "an empty routine has no self time");
        let main = row(&s, "MAIN", 1);
        // 1000 - 1*2 (own) - 100*5 (children's pairs) = 498 inclusive; self 498 - 0.
        assert!((main.total_s - 0.498).abs() < 1e-12, "{main:?}");
        assert!((main.self_s - 0.498).abs() < 1e-12);
        let d = row(&s, "$drhook", 1);
        assert_eq!(d.calls, 202);
        assert!((d.self_s - 0.505).abs() < 1e-12);
        assert!(s.overhead_pct > 100.0, "{}", s.overhead_pct);
        assert_eq!(s.routines_called, 3);
    }

    #[test]
    fn metric_words_follow_their_aggregation_rules() {
        let names = names();
        // MAIN -> A -> A (recursion) -> B ; MAIN -> B
        let mut t = thread(
            1,
            &[
                (0, 1, 1, 1000),
                (1, 2, 1, 500),
                (2, 2, 1, 300),
                (3, 3, 2, 100),
                (1, 3, 1, 50),
            ],
        );
        let aggs = [Agg::Inclusive, Agg::Event, Agg::Peak, Agg::Scratch];
        with_width(&mut t, 4);
        // (node, inclusive, event, peak, scratch)
        for (i, inc, ev, pk) in [
            (1, 100, 1, 10),
            (2, 60, 2, 20),
            (3, 30, 4, 50),
            (4, 5, 8, 30),
            (5, 7, 16, 40),
        ] {
            t.words[i * 4..i * 4 + 4].copy_from_slice(&[inc, ev, pk, 99]);
        }
        let mut p = params(&names, ProfileKind::Wall);
        p.aggs = &aggs;
        let s = compute(&[t], &p);
        let m = |name| {
            let r = row(&s, name, 1);
            let (own, total) = r.metric(0, 4);
            (own.to_vec(), total.to_vec())
        };
        // MAIN: inclusive self 100-60-7, total 100; events self 1, total all
        // 31; peak self 10, total max 50; scratch never reported.
        assert_eq!(m("MAIN"), (vec![33, 1, 10, 0], vec![100, 31, 50, 0]));
        // A (recursive): inclusive self (60-30)+(30-5), total the outermost
        // 60 only; events self 2+4, total the outer subtree 2+4+8; peak
        // self max(20,50), total max of the outer subtree.
        assert_eq!(m("A"), (vec![55, 6, 50, 0], vec![60, 14, 50, 0]));
        assert_eq!(m("B"), (vec![12, 24, 40, 0], vec![12, 24, 40, 0]));
        let r = row(&s, "A", 1);
        assert_eq!(r.metric(1, 2), (&[6u64, 50][..], &[14u64, 50][..]));
        assert_eq!(r.metric(9, 2), (&[][..], &[][..]));
    }

    #[test]
    fn callpath_rows_and_paths() {
        let names = names();
        // MAIN -> A -> C ; MAIN -> B -> C
        let t = thread(
            1,
            &[
                (0, 1, 1, 100),
                (1, 2, 1, 50),
                (2, 4, 2, 20),
                (1, 3, 1, 30),
                (4, 4, 3, 10),
            ],
        );
        let mut p = params(&names, ProfileKind::Wall);
        p.callpath = Some(50);
        let s = compute(&[t], &p);
        let cs: Vec<&Row> = s.rows.iter().filter(|r| s.row_name(r) == "C").collect();
        assert_eq!(cs.len(), 2);
        let path = |r: &Row| r.path.iter().map(|&q| s.name(q)).collect::<Vec<_>>();
        let via_a = cs.iter().find(|r| path(r)[0] == "A").unwrap();
        assert_eq!(path(via_a), vec!["A", "MAIN"]);
        assert_eq!(via_a.calls, 2);
        let via_b = cs.iter().find(|r| path(r)[0] == "B").unwrap();
        assert_eq!(via_b.calls, 3);
        assert_eq!(via_b.cluster_size, 1);
    }
}
