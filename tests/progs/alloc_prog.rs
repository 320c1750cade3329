//! Test program for the memory profile: `drhook-test-alloc`. Its routines
//! allocate known sizes through `drhook::Alloc` (the global allocator), on
//! 4 threads, with cross-thread frees and a chain of reallocations; the
//! test `memprof.rs` checks the `-mem` file has exactly those numbers.

use std::alloc::System;
use std::hint::black_box;
use std::sync::{Arc, Mutex};

use drhook::drhook;

#[global_allocator]
static A: drhook::Alloc<System> = drhook::Alloc::new(System);

/// Keeps 1000 bytes (freed later by `run`), allocates and frees 24.
#[drhook]
fn alloc_a() -> Vec<u8> {
    let kept: Vec<u8> = Vec::with_capacity(1000);
    let tmp = Box::new([7u8; 24]);
    black_box(&tmp);
    drop(tmp);
    kept
}

/// A chain of reallocations: 10 -> 100 -> 1000 bytes, handed to the caller.
#[drhook]
fn grow() -> Vec<u8> {
    let mut v: Vec<u8> = Vec::with_capacity(10);
    v.reserve_exact(100);
    v.reserve_exact(1000);
    black_box(&mut v);
    v
}

/// Allocates `(k + 1) * 4096` bytes and leaves them for another thread.
#[drhook]
fn worker(k: usize, out: &Mutex<Vec<Vec<u8>>>) {
    let v: Vec<u8> = Vec::with_capacity((k + 1) * 4096);
    out.lock().unwrap().push(v);
}

/// Frees what the workers allocated (cross-thread frees).
#[drhook]
fn collector(list: Vec<Vec<u8>>) {
    drop(black_box(list));
}

/// Allocates 5000 bytes and never frees them (a leak of 5000 bytes).
#[drhook]
fn leaker() {
    let v: Vec<u8> = Vec::with_capacity(5000);
    std::mem::forget(v);
}

#[drhook]
fn run() {
    let a = alloc_a();
    let g = grow();
    drop(a);
    drop(g);
    let slots = Arc::new(Mutex::new(Vec::with_capacity(4)));
    let handles: Vec<_> = (0..4)
        .map(|k| {
            let s = Arc::clone(&slots);
            std::thread::spawn(move || worker(k, &s))
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let list = std::mem::take(&mut *slots.lock().unwrap());
    collector(list);
    leaker();
}

/// Allocates 2048 bytes, keeps them, and crashes.
#[drhook]
fn crasher() {
    let v: Vec<u8> = Vec::with_capacity(2048);
    std::mem::forget(v);
    // SAFETY: a deliberate crash for the test of the crash path: a write
    // to an address nothing maps (a `raise(SIGSEGV)` is survived: Rust's
    // handler, called first, returns from a signal that is no fault).
    unsafe { std::ptr::write_volatile(16 as *mut u8, 1) };
}

/// Allocates 100 bytes and hands them to the main thread, which frees
/// two blocks in three after this thread ended (the others leak).
#[drhook]
fn churn_work(i: usize, out: &Mutex<Vec<(usize, Vec<u8>)>>) {
    let v: Vec<u8> = Vec::with_capacity(100);
    out.lock().unwrap().push((i, v));
}

/// A short thread's first routine.
#[drhook]
fn churn_thread(i: usize, out: &Mutex<Vec<(usize, Vec<u8>)>>) {
    churn_work(i, out);
}

/// Threads that end while others start, while the main thread writes the
/// profile and frees what the ended threads allocated (`churn`): 4
/// spawners x 300 threads one after the other.
fn churn() {
    // Room for every block: the workers' pushes never reallocate.
    let out = Arc::new(Mutex::new(Vec::with_capacity(1200)));
    let spawners: Vec<_> = (0..4)
        .map(|s| {
            let out = Arc::clone(&out);
            std::thread::spawn(move || {
                for k in 0..300 {
                    let o = Arc::clone(&out);
                    let i = s * 300 + k;
                    std::thread::spawn(move || churn_thread(i, &o))
                        .join()
                        .unwrap();
                }
            })
        })
        .collect();
    let mut leaked = Vec::new();
    let mut writes = 0;
    loop {
        let done = spawners.iter().all(|h| h.is_finished());
        let blocks: Vec<(usize, Vec<u8>)> = out.lock().unwrap().drain(..).collect();
        for (i, v) in blocks {
            if i % 3 == 0 {
                leaked.push(v);
            }
        }
        if writes < 20 {
            drhook::write_profile().unwrap();
            writes += 1;
        }
        if done {
            break;
        }
        std::thread::yield_now();
    }
    for h in spawners {
        h.join().unwrap();
    }
    std::mem::forget(leaked);
    println!("churn done");
}

/// A thread's first routine (the thread gets its calling tree).
#[drhook]
fn share_first() -> usize {
    black_box(1)
}

/// Entered after the thread of `share` ended: its heap level includes the
/// block that thread kept.
#[drhook]
fn share_after() {
    black_box(2);
}

/// A thread allocates 1 MiB outside any routine after its only routine
/// returned (no enter or exit follows: the thread's share of the heap
/// level is folded in at its end) and keeps it; then the main thread
/// enters `share_after`.
fn share() {
    std::thread::spawn(|| {
        share_first();
        std::mem::forget(black_box(Vec::<u8>::with_capacity(1 << 20)));
    })
    .join()
    .unwrap();
    share_after();
    println!("share done");
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("churn") {
        churn();
        return;
    }
    if std::env::args().nth(1).as_deref() == Some("share") {
        share();
        return;
    }
    run();
    if std::env::args().nth(1).as_deref() == Some("crash") {
        crasher();
    }
}
