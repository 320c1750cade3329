//! Building blocks with no knowledge of Dr.Hook: clocks, process facts,
//! async-signal-safe line formatting, and never-moving chunked storage.

pub mod clock;
pub mod linebuf;
pub(crate) mod segmented;
pub mod sysinfo;
