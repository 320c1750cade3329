//! Test program for drhook's integration tests: `drhook-test-prog <scenario>`.
//! Each scenario exercises one behaviour with known call counts; the tests
//! run it under Dr.Hook environments and check the profile and the output.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

use drhook::drhook;

// Counting allocator: the `alloc` scenario checks the hot path allocates nothing.
struct CountingAlloc;
static ALLOCS: AtomicU64 = AtomicU64::new(0);
// SAFETY: forwards to the system allocator.
unsafe impl std::alloc::GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, l: std::alloc::Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { std::alloc::System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: std::alloc::Layout) {
        // SAFETY: `p` came from `alloc` with `l`.
        unsafe { std::alloc::System.dealloc(p, l) }
    }
}
#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

/// Deterministic busy work.
fn spin(iters: u64) -> u64 {
    let mut x = 0u64;
    for i in 0..iters {
        x = black_box(x ^ i).rotate_left(5);
    }
    x
}

// ---------------------------------------------------------------- basic ---

#[drhook(name = "BASIC:LEAF")]
fn leaf(n: u64) -> u64 {
    spin(n)
}

#[drhook(name = "BASIC:MIDDLE")]
fn middle() -> u64 {
    leaf(20_000) ^ leaf(20_000)
}

struct Model {
    k: u64,
}

impl Model {
    #[drhook]
    fn method(&self) -> u64 {
        spin(self.k)
    }
}

#[drhook]
fn generic<T: Into<u64>>(x: T) -> u64 {
    spin(x.into())
}

#[drhook]
fn early(flag: bool) -> u64 {
    if flag {
        return 1;
    }
    spin(1000)
}

#[drhook]
fn fallible(ok: bool) -> Result<u64, String> {
    let v: u64 = if ok {
        "7".parse().map_err(|_| "bad")?
    } else {
        "x".parse().map_err(|_| "bad".to_string())?
    };
    Ok(v)
}

fn basic() {
    let _main = drhook::scope!("BASIC:MAIN");
    let mut acc = 0;
    for _ in 0..3 {
        acc ^= middle();
    }
    for i in 0..4u64 {
        let mut g = drhook::scope!("BASIC:BLOCK");
        g.set_size(100 * (i + 1));
        acc ^= spin(5000);
    }
    acc ^= Model { k: 3000 }.method();
    acc ^= generic(10u8) ^ generic(10u32);
    acc ^= early(true) ^ early(false);
    acc ^= fallible(true).unwrap_or(0) ^ fallible(false).unwrap_or(0);
    println!("basic done {}", acc % 7);
}

// ------------------------------------------------------------ recursion ---

#[drhook(name = "REC:DIRECT")]
fn direct(depth: u32, work: u64) -> u64 {
    let w = spin(work);
    if depth > 1 {
        w ^ direct(depth - 1, work)
    } else {
        w
    }
}

#[drhook(name = "REC:MUTUAL_A")]
fn mutual_a(depth: u32, work: u64) -> u64 {
    let w = spin(work);
    if depth > 1 {
        w ^ mutual_b(depth - 1, work)
    } else {
        w
    }
}

#[drhook(name = "REC:MUTUAL_B")]
fn mutual_b(depth: u32, work: u64) -> u64 {
    let w = spin(work);
    if depth > 1 {
        w ^ mutual_a(depth - 1, work)
    } else {
        w
    }
}

#[drhook(name = "REC:DRIVER")]
fn rec_driver() -> u64 {
    direct(10_000, 2000) ^ mutual_a(10_000, 2000)
}

// -------------------------------------------------------------- threads ---

#[drhook(name = "THR:WORK")]
fn thread_work() -> u64 {
    spin(20_000)
}

#[drhook(name = "THR:THREAD_MAIN")]
fn thread_main(k: u64) -> u64 {
    (0..k).fold(0, |a, _| a ^ thread_work())
}

fn threads() {
    // A worker enters its first routine before the main thread does: the
    // main thread must still be thread 1.
    let first = std::thread::spawn(|| thread_main(1));
    first.join().unwrap();
    let _main = drhook::scope!("THR:MAIN");
    // Threads 2..=5 of this batch exit long before the program ends.
    let early: Vec<_> = (2..=5)
        .map(|k| std::thread::spawn(move || thread_main(k)))
        .collect();
    for t in early {
        t.join().unwrap();
    }
    spin(200_000);
    let late: Vec<_> = (6..=8)
        .map(|k| std::thread::spawn(move || thread_main(k)))
        .collect();
    for t in late {
        t.join().unwrap();
    }
    println!("threads done");
}

// ----------------------------------------------------------- exit, panic ---

#[drhook(name = "EXIT:WORKER")]
fn exit_worker() {
    spin(10_000);
    std::process::exit(3);
}

#[drhook(name = "PANIC:INNER")]
fn panic_inner() {
    spin(1000);
    panic!("deliberate panic in PANIC:INNER");
}

#[drhook(name = "PANIC:MIDDLE")]
fn panic_middle() {
    panic_inner();
}

#[drhook(name = "PANIC:AFTER")]
fn panic_after() -> u64 {
    spin(1000)
}

fn panic_scenario() {
    std::panic::set_hook(Box::new(|_| {}));
    let _outer = drhook::scope!("PANIC:OUTER");
    for _ in 0..2 {
        let r = std::panic::catch_unwind(panic_middle);
        assert!(r.is_err());
        panic_after();
    }
    println!("panic scenario done");
}

#[drhook(name = "FORGET:OUTER")]
fn forget_outer() {
    let g = drhook::scope!("FORGET:FORGOTTEN");
    std::mem::forget(g);
    spin(1000);
}

#[drhook(name = "FORGET:NEXT")]
fn forget_next() {
    spin(1000);
}

// ------------------------------------------------------------ on demand ---

fn ondemand() {
    for _ in 0..10 {
        leaf(1000);
    }
    match drhook::write_profile() {
        Ok(Some(p)) => {
            std::fs::copy(&p, "ondemand.copy").expect("copy the on-demand profile");
            println!("written {}", p.display())
        }
        Ok(None) => println!("not written"),
        Err(e) => println!("error {e}"),
    }
    for _ in 0..15 {
        leaf(1000);
    }
}

// ---------------------------------------------------------------- alloc ---

fn alloc() {
    fn round() {
        let _parent = drhook::scope!("ALLOC:PARENT");
        black_box(leaf(1));
        let _child = drhook::scope!("ALLOC:CHILD");
        black_box(leaf(2));
    }
    // Warm up: first calls register sites and grow tables.
    for _ in 0..10 {
        round();
        black_box(leaf(10));
    }
    let before = ALLOCS.load(Ordering::Relaxed);
    for _ in 0..20_000 {
        round();
        black_box(leaf(1));
    }
    let steady = ALLOCS.load(Ordering::Relaxed) - before;
    let tree = std::thread::spawn(|| {
        leaf(1);
        drhook::engine::thread_tree_bytes().unwrap_or(0)
    })
    .join()
    .unwrap();
    println!("steady_allocs={steady} tree_bytes={tree}");
}

fn main() {
    let scenario = std::env::args().nth(1).unwrap_or_default();
    match scenario.as_str() {
        "basic" => basic(),
        "recursion" => println!("recursion done {}", rec_driver() % 3),
        "threads" => threads(),
        "exit3" => {
            let _m = drhook::scope!("EXIT:MAIN");
            exit_worker();
        }
        "panic" => panic_scenario(),
        "forget" => {
            forget_outer();
            forget_next();
            println!("forget done");
        }
        "ondemand" => ondemand(),
        "alloc" => alloc(),
        "trim" => {
            for _ in 0..2 {
                let _a = drhook::scope!("Mixed:Case");
            }
            let _b = drhook::scope!("MIXED:CASE   ");
        }
        "sites" => {
            let mut names: Vec<&str> = drhook::registered_sites().map(|s| s.name()).collect();
            names.sort_unstable();
            names.dedup();
            println!("{}", names.join("\n"));
        }
        other => {
            eprintln!("unknown scenario {other:?}");
            std::process::exit(2);
        }
    }
}
