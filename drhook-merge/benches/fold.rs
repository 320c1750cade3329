//! The in-job reduction's work per tree step, without MPI: decode a
//! child's part, fold it into the rank's own, encode the result for the
//! parent (what a rank does at each of its ⌈log2 P⌉ steps), for parts of
//! R distinct routines. The number of tasks a part covers changes only its
//! list of task numbers (4 bytes each), not this cost.
//! `cargo bench -p drhook-merge --bench fold`

use std::time::Instant;

use drhook_merge::{Kind, Merger};

fn part(proc: u32, routines: usize) -> Merger {
    let mut m = Merger::new();
    m.begin_task(Kind::Wall, proc).unwrap();
    for r in 0..routines {
        let v = f64::from(proc) * 1e-3 + r as f64 * 1e-6;
        m.add(
            &format!("MODULE_{r:05}:ROUTINE"),
            1,
            u64::from(proc),
            v,
            2.0 * v,
        );
    }
    m.end_task();
    m
}

fn main() {
    println!("routines part_bytes step_us");
    for routines in [100usize, 1000, 10_000] {
        let own = part(1, routines);
        let child = part(2, routines).encode();
        let n = 50;
        let t = Instant::now();
        for _ in 0..n {
            let mut acc = Merger::decode(&own.encode()).unwrap();
            acc.combine(Merger::decode(&child).unwrap()).unwrap();
            std::hint::black_box(acc.encode());
        }
        let us = t.elapsed().as_secs_f64() * 1e6 / f64::from(n);
        println!("{routines} {} {us:.0}", child.len());
    }
}
