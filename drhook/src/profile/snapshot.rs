//! Copies of every thread's tree, taken while the program runs: nodes are
//! read with relaxed atomic loads, activations still open are counted up to
//! the moment of the snapshot.

use std::sync::atomic::Ordering;

use crate::tree::bits;
use crate::tree::node::{Node, SizeStats};
use crate::tree::site::Site;
use crate::tree::thread::ThreadData;
use crate::tree::thread::lazy::LazyInfo;

/// Size information merged over activations.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SizeSnap {
    pub count: u64,
    pub sum: u64,
    pub min: u64,
    pub max: u64,
}

impl SizeSnap {
    pub(crate) fn merge(&mut self, o: SizeSnap) {
        if o.count == 0 {
            return;
        }
        self.min = if self.count == 0 {
            o.min
        } else {
            self.min.min(o.min)
        };
        self.max = self.max.max(o.max);
        self.count += o.count;
        self.sum = self.sum.saturating_add(o.sum);
    }

    pub(crate) fn load(s: &SizeStats) -> SizeSnap {
        SizeSnap {
            count: s.count.load(Ordering::Relaxed),
            sum: s.sum.load(Ordering::Relaxed),
            min: s.min.load(Ordering::Relaxed),
            max: s.max.load(Ordering::Relaxed),
        }
    }
}

/// A copied node.
#[derive(Clone, Debug)]
pub(crate) struct NodeSnap {
    /// Index of the parent (`u32::MAX` for the root).
    pub parent: u32,
    /// Routine id (0 for the root).
    pub routine: u32,
    pub site: Option<&'static Site>,
    pub calls: u64,
    /// Activations that resumed a call (not counted in `calls`).
    pub resumes: u64,
    /// Wall ticks the node's calls spent suspended between activations
    /// (in total time, not in self time).
    pub suspended: u64,
    /// Wall ticks.
    pub wall: u64,
    /// CPU nanoseconds.
    pub cpu: u64,
    pub size: SizeSnap,
}

impl NodeSnap {
    /// A tree's root (node 0): no routine, no figures.
    pub(crate) fn root() -> Self {
        NodeSnap {
            parent: u32::MAX,
            routine: 0,
            site: None,
            calls: 0,
            resumes: 0,
            suspended: 0,
            wall: 0,
            cpu: 0,
            size: SizeSnap::default(),
        }
    }
}

/// A copied thread tree.
#[derive(Clone, Debug)]
pub(crate) struct ThreadSnap {
    pub tid: u32,
    pub nodes: Vec<NodeSnap>,
    /// Wall ticks from the thread's first instrumented call to the snapshot.
    pub lifetime_ticks: u64,
    /// Metric words per node (`crate::metrics`; 0 when none).
    pub width: usize,
    /// The nodes' metric words, `width` per node, in node order.
    pub words: Vec<u64>,
    /// Threads this tree holds: 1, or more for threads that ended summed
    /// into one block (`profile::ended`).
    pub threads: u64,
}

/// Copies one thread's tree. Open activations (on the thread's stack) are
/// counted up to `now_wall`.
pub(crate) fn snapshot(
    td: &ThreadData,
    routine_of_site: &[u32],
    now_wall: u64,
    mode: u32,
) -> ThreadSnap {
    let len = td.arena.len();
    let mut nodes = Vec::with_capacity(len as usize);
    let width = td.rows.width();
    let mut words = Vec::with_capacity(len as usize * width);
    for i in 0..len {
        let Some(n) = td.arena.get(i) else { break };
        // SAFETY: sites are 'static.
        let site = unsafe { n.site.as_ref() };
        let routine = site
            .map(|s| {
                routine_of_site
                    .get(s.raw_id() as usize)
                    .copied()
                    .unwrap_or(0)
            })
            .unwrap_or(0);
        nodes.push(NodeSnap {
            parent: if n.parent.is_null() {
                u32::MAX
            } else {
                // SAFETY: parents are nodes of the same arena.
                unsafe { (*n.parent).index }
            },
            routine,
            site,
            calls: n.calls.load(Ordering::Relaxed),
            resumes: td
                .resumed
                .get(i)
                .map_or(0, |r| r.resumes.load(Ordering::Relaxed)),
            suspended: td
                .resumed
                .get(i)
                .map_or(0, |r| r.suspended.load(Ordering::Relaxed)),
            wall: n.wall_incl.load(Ordering::Relaxed),
            cpu: n.cpu_incl.load(Ordering::Relaxed),
            size: td.sizes.get(i).map(SizeSnap::load).unwrap_or_default(),
        });
        match td.rows.get(i) {
            Some(row) => words.extend(row.iter().map(|w| w.load(Ordering::Relaxed))),
            None => words.resize(words.len() + width, 0),
        }
    }
    // Open activations.
    let own_thread = std::ptr::eq(crate::tree::thread::current(), td);
    let cpu_now = if mode & bits::CPU == 0 {
        None
    } else if own_thread {
        Some(crate::sys::clock::thread_cpu_ns())
    } else {
        crate::sys::clock::thread_cpu_ns_of(td.unix_tid())
    };
    let mut p: *const Node = td.current();
    while !p.is_null() && p != td.root {
        // SAFETY: nodes on a thread's stack belong to its arena and live forever.
        let n = unsafe { &*p };
        if let Some(s) = nodes.get_mut(n.index as usize) {
            if mode & bits::WALL != 0 {
                s.wall += now_wall.saturating_sub(n.wall_enter.load(Ordering::Relaxed));
            }
            if let Some(c) = cpu_now {
                s.cpu += c.saturating_sub(n.cpu_enter.load(Ordering::Relaxed));
            }
        }
        p = n.parent;
    }
    ThreadSnap {
        tid: td.tid,
        nodes,
        lifetime_ticks: now_wall.saturating_sub(td.start_wall()),
        width,
        words,
        threads: 1,
    }
}

/// The copy of a thread that has no tree (`tree::thread::lazy`): its root
/// region, one call open since the thread's start (or closed at
/// `now_wall`, when the thread ends), as a tree would hold it. `cpu_now`:
/// the thread's CPU clock now, when CPU time is measured.
pub(crate) fn untreed(
    i: &LazyInfo,
    routine_of_site: &[u32],
    now_wall: u64,
    cpu_now: Option<u64>,
    mode: u32,
) -> ThreadSnap {
    let width = crate::metrics::layout().width;
    let root = NodeSnap::root();
    let region = NodeSnap {
        parent: 0,
        routine: routine_of_site
            .get(i.site.raw_id() as usize)
            .copied()
            .unwrap_or(0),
        site: Some(i.site),
        calls: 1,
        wall: if mode & bits::WALL != 0 {
            now_wall.saturating_sub(i.start_wall)
        } else {
            0
        },
        cpu: cpu_now.map_or(0, |c| c.saturating_sub(i.start_cpu)),
        ..root.clone()
    };
    ThreadSnap {
        tid: i.tid,
        nodes: vec![root, region],
        lifetime_ticks: now_wall.saturating_sub(i.start_wall),
        width,
        words: vec![0; 2 * width],
        threads: 1,
    }
}

/// The CPU clock of the thread of `i` now, when `mode` measures CPU time.
pub(crate) fn untreed_cpu_now(i: &LazyInfo, mode: u32) -> Option<u64> {
    if mode & bits::CPU == 0 {
        None
    } else if i.unix_tid == crate::sys::sysinfo::gettid() {
        Some(crate::sys::clock::thread_cpu_ns())
    } else {
        crate::sys::clock::thread_cpu_ns_of(i.unix_tid)
    }
}
