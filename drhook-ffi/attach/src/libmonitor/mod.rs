//! libmonitor's C interface (seed 002, the current `monitor.h` of the
//! public `HPCToolkit/libmonitor`): a C tool — a shared library preloaded
//! beside the layer, or the program itself — defines some of libmonitor's
//! callbacks (`monitor_init_process`, `monitor_init_thread`, ...); they
//! are found once, with `dlsym(RTLD_DEFAULT)`, and called from the layer's
//! events by [`CMonitor`], a [`Monitor`](crate::events::Monitor) like any
//! other tool. The support functions a tool calls (`monitor_real_exit`,
//! `monitor_get_thread_num`, ...) are exported by the preload library
//! (`exports.rs`); the header is `drhook-ffi/include/monitor.h`.
//!
//! The data a callback returns travels as libmonitor passes it:
//! `monitor_init_process`'s to `monitor_fini_process` (and
//! `monitor_get_user_data`), `monitor_init_thread`'s to that thread's
//! `monitor_fini_thread`, `monitor_pre_fork`'s to `monitor_post_fork` in the
//! parent and to `monitor_init_process` in the child. Nothing is held
//! locked while a callback runs.

mod callbacks;
pub mod exports;
mod live;

pub use callbacks::CMonitor;
#[doc(hidden)]
pub use callbacks::{initialize, library_init, pre_main, start, start_main_init};
