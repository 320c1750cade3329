//! Counting with the backends: the [`plan`] decided once by probing (with the
//! fallback chain and its one notice), the plan's groups opened on one
//! [`thread`] with snapshots and accumulators of deltas, and the single
//! per-[`routine`] group a profiler reads on entry and exit.
//!
//! Depends on [`crate::events`], [`crate::metrics`] and [`crate::backend`].

pub mod plan;
pub mod routine;
pub mod thread;
