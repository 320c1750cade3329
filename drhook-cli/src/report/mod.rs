//! What the commands compute and print, independent of the command line.
//!
//! * [`merge`]: statistics of routines across tasks, streamed file by file;
//! * [`table`]: plain-text tables; the merge table as text, CSV, JSON;
//! * [`diff`]: two runs routine by routine, regressions for CI;
//! * [`folded`]: folded stacks for flame graphs;
//! * [`hatchet`]: Hatchet's literal JSON;
//! * [`top`]: the profile drawn for a terminal;
//! * [`trace`]: Chrome/Perfetto traces of several tasks merged into one.

pub mod diff;
pub mod folded;
pub mod hatchet;
pub mod merge;
pub mod table;
pub mod top;
pub mod trace;
