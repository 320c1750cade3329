//! Test program for the tracing front door (`drhook::DrHookLayer`) and
//! `#[drhook]` on `async fn`: `drhook-test-tracing <scenario>`.
//!
//! Every scenario installs its subscriber with `with_default` /
//! `set_default` (never a global default), as the issue asks.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use drhook::drhook;
use tracing::Instrument;
use tracing::instrument::WithSubscriber;
use tracing_subscriber::prelude::*;

fn spin(micros: u64) {
    let t = std::time::Instant::now();
    while t.elapsed() < Duration::from_micros(micros) {
        std::hint::spin_loop();
    }
}

// --- nesting in both directions ---------------------------------------------

#[drhook(name = "MIX:OUTER")]
fn mix_outer() {
    for _ in 0..2 {
        let span = tracing::info_span!("mix_middle");
        let _e = span.enter();
        mix_inner();
    }
}

#[drhook(name = "MIX:INNER")]
fn mix_inner() {
    for _ in 0..3 {
        instrumented_leaf(7);
    }
}

#[tracing::instrument]
fn instrumented_leaf(x: u32) -> u32 {
    spin(500);
    x + 1
}

fn tree() {
    let subscriber = tracing_subscriber::registry().with(drhook::DrHookLayer::new());
    tracing::subscriber::with_default(subscriber, || {
        let span = tracing::info_span!("mix_top");
        let _e = span.enter();
        mix_outer();
    });
}

// --- spans that do not nest -------------------------------------------------

fn cross_thread() {
    let dispatch =
        tracing::Dispatch::new(tracing_subscriber::registry().with(drhook::DrHookLayer::new()));
    let span = tracing::dispatcher::with_default(&dispatch, || tracing::info_span!("crossing"));
    let id = span.id().expect("the layer's registry gives ids");
    // Entered on one thread inside a #[drhook]-style region that returns
    // while the span is still entered there...
    let (d, i) = (dispatch.clone(), id.clone());
    std::thread::spawn(move || {
        tracing::dispatcher::with_default(&d, || {
            {
                let _g = drhook::scope!("CROSS:ENTERING");
                d.enter(&i);
                spin(3000);
            }
            // Its activation was closed with the guard: this exit finds
            // nothing open; entering it again resumes the call.
            d.exit(&i);
            d.enter(&i);
            d.exit(&i);
        });
    })
    .join()
    .unwrap();
    // ...and exited on another thread, where it was never entered.
    let (d, i) = (dispatch.clone(), id.clone());
    std::thread::spawn(move || {
        tracing::dispatcher::with_default(&d, || {
            let _g = drhook::scope!("CROSS:EXITING");
            d.exit(&i);
        });
    })
    .join()
    .unwrap();
    // Out of order on one thread, under a guard.
    tracing::dispatcher::with_default(&dispatch, || {
        let _g = drhook::scope!("CROSS:MAIN");
        let a = tracing::info_span!("order_a");
        let b = tracing::info_span!("order_b");
        let ea = a.enter();
        let eb = b.enter();
        drop(ea);
        drop(eb);
        // A span still entered when the guard below it is left.
        let c = tracing::info_span!("left_open");
        std::mem::forget(c.enter());
    });
    drop(span);
    println!("cross_thread done");
}

// --- futures moved between threads -----------------------------------------

struct Flag(AtomicBool);
impl Wake for Flag {
    fn wake(self: Arc<Self>) {
        self.0.store(true, Ordering::Release);
    }
}

/// Pending once, then ready: one suspension per await.
struct YieldOnce(bool);
impl Future for YieldOnce {
    type Output = ();
    fn poll(mut self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.0 {
            Poll::Ready(())
        } else {
            self.0 = true;
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }
}

#[drhook(name = "ASYNC:WORK")]
async fn async_work() -> u32 {
    spin(2000);
    YieldOnce(false).await;
    spin(2000);
    YieldOnce(false).await;
    spin(2000);
    async_child().await + 1
}

#[drhook(name = "ASYNC:CHILD")]
async fn async_child() -> u32 {
    spin(1000);
    YieldOnce(false).await;
    41
}

async fn span_work() -> u32 {
    spin(2000);
    YieldOnce(false).await;
    spin(2000);
    7
}

/// Polls `fut` to completion, each poll on a new thread, sleeping
/// `pause` between polls (the suspension).
fn poll_on_new_threads<F: Future + Send + 'static>(
    fut: F,
    pause: Duration,
    dispatch: Option<tracing::Dispatch>,
) -> (F::Output, usize)
where
    F::Output: Send,
{
    let mut fut = Box::pin(fut);
    let mut polls = 0;
    loop {
        polls += 1;
        let d = dispatch.clone();
        let (f, out) = std::thread::spawn(move || {
            let waker = Waker::from(Arc::new(Flag(AtomicBool::new(false))));
            let mut cx = Context::from_waker(&waker);
            let mut poll = |f: &mut std::pin::Pin<Box<F>>| f.as_mut().poll(&mut cx);
            let out = match &d {
                Some(d) => tracing::dispatcher::with_default(d, || poll(&mut fut)),
                None => poll(&mut fut),
            };
            (fut, out)
        })
        .join()
        .unwrap();
        fut = f;
        if let Poll::Ready(v) = out {
            return (v, polls);
        }
        std::thread::sleep(pause);
    }
}

fn migrate() {
    let (v, polls) = poll_on_new_threads(async_work(), Duration::from_millis(40), None);
    println!("async_work={v} polls={polls}");
    let dispatch =
        tracing::Dispatch::new(tracing_subscriber::registry().with(drhook::DrHookLayer::new()));
    let span = tracing::dispatcher::with_default(&dispatch, || tracing::info_span!("span_future"));
    let (v, polls) = poll_on_new_threads(
        span_work().instrument(span),
        Duration::from_millis(40),
        Some(dispatch),
    );
    println!("span_work={v} polls={polls}");
}

/// The same on a real multi-threaded runtime.
fn tokio_tasks() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_time()
        .build()
        .unwrap();
    let subscriber = tracing_subscriber::registry().with(drhook::DrHookLayer::new());
    let dispatch = tracing::Dispatch::new(subscriber);
    let total: u32 = rt.block_on(async move {
        let mut handles = Vec::new();
        for i in 0..8u32 {
            let d = dispatch.clone();
            handles.push(tokio::spawn(
                async move {
                    let mut acc = 0;
                    for _ in 0..3 {
                        tokio::time::sleep(Duration::from_millis(5)).await;
                        acc += async_child().await;
                    }
                    acc + i
                }
                .instrument(tracing::dispatcher::with_default(&d, || {
                    tracing::info_span!("tokio_task")
                }))
                .with_subscriber(d),
            ));
        }
        let mut t = 0;
        for h in handles {
            t += h.await.unwrap();
        }
        t
    });
    println!("tokio total={total}");
}

// --- filters ---------------------------------------------------------------

fn filters() {
    use tracing_subscriber::filter::{LevelFilter, filter_fn};
    let layer = drhook::DrHookLayer::new()
        .with_filter(filter_fn(|m| m.target() != "noisy"))
        .with_filter(LevelFilter::INFO);
    let subscriber = tracing_subscriber::registry().with(layer);
    tracing::subscriber::with_default(subscriber, || {
        let _g = drhook::scope!("FILTER:MAIN");
        for _ in 0..2 {
            let kept = tracing::info_span!("kept");
            let _k = kept.enter();
            let noisy = tracing::info_span!(target: "noisy", "dropped_by_target");
            let _n = noisy.enter();
            let debug = tracing::debug_span!("dropped_by_level");
            let _d = debug.enter();
            let inner = tracing::info_span!("kept_inner");
            let _i = inner.enter();
            spin(20);
        }
    });
}

// --- configuration from code -----------------------------------------------

fn settings() {
    let layer = drhook::DrHookLayer::builder()
        .settings(
            drhook::Settings::new()
                .enabled(true)
                .options("prof")
                .profile("from_code.%d"),
        )
        .build();
    tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), || {
        let s = tracing::info_span!("configured");
        let _e = s.enter();
        spin(100);
    });
    // Too late: the engine is initialised now.
    let again = drhook::Settings::new().options("cpuprof").init();
    println!("second init: {again:?}");
}

fn main() {
    let scenario = std::env::args().nth(1).unwrap_or_default();
    match scenario.as_str() {
        "tree" => tree(),
        "cross_thread" => cross_thread(),
        "migrate" => migrate(),
        "tokio" => tokio_tasks(),
        "filters" => filters(),
        "settings" => settings(),
        other => {
            eprintln!("unknown scenario {other:?}");
            std::process::exit(2);
        }
    }
}
