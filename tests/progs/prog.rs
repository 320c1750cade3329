//! Test program for drhook's integration tests: `drhook-test-prog <scenario>`.
//! Each scenario exercises one behaviour with known call counts; the tests
//! run it under Dr.Hook environments and check the profile and the output.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

use drhook::drhook;

// Counting allocator: the `alloc` scenario checks the hot path allocates
// nothing; `bigprof` measures the peak of live bytes while writing a profile.
struct CountingAlloc;
static ALLOCS: AtomicU64 = AtomicU64::new(0);
static LIVE: AtomicU64 = AtomicU64::new(0);
static PEAK: AtomicU64 = AtomicU64::new(0);
// SAFETY: forwards to the system allocator.
unsafe impl std::alloc::GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, l: std::alloc::Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        let live = LIVE.fetch_add(l.size() as u64, Ordering::Relaxed) + l.size() as u64;
        PEAK.fetch_max(live, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { std::alloc::System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: std::alloc::Layout) {
        LIVE.fetch_sub(l.size() as u64, Ordering::Relaxed);
        // SAFETY: `p` came from `alloc` with `l`.
        unsafe { std::alloc::System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: std::alloc::Layout, new: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        if new >= l.size() {
            let grow = (new - l.size()) as u64;
            let live = LIVE.fetch_add(grow, Ordering::Relaxed) + grow;
            PEAK.fetch_max(live, Ordering::Relaxed);
        } else {
            LIVE.fetch_sub((l.size() - new) as u64, Ordering::Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { std::alloc::System.realloc(p, l, new) }
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

// -------------------------------------------------------------- crashes ---

#[drhook(name = "CRASH:LEVEL3")]
#[inline(never)]
fn level3(kind: &str) -> f64 {
    match kind {
        "segv" => {
            // SAFETY: deliberately invalid: this write must fault.
            unsafe { std::ptr::write_volatile(black_box(16usize) as *mut u32, 1) };
            0.0
        }
        "abort" => std::process::abort(),
        "fpe_int" => {
            let (mut a, d) = (black_box(7u64), black_box(0u64));
            // SAFETY: deliberately divides by zero: the CPU raises SIGFPE.
            #[cfg(target_arch = "x86_64")]
            unsafe {
                std::arch::asm!("xor edx, edx", "div {d}", d = in(reg) d, inout("rax") a, out("rdx") _);
            }
            a as f64
        }
        "fpe_float" => 1.0 / black_box(0.0),
        "panic" => panic!("deliberate panic in CRASH:LEVEL3"),
        _ => 0.0,
    }
}

#[drhook(name = "CRASH:LEVEL2")]
#[inline(never)]
fn level2(kind: &str) -> f64 {
    level3(kind) + 1.0
}

#[drhook(name = "CRASH:LEVEL1")]
#[inline(never)]
fn level1(kind: &str) -> f64 {
    level2(kind) + 1.0
}

fn crash(kind: &str) {
    let _main = drhook::scope!("CRASH:MAIN");
    let r = level1(kind);
    println!("no crash: {r}");
}

/// Enters WAIT:SLEEP, waits at `barrier` (all threads in place), then
/// sleeps forever.
#[drhook(name = "WAIT:SLEEP")]
fn wait_forever(barrier: &std::sync::Barrier, say_ready: bool) {
    barrier.wait();
    if say_ready {
        println!("ready");
    }
    loop {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Four threads, each inside its own nested routines, then "ready".
fn term4() {
    let _main = drhook::scope!("TERM:MAIN");
    let barrier = std::sync::Arc::new(std::sync::Barrier::new(5));
    static NAMES: [(drhook::Site, drhook::Site); 4] = [
        (
            drhook::Site::new("TERM:T1_OUTER", "", 0),
            drhook::Site::new("TERM:T1_INNER", "", 0),
        ),
        (
            drhook::Site::new("TERM:T2_OUTER", "", 0),
            drhook::Site::new("TERM:T2_INNER", "", 0),
        ),
        (
            drhook::Site::new("TERM:T3_OUTER", "", 0),
            drhook::Site::new("TERM:T3_INNER", "", 0),
        ),
        (
            drhook::Site::new("TERM:T4_OUTER", "", 0),
            drhook::Site::new("TERM:T4_INNER", "", 0),
        ),
    ];
    for (outer, inner) in &NAMES {
        let b = barrier.clone();
        std::thread::spawn(move || {
            let _o = drhook::Guard::enter(outer);
            let _i = drhook::Guard::enter(inner);
            wait_forever(&b, false);
        });
    }
    wait_forever(&barrier, true);
}

/// Threads entering and leaving routines as fast as they can.
fn stress() {
    #[drhook(name = "STRESS:LEAF")]
    fn leaf(x: u64) -> u64 {
        black_box(x) + 1
    }
    #[drhook(name = "STRESS:MID")]
    fn mid(x: u64) -> u64 {
        leaf(x) ^ leaf(x + 1)
    }
    for _ in 0..3 {
        std::thread::spawn(|| {
            let _t = drhook::scope!("STRESS:THREAD");
            let mut x = 0;
            loop {
                x = mid(x);
            }
        });
    }
    let _m = drhook::scope!("STRESS:MAIN");
    println!("ready");
    let mut x = 0;
    loop {
        x = mid(x);
    }
}

extern "C" fn previous_term_handler(_sig: i32) {
    let msg = b"previous SIGTERM handler ran\n";
    // SAFETY: async-signal-safe write of a static buffer.
    unsafe { libc::write(2, msg.as_ptr().cast(), msg.len()) };
}

fn wrong_thread() {
    static SITE: drhook::Site = drhook::Site::new("WRONG:ROUTINE", "", 0);
    let _m = drhook::scope!("WRONG:MAIN");
    // The worker enters WRONG:ROUTINE through a handle and ends with it open.
    let h = std::thread::spawn(|| drhook::engine::enter_handle(&SITE))
        .join()
        .unwrap();
    // The handle belongs to the other (finished) thread.
    drhook::engine::exit_handle(h, 0, Some(&SITE));
    println!("not reached");
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

// -------------------------------------------------------------- bigprof ---

/// A field of `/proc/self/status`, in kB.
fn status_kb(key: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| {
            l.strip_prefix(key)?
                .trim()
                .strip_suffix("kB")?
                .trim()
                .parse()
                .ok()
        })
        .unwrap_or(0)
}

/// `threads` threads each call `routines` distinct routines; then the
/// profile is written on demand, and what the write added to the live heap
/// at its peak (and to the resident set) is printed beside the trees' size.
fn bigprof(threads: usize, routines: usize) {
    let sites: Vec<&'static drhook::Site> = (0..routines)
        .map(|i| drhook::site_for_name(&format!("BIG:ROUTINE_{i:05}"), None))
        .collect();
    let sites = &sites;
    let tree_bytes = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let _outer = drhook::scope!("BIG:THREAD");
                for site in sites {
                    let _g = drhook::Guard::enter(site);
                }
                tree_bytes.fetch_add(
                    drhook::engine::thread_tree_bytes().unwrap_or(0),
                    Ordering::Relaxed,
                );
            });
        }
    });
    // The peak resident set from now on (Linux >= 4.0).
    let _ = std::fs::write("/proc/self/clear_refs", "5");
    let rss_before = status_kb("VmRSS:");
    let live_before = LIVE.load(Ordering::Relaxed);
    PEAK.store(live_before, Ordering::Relaxed);
    let t0 = std::time::Instant::now();
    let written = drhook::write_profile();
    let write_secs = t0.elapsed().as_secs_f64();
    let heap_extra = PEAK.load(Ordering::Relaxed) - live_before;
    let rss_extra = status_kb("VmHWM:").saturating_sub(rss_before) * 1024;
    println!(
        "written={} tree_bytes={} write_heap_peak={heap_extra} write_rss_peak={rss_extra} write_secs={write_secs:.3}",
        matches!(written, Ok(Some(_))),
        tree_bytes.load(Ordering::Relaxed)
    );
}

// -------------------------------------------------------------- tracing ---

#[tracing::instrument(level = "info")]
fn traced_leaf(n: u64) -> u64 {
    spin(n)
}

#[drhook(name = "TRACING:OUTER")]
fn tracing_outer() -> u64 {
    let span = tracing::info_span!("manual");
    let _e = span.enter();
    traced_leaf(1000) ^ traced_leaf(2000)
}

fn tracing_scenario() {
    use tracing_subscriber::prelude::*;
    let _d = tracing::subscriber::set_default(
        tracing_subscriber::registry()
            .with(drhook::DrHookLayer::builder().with_target(true).build()),
    );
    let mut acc = 0;
    for _ in 0..3 {
        acc ^= tracing_outer();
    }
    // A span exited out of order: the inner one is left with it.
    let a = tracing::info_span!("out_of_order_a");
    let b = tracing::info_span!("out_of_order_b");
    let ga = a.enter();
    let gb = b.enter();
    drop(ga);
    drop(gb);
    println!("tracing done {}", acc % 7);
}

// ----------------------------------------------------------------- fork ---

#[drhook(name = "FORK:BEFORE")]
fn fork_before() -> u64 {
    spin(10_000)
}

#[drhook(name = "FORK:CHILD")]
fn fork_child_work() -> u64 {
    spin(10_000)
}

#[drhook(name = "FORK:PARENT")]
fn fork_parent_work() -> u64 {
    spin(10_000)
}

#[drhook(name = "FORK:THREAD")]
fn fork_thread_work() -> u64 {
    spin(10_000)
}

/// Calls before a fork (on two threads), then the child and the parent
/// each call their own routine inside the still open FORK:OUTER. The child
/// prints its pid and exits with 0 (`exit`, so at-exit handlers run).
#[drhook(name = "FORK:OUTER")]
fn fork_outer() {
    black_box(fork_before() ^ fork_before());
    std::thread::spawn(fork_thread_work).join().unwrap();
    // SAFETY: the child only computes, prints and exits.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        for _ in 0..3 {
            black_box(fork_child_work());
        }
        // SAFETY: getpid has no preconditions.
        println!("child {}", unsafe { libc::getpid() });
        std::process::exit(0);
    }
    assert!(pid > 0, "fork failed");
    black_box(fork_parent_work());
    let mut status = 0;
    // SAFETY: waiting for our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    println!("parent waited for {pid}: status {status}");
}

/// Writes 10 x 100 bytes to `io_test.dat` (the I/O profile's per-routine
/// columns are checked).
#[drhook(name = "IO:WRITER")]
fn io_writer() {
    use std::io::Write;
    let mut f = std::fs::File::create("io_test.dat").unwrap();
    for _ in 0..10 {
        f.write_all(&[b'x'; 100]).unwrap();
    }
}

/// Reads `io_test.dat` back in reads of 300 bytes.
#[drhook(name = "IO:READER")]
fn io_reader() -> usize {
    use std::io::Read;
    let mut f = std::fs::File::open("io_test.dat").unwrap();
    let mut buf = [0u8; 300];
    let mut n = 0;
    loop {
        let k = f.read(&mut buf).unwrap();
        if k == 0 {
            break n;
        }
        n += k;
    }
}

fn main() {
    let scenario = std::env::args().nth(1).unwrap_or_default();
    match scenario.as_str() {
        "io" => {
            io_writer();
            println!("read {}", io_reader());
        }
        "basic" => basic(),
        "markup" => {
            // Routine names with markup and terminal escape sequences: every
            // report must show them as text (issue 30).
            let _main = drhook::scope!("<script>alert(1)</script>");
            let mut acc = spin(2_000_000);
            let _esc = drhook::scope!("ESC\u{1b}[31mRED\u{1b}]0;title\u{7}");
            acc ^= spin(2_000_000);
            let _amp = drhook::scope!("A&B\"C'<D>");
            acc ^= spin(2_000_000);
            println!("markup {}", acc % 3);
        }
        "recursion" => println!("recursion done {}", rec_driver() % 3),
        "threads" => threads(),
        "exit3" => {
            let _m = drhook::scope!("EXIT:MAIN");
            exit_worker();
        }
        "panic" => panic_scenario(),
        "segv" | "abort" | "fpe_int" | "fpe_float" | "panic_crash" => {
            crash(if scenario == "panic_crash" {
                "panic"
            } else {
                scenario.as_str()
            })
        }
        "term4" => term4(),
        "stress" => stress(),
        "wrong_thread" => wrong_thread(),
        "prev_handler" => {
            // Installed before Dr.Hook initialises, as an MPI library would.
            // SAFETY: installing a plain handler with a zeroed sigaction.
            unsafe {
                let mut act: libc::sigaction = std::mem::zeroed();
                act.sa_sigaction = previous_term_handler as *const () as usize;
                libc::sigaction(libc::SIGTERM, &act, std::ptr::null_mut());
            }
            let _m = drhook::scope!("PREV:MAIN");
            level1("none");
            // SAFETY: raise has no preconditions.
            unsafe { libc::raise(libc::SIGTERM) };
            println!("survived SIGTERM");
        }
        "slow_handler" => {
            // A program's own handler that takes its time (a graceful
            // shutdown), then ends the program with its own status.
            extern "C" fn slow(_sig: i32) {
                std::thread::sleep(std::time::Duration::from_millis(2500));
                let msg = b"slow SIGTERM handler done\n";
                // SAFETY: async-signal-safe write and _exit.
                unsafe {
                    libc::write(2, msg.as_ptr().cast(), msg.len());
                    libc::_exit(7);
                }
            }
            // SAFETY: installing a plain handler with a zeroed sigaction.
            unsafe {
                let mut act: libc::sigaction = std::mem::zeroed();
                act.sa_sigaction = slow as *const () as usize;
                libc::sigaction(libc::SIGTERM, &act, std::ptr::null_mut());
            }
            let _m = drhook::scope!("SLOW:MAIN");
            // SAFETY: raise has no preconditions.
            unsafe { libc::raise(libc::SIGTERM) };
        }
        "crash_at" => {
            // Crash at a given wall-clock time (ms since the epoch), so that
            // several processes crash together.
            let at: u128 = std::env::args()
                .nth(2)
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            let _m = drhook::scope!("AT:MAIN");
            while std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_millis()
                < at
            {
                std::hint::spin_loop();
            }
            level1("segv");
        }
        "forget_custom" => {
            // A program may handle mismatches itself; the engine then repairs the tree.
            drhook::mismatch::set_handler(|m| {
                eprintln!(
                    "custom mismatch handler: leaving {:?}, top {:?}",
                    m.leaving.map(|s| s.name()),
                    m.top.map(|s| s.name())
                );
            });
            forget_outer();
            forget_next();
            println!("forget done");
        }
        "xcpu" => {
            let _m = drhook::scope!("XCPU:MAIN");
            // SAFETY: raise has no preconditions.
            unsafe { libc::raise(libc::SIGXCPU) };
        }
        "strict" => {
            static A: drhook::Site = drhook::Site::new("STRICT:ENTERED", "", 0);
            static B: drhook::Site = drhook::Site::new("STRICT:NAMED_AT_EXIT", "", 0);
            let _m = drhook::scope!("STRICT:MAIN");
            let h = drhook::engine::enter_handle(&A);
            drhook::engine::exit_handle(h, 0, Some(&B));
            println!("strict exit accepted");
        }
        "usr1" => {
            let _m = drhook::scope!("USR1:MAIN");
            // SAFETY: raise has no preconditions.
            unsafe { libc::raise(libc::SIGUSR1) };
            println!("survived SIGUSR1");
        }
        "forget" => {
            forget_outer();
            forget_next();
            println!("forget done");
        }
        "ondemand" => ondemand(),
        "fork" => fork_outer(),
        "alloc" => alloc(),
        "bigprof" => {
            let arg = |i: usize, d: usize| {
                std::env::args()
                    .nth(i)
                    .and_then(|a| a.parse().ok())
                    .unwrap_or(d)
            };
            bigprof(arg(2, 256), arg(3, 1000))
        }
        "tracing" => tracing_scenario(),
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
