//! An HTTP service (axum on a two-worker tokio runtime) profiled by Dr.Hook
//! through its `tracing` spans, and stopped the way services are stopped:
//! by SIGTERM (or Ctrl-C), with a graceful shutdown.
//!
//! ```sh
//! DR_HOOK=1 DR_HOOK_OPT=prof DR_HOOK_PROFILE=/tmp/service.prof.%d \
//!     cargo run --release -p drhook-examples --bin service
//! curl http://127.0.0.1:8080/forecast/42      # (the port it prints)
//! kill -TERM <pid>                            # then: cat /tmp/service.prof.1
//! ```
//!
//! What Dr.Hook needs from a service:
//! * the layer (`DrHookLayer`), registered in `main`: Dr.Hook starts there,
//!   on the main thread, and prints its start-up lines (options, where the
//!   profile goes, the signals it catches) before the first request;
//! * a profile path that the service can write: services often run with
//!   the working directory `/`, so give `DR_HOOK_PROFILE` a directory;
//! * nothing for SIGTERM: tokio installs its handler when the shutdown
//!   future first asks for the signal; Dr.Hook's handler, if installed
//!   earlier, is then called first by tokio's and leaves the signal to the
//!   program. The server drains, `main` returns, and the profile is
//!   written at the exit — as for a batch program.
//!
//! With `with_target(true)` the regions are named `module::function`
//! (`service::forecast`). A request is one call of its handler's span
//! however many polls it takes and whichever worker polls it; a span
//! resumed on a worker that did not start it shows there as a row with 0
//! calls (its time, no call).

use std::net::SocketAddr;

use axum::Router;
use axum::extract::Path;
use axum::routing::get;
use drhook::drhook;
use tracing_subscriber::prelude::*;

/// CPU work standing in for a model step.
#[drhook(name = "FC:KERNEL")]
fn kernel(seed: u64, iterations: u64) -> u64 {
    let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ seed;
    for i in 0..iterations {
        x = x.rotate_left(7) ^ i.wrapping_mul(0x2545_F491_4F6C_DD1D);
    }
    x
}

/// A forecast: a kernel on the worker, another on the blocking pool.
#[tracing::instrument]
async fn forecast(Path(id): Path<u64>) -> String {
    let a = kernel(id, 20_000);
    let b = tokio::task::spawn_blocking(move || kernel(id + 1, 20_000))
        .await
        .unwrap_or_default();
    format!("forecast {id}: {}\n", (a ^ b) % 100)
}

#[tracing::instrument]
async fn health() -> &'static str {
    "ok\n"
}

/// SIGTERM or Ctrl-C.
async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).expect("SIGTERM handler");
    let mut int = signal(SignalKind::interrupt()).expect("SIGINT handler");
    tokio::select! {
        _ = term.recv() => println!("SIGTERM: shutting down"),
        _ = int.recv() => println!("SIGINT: shutting down"),
    }
}

fn main() {
    tracing_subscriber::registry()
        .with(drhook::DrHookLayer::builder().with_target(true).build())
        .init();
    let port: u16 = std::env::args()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(8080);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let app = Router::new()
            .route("/forecast/{id}", get(forecast))
            .route("/health", get(health));
        let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], port)))
            .await
            .expect("bind");
        println!("listening on {}", listener.local_addr().expect("address"));
        axum::serve(listener, app)
            .with_graceful_shutdown(shutdown_signal())
            .await
            .expect("server");
    });
    println!("stopped");
}
