//! What is measured: libhpm's instrumented sections ([`session`], with
//! inclusive and exclusive values, the [`intervals`] arithmetic that defines
//! them, and the API [`error`]s), and `hpmcount`'s whole [`program`] with
//! everything it spawns (reported as section 0), and `hpmstat`'s [`system`]-wide
//! counting on every CPU.
//!
//! Both produce [`crate::report`] measurements; nothing here formats or
//! writes them.

pub mod error;
pub mod intervals;
pub mod program;
pub mod session;
pub mod system;
