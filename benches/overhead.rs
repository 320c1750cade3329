//! ns per enter+exit pair of a trivial `#[inline(never)]` region, in one
//! run, for the uninstrumented call, Dr.Hook off / call tree / prof /
//! cpuprof / hpmprof / the timeline (trace), and the floors and peers of
//! `peers.md`; then instructions per pair under callgrind, system calls per
//! pair for cpuprof, and memory.
//!
//! `cargo bench -p drhook-benches --bench overhead`
//! (`DRHOOK_BENCH_QUICK=1` for a short run, `DRHOOK_BENCH_CALLGRIND=0` to
//! skip valgrind).

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

use drhook::drhook;
use drhook_benches::*;

// --- the regions -----------------------------------------------------------

#[inline(never)]
fn plain(x: u64) -> u64 {
    black_box(x) + 1
}

#[inline(never)]
#[drhook(name = "BENCH:LEAF")]
fn leaf(x: u64) -> u64 {
    black_box(x) + 1
}

/// One `rdtsc` next to the plain call: the unit of the Rust path's time
/// targets (measured in the same process as the configuration).
#[inline(never)]
fn one_tsc(x: u64) -> u64 {
    black_box(drhook::clock::cycles());
    plain(x)
}

#[inline(never)]
fn two_tsc(x: u64) -> u64 {
    let a = drhook::clock::cycles();
    let r = plain(x);
    let b = drhook::clock::cycles();
    black_box(b.wrapping_sub(a));
    r
}

#[inline(never)]
fn traced(x: u64) -> u64 {
    let span = tracing::info_span!("leaf");
    let _e = span.enter();
    plain(x)
}

#[inline(never)]
fn fastraced(x: u64) -> u64 {
    let _s = fastrace::local::LocalSpan::enter_with_local_parent("leaf");
    plain(x)
}

/// A layer that does nothing: the cost of the registry's span lifecycle.
struct Noop;
impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Noop {}

struct Counting(AtomicU64);
impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Counting {
    fn on_enter(&self, _: &tracing::span::Id, _: tracing_subscriber::layer::Context<'_, S>) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

// --- counting allocator for the memory figures -----------------------------

struct CountingAlloc;
static ALLOCS: AtomicU64 = AtomicU64::new(0);
static ALLOC_BYTES: AtomicU64 = AtomicU64::new(0);
// SAFETY: forwards to the system allocator.
unsafe impl std::alloc::GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, l: std::alloc::Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        ALLOC_BYTES.fetch_add(l.size() as u64, Ordering::Relaxed);
        // SAFETY: same layout contract as the caller's.
        unsafe { std::alloc::System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: std::alloc::Layout) {
        // SAFETY: `p` was allocated by `alloc` with `l`.
        unsafe { std::alloc::System.dealloc(p, l) }
    }
}
#[global_allocator]
static GLOBAL: CountingAlloc = CountingAlloc;

// --- child side ------------------------------------------------------------

fn loop_of(f: fn(u64) -> u64) -> impl FnMut(u64) {
    move |n| {
        let mut acc = 0;
        for i in 0..n {
            acc = f(black_box(i) ^ acc);
        }
        black_box(acc);
    }
}

/// fastrace records a raw span per call into a bounded per-thread buffer
/// and silently drops spans once it is full, so a long loop under a single
/// root would mostly measure dropping. A fresh root every 512 spans (its
/// cost included) keeps every span recorded, as with request-scoped traces.
fn fastrace_loop(n: u64) {
    let mut acc = 0;
    let mut i = 0;
    while i < n {
        let root = fastrace::Span::root("root", fastrace::prelude::SpanContext::random());
        let _g = root.set_local_parent();
        for _ in 0..512.min(n - i) {
            acc = fastraced(black_box(i) ^ acc);
            i += 1;
        }
    }
    black_box(acc);
}

/// The loop callgrind counts (`--toggle-collect=*measured_pairs*`).
#[inline(never)]
fn measured_pairs(f: fn(u64) -> u64, n: u64) {
    loop_of(f)(n);
}

/// The timeline's children end without the exit handlers: the write of
/// millions of events is not what is measured here (BENCHMARKS.md has
/// the write's cost), and the harness's profile path is unwritable, so
/// the trace would go to the working directory.
fn end_child(mode: &str) {
    if mode == "trace" {
        use std::io::Write as _;
        let _ = std::io::stdout().flush();
        // SAFETY: ends the process at once; nothing is left to run.
        unsafe { libc::_exit(0) }
    }
}

fn child(mode: &str) {
    let quick = std::env::var("DRHOOK_BENCH_QUICK").is_ok();
    let pairs: u64 = std::env::var("DRHOOK_BENCH_PAIRS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let peer = mode.starts_with("peer_");
    let (n, samples) = if mode == "cpuprof" || mode == "hpmprof" {
        (20_000, 15)
    } else if mode == "trace" {
        // Every pair recorded: 25 x 100 000 pairs (+ warm-up and the
        // memory figures) fit in the DR_HOOK_TRACE_EVENTS of the
        // configuration.
        (100_000, 25)
    } else if quick {
        (200_000, 9)
    } else if peer {
        (200_000, 25)
    } else {
        (2_000_000, 25)
    };
    let f: fn(u64) -> u64 = match mode {
        "plain" => plain,
        "floor" => two_tsc,
        "tracing" | "tracing_noop" | "tracing_drhook" => traced,
        _ if peer => traced,
        "fastrace" => fastraced,
        _ => leaf,
    };
    let _tracing = (mode == "tracing").then(|| {
        use tracing_subscriber::prelude::*;
        tracing::subscriber::set_default(
            tracing_subscriber::registry().with(Counting(AtomicU64::new(0))),
        )
    });
    let _tracing_noop = (mode == "tracing_noop").then(|| {
        use tracing_subscriber::prelude::*;
        tracing::subscriber::set_default(tracing_subscriber::registry().with(Noop))
    });
    let _tracing_drhook = (mode == "tracing_drhook").then(|| {
        use tracing_subscriber::prelude::*;
        tracing::subscriber::set_default(
            tracing_subscriber::registry().with(drhook::DrHookLayer::new()),
        )
    });
    // The layers a Rust user would pick for the same question, on the same
    // spans, writing to a sink.
    let _peer_timing = (mode == "peer_timing").then(|| {
        use tracing_subscriber::prelude::*;
        let layer = tracing_timing::Builder::default().layer(|| {
            tracing_timing::Histogram::new_with_max(1_000_000_000, 2).expect("histogram")
        });
        tracing::subscriber::set_default(tracing_subscriber::registry().with(layer))
    });
    let _peer_flame = (mode == "peer_flame").then(|| {
        use tracing_subscriber::prelude::*;
        // Empty samples on: the bench's spans have no parent, which the
        // default configuration does not record.
        let layer = tracing_flame::FlameLayer::new(std::io::sink()).with_empty_samples(true);
        tracing::subscriber::set_default(tracing_subscriber::registry().with(layer))
    });
    let _peer_chrome = (mode == "peer_chrome").then(|| {
        use tracing_subscriber::prelude::*;
        let (layer, guard) = tracing_chrome::ChromeLayerBuilder::new()
            .writer(std::io::sink())
            .build();
        (
            tracing::subscriber::set_default(tracing_subscriber::registry().with(layer)),
            guard,
        )
    });
    if pairs > 0 {
        // Fixed number of pairs, for callgrind / strace.
        leaf(0);
        measured_pairs(f, pairs);
        end_child(mode);
        return;
    }
    let base_n = if mode == "cpuprof" || mode == "hpmprof" {
        2_000_000
    } else {
        n
    };
    let run: Box<dyn FnMut(u64)> = if mode == "fastrace" {
        Box::new(fastrace_loop)
    } else {
        Box::new(loop_of(f))
    };
    let mut base_loop: Box<dyn FnMut(u64)> = Box::new(loop_of(plain));
    let (ns, base, ns_min, base_min, paired);
    let mut tsc = String::new();
    if base_n == n {
        // The configuration, the plain call, one rdtsc and two rdtsc reads
        // timed in turn in this process: the Rust path's targets are
        // ratios of these.
        let mut run = run;
        let mut one = loop_of(one_tsc);
        let mut two = loop_of(two_tsc);
        // A layer's cost is its spans minus the same spans through the
        // registry with a no-op layer, timed in the same process too.
        let layered = mode == "tracing_drhook" || peer;
        let noop_dispatch = {
            use tracing_subscriber::prelude::*;
            tracing::Dispatch::new(tracing_subscriber::registry().with(Noop))
        };
        let mut noop = |k: u64| {
            tracing::dispatcher::with_default(&noop_dispatch, || loop_of(traced)(k));
        };
        let mut loops: Vec<&mut dyn FnMut(u64)> =
            vec![&mut base_loop, &mut run, &mut one, &mut two];
        if layered {
            loops.push(&mut noop);
        }
        let t = ns_per_iter_multi(n, samples, &mut loops);
        (ns, base, ns_min, base_min) = (t.median[1], t.median[0], t.min[1], t.min[0]);
        paired = t.paired[1];
        tsc = format!(
            " tsc1={:.3} tsc1_min={:.3} tsc1_paired={:.4} tsc2={:.3} tsc2_min={:.3} tsc2_paired={:.4}",
            t.median[2], t.min[2], t.paired[2], t.median[3], t.min[3], t.paired[3]
        );
        if layered {
            tsc.push_str(&format!(
                " noop={:.3} noop_min={:.3} noop_paired={:.4}",
                t.median[4], t.min[4], t.paired[4]
            ));
        }
    } else {
        let t = ns_per_iter_vs(n, samples, run, |k| base_loop(k * base_n / n));
        let scale = n as f64 / base_n as f64;
        (ns, base, ns_min, base_min) = (t.median, t.base_median * scale, t.min, t.base_min * scale);
        paired = t.paired_ratio / scale;
    }
    // Memory: allocations during steady-state calls, and the size of a new
    // thread's tree before it has entered a second distinct routine.
    let before = ALLOCS.load(Ordering::Relaxed);
    loop_of(f)(100_000);
    let steady = ALLOCS.load(Ordering::Relaxed) - before;
    let tree = std::thread::spawn(|| {
        let b0 = ALLOC_BYTES.load(Ordering::Relaxed);
        leaf(1);
        (
            ALLOC_BYTES.load(Ordering::Relaxed) - b0,
            drhook::engine::thread_tree_bytes().unwrap_or(0),
        )
    })
    .join()
    .unwrap();
    println!(
        "ns={ns:.3} base={base:.3} ns_min={ns_min:.3} base_min={base_min:.3} paired={paired:.4} steady_allocs={steady} first_call_alloc_bytes={} tree_bytes={}{tsc}",
        tree.0, tree.1
    );
    end_child(mode);
}

// --- parent side -----------------------------------------------------------

struct Config {
    name: &'static str,
    mode: &'static str,
    env: &'static [(&'static str, &'static str)],
    what: &'static str,
}

const CONFIGS: &[Config] = &[
    Config {
        name: "uninstrumented call",
        mode: "plain",
        env: &[],
        what: "nothing",
    },
    Config {
        name: "drhook, DR_HOOK unset (off)",
        mode: "leaf",
        env: &[],
        what: "nothing",
    },
    Config {
        name: "drhook, DR_HOOK=1 (call tree)",
        mode: "leaf",
        env: &[("DR_HOOK", "1")],
        what: "calling tree + calls",
    },
    Config {
        name: "drhook, DR_HOOK_OPT=prof",
        mode: "leaf",
        env: &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof")],
        what: "exact wall profile",
    },
    Config {
        name: "drhook, DR_HOOK_OPT=prof + DR_HOOK_NVTX=1 DR_HOOK_ROCTX=1, no tool",
        mode: "leaf",
        env: &[
            ("DR_HOOK", "1"),
            ("DR_HOOK_OPT", "prof"),
            ("DR_HOOK_NVTX", "1"),
            ("DR_HOOK_ROCTX", "1"),
            ("NVTX_INJECTION64_PATH", ""),
            ("DR_HOOK_SILENT", "1"),
        ],
        what: "exact wall profile; NVTX/ROCTX asked for, no tool to take them",
    },
    Config {
        name: "drhook, DR_HOOK_OPT=cpuprof",
        mode: "cpuprof",
        env: &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "cpuprof")],
        what: "per-thread CPU profile",
    },
    Config {
        name: "drhook, DR_HOOK_OPT=hpmprof",
        mode: "hpmprof",
        env: &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "hpmprof")],
        what: "wall profile + counters per routine",
    },
    Config {
        name: "drhook, DR_HOOK_OPT=trace",
        mode: "trace",
        env: &[
            ("DR_HOOK", "1"),
            ("DR_HOOK_OPT", "trace"),
            ("DR_HOOK_TRACE_EVENTS", "6000000"),
        ],
        what: "timeline: every enter and exit",
    },
    Config {
        name: "drhook, DR_HOOK_OPT=prof,trace",
        mode: "trace",
        env: &[
            ("DR_HOOK", "1"),
            ("DR_HOOK_OPT", "prof,trace"),
            ("DR_HOOK_TRACE_EVENTS", "6000000"),
        ],
        what: "wall profile + timeline",
    },
    Config {
        name: "floor: two rdtsc reads",
        mode: "floor",
        env: &[],
        what: "-",
    },
    Config {
        name: "tracing registry + counting layer",
        mode: "tracing",
        env: &[],
        what: "counts",
    },
    Config {
        name: "tracing registry + no-op layer",
        mode: "tracing_noop",
        env: &[],
        what: "nothing (the span lifecycle alone)",
    },
    Config {
        name: "drhook via tracing registry + DrHookLayer, DR_HOOK=1 (call tree)",
        mode: "tracing_drhook",
        env: &[("DR_HOOK", "1")],
        what: "calling tree of spans",
    },
    Config {
        name: "drhook via tracing registry + DrHookLayer, DR_HOOK_OPT=prof",
        mode: "tracing_drhook",
        env: &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof")],
        what: "exact wall profile of spans",
    },
    Config {
        name: "tracing registry + tracing-timing layer",
        mode: "peer_timing",
        env: &[],
        what: "histograms of the time between events (spans without events: none)",
    },
    Config {
        name: "tracing registry + tracing-flame layer",
        mode: "peer_flame",
        env: &[],
        what: "one folded-stack line per span activation (to a sink)",
    },
    Config {
        name: "tracing registry + tracing-chrome layer",
        mode: "peer_chrome",
        env: &[],
        what: "begin/end trace events, written by a thread (to a sink)",
    },
    Config {
        name: "fastrace local span under a root",
        mode: "fastrace",
        env: &[],
        what: "raw span per call (fresh root per 512)",
    },
];

/// The Rust path's targets, in units measured in the same child process
/// (the plain call, one rdtsc, two rdtsc reads around the plain call):
/// (x plain, ns added, added / one rdtsc, / two-rdtsc floor), from the
/// paired medians and from the minimums.
fn in_process(out: &str) -> [[f64; 4]; 2] {
    let g = |k: &str| field(out, k).unwrap_or(f64::NAN);
    let (base, base_min) = (g("base"), g("base_min"));
    let paired = [
        g("paired"),
        (g("paired") - 1.0) * base,
        (g("paired") - 1.0) / (g("tsc1_paired") - 1.0),
        g("paired") / g("tsc2_paired"),
    ];
    let min = [
        g("ns_min") / base_min,
        g("ns_min") - base_min,
        (g("ns_min") - base_min) / (g("tsc1_min") - base_min),
        g("ns_min") / g("tsc2_min"),
    ];
    [paired, min]
}

fn main() {
    if let Ok(mode) = std::env::var("DRHOOK_BENCH_CHILD") {
        child(&mode);
        return;
    }
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    println!("drhook overhead benchmark: ns per enter+exit pair (median), one run, 1 thread\n");
    println!(
        "| configuration | ns/pair (median) | ns/pair (min) | x uninstrumented (paired median) | x uninstrumented (min) | records |"
    );
    println!("|---|---:|---:|---:|---:|---|");
    let mut ns = std::collections::HashMap::new();
    let mut mins = std::collections::HashMap::new();
    let mut mem = String::new();
    let mut same_process = std::collections::HashMap::new();
    let mut over_noop: Vec<(&str, f64, f64)> = Vec::new();
    let only = std::env::var("DRHOOK_BENCH_ONLY").ok();
    for c in CONFIGS {
        if only
            .as_deref()
            .is_some_and(|o| !c.name.contains(o) && c.mode != "plain")
        {
            continue;
        }
        match run_child(c.mode, c.env, &[]) {
            Ok((out, _)) => {
                let v = field(&out, "ns").unwrap_or(f64::NAN);
                let base = field(&out, "base").unwrap_or(f64::NAN);
                let (vm, bm) = (
                    field(&out, "ns_min").unwrap_or(f64::NAN),
                    field(&out, "base_min").unwrap_or(f64::NAN),
                );
                let paired = field(&out, "paired").unwrap_or(f64::NAN);
                ns.insert(c.name, (paired * base, base));
                mins.insert(c.name, (vm, bm));
                println!(
                    "| {} | {v:.2} | {vm:.2} | {paired:.2} | {:.2} | {} |",
                    c.name,
                    vm / bm,
                    c.what
                );
                if c.mode == "leaf" {
                    let one_rdtsc = field(&out, "tsc1").unwrap_or(f64::NAN) - base;
                    same_process.insert(c.name, (in_process(&out), one_rdtsc));
                }
                if let (Some(np), Some(nm)) = (field(&out, "noop_paired"), field(&out, "noop_min"))
                {
                    // ns per span over the no-op layer, in this process.
                    over_noop.push((c.name, (paired - np) * base, vm - nm));
                }
                if c.name.contains("prof")
                    || c.name.contains("call tree")
                    || c.name.contains("trace")
                    || c.mode.starts_with("peer_")
                {
                    let steady = field(&out, "steady_allocs").unwrap_or(f64::NAN);
                    if c.mode.starts_with("peer_") {
                        mem.push_str(&format!("| {} | {steady} | - | - |\n", c.name));
                    } else {
                        mem.push_str(&format!(
                            "| {} | {steady} | {} B | {} B |\n",
                            c.name,
                            field(&out, "first_call_alloc_bytes").unwrap_or(f64::NAN),
                            field(&out, "tree_bytes").unwrap_or(f64::NAN)
                        ));
                    }
                }
            }
            Err(e) => println!("| {} | failed: {e} | | |", c.name),
        }
    }
    // Each value relative to the uninstrumented call timed in the same child,
    // rescaled by the overall median of that call: ratios stay within one run.
    let ratios = |table: &std::collections::HashMap<&str, (f64, f64)>| {
        let mut bases: Vec<f64> = table
            .values()
            .map(|v| v.1)
            .filter(|b| b.is_finite())
            .collect();
        let plain = if bases.is_empty() {
            f64::NAN
        } else {
            median(&mut bases)
        };
        let g = |k: &str| table.get(k).map_or(f64::NAN, |(v, b)| v / b * plain);
        [
            g("drhook, DR_HOOK unset (off)") / plain,
            g("drhook, DR_HOOK=1 (call tree)") - plain,
            g("drhook, DR_HOOK_OPT=prof") / g("floor: two rdtsc reads"),
            g("drhook, DR_HOOK_OPT=prof") / g("fastrace local span under a root"),
            g("drhook, DR_HOOK_OPT=prof") / g("tracing registry + counting layer"),
            g("drhook, DR_HOOK_OPT=cpuprof") - plain,
            plain,
            g("drhook, DR_HOOK_OPT=trace") - g("drhook, DR_HOOK=1 (call tree)"),
            g("drhook, DR_HOOK_OPT=prof,trace") - g("drhook, DR_HOOK_OPT=prof"),
        ]
    };
    let (m, n) = (ratios(&ns), ratios(&mins));
    println!(
        "\nRatios against the targets (each configuration normalised by the uninstrumented call timed alongside it in its own process; ns values rescaled to the uninstrumented call's median {:.2} ns / min {:.2} ns):\n",
        m[6], n[6]
    );
    println!("| ratio | from paired medians | from minimums | target |");
    println!("|---|---:|---:|---|");
    println!(
        "| off / uninstrumented | {:.2} | {:.2} | <= 1.5 |",
        m[0], n[0]
    );
    println!(
        "| call tree, ns added per pair | {:.2} | {:.2} | <= 5 ns |",
        m[1], n[1]
    );
    println!(
        "| prof / two-rdtsc floor | {:.2} | {:.2} | <= 1.2 |",
        m[2], n[2]
    );
    println!("| prof / fastrace | {:.2} | {:.2} | <= 0.5 |", m[3], n[3]);
    println!(
        "| prof / tracing counting layer | {:.2} | {:.2} | (peer) |",
        m[4], n[4]
    );
    println!(
        "| cpuprof, ns added per pair | {:.0} | {:.0} | (2 syscalls) |",
        m[5], n[5]
    );
    println!(
        "| trace: ns added per pair to the call tree | {:.1} | {:.1} | (documented) |",
        m[7], n[7]
    );
    println!(
        "| prof,trace: ns added per pair to prof | {:.1} | {:.1} | (documented) |",
        m[8], n[8]
    );
    println!(
        "\nLayers over the registry with a no-op layer, ns per span (new, enter, exit, close), both timed in the same process:\n"
    );
    println!("| layer | from paired medians | from minimums | target |");
    println!("|---|---:|---:|---|");
    for (name, p, q) in &over_noop {
        let target = if name.contains("DrHookLayer") {
            "<= 25 ns"
        } else {
            "(peer, same spans)"
        };
        println!("| {name} | {p:.1} | {q:.1} | {target} |");
    }

    println!(
        "\nThe Rust path against the plain call and rdtsc timed in the same process (each configuration's child times it, the plain call, one rdtsc and two rdtsc reads around the plain call in turn):\n"
    );
    println!(
        "| configuration | x plain call (paired / min) | ns added (paired / min) | added / one rdtsc (paired / min) | / two-rdtsc floor (paired / min) | one rdtsc, ns | target |"
    );
    println!("|---|---:|---:|---:|---:|---:|---|");
    for (name, target) in [
        ("drhook, DR_HOOK unset (off)", "<= 1.5x the plain call"),
        ("drhook, DR_HOOK=1 (call tree)", "<= 0.5 rdtsc added"),
        (
            "drhook, DR_HOOK_OPT=prof",
            "<= 2.4 rdtsc added, <= 1.2x the two-rdtsc floor",
        ),
    ] {
        if let Some(([p, q], tsc1)) = same_process.get(name) {
            println!(
                "| {name} | {:.2} / {:.2} | {:.2} / {:.2} | {:.2} / {:.2} | {:.2} / {:.2} | {:.1} | {target} |",
                p[0], q[0], p[1], q[1], p[2], q[2], p[3], q[3], tsc1
            );
        }
    }

    println!("\nMemory:\n");
    println!(
        "| configuration | allocations in 100k steady-state calls | bytes allocated by a new thread's first call | tree bytes after it |"
    );
    println!("|---|---:|---:|---:|");
    print!("{mem}");

    if std::env::var("DRHOOK_BENCH_CALLGRIND").as_deref() != Ok("0") && have("valgrind") {
        println!(
            "\nInstructions per pair (callgrind, user space, counted inside the timing loop only; uninstrumented call subtracted):\n"
        );
        println!("| configuration | instructions/pair | target |");
        println!("|---|---:|---|");
        let per_pair = |mode: &str, env: &[(&str, &str)]| -> Option<f64> {
            let mut e: Vec<(&str, &str)> = env.to_vec();
            e.push(("DRHOOK_BENCH_PAIRS", "200000"));
            let cg = [
                "valgrind",
                "--tool=callgrind",
                "--callgrind-out-file=/dev/null",
                "--toggle-collect=*measured_pairs*",
            ];
            let (_, err) = run_child(mode, &e, &cg).ok()?;
            Some(callgrind_total(&err)? as f64 / 200_000.0)
        };
        let base = per_pair("plain", &[]).unwrap_or(f64::NAN);
        for (name, env, target) in [
            ("DR_HOOK unset (off)", &[][..], "~0"),
            (
                "DR_HOOK=1 (call tree)",
                &[("DR_HOOK", "1")][..],
                "<= 60 (reference ~690)",
            ),
            (
                "DR_HOOK_OPT=prof",
                &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof")][..],
                "<= 90 (reference ~880)",
            ),
            (
                "DR_HOOK_OPT=trace",
                &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "trace")][..],
                "(documented)",
            ),
            (
                "DR_HOOK_OPT=prof,trace",
                &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof,trace")][..],
                "(documented)",
            ),
            (
                "DR_HOOK_OPT=trace, DR_HOOK_TRACE_MIN_US=1e-6 (all kept)",
                &[
                    ("DR_HOOK", "1"),
                    ("DR_HOOK_OPT", "trace"),
                    ("DR_HOOK_TRACE_MIN_US", "1e-6"),
                ][..],
                "trace + a compare",
            ),
            (
                "DR_HOOK_OPT=trace, DR_HOOK_TRACE_MATCH=. (all kept)",
                &[
                    ("DR_HOOK", "1"),
                    ("DR_HOOK_OPT", "trace"),
                    ("DR_HOOK_TRACE_MATCH", "."),
                ][..],
                "trace + a compare",
            ),
            (
                "DR_HOOK_OPT=trace, DR_HOOK_TRACE_RING=1",
                &[
                    ("DR_HOOK", "1"),
                    ("DR_HOOK_OPT", "trace"),
                    ("DR_HOOK_TRACE_RING", "1"),
                ][..],
                "<= trace",
            ),
        ] {
            let mode = if name.contains("trace") {
                "trace"
            } else {
                "leaf"
            };
            match per_pair(mode, env) {
                Some(v) => println!("| {name} | {:.1} | {target} |", v - base),
                None => println!("| {name} | valgrind failed | {target} |"),
            }
        }
        // The tracing layer: instructions it adds to a span's lifecycle
        // (new span, enter, exit, close) over a no-op layer.
        let noop = per_pair("tracing_noop", &[]).unwrap_or(f64::NAN);
        for (name, env) in [
            (
                "DrHookLayer over a no-op layer, DR_HOOK=1",
                &[("DR_HOOK", "1")][..],
            ),
            (
                "DrHookLayer over a no-op layer, DR_HOOK_OPT=prof",
                &[("DR_HOOK", "1"), ("DR_HOOK_OPT", "prof")][..],
            ),
        ] {
            match per_pair("tracing_drhook", env) {
                Some(v) => println!(
                    "| {name} | {:.1} | <= 100 (no-op layer: {:.1} per span) |",
                    v - noop,
                    noop - base
                ),
                None => println!("| {name} | valgrind failed | |"),
            }
        }
        for (name, mode) in [
            ("tracing-timing layer over a no-op layer", "peer_timing"),
            ("tracing-flame layer over a no-op layer", "peer_flame"),
            ("tracing-chrome layer over a no-op layer", "peer_chrome"),
        ] {
            match per_pair(mode, &[]) {
                Some(v) => println!("| {name} | {:.1} | (peer, same spans) |", v - noop),
                None => println!("| {name} | valgrind failed | |"),
            }
        }
    } else {
        println!("\n(callgrind skipped: valgrind not found or DRHOOK_BENCH_CALLGRIND=0)");
    }

    if have("strace") {
        for (mode, opt) in [("cpuprof", "cpuprof"), ("hpmprof", "hpmprof")] {
            let syscalls = |pairs: &str| -> Option<f64> {
                let env = [
                    ("DR_HOOK", "1"),
                    ("DR_HOOK_OPT", opt),
                    ("DRHOOK_BENCH_PAIRS", pairs),
                ];
                let (_, err) =
                    run_child(mode, &env, &["strace", "-f", "-c", "-o", "/dev/stderr"]).ok()?;
                err.lines()
                    .find(|l| l.trim_end().ends_with("total"))
                    .and_then(|l| l.split_whitespace().nth(3).and_then(|c| c.parse().ok()))
            };
            match (syscalls("10000"), syscalls("20000")) {
                (Some(a), Some(b)) => println!(
                    "\n{opt}: {:.2} system calls per pair (strace -c, difference of 20000 and 10000 pairs; target <= 2)",
                    (b - a) / 10_000.0
                ),
                _ => println!("\n{opt} syscalls: strace failed or its output was not understood"),
            }
        }
    } else {
        println!("\n(syscall count skipped: strace not found)");
    }
    remove_scratch();
}
