//! The profile's JSON companion (`DR_HOOK_OPT=json`): `<profile>.json`, a
//! `drhook-profile` version 1 document (`docs/profile-schema.json`) with
//! this task's header facts and its full call-path tree — every node of
//! every thread, with the same compensation and self/total rules as the
//! text profile (both are made from [`NodeFigures`]).
//!
//! Written while the profile is collected, one thread at a time: the
//! document's head, then each thread's nodes as its snapshot is reduced
//! (nothing of the size of the tree is kept), then the facts known only at
//! the end (totals, per-thread lines). The members of an object have no
//! order in JSON, so the task object ends with them; `format` is the
//! document's first member, as the schema asks.

use std::io::{self, Write};

use serde::Serialize;

use super::compute::{NodeFigures, Params, Summary};
use super::snapshot::ThreadSnap;
use super::text::Header;
use crate::config::options::ProfileKind;

/// Value of the `generator` member.
const GENERATOR: &str = concat!("drhook ", env!("CARGO_PKG_VERSION"), " (engine)");

/// The facts of the task known before the threads are collected.
#[derive(Serialize)]
pub(crate) struct Head<'a> {
    pub program: &'a str,
    pub proc: u32,
    pub nprocs: u32,
    pub kind: &'static str,
    pub started: &'a str,
    pub columns: &'static str,
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    pub counters: &'a [&'a str],
    pub clusterinfo: bool,
    pub sizeinfo: bool,
    pub metadata: Metadata<'a>,
}

/// The run's metadata (`metadata` of the task): where and how it ran, for
/// tools that compare runs (Thicket's metadata table).
#[derive(Serialize)]
pub(crate) struct Metadata<'a> {
    pub host: String,
    pub pid: u32,
    /// The parent process (for the process tree of a `drhook run`).
    pub ppid: u32,
    /// The command line (`/proc/self/cmdline`).
    pub args: Vec<String>,
    /// `DR_HOOK_OPT` as given.
    pub options: &'a str,
    /// The start as a Unix time (seconds).
    pub start_unix: i64,
    /// `DR_HOOK_META`'s pairs.
    pub user: std::collections::BTreeMap<&'a str, &'a str>,
}

/// The JSON name of a profile kind.
pub(crate) fn kind_name(k: ProfileKind) -> &'static str {
    match k {
        ProfileKind::Wall => "wall",
        ProfileKind::Cpu => "cpu",
    }
}

#[derive(Serialize)]
struct Sizes {
    count: u64,
    sum: u64,
    min: u64,
    max: u64,
}

#[derive(Serialize)]
struct Counters<'a> {
    excl: &'a [u64],
    incl: &'a [u64],
}

#[derive(Serialize)]
struct Node<'a> {
    id: u64,
    parent: Option<u64>,
    routine: &'a str,
    thread: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<&'a str>,
    calls: u64,
    self_s: f64,
    total_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    sizes: Option<Sizes>,
    #[serde(skip_serializing_if = "Option::is_none")]
    counters: Option<Counters<'a>>,
}

#[derive(Serialize)]
struct MemItem {
    name: &'static str,
    value: u64,
    unit: &'static str,
}

#[derive(Serialize)]
struct ThreadLine {
    id: u32,
    time_s: f64,
    pct: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    self_cycles: Option<u64>,
    cycles: u64,
}

/// The facts known once every thread is collected.
#[derive(Serialize)]
struct Tail {
    nthreads: usize,
    routines_called: usize,
    ended: String,
    overhead_pct: f64,
    total_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    elapsed_s: Option<f64>,
    memory_usage: [MemItem; 5],
    threads: Vec<ThreadLine>,
}

fn json_err(e: serde_json::Error) -> io::Error {
    io::Error::other(e)
}

/// Writes a document one thread at a time: [`TreeWriter::begin`], then
/// [`TreeWriter::thread`] per thread, then [`TreeWriter::finish`].
pub(crate) struct TreeWriter {
    /// Ids of the next thread's nodes start after this.
    base: u64,
    first: bool,
    /// Where the `counters` metric's words start and how many events
    /// (`hpmprof`).
    counters: Option<(usize, usize)>,
    sizeinfo: bool,
    /// Reused per node.
    excl: Vec<u64>,
    incl: Vec<u64>,
}

impl TreeWriter {
    /// Writes the document's head up to the opening of the tree.
    pub(crate) fn begin(
        w: &mut dyn Write,
        head: &Head<'_>,
        counters: Option<(usize, usize)>,
    ) -> io::Result<TreeWriter> {
        write!(
            w,
            "{{\"format\":\"drhook-profile\",\"version\":1,\"generator\":\"{GENERATOR}\",\"tasks\":["
        )?;
        // The head's members, then the tree's opening, in the same object.
        let mut h = serde_json::to_vec(head).map_err(json_err)?;
        h.pop(); // the closing brace
        w.write_all(&h)?;
        w.write_all(b",\"tree\":[")?;
        Ok(TreeWriter {
            base: 0,
            first: true,
            counters,
            sizeinfo: head.sizeinfo,
            excl: Vec::new(),
            incl: Vec::new(),
        })
    }

    /// Writes the nodes of one thread (node 0, the root, is not a node of
    /// the document: its children are the thread's roots). Ids are
    /// `base + index`, unique in the task.
    pub(crate) fn thread(
        &mut self,
        w: &mut dyn Write,
        t: &ThreadSnap,
        f: &NodeFigures,
        p: &Params<'_>,
    ) -> io::Result<()> {
        let n = t.nodes.len();
        for i in 1..n {
            let node = &t.nodes[i];
            let parent = node.parent as usize;
            let counters = match self.counters {
                Some((at, len)) if !p.aggs.is_empty() => {
                    self.excl.clear();
                    self.incl.clear();
                    for k in at..at + len {
                        self.excl.push(f.word_self(t, p.aggs, i, k));
                        self.incl.push(f.word_total(t, p.aggs, i, k));
                    }
                    Some(Counters {
                        excl: &self.excl,
                        incl: &self.incl,
                    })
                }
                _ => None,
            };
            let out = Node {
                id: self.base + i as u64,
                parent: (parent != 0 && parent < n).then(|| self.base + parent as u64),
                routine: name_of(p.routine_names, node.routine),
                thread: t.tid,
                file: node
                    .site
                    .filter(|s| s.shows_file())
                    .map(|s| s.file().rsplit('/').next().unwrap_or("")),
                calls: node.calls,
                self_s: f.self_value(i) * f.scale,
                total_s: f.total_value(t, i) * f.scale,
                sizes: (self.sizeinfo && node.size.count > 0).then_some(Sizes {
                    count: node.size.count,
                    sum: node.size.sum,
                    min: node.size.min,
                    max: node.size.max,
                }),
                counters,
            };
            if !self.first {
                w.write_all(b",")?;
            }
            self.first = false;
            serde_json::to_writer(&mut *w, &out).map_err(json_err)?;
        }
        self.base += n as u64;
        Ok(())
    }

    /// Closes the tree and writes the facts known at the end (from the
    /// same collection as the text profile).
    pub(crate) fn finish(self, w: &mut dyn Write, h: &Header, s: &Summary<'_>) -> io::Result<()> {
        const MB: u64 = 1024 * 1024;
        let m = &h.mem;
        let tail = Tail {
            nthreads: s.threads.len(),
            routines_called: s.routines_called,
            ended: h.ended.clone(),
            overhead_pct: finite(s.overhead_pct),
            total_s: finite(s.total).max(0.0),
            elapsed_s: h.elapsed_s.map(|e| finite(e).max(0.0)),
            memory_usage: [
                MemItem {
                    name: "heap",
                    value: m.heap / MB,
                    unit: "MB",
                },
                MemItem {
                    name: "rss",
                    value: m.rss / MB,
                    unit: "MB",
                },
                MemItem {
                    name: "stack",
                    value: m.stack / MB,
                    unit: "MB",
                },
                MemItem {
                    name: "vmpeak",
                    value: m.vmpeak / MB,
                    unit: "MB",
                },
                MemItem {
                    name: "paging",
                    value: m.paging,
                    unit: "",
                },
            ],
            threads: s
                .threads
                .iter()
                .map(|t| ThreadLine {
                    id: t.tid,
                    time_s: finite(t.secs).max(0.0),
                    pct: finite(t.pct),
                    self_cycles: t.self_ticks,
                    cycles: t.lifetime_ticks,
                })
                .collect(),
        };
        w.write_all(b"],")?;
        let mut t = serde_json::to_vec(&tail).map_err(json_err)?;
        t.remove(0); // the opening brace: these members continue the task
        w.write_all(&t)?;
        w.write_all(b"]}\n")
    }
}

/// JSON has no NaN or infinity.
fn finite(x: f64) -> f64 {
    if x.is_finite() { x } else { 0.0 }
}

fn name_of<'a>(names: &[&'a str], routine: u32) -> &'a str {
    names
        .get((routine as usize).wrapping_sub(1))
        .copied()
        .unwrap_or("<unknown routine>")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::options::SelfMode;
    use crate::metrics::Agg;
    use crate::profile::compute::tests::{names, thread, with_width};
    use crate::profile::compute::{Builder, NodeFigures};
    use crate::sys::sysinfo::MemUsage;
    use crate::tree::overhead::Overhead;

    fn header() -> Header {
        Header {
            program: "prog".into(),
            myproc: 2,
            nproc: 3,
            started: "20260101 120000".into(),
            ended: "20260101 120001".into(),
            mem: MemUsage {
                heap: 3 << 20,
                rss: 5 << 20,
                stack: 1 << 20,
                vmpeak: 9 << 20,
                paging: 4,
            },
            kind: ProfileKind::Wall,
            clusterinfo: false,
            sizeinfo: true,
            callpath_indent: 2,
            callpath_packed: false,
            limit: -10.0,
            counters: Vec::new(),
            counters_at: 0,
            elapsed_s: None,
        }
    }

    /// The document of two threads: nodes, ids, parents and the figures
    /// the rows of the text profile are made of.
    #[test]
    fn the_document_carries_every_node_with_the_rows_figures() {
        let names = names();
        let aggs = [Agg::Inclusive, Agg::Scratch];
        let p = Params {
            kind: ProfileKind::Wall,
            self_mode: SelfMode::Account,
            callpath: None,
            routine_names: &names,
            ticks_per_sec: 1000.0,
            overhead: Overhead {
                wall_in: 1.0,
                wall_out: 2.0,
                ..Overhead::default()
            },
            aggs: &aggs,
        };
        // MAIN(1000) -> A(600, 3 calls) -> A(100) (recursion); MAIN -> B(50)
        let mut t1 = thread(
            1,
            &[
                (0, 1, 1, 1000),
                (1, 2, 3, 600),
                (2, 2, 1, 100),
                (1, 3, 2, 50),
            ],
        );
        with_width(&mut t1, 2);
        t1.words[2 * 2] = 70;
        t1.words[3 * 2] = 20;
        t1.nodes[4].size = crate::profile::snapshot::SizeSnap {
            count: 2,
            sum: 10,
            min: 4,
            max: 6,
        };
        let mut t2 = thread(2, &[(0, 3, 5, 300)]);
        with_width(&mut t2, 2);
        let mut out = Vec::new();
        let head = Head {
            program: "prog",
            proc: 2,
            nprocs: 3,
            kind: "wall",
            started: "20260101 120000",
            columns: "counters",
            counters: &["cycles"],
            clusterinfo: false,
            sizeinfo: true,
            metadata: Metadata {
                host: "h".into(),
                pid: 7,
                ppid: 1,
                args: vec!["prog".into()],
                options: "prof,json",
                start_unix: 0,
                user: [("case", "t255")].into_iter().collect(),
            },
        };
        let mut tw = TreeWriter::begin(&mut out, &head, Some((0, 1))).unwrap();
        let mut b = Builder::new(&p);
        for t in [&t1, &t2] {
            let f = NodeFigures::of(t, &p);
            b.add_thread_with(t, &f);
            tw.thread(&mut out, t, &f, &p).unwrap();
        }
        let s = b.finish();
        tw.finish(&mut out, &header(), &s).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("{\"format\":\"drhook-profile\",\"version\":1,"));
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        let task = &doc["tasks"][0];
        assert_eq!(task["proc"], 2);
        assert_eq!(task["nthreads"], 2);
        assert_eq!(task["memory_usage"][3]["name"], "vmpeak");
        assert_eq!(task["memory_usage"][3]["value"], 9);
        let tree = task["tree"].as_array().unwrap();
        assert_eq!(tree.len(), 5);
        let ids: Vec<u64> = tree.iter().map(|n| n["id"].as_u64().unwrap()).collect();
        assert_eq!(ids, [1, 2, 3, 4, 6], "thread 2's nodes after thread 1's");
        assert!(tree[0]["parent"].is_null() && tree[4]["parent"].is_null());
        assert_eq!(tree[2]["parent"], 2);
        // Per routine, the nodes add up to the rows: calls and self over
        // every node, total over the outermost ones.
        for r in &s.rows {
            let name = s.row_name(r);
            let of: Vec<&serde_json::Value> = tree
                .iter()
                .filter(|n| n["routine"] == name && n["thread"] == r.tid)
                .collect();
            let calls: u64 = of.iter().map(|n| n["calls"].as_u64().unwrap()).sum();
            let own: f64 = of.iter().map(|n| n["self_s"].as_f64().unwrap()).sum();
            assert_eq!(calls, r.calls, "{name}");
            assert!((own - r.self_s).abs() < 1e-12, "{name}: {own} {}", r.self_s);
        }
        let a_outer = tree[1]["total_s"].as_f64().unwrap();
        let a_row = s.rows.iter().find(|r| s.row_name(r) == "A").unwrap();
        assert!((a_outer - a_row.total_s).abs() < 1e-12);
        // Compensation: A's outer node 600 - 3*1 - 1*2 = 595 ticks.
        assert!((a_outer - 0.595).abs() < 1e-12, "{a_outer}");
        // Counters: inclusive and exclusive of the inclusive word.
        assert_eq!(tree[1]["counters"]["incl"][0], 70);
        assert_eq!(tree[1]["counters"]["excl"][0], 50);
        assert_eq!(tree[3]["sizes"]["sum"], 10);
        assert!(tree[0].get("sizes").is_none());
    }
}
