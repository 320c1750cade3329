//! The profile: from the live calling trees to `drhook.prof.N`, its JSON
//! companion and the timeline.
//!
//! `snapshot` (copies of the trees) → `compute` (per-node figures, then
//! rows: self and total times, calls, clusters, call paths — pure
//! arithmetic) → `text` (the reference's layout, the counters CSV) and
//! `json` (the `drhook-profile` document with the full call-path tree, from
//! the same per-node figures) → `write` (collection from the live engine,
//! atomic writing, the write at exit, exactly once per process). `trace`
//! writes the timeline recorded by `metrics::trace` as a Chrome/Perfetto
//! trace; `io` the I/O profile `drhook.prof.N-io` (`io`); `mem` writes the memory profile `drhook.prof.N-mem` (`memprof`)
//! from the same rows; `name` says which file a process of a run writes;
//! `summary` the tree printed at the end (`summary`);
//! `reduce` folds this task's rows for the job profile (`reduce`) and
//! writes it; `gpu` the GPU profile `drhook.prof.N-gpu` (`gpu`); `sample` the sampled
//! profile `drhook.prof.N-sample` and its JSON (`sample`);
//! `ended` keeps what the profile needs of threads that ended, whose trees
//! are freed.

pub(crate) mod compute;
pub(crate) mod ended;
pub(crate) mod gpu;
pub(crate) mod io;
pub(crate) mod json;
pub(crate) mod mem;
pub(crate) mod mpi;
pub(crate) mod name;
pub(crate) mod reduce;
pub(crate) mod sample;
pub(crate) mod snapshot;
pub(crate) mod summary;
pub(crate) mod text;
pub(crate) mod trace;
pub(crate) mod write;
