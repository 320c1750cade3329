//! Test program for the way services run and end under Dr.Hook:
//! `drhook-test-service <scenario>`. The main thread never enters a
//! region (it waits, as a server's does in `block_on`); a worker loops in
//! instrumented routines; the process is stopped by a signal from the
//! test. It prints `ready` on stdout once the worker has entered its
//! routines (and Dr.Hook has started).

use std::hint::black_box;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicUsize, Ordering};
use std::sync::mpsc;

use drhook::drhook;

static STOP: AtomicBool = AtomicBool::new(false);

#[drhook(name = "SERVICE:STEP")]
#[inline(never)]
fn step(i: u64) -> u64 {
    let mut x = i;
    for k in 0..1000 {
        x = black_box(x ^ k).rotate_left(3);
    }
    x
}

#[drhook(name = "SERVICE:REQUEST")]
#[inline(never)]
fn request(i: u64) -> u64 {
    step(i) ^ step(i + 1)
}

/// The calling thread's alternate signal stack: (base, size), or None.
fn altstack() -> Option<(usize, usize)> {
    // SAFETY: a query into a zeroed stack_t.
    let mut cur: libc::stack_t = unsafe { std::mem::zeroed() };
    // SAFETY: valid out-pointer.
    unsafe { libc::sigaltstack(std::ptr::null(), &mut cur) };
    (cur.ss_flags & libc::SS_DISABLE == 0).then_some((cur.ss_sp as usize, cur.ss_size))
}

/// Blocks the termination signals on the calling thread, so that the
/// process's signal goes to the main thread.
fn block_termination() {
    // SAFETY: signal-set calls on a zeroed set; the calling thread's mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for s in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

/// Starts the worker: it loops in instrumented routines until `STOP`, and
/// reports its alternate stack before and after its first call.
fn start_worker() -> (std::thread::JoinHandle<u64>, String) {
    let (tx, rx) = mpsc::channel();
    let h = std::thread::Builder::new()
        .name("worker".into())
        .spawn(move || {
            block_termination();
            let before = altstack();
            let mut acc = request(0);
            let after = altstack();
            tx.send(describe(before, after)).unwrap();
            let mut i = 1;
            while !STOP.load(Ordering::Relaxed) {
                acc ^= request(i);
                i += 1;
            }
            acc
        })
        .unwrap();
    let worker = rx.recv().unwrap();
    (h, worker)
}

fn describe(before: Option<(usize, usize)>, after: Option<(usize, usize)>) -> String {
    match (before, after) {
        (Some(b), Some(a)) if a == b => format!("kept({})", b.1),
        (None, Some(a)) => format!("drhook({})", a.1),
        (None, None) => "none".into(),
        (Some(b), Some(a)) => format!("replaced({}->{})", b.1, a.1),
        (b, a) => format!("changed({b:?}->{a:?})"),
    }
}

fn ready(main_before: Option<(usize, usize)>, worker: &str) {
    println!(
        "altstack main={} worker={worker}",
        describe(main_before, altstack())
    );
    println!("ready");
    std::io::stdout().flush().unwrap();
}

/// The main thread waits forever (never entering a region).
fn wait_forever() -> ! {
    loop {
        std::thread::park();
    }
}

// --- the program's own SIGTERM handler (as tokio's or ctrlc's: a byte
// down a pipe, the shutdown on a normal thread) --------------------------

static PIPE_W: AtomicI32 = AtomicI32::new(-1);
/// The disposition the handler replaced (a `sigaction`'s handler field),
/// called first as `signal-hook` does.
static PREVIOUS: AtomicUsize = AtomicUsize::new(0);
static PREVIOUS_SIGINFO: AtomicBool = AtomicBool::new(false);

extern "C" fn own_term(sig: i32, info: *mut libc::siginfo_t, uc: *mut libc::c_void) {
    let prev = PREVIOUS.load(Ordering::Acquire);
    if prev != libc::SIG_DFL && prev != libc::SIG_IGN {
        // SAFETY: the handler this one replaced, called with the convention
        // its flags declared.
        unsafe {
            if PREVIOUS_SIGINFO.load(Ordering::Acquire) {
                let f: extern "C" fn(i32, *mut libc::siginfo_t, *mut libc::c_void) =
                    std::mem::transmute(prev);
                f(sig, info, uc);
            } else {
                let f: extern "C" fn(i32) = std::mem::transmute(prev);
                f(sig);
            }
        }
    }
    let b = [sig as u8];
    // SAFETY: async-signal-safe write of one byte.
    unsafe { libc::write(PIPE_W.load(Ordering::Relaxed), b.as_ptr().cast(), 1) };
}

/// Installs `own_term` for SIGTERM and SIGINT; returns the read end.
fn install_own_handler() -> i32 {
    let mut fds = [0; 2];
    // SAFETY: a pipe into a valid array.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    PIPE_W.store(fds[1], Ordering::Release);
    for sig in [libc::SIGTERM, libc::SIGINT] {
        // SAFETY: a zeroed sigaction filled in; old is a valid out-pointer.
        unsafe {
            let mut act: libc::sigaction = std::mem::zeroed();
            act.sa_sigaction = own_term as *const () as usize;
            act.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART | libc::SA_ONSTACK;
            let mut old: libc::sigaction = std::mem::zeroed();
            libc::sigaction(sig, &act, &mut old);
            if sig == libc::SIGTERM {
                PREVIOUS_SIGINFO.store(old.sa_flags & libc::SA_SIGINFO != 0, Ordering::Release);
                PREVIOUS.store(old.sa_sigaction, Ordering::Release);
            }
        }
    }
    fds[0]
}

/// Waits for the handler's byte, stops the worker, returns normally.
fn graceful(read_fd: i32, worker: std::thread::JoinHandle<u64>) {
    let mut b = [0u8; 1];
    // SAFETY: a blocking read into a valid buffer.
    let n = unsafe { libc::read(read_fd, b.as_mut_ptr().cast(), 1) };
    assert_eq!(n, 1);
    STOP.store(true, Ordering::Relaxed);
    let acc = worker.join().unwrap();
    println!("graceful shutdown after signal {} ({})", b[0], acc & 1);
}

#[drhook(name = "SERVICE:DIVIDE")]
#[inline(never)]
fn divide(a: f64, b: f64) -> f64 {
    black_box(a) / black_box(b)
}

#[drhook(name = "SERVICE:DEEP")]
fn deep(n: u64) -> u64 {
    let a = black_box([n; 256]);
    if black_box(n) == u64::MAX {
        return 0;
    }
    black_box(deep(a[(n % 256) as usize] + 1)) + a[0]
}

fn main() {
    let scenario = std::env::args().nth(1).unwrap_or_default();
    match scenario.as_str() {
        // Rust's own alternate stack on the main thread (and the worker's).
        "worker" => {
            let main_before = altstack();
            let (_h, worker) = start_worker();
            ready(main_before, &worker);
            wait_forever();
        }
        // No alternate stack on the main thread.
        "worker_noalt" => {
            let off = libc::stack_t {
                ss_sp: std::ptr::null_mut(),
                ss_flags: libc::SS_DISABLE,
                ss_size: 0,
            };
            // SAFETY: disabling the main thread's alternate stack.
            unsafe { libc::sigaltstack(&off, std::ptr::null_mut()) };
            let main_before = altstack();
            let (_h, worker) = start_worker();
            ready(main_before, &worker);
            wait_forever();
        }
        // The program's handler, installed before Dr.Hook starts.
        "graceful_before" => {
            let fd = install_own_handler();
            let main_before = altstack();
            let (h, worker) = start_worker();
            ready(main_before, &worker);
            graceful(fd, h);
        }
        // The program's handler, installed after Dr.Hook started (its
        // handler replaced, and called first, as `signal-hook` does).
        "graceful_after" => {
            let main_before = altstack();
            let (h, worker) = start_worker();
            let fd = install_own_handler();
            assert_ne!(PREVIOUS.load(Ordering::Relaxed), libc::SIG_DFL);
            ready(main_before, &worker);
            graceful(fd, h);
        }
        // IEEE results on a worker and on the main thread.
        "nan" => {
            let w = std::thread::spawn(|| divide(0.0, 0.0)).join().unwrap();
            let m = divide(1.0, 0.0);
            println!("worker {w} main {m}");
        }
        // Dr.Hook starts when the layer is registered.
        "layer" => {
            use tracing_subscriber::prelude::*;
            tracing_subscriber::registry()
                .with(drhook::DrHookLayer::new())
                .init();
            eprintln!("LAYER REGISTERED");
            std::thread::spawn(|| {
                let span = tracing::info_span!("first_span");
                let _g = span.enter();
                black_box(step(1));
            })
            .join()
            .unwrap();
        }
        // A stack overflow on an instrumented worker that had Rust's small
        // alternate stack: Rust's handler reports it and aborts, Dr.Hook's
        // report (SIGABRT, nested on the alternate stack) follows.
        "overflow" => {
            std::thread::Builder::new()
                .stack_size(256 * 1024)
                .spawn(|| {
                    let before = altstack();
                    black_box(request(0));
                    println!("worker altstack {}", describe(before, altstack()));
                    std::io::stdout().flush().unwrap();
                    deep(0)
                })
                .unwrap()
                .join()
                .unwrap();
        }
        other => panic!("unknown scenario {other:?}"),
    }
}
