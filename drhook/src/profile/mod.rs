//! The profile: from the live calling trees to `drhook.prof.N`.
//!
//! `snapshot` (copies of the trees) → `compute` (rows: self and total
//! times, calls, clusters, call paths — pure arithmetic) → `text` (the
//! reference's layout, the counters CSV) → `write` (collection from the
//! live engine, atomic writing, the write at exit, exactly once per
//! process); `name` (which file a process of a run writes).

pub(crate) mod compute;
pub(crate) mod name;
pub(crate) mod snapshot;
pub(crate) mod text;
pub(crate) mod write;
