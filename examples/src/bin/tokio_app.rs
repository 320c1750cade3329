//! A small async service profiled by Dr.Hook through its existing `tracing`
//! spans: a multi-threaded tokio runtime runs a batch of requests; each
//! request is a `#[tracing::instrument]` async function that awaits I/O
//! (simulated with timers) and calls `#[drhook]` routines, sync and async.
//!
//! ```sh
//! DR_HOOK=1 DR_HOOK_OPT=prof cargo run --release -p drhook-examples --bin tokio_app
//! cat drhook.prof.1
//! ```
//!
//! The only Dr.Hook-specific line in `main` is the layer. Each request is
//! one call of `handle_request`, however many polls it takes and whichever
//! worker polls it; its self time is its busy time, its total time runs
//! from its first poll to its completion (time awaiting I/O included).

use std::time::Duration;

use drhook::drhook;
use tracing_subscriber::prelude::*;

/// CPU work standing in for parsing, physics, serialisation...
fn burn(seed: u64, iterations: u64) -> u64 {
    let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ seed;
    for i in 0..iterations {
        x = x.rotate_left(7) ^ i.wrapping_mul(0x2545_F491_4F6C_DD1D);
    }
    x
}

#[drhook(name = "REQ:PARSE")]
fn parse(id: u64) -> u64 {
    burn(id, 200_000 + id * 10_000)
}

#[drhook(name = "REQ:COMPUTE")]
fn compute(input: u64) -> u64 {
    // Nested #[drhook] routine below a span.
    (0..4).map(|k| kernel(input ^ k)).fold(0, u64::wrapping_add)
}

#[drhook(name = "REQ:KERNEL")]
fn kernel(x: u64) -> u64 {
    burn(x, 400_000)
}

/// An async `#[drhook]` routine: each poll is an activation.
#[drhook(name = "IO:FETCH")]
async fn fetch(id: u64) -> u64 {
    tokio::time::sleep(Duration::from_millis(2 + id % 3)).await;
    burn(id, 50_000)
}

#[tracing::instrument]
async fn store(id: u64, value: u64) {
    tokio::time::sleep(Duration::from_millis(1)).await;
    std::hint::black_box(burn(value ^ id, 50_000));
}

#[tracing::instrument]
async fn handle_request(id: u64) -> u64 {
    let raw = fetch(id).await;
    let parsed = parse(raw % 7);
    let result = compute(parsed);
    store(id, result).await;
    result
}

fn main() {
    let requests: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(64);
    tracing_subscriber::registry()
        .with(drhook::DrHookLayer::new())
        .init();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .expect("tokio runtime");
    let checksum = rt.block_on(async {
        let tasks: Vec<_> = (0..requests)
            .map(|id| tokio::spawn(handle_request(id)))
            .collect();
        let mut acc = 0u64;
        for t in tasks {
            acc = acc.wrapping_add(t.await.expect("request task"));
        }
        acc
    });
    println!("{requests} requests served, checksum {checksum:016x}");
}
