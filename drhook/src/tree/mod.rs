//! The per-thread calling tree: what every enter and exit updates.
//!
//! * `site` — the static record of each call site, ids, the routine table
//!   and the interning of run-time names;
//! * `node` — tree nodes and the append-only storage they live in;
//! * `thread` — one thread's tree (`ThreadData`): the enter/exit
//!   algorithms, foreign handles, mismatch repair, and the lock-free
//!   registry of all threads;
//! * `spans` — the stack of tracing spans entered on a thread, and a
//!   span's state shared across threads;
//! * `tls` — the one thread-local pointer (initial-exec model);
//! * `bits` — the mode word's meaning;
//! * `handle` — the 64/32-bit handles of foreign callers;
//! * `mismatch` — how a mismatched exit is reported (the handler slot);
//! * `overhead` — the cost of an enter/exit pair, measured on a private tree;
//! * `io` — I/O events of the preload library into the current node's
//!   row (`metrics::io`).
//!
//! Depends only on `sys` and `metrics`; what lies above (crash handling,
//! the start-up wiring) reaches in through hooks installed by `runtime`.

pub(crate) mod bits;
pub mod handle;
pub(crate) mod io;
pub mod mismatch;
pub(crate) mod mpi;
pub(crate) mod node;
pub(crate) mod overhead;
pub(crate) mod site;
pub(crate) mod spans;
pub(crate) mod thread;
pub(crate) mod tls;
