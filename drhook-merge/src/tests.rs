use super::*;

fn task(m: &mut Merger, kind: Kind, proc: u32, rows: &[(&str, u32, u64, f64, f64)]) {
    m.begin_task(kind, proc).unwrap();
    for &(r, t, c, s, tot) in rows {
        m.add(r, t, c, s, tot);
    }
    m.end_task();
}

#[test]
fn wall_takes_the_busiest_thread_and_missing_counts_as_zero() {
    let mut m = Merger::new();
    task(
        &mut m,
        Kind::Wall,
        1,
        &[
            ("A", 1, 10, 1.0, 2.0),
            ("A", 2, 5, 3.0, 3.0),
            ("B", 1, 1, 1.0, 1.0),
        ],
    );
    task(&mut m, Kind::Wall, 2, &[("A", 1, 4, 2.0, 2.5)]);
    let t = m.finish();
    assert_eq!(t.ntasks, 2);
    let a = &t.routines[0];
    assert_eq!(a.routine, "A");
    assert_eq!(a.tasks, 2);
    assert_eq!((a.calls.min, a.calls.max, a.calls.mean), (4.0, 15.0, 9.5));
    assert_eq!(
        (a.self_s.max, a.self_s.max_task, a.self_s.max_thread),
        (3.0, 1, Some(2))
    );
    assert_eq!(a.self_s.min, 2.0);
    assert_eq!(a.self_s.mean, 2.5);
    assert!((a.self_s.stddev - 0.5).abs() < 1e-12);
    assert_eq!(a.total_s.max, 3.0);
    assert_eq!(a.imbalance, Some(1.2));
    let b = &t.routines[1];
    assert_eq!(
        (b.tasks, b.self_s.min, b.self_s.mean, b.self_s.max),
        (1, 0.0, 0.5, 1.0)
    );
    assert_eq!(b.self_s.stddev, 0.5);
}

#[test]
fn cpu_adds_threads() {
    let mut m = Merger::new();
    task(
        &mut m,
        Kind::Cpu,
        1,
        &[("A", 1, 1, 1.0, 2.0), ("A", 2, 1, 3.0, 3.0)],
    );
    let t = m.finish();
    let a = &t.routines[0];
    assert_eq!((a.self_s.max, a.self_s.max_thread), (4.0, Some(2)));
    assert_eq!(a.total_s.max, 5.0);
    assert_eq!(a.calls.max, 2.0);
}

fn rows(p: u32) -> Vec<(&'static str, u32, u64, f64, f64)> {
    vec![
        (
            "A",
            1u32,
            u64::from(p),
            f64::from(p) * 0.101,
            f64::from(p) * 0.2,
        ),
        ("B", 1, 1, 0.5, 0.5),
        ("C", 2, 3, if p % 2 == 0 { 0.7 } else { 0.3 }, 0.9),
    ]
}

#[test]
fn combining_in_a_tree_equals_one_pass_bit_for_bit() {
    let mut one = Merger::new();
    for p in 1..=7 {
        task(&mut one, Kind::Wall, p, &rows(p));
    }
    // A binomial tree over 7 tasks, through the wire form.
    let mut parts: Vec<Option<Merger>> = (1..=7)
        .map(|p| {
            let mut m = Merger::new();
            task(&mut m, Kind::Wall, p, &rows(p));
            Some(m)
        })
        .collect();
    let mut mask = 1;
    while mask < parts.len() {
        for r in (0..parts.len()).step_by(2 * mask) {
            if r + mask < parts.len() {
                let child = parts[r + mask].take().unwrap();
                let child = Merger::decode(&child.encode()).unwrap();
                parts[r].as_mut().unwrap().combine(child).unwrap();
            }
        }
        mask *= 2;
    }
    let tree = parts[0].take().unwrap().finish();
    assert_eq!(tree, one.finish());
    // Files in another order (drhook.prof.10 before drhook.prof.2): the
    // same numbers and the same task of each maximum.
    let mut shuffled = Merger::new();
    for p in [3, 7, 1, 6, 2, 5, 4] {
        task(&mut shuffled, Kind::Wall, p, &rows(p));
    }
    assert_eq!(shuffled.finish(), tree);
}

#[test]
fn kinds_do_not_mix() {
    let mut m = Merger::new();
    task(&mut m, Kind::Wall, 1, &[]);
    let e = m.begin_task(Kind::Cpu, 2).unwrap_err();
    assert_eq!(e.so_far, Kind::Wall);
}

#[test]
fn wire_form_rejects_garbage() {
    let mut m = Merger::new();
    task(&mut m, Kind::Wall, 1, &rows(1));
    let b = m.encode();
    assert!(Merger::decode(&b).is_some());
    assert!(Merger::decode(&b[..b.len() - 1]).is_none());
    assert!(Merger::decode(b"DRHKRED2").is_none());
    assert!(Merger::decode(&[]).is_none());
}

#[test]
fn printed_times_read_back_as_a_reader_would() {
    assert_eq!(as_printed_3(0.0754999), 0.075);
    assert_eq!(as_printed_3(1.0), 1.0);
}

/// Task `p`'s call-path rows (routine, callers nearest first, thread,
/// calls, self, total); task 2 has no call paths (a profile without
/// `callpath`): 0 on every path there.
fn path_task(m: &mut Merger, p: u32) {
    m.begin_task(Kind::Wall, p).unwrap();
    let none: [&str; 0] = [];
    m.add_row("MAIN", &none, 1, 1, 0.1, 3.0);
    if p != 2 {
        m.add_row("WORK", &["MAIN"], 1, u64::from(p), f64::from(p), 2.0);
        m.add_row("WORK", &["SUB", "MAIN"], 1, 2, 0.5, 0.5);
        m.add_row("WORK", &["WORK", "MAIN"], 2, 1, 0.25, 0.25);
    } else {
        m.add_row("WORK", &none, 1, 9, 1.5, 1.5);
    }
    m.end_task();
}

#[test]
fn call_paths_have_their_own_statistics_and_survive_the_tree() {
    let mut one = Merger::new();
    for p in 1..=5 {
        path_task(&mut one, p);
    }
    let t = one.finish();
    let names: Vec<&str> = t.paths.iter().map(|m| m.routine.as_str()).collect();
    assert_eq!(
        names,
        [
            "MAIN > WORK",
            "MAIN > SUB > WORK",
            "MAIN > WORK > WORK",
            "MAIN"
        ]
    );
    assert_eq!(t.paths[3].tasks, 4);
    let w = &t.paths[0];
    // Calls per task 1, 0 (task 2), 3, 4, 5.
    assert_eq!((w.tasks, w.calls.min, w.calls.max), (4, 0.0, 5.0));
    assert_eq!(w.calls.mean, 13.0 / 5.0);
    assert_eq!((w.self_s.max, w.self_s.max_task), (5.0, 5));
    // The path's own total, recursive or not; the routine's total only
    // for its outermost calls.
    assert_eq!(t.paths[2].total_s.max, 0.25);
    // Per routine, the paths add up (task 5: 5 + 2 + 1 calls; task 2: 9).
    let work = t.routines.iter().find(|m| m.routine == "WORK").unwrap();
    assert_eq!((work.calls.max, work.tasks), (9.0, 5));
    // The tree in another order, through the wire form (first task has no
    // call paths: the paths' merger appears on a later rank).
    let mut parts: Vec<Merger> = [2, 1, 3, 4, 5]
        .iter()
        .map(|&p| {
            let mut m = Merger::new();
            path_task(&mut m, p);
            Merger::decode(&m.encode()).unwrap()
        })
        .collect();
    let mut acc = parts.remove(0);
    for m in parts {
        acc.combine(m).unwrap();
    }
    assert_eq!(acc.finish(), t);
    // No call path anywhere: no table.
    let mut m = Merger::new();
    task(&mut m, Kind::Wall, 1, &rows(1));
    assert!(m.finish().paths.is_empty());
}

#[test]
fn memory_columns_add_up_rows_but_heap_takes_the_largest_and_survive_the_tree() {
    // Task p: two rows of A (two threads), one of B on odd tasks.
    let task = |m: &mut ColMerger, p: u32| {
        m.begin_task(p);
        let f = f64::from(p);
        m.add(
            "A",
            &[100.0 * f, 1.0, -2.0, 500.0, 64.0, 0.0, 3.0, 2.0, 1.0],
        );
        m.add("A", &[10.0, 0.0, 0.0, 700.0 * f, 32.0, 1.0, 1.0, 1.0, 1.0]);
        if p % 2 == 1 {
            m.add("B", &[7.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0]);
        }
        m.end_task();
    };
    let mut one = ColMerger::new(ColKind::Memory);
    for p in 1..=5 {
        task(&mut one, p);
    }
    let t = one.finish();
    let a = &t.routines[0];
    assert_eq!(a.routine, "A");
    // Self-alloc per task 100p + 10: sum 1550, max 510 on task 5.
    let s = a.columns[0];
    assert_eq!((s.sum, s.max, s.max_task, s.min), (1550.0, 510.0, 5, 110.0));
    assert_eq!(s.mean, 310.0);
    // Leaked may be negative; Heap is the largest row (max(500, 700p)).
    assert_eq!(a.columns[2].sum, -10.0);
    assert_eq!((a.columns[3].min, a.columns[3].max), (700.0, 3500.0));
    let b = &t.routines[1];
    assert_eq!(
        (b.tasks, b.columns[0].min, b.columns[0].sum),
        (3, 0.0, 21.0)
    );
    // A binomial tree through the wire form, tasks in another order.
    let mut parts: Vec<ColMerger> = [4, 2, 5, 1, 3]
        .iter()
        .map(|&p| {
            let mut m = ColMerger::new(ColKind::Memory);
            task(&mut m, p);
            ColMerger::decode(&m.encode()).unwrap()
        })
        .collect();
    let mut acc = parts.remove(0);
    for m in parts {
        acc.combine(m).unwrap();
    }
    let tree = acc.finish();
    assert_eq!(tree.routines, t.routines);
    assert!(
        col_text(&tree, None).contains("5 tasks merged (memory profiles, proc#1-5), 2 routines")
    );
    assert!(
        ColMerger::new(ColKind::Memory)
            .combine(ColMerger::new(ColKind::Io))
            .is_err()
    );
}
