//! The program cannot tell it is measured (issue 22): real programs in C,
//! Rust, Python and shell run plainly and under `drhook run` with `prof`
//! and with `prof,memprof,io`; their stdout, their stderr without
//! Dr.Hook's own lines, their exit status or signal and the files they
//! write must be the same, and the profile must be written. Each module is
//! one area of the issue, each test one of its items (a test that failed
//! on the main of 2026-11-26).
//!
//! The programs are in `tests/progs/harmless/`; [`harness`] runs them.

#[path = "../common/mod.rs"]
mod common;
mod harness;

mod allocator;
mod cost;
mod descriptors;
mod exits;
mod heap;
mod launcher;
mod signals;
mod threads;
