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

fn main() {
    run();
    if std::env::args().nth(1).as_deref() == Some("crash") {
        crasher();
    }
}
