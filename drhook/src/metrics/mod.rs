//! Per-routine metrics beyond calls and time.
//!
//! * `counters` — hardware or software counters per routine (`hpmprof`).

pub(crate) mod counters;
