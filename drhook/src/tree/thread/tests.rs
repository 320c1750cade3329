//! Unit tests of the per-thread tree: its shape and counts, sizes,
//! mismatch repair, foreign handles, span activations and the stampers.

use super::*;
use crate::tree::bits::{ON, SIZES, WALL};

static S1: Site = Site::new("t::one", file!(), line!());
static S2: Site = Site::new("t::two", file!(), line!());

fn node(td: &ThreadData, i: u32) -> &Node {
    td.arena.get(i).unwrap()
}

#[test]
fn tree_shape_and_counts() {
    let td = ThreadData::new(1, 0, 0);
    let (a, b) = (S1.id(), S2.id());
    // SAFETY: private instance.
    unsafe {
        for _ in 0..3 {
            let t1 = td.enter(&S1, a, ON);
            for _ in 0..2 {
                let t2 = td.enter(&S2, b, ON);
                td.exit(t2, 0, ON);
            }
            td.exit(t1, 0, ON);
        }
        // S2 directly under the root: a different node.
        let t = td.enter(&S2, b, ON);
        td.exit(t, 0, ON);
    }
    assert_eq!(td.arena.len(), 4);
    assert_eq!(node(&td, 1).calls.load(Ordering::Relaxed), 3);
    assert_eq!(node(&td, 2).calls.load(Ordering::Relaxed), 6);
    assert!(ptr::eq(node(&td, 2).parent, node(&td, 1)));
    assert_eq!(node(&td, 3).calls.load(Ordering::Relaxed), 1);
    assert!(ptr::eq(node(&td, 3).parent, td.root));
    assert_eq!(td.current(), td.root);
}

#[test]
fn recursion_makes_a_chain_and_times_nest() {
    let td = ThreadData::new(1, 0, 0);
    let a = S1.id();
    let mut toks = Vec::new();
    // SAFETY: private instance.
    unsafe {
        for _ in 0..10_000 {
            toks.push(td.enter(&S1, a, ON | WALL));
        }
        while let Some(t) = toks.pop() {
            td.exit(t, 0, ON | WALL);
        }
    }
    assert_eq!(td.arena.len(), 10_001);
    let mut prev = u64::MAX;
    for i in 1..=10_000 {
        let n = node(&td, i);
        assert_eq!(n.calls.load(Ordering::Relaxed), 1);
        assert_eq!(n.depth16(), i);
        let w = n.wall_incl.load(Ordering::Relaxed);
        assert!(
            w <= prev,
            "inner activations cannot last longer than outer ones"
        );
        prev = w;
    }
}

#[test]
fn sizes_are_recorded_per_node() {
    let td = ThreadData::new(1, 0, 0);
    let a = S1.id();
    // SAFETY: private instance.
    unsafe {
        for s in [5u64, 0, 2, 9] {
            let t = td.enter(&S1, a, ON | SIZES);
            td.exit(t, s, ON | SIZES);
        }
    }
    let s = td.sizes.get(1).unwrap();
    assert_eq!(s.count.load(Ordering::Relaxed), 3);
    assert_eq!(s.sum.load(Ordering::Relaxed), 16);
    assert_eq!(s.min.load(Ordering::Relaxed), 2);
    assert_eq!(s.max.load(Ordering::Relaxed), 9);
}

#[test]
fn many_children_of_one_parent_use_the_map() {
    static SITES: [Site; 40] = [const { Site::new("t::many", file!(), line!()) }; 40];
    let td = ThreadData::new(1, 0, 0);
    let ids: Vec<u32> = SITES.iter().map(|s| s.id()).collect();
    // SAFETY: private instance.
    unsafe {
        for _round in 0..3 {
            for parent in [&S1, &S2] {
                let p = td.enter(parent, parent.id(), ON);
                for (s, &id) in SITES.iter().zip(&ids) {
                    let t = td.enter(s, id, ON);
                    td.exit(t, 0, ON);
                }
                td.exit(p, 0, ON);
            }
        }
    }
    assert_eq!(td.arena.len(), 1 + 2 * 41);
    for i in 1..td.arena.len() {
        assert_eq!(node(&td, i).calls.load(Ordering::Relaxed), 3);
    }
}

#[test]
fn forgotten_exit_is_repaired_at_the_parent_exit() {
    crate::tree::mismatch::set_quiet_for_tests();
    let td = ThreadData::new(1, 0, 0);
    // SAFETY: private instance.
    unsafe {
        let outer = td.enter(&S1, S1.id(), ON | WALL);
        let _forgotten = td.enter(&S2, S2.id(), ON | WALL);
        td.exit(outer, 0, ON | WALL);
    }
    assert_eq!(td.current(), td.root);
    // Exit of something never entered is ignored.
    // SAFETY: private instance; the token is only compared.
    unsafe { td.exit(0x1234 as *const Node, 0, ON) };
    assert_eq!(td.current(), td.root);
}

#[test]
fn foreign_handles_are_checked_not_dereferenced() {
    crate::tree::mismatch::set_quiet_for_tests();
    let td = ThreadData::new(3, 0, 0);
    // SAFETY: private instance.
    unsafe {
        let a = td.enter(&S1, S1.id(), ON);
        let ha = td.top_handle64(a);
        let b = td.enter(&S2, S2.id(), ON);
        let hb = td.top_handle64(b);
        // Garbage (including what would be a pointer) is ignored.
        for garbage in [1u64, 0xdead_beef, b as usize as u64, u64::MAX] {
            td.exit_handle(garbage, true, 0, ON, None, false);
            assert_eq!(td.current(), b);
        }
        // The right handle closes the top.
        td.exit_handle(hb, true, 0, ON, Some(&S2), true);
        assert_eq!(td.current(), a);
        // Re-enter B, then close A directly: B is closed with it.
        let _b2 = td.enter(&S2, S2.id(), ON);
        td.exit_handle(ha, true, 0, ON, Some(&S1), false);
        assert_eq!(td.current(), td.root);
        // 32-bit handles.
        let a = td.enter(&S1, S1.id(), ON);
        let h32 = (*a).handle32();
        assert_eq!(h32, crate::tree::handle::encode32(1, (*a).index));
        td.exit_handle(h32 as u64 ^ 1, false, 0, ON, None, false);
        assert_eq!(td.current(), a);
        td.exit_handle(h32 as u64, false, 0, ON, None, false);
        assert_eq!(td.current(), td.root);
        // Strict regions: the right handle with another routine's name is
        // a mismatch; the activation is still closed (it is on the stack).
        let a = td.enter(&S1, S1.id(), ON);
        let ha = td.top_handle64(a);
        td.exit_handle(ha, true, 0, ON, Some(&S2), true);
        assert_eq!(td.current(), td.root);
    }
    // Another thread's handle (thread number differs) never matches.
    let other = crate::tree::handle::encode64(4, 1, 1);
    // SAFETY: private instance.
    unsafe {
        let a = td.enter(&S1, S1.id(), ON);
        td.exit_handle(other, true, 0, ON, None, false);
        assert_eq!(td.current(), a);
    }
}

#[test]
fn span_activations_deep_out_of_order_and_resumed() {
    use crate::tree::spans::{CAP, SpanState};
    static SPAN_SITES: [Site; 3] = [const { Site::new("t::span", file!(), line!()) }; 3];
    static STATES: [SpanState; 2 * CAP + 8] = [const { SpanState::new() }; 2 * CAP + 8];
    let td = ThreadData::new(1, 0, 0);
    let mode = ON | WALL;
    let n = STATES.len();
    for (i, st) in STATES.iter().enumerate() {
        st.id.store(100 + i as u64, Ordering::Relaxed);
    }
    // SAFETY: private instance.
    unsafe {
        // Deeper than the inline stack, left in order.
        for (i, st) in STATES.iter().enumerate() {
            td.enter_span(&SPAN_SITES[i % 3], 100 + i as u64, st, mode);
        }
        for i in (0..n).rev() {
            td.exit_span(100 + i as u64, mode);
        }
        assert_eq!(td.current(), td.root);
        for st in &STATES {
            assert!(st.last_exit().is_some_and(|s| s > 0), "stamped");
        }
        // Out of order: leaving the outer one closes the inner one;
        // the inner one's later exit is ignored.
        for st in &STATES[..2] {
            st.stamp.store(0, Ordering::Relaxed);
        }
        td.enter_span(&SPAN_SITES[0], 100, &STATES[0], mode);
        td.enter_span(&SPAN_SITES[1], 101, &STATES[1], mode);
        td.exit_span(100, mode);
        assert_eq!(td.current(), td.root);
        td.exit_span(101, mode);
        assert_eq!(td.current(), td.root);
        // An exit of a span never entered here does nothing.
        td.exit_span(999, mode);
        // Entered again after an exit: a resumption, not a call.
        let calls = |i: u32| node(&td, i).calls.load(Ordering::Relaxed);
        let before = calls(1);
        td.enter_span(&SPAN_SITES[0], 100, &STATES[0], mode);
        td.exit_span(100, mode);
        assert_eq!(calls(1), before, "resumed, not counted");
        let r = td.resumed.get(1).unwrap();
        assert_eq!(r.resumes.load(Ordering::Relaxed), 1);
    }
    // SAFETY: private instance, no other reference into `local`.
    let spans = unsafe { &(*td.local.get()).spans };
    assert_eq!(spans.len, 0);
}

#[test]
fn counters_are_read_once_per_enter_and_exit_and_nest() {
    use crate::tree::bits::{METRICS, SLOW_STAMPS};
    let fake = hpm::FakeBackend::new();
    fake.set_rate("instructions", 1.0);
    let counters = crate::metrics::counters::ThreadCounters::new(
        crate::metrics::counters::tests::fake_group(&fake, &["instructions"]),
    );
    // One event: its inclusive count, its entry value, enabled, running.
    let stamper = crate::metrics::PlacedStamper {
        offset: 0,
        len: 4,
        fast: false,
        stamper: Box::new(counters),
    };
    let td = ThreadData::with_metrics(1, 0, 0, 4, vec![stamper]);
    let mode = ON | METRICS | SLOW_STAMPS;
    // SAFETY: private instance.
    unsafe {
        fake.set_now_ns(1_000);
        let a = td.enter(&S1, S1.id(), mode);
        fake.set_now_ns(1_100);
        let b = td.enter(&S2, S2.id(), mode);
        fake.set_now_ns(1_400);
        td.exit(b, 0, mode);
        fake.set_now_ns(2_000);
        td.exit(a, 0, mode);
    }
    assert_eq!(fake.reads(), 4, "one group read per enter and per exit");
    let incl = |i: u32| td.rows.get(i).unwrap()[0].load(Ordering::Relaxed);
    assert_eq!((incl(1), incl(2)), (1_000, 300));
}

/// Counts its enters (word 0) and exits (word 1).
struct Tally;
impl crate::metrics::Stamper for Tally {
    fn enter(&self, _node: u32, row: &[AtomicU64]) {
        row[0].fetch_add(1, Ordering::Relaxed);
    }
    fn exit(&self, _node: u32, row: &[AtomicU64], _wall: u64) {
        row[1].fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn stampers_that_need_no_guard_have_their_own_foreign_path() {
    use crate::tree::bits::{METRICS, SIZES, SLOW_STAMPS, STRICT};
    let placed = |offset, fast| crate::metrics::PlacedStamper {
        offset,
        len: 2,
        fast,
        stamper: Box::new(Tally),
    };
    // The slow one first: the tree puts the fast ones first.
    let td = ThreadData::with_metrics(1, 0, 0, 4, vec![placed(0, false), placed(2, true)]);
    let mode = ON | WALL | SIZES | METRICS;
    td.mode.store(mode, Ordering::Relaxed);
    let words = |i: u32| -> Vec<u64> {
        let r = td.rows.get(i).unwrap();
        r.iter().map(|w| w.load(Ordering::Relaxed)).collect()
    };
    // SAFETY: private instance, owner thread.
    unsafe {
        // The first call makes the node (full path); the stamped path
        // takes the next ones, which the call-free one refuses.
        assert_eq!(td.enter_handle_stamped(S1.id(), mode, true), None);
        let h = td.enter_handle(&S1, S1.id(), mode, true);
        assert!(!td.exit_handle_stamped(h ^ 1, true, 0, mode), "not the top");
        assert!(!td.exit_handle_stamped(h, true, 0, mode | STRICT));
        assert!(td.exit_handle_stamped(h, true, 5, mode));
        for _ in 0..2 {
            assert_eq!(td.enter_handle_fast(S1.id(), mode, true), None);
            let h = td.enter_handle_stamped(S1.id(), mode, true).unwrap();
            assert!(td.exit_handle_stamped(h, true, 0, mode));
        }
        // Without SLOW_STAMPS only the fast stamper runs.
        assert_eq!(words(1), [0, 0, 3, 3]);
        // With it (a watch point, counters): the full path, both.
        let mode = mode | SLOW_STAMPS;
        assert_eq!(td.enter_handle_stamped(S1.id(), mode, true), None);
        let h = td.enter_handle(&S1, S1.id(), mode, true);
        assert!(!td.exit_handle_stamped(h, true, 0, mode));
        td.exit_handle(h, true, 0, mode, None, false);
    }
    assert_eq!(words(1), [1, 1, 4, 4]);
    assert_eq!(node(&td, 1).calls.load(Ordering::Relaxed), 4);
    assert_eq!(td.current(), td.root);
    assert_eq!(td.sizes.get(1).unwrap().sum.load(Ordering::Relaxed), 5);
}
