//! What can be counted: the machine ([`cpu`]), one event with its perf
//! programming and its role in derived metrics ([`spec`]), and the event sets
//! a user selects with `HPM_EVENT_SET` / `hpmcount -g` ([`set`]).
//!
//! Pure data and parsing; depends on nothing else in the crate.

pub mod cpu;
pub mod set;
pub mod spec;
