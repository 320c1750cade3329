//! Threads that ended: what the profile keeps of them once their trees
//! are freed.
//!
//! When a thread ends (the attach layer's `thread_end`, or the
//! destructor of a thread that registered a tree, `sys::exit_key`) its tree is
//! copied here in compact form — a [`ThreadSnap`]: one entry per node
//! with its counts, times, sizes and metric words, nothing else — and the
//! tree itself (its arena, node maps, rows, stampers) is freed
//! (`tree::thread::unregister_current`): a thread costs a few hundred
//! bytes once it ended instead of 7-15 KB for ever.
//!
//! The first `DRHOOK_THREAD_BLOCKS` threads that end (256 by default,
//! `Config::thread_blocks`) keep their own block in
//! the profile, under their own numbers, as before. Later ones are summed
//! into one block per first routine (the thread's root region
//! `thread:<start routine>` under the preload layer; the first routine the
//! thread called otherwise), under the number of the first thread summed
//! there: the same routines under the same callers add their calls, times,
//! sizes and metric words (maxima for high-water marks), the root region's
//! calls count the threads, and the header says how many threads the block
//! holds. A program that runs a million short threads gets a profile and a
//! memory use of the size of its distinct kinds of threads.
//!
//! The memory profile's block headers hold the address of the allocating
//! routine's `LIVE` word: the rows of a thread that ended with blocks still
//! allocated are kept ([`Rows::keep`](crate::sys::segmented::Rows)) and
//! their `LIVE` words read when the profile is written (frees after the
//! thread's end count); the rows of a thread whose `LIVE` words are all 0
//! are freed with its tree (a zero-sized block has no owner: nothing can
//! point there any more). With the timeline (`trace`) trees are kept whole:
//! the timeline names its events through them.
//!
//! A thread started without a tree that never made one
//! (`tree::thread::lazy`) gives its root region's figures here directly
//! ([`retire_untreed`]): a two-node block of its own, or one call and its
//! times added to its start routine's summed block — the line an eager
//! tree would have left.
//!
//! The profile writer holds this store's lock (and the lazy threads'
//! list's) while it walks the live trees, the live threads without a tree
//! and then the blocks here, so a thread that ends meanwhile is seen
//! exactly once.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use super::snapshot::{self, ThreadSnap};
use crate::metrics::Agg;
use crate::sys::clock;
use crate::sys::segmented::KeptRows;
use crate::tree::bits;
use crate::tree::thread::lazy::{self, Lazy, LazyInfo};
use crate::tree::thread::{self, ThreadData};

/// One block of the profile made of threads that ended.
struct Block {
    /// The tree (routine ids filled in when the profile is written), its
    /// `LIVE` words without those of `kept` rows.
    snap: ThreadSnap,
    /// Rows kept because blocks allocated there were still allocated when
    /// the thread ended, each with the block's node of each of its nodes.
    kept: Vec<(KeptRows, Vec<u32>)>,
    /// Summed blocks: the node of (parent node, site address).
    index: Option<HashMap<(u32, usize), u32>>,
}

struct Store {
    blocks: Vec<Block>,
    /// Summed blocks: (address of their first routine's site, block).
    /// Few: one per kind of thread.
    summed: Vec<(usize, usize)>,
    /// Blocks of a single thread so far.
    own: u32,
    /// Kept rows, and how many there may be before they are checked again
    /// (doubled after each check: the checks cost O(1) per thread).
    kept: usize,
    check_kept_at: usize,
}

static STORE: Mutex<Store> = Mutex::new(Store {
    blocks: Vec::new(),
    summed: Vec::new(),
    own: 0,
    kept: 0,
    check_kept_at: 64,
});

fn store() -> MutexGuard<'static, Store> {
    STORE.lock().unwrap_or_else(|p| p.into_inner())
}

/// The store's lock and the lazy threads' list's, held by the profile
/// writer across its walk of the live trees, the live threads without a
/// tree ([`each_untreed`]) and the blocks here ([`each`]).
pub(crate) struct Held(MutexGuard<'static, Store>, lazy::Held);

/// Takes the store's lock and then the lazy threads' list's (the profile
/// writer, a `fork`).
pub(crate) fn hold() -> Held {
    let s = store();
    Held(s, lazy::hold())
}

/// Every live thread without a tree, as a copy (routine ids from
/// `routine_of_site`; its root region open up to `now_wall`).
pub(crate) fn each_untreed(
    h: &Held,
    routine_of_site: &[u32],
    now_wall: u64,
    mode: u32,
    mut f: impl FnMut(&ThreadSnap),
) {
    lazy::for_each(&h.1, |i| {
        let cpu = snapshot::untreed_cpu_now(i, mode);
        f(&snapshot::untreed(i, routine_of_site, now_wall, cpu, mode));
    });
}

/// How many live threads have no tree (one call each, their root region).
pub(crate) fn untreed_calls(h: &Held) -> u64 {
    let mut n = 0;
    lazy::for_each(&h.1, |_| n += 1);
    n
}

/// Calls of the threads that ended.
pub(crate) fn calls(h: &Held) -> u64 {
    h.0.blocks
        .iter()
        .flat_map(|b| &b.snap.nodes)
        .map(|n| n.calls)
        .sum()
}

/// In a `fork` child (holding the lock taken before the fork): the
/// parent's threads are not the child's.
pub(crate) fn clear_in_child(h: &mut Held) {
    let s = &mut *h.0;
    s.blocks.clear();
    s.summed.clear();
    s.own = 0;
    s.kept = 0;
    let mode = crate::setup::MODE.load(std::sync::atomic::Ordering::Relaxed);
    let cpu = if mode & bits::CPU != 0 {
        clock::thread_cpu_ns()
    } else {
        0
    };
    lazy::clear_in_child(&mut h.1, clock::wall(mode & bits::WALL_MONO != 0), cpu);
}

/// Every block of threads that ended, as the profile writer takes a live
/// tree's copy: routine ids from `routine_of_site`, `LIVE` words as they
/// are now.
pub(crate) fn each(h: &Held, routine_of_site: &[u32], mut f: impl FnMut(&ThreadSnap)) {
    let live_at = live_word();
    for b in &h.0.blocks {
        let mut snap = b.snap.clone();
        for n in &mut snap.nodes {
            n.routine = n
                .site
                .and_then(|s| routine_of_site.get(s.raw_id() as usize).copied())
                .unwrap_or(0);
        }
        if let Some(at) = live_at {
            for (rows, map) in &b.kept {
                for (i, &to) in map.iter().enumerate() {
                    let Some(row) = rows.get(i as u32) else { break };
                    let live = row[at].load(std::sync::atomic::Ordering::Relaxed);
                    let w = &mut snap.words[to as usize * snap.width + at];
                    *w = w.wrapping_add(live);
                }
            }
        }
        f(&snap);
    }
}

/// The index of the memory profile's `LIVE` word in a row, when it is on.
fn live_word() -> Option<usize> {
    let off = crate::metrics::mem::OFFSET.load(std::sync::atomic::Ordering::Relaxed);
    (off != usize::MAX).then(|| off + crate::metrics::mem::LIVE)
}

/// The calling thread ends: its tree is kept here in compact form (its
/// own block or summed, see the module documentation) and freed. Nothing
/// when it has no tree or the timeline is on.
pub(crate) fn retire_current() {
    let Some(e) = crate::setup::engine_if_ready() else {
        return;
    };
    let td = thread::current();
    if td.is_null() || e.config.options.trace {
        return;
    }
    // SAFETY: the calling thread's own tree, alive until it is
    // unregistered below.
    let td = unsafe { &*td };
    let mut s = store();
    {
        let _own = td.internal_work();
        let limit = e.config.thread_blocks;
        s.add(td, limit, e.mode);
    }
    thread::unregister_current();
    drop(s);
}

/// The calling thread, started without a tree (`r`, its record), ends
/// without having made one: its root region's line is kept here (its own
/// block, or added to its start routine's summed block) and the record
/// freed.
pub(crate) fn retire_untreed(r: &Lazy) {
    let Some(e) = crate::setup::engine_if_ready() else {
        return;
    };
    let mut h = hold();
    if let Some(i) = r.info() {
        let now = clock::wall(e.mode & bits::WALL_MONO != 0);
        let cpu = snapshot::untreed_cpu_now(&i, e.mode);
        h.0.add_untreed(&i, now, cpu, e.config.thread_blocks, e.mode);
    }
    lazy::end_untreed(&mut h.1, r);
}

impl Store {
    /// A thread without a tree (see [`retire_untreed`]): straight into
    /// its routine's summed block when there is one, else as a two-node
    /// copy.
    fn add_untreed(&mut self, i: &LazyInfo, now: u64, cpu: Option<u64>, limit: u32, mode: u32) {
        let key = i.site as *const _ as usize;
        if self.own >= limit
            && let Some(&(_, b)) = self.summed.iter().find(|&&(k, _)| k == key)
        {
            let block = &mut self.blocks[b];
            // A summed block's node 1 is the root region its key names
            // (the first thread's): no look-up in its index.
            if let Some(d) = block
                .snap
                .nodes
                .get_mut(1)
                .filter(|n| n.parent == 0 && n.site.is_some_and(|s| std::ptr::eq(s, i.site)))
            {
                d.calls += 1;
                if mode & bits::WALL != 0 {
                    d.wall = d.wall.saturating_add(now.saturating_sub(i.start_wall));
                }
                if let Some(c) = cpu {
                    d.cpu = d.cpu.saturating_add(c.saturating_sub(i.start_cpu));
                }
                let b = &mut block.snap;
                b.lifetime_ticks = b
                    .lifetime_ticks
                    .saturating_add(now.saturating_sub(i.start_wall));
                b.threads += 1;
                return;
            }
        }
        let snap = snapshot::untreed(i, &[], now, cpu, mode);
        self.place(snap, None, limit);
    }

    fn add(&mut self, td: &ThreadData, limit: u32, mode: u32) {
        let now = clock::wall(mode & bits::WALL_MONO != 0);
        let mut snap = snapshot::snapshot(td, &[], now, mode);
        // Rows still pointed at by allocated blocks' headers are kept; the
        // block's `LIVE` words then come from them.
        let mut kept = None;
        if let Some(at) = live_word()
            && snap.width > at
            && (0..snap.nodes.len()).any(|i| snap.words[i * snap.width + at] != 0)
        {
            for i in 0..snap.nodes.len() {
                snap.words[i * snap.width + at] = 0;
            }
            kept = Some(td.rows.keep());
            self.kept += 1;
            if self.kept >= self.check_kept_at {
                self.free_unused_rows(at);
            }
        }
        self.place(snap, kept, limit);
    }

    /// Keeps a thread's copy: its own block, or summed (see the module
    /// documentation).
    fn place(&mut self, snap: ThreadSnap, kept: Option<KeptRows>, limit: u32) {
        let first = snap.nodes.get(1).and_then(|n| n.site);
        let key = first.map_or(0, |s| s as *const _ as usize);
        if self.own < limit {
            self.own += 1;
            let map = (0..snap.nodes.len() as u32).collect();
            self.blocks.push(Block {
                snap,
                kept: kept.map(|k| vec![(k, map)]).unwrap_or_default(),
                index: None,
            });
            return;
        }
        let b = match self.summed.iter().find(|&&(k, _)| k == key) {
            Some(&(_, b)) => b,
            None => {
                self.summed.push((key, self.blocks.len()));
                let mut index = HashMap::new();
                for (i, n) in snap.nodes.iter().enumerate().skip(1) {
                    let site = n.site.map_or(0, |s| s as *const _ as usize);
                    index.insert((n.parent, site), i as u32);
                }
                let map = (0..snap.nodes.len() as u32).collect();
                self.blocks.push(Block {
                    snap,
                    kept: kept.map(|k| vec![(k, map)]).unwrap_or_default(),
                    index: Some(index),
                });
                return;
            }
        };
        let aggs = &crate::metrics::layout().aggs;
        let block = &mut self.blocks[b];
        let map = block.sum(&snap, aggs);
        if let Some(k) = kept {
            block.kept.push((k, map));
        }
    }
}

impl Store {
    /// Frees the kept rows whose `LIVE` words are all 0 now: every block
    /// they owned was freed (a free's subtraction is its last touch of
    /// the word, and it left the word 0 only once it was done).
    fn free_unused_rows(&mut self, at: usize) {
        for b in &mut self.blocks {
            let mut i = 0;
            while i < b.kept.len() {
                let (rows, map) = &b.kept[i];
                let unused = (0..map.len() as u32).all(|n| {
                    rows.get(n)
                        .is_none_or(|r| r[at].load(std::sync::atomic::Ordering::Relaxed) == 0)
                });
                if unused {
                    let (rows, _) = b.kept.swap_remove(i);
                    // SAFETY: no block they own is allocated: nothing holds
                    // the address of one of their words any more.
                    unsafe { rows.free() };
                    self.kept -= 1;
                } else {
                    i += 1;
                }
            }
        }
        self.check_kept_at = (2 * self.kept).max(64);
    }
}

impl Block {
    /// Adds the tree `t` (one thread) to this summed block; returns the
    /// block's node of each of `t`'s nodes.
    fn sum(&mut self, t: &ThreadSnap, aggs: &[Agg]) -> Vec<u32> {
        let index = self.index.get_or_insert_with(HashMap::new);
        let b = &mut self.snap;
        let width = b.width.min(t.width);
        let mut map = vec![0u32; t.nodes.len()];
        for (i, n) in t.nodes.iter().enumerate().skip(1) {
            let parent = map.get(n.parent as usize).copied().unwrap_or(0);
            let site = n.site.map_or(0, |s| s as *const _ as usize);
            let to = *index.entry((parent, site)).or_insert_with(|| {
                let mut fresh = n.clone();
                fresh.parent = parent;
                fresh.calls = 0;
                fresh.resumes = 0;
                fresh.suspended = 0;
                fresh.wall = 0;
                fresh.cpu = 0;
                fresh.size = Default::default();
                b.nodes.push(fresh);
                b.words.resize(b.words.len() + b.width, 0);
                (b.nodes.len() - 1) as u32
            });
            map[i] = to;
            let d = &mut b.nodes[to as usize];
            d.calls += n.calls;
            d.resumes += n.resumes;
            d.suspended = d.suspended.saturating_add(n.suspended);
            d.wall = d.wall.saturating_add(n.wall);
            d.cpu = d.cpu.saturating_add(n.cpu);
            d.size.merge(n.size);
            let (from, into) = (i * t.width, to as usize * b.width);
            for k in 0..width {
                let (v, w) = (t.words[from + k], &mut b.words[into + k]);
                *w = match aggs.get(k) {
                    Some(Agg::Peak) => (*w).max(v),
                    Some(Agg::Scratch) => 0,
                    _ => w.wrapping_add(v),
                };
            }
        }
        b.lifetime_ticks = b.lifetime_ticks.saturating_add(t.lifetime_ticks);
        b.threads += t.threads;
        map
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::compute::tests::thread as snap_of;
    use crate::tree::site::Site;

    static ROOT: Site = Site::new("thread:worker", "", 0);
    static A: Site = Site::new("a", "", 0);
    static B: Site = Site::new("b", "", 0);

    /// A thread's copy: root region, `a` under it, `b` under `a` (or under
    /// the root region with `b_under_root`).
    fn one(tid: u32, calls: u64, b_under_root: bool) -> ThreadSnap {
        let mut t = snap_of(
            tid,
            &[
                (0, 1, 1, 100),
                (1, 2, calls, 50),
                (if b_under_root { 1 } else { 2 }, 3, 1, 10),
            ],
        );
        for (n, s) in t.nodes.iter_mut().skip(1).zip([&ROOT, &A, &B]) {
            n.site = Some(s);
        }
        crate::profile::compute::tests::with_width(&mut t, 2);
        t.words[2 * 2] = 7; // a: word 0 (summed)
        t.words[2 * 2 + 1] = calls; // a: word 1 (a peak)
        t.lifetime_ticks = 1000;
        t
    }

    #[test]
    fn threads_with_the_same_first_routine_sum_by_caller_and_site() {
        let aggs = [Agg::Event, Agg::Peak];
        let first = one(5, 2, false);
        let mut b = Block {
            snap: first.clone(),
            kept: Vec::new(),
            index: None,
        };
        // The first thread's own nodes: rebuild the index as `add` does.
        let mut index = HashMap::new();
        for (i, n) in first.nodes.iter().enumerate().skip(1) {
            index.insert(
                (n.parent, n.site.map_or(0, |s| s as *const _ as usize)),
                i as u32,
            );
        }
        b.index = Some(index);
        let map = b.sum(&one(6, 3, false), &aggs);
        assert_eq!(map, vec![0, 1, 2, 3]);
        let map = b.sum(&one(7, 1, true), &aggs);
        // `b` under the root region is a new node.
        assert_eq!(map, vec![0, 1, 2, 4]);
        let s = &b.snap;
        assert_eq!(s.tid, 5);
        assert_eq!(s.threads, 3);
        assert_eq!(s.nodes.len(), 5);
        assert_eq!(s.nodes[1].calls, 3, "the root region: one call per thread");
        assert_eq!(s.nodes[2].calls, 6);
        assert_eq!(s.nodes[2].wall, 150);
        assert_eq!((s.nodes[3].calls, s.nodes[4].calls), (2, 1));
        assert_eq!(s.nodes[4].parent, 1);
        assert_eq!(s.words[2 * 2], 21, "an event word sums");
        assert_eq!(s.words[2 * 2 + 1], 3, "a peak is the maximum");
        assert_eq!(s.lifetime_ticks, 3000);
    }
}
