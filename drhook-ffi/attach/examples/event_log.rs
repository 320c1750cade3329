//! A tool built on the lifecycle layer, as the memory and I/O tools are:
//! a [`Monitor`] that writes every event it receives, one line each, to the
//! file named by `EVENT_LOG` (`<pid> <event> <details>`). Built as a
//! preload library of its own (`cargo build -p drhook-attach --example
//! event_log` → `examples/libevent_log.so`); the tests use it to check
//! that each event arrives once, in order, on the right thread.
//!
//! A real tool adds its monitor to `libdrhook_preload.so` instead (one
//! layer and one engine per process); this one stands alone so that the
//! layer can be observed without Dr.Hook.

use std::ffi::{CStr, c_int, c_void};
use std::io::Write;

use drhook_attach::{Ending, Events, ForkSide, Monitor, Process, register};

struct Log;

fn line(text: std::fmt::Arguments<'_>) {
    let Some(path) = std::env::var_os("EVENT_LOG") else {
        return;
    };
    // SAFETY: getpid and gettid have no preconditions.
    let (pid, tid) = unsafe { (libc::getpid(), libc::gettid()) };
    let s = format!("{pid} {tid} {text}\n");
    // One write per line, appended: lines of several processes interleave
    // whole.
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = f.write_all(s.as_bytes());
    }
}

impl Monitor for Log {
    fn events(&self) -> Events {
        Events::ALL
    }
    fn init_process(&self, p: &Process<'_>) {
        line(format_args!(
            "init_process {} forked={} argc={}",
            p.command, p.forked, p.argc
        ));
    }
    fn fini_process(&self, how: Ending) {
        line(format_args!("fini_process {how:?}"));
    }
    fn init_thread(&self, start: usize) {
        line(format_args!("init_thread {start:#x}"));
    }
    fn fini_thread(&self) {
        line(format_args!("fini_thread"));
    }
    fn pre_fork(&self) {
        line(format_args!("pre_fork"));
    }
    fn post_fork(&self, side: ForkSide) {
        line(format_args!("post_fork {side:?}"));
    }
    fn exec_failed(&self, errno: c_int) {
        line(format_args!("exec_failed {errno}"));
    }
    fn dlopen(&self, file: Option<&CStr>, _flags: c_int, _handle: *mut c_void) {
        line(format_args!(
            "dlopen {:?}",
            file.map(|f| f.to_string_lossy())
        ));
    }
    fn dlclose(&self, _handle: *mut c_void) {
        line(format_args!("dlclose"));
    }
    fn init_mpi(&self, rank: c_int, size: c_int) {
        line(format_args!("init_mpi {rank} {size}"));
    }
    fn fini_mpi(&self) {
        line(format_args!("fini_mpi"));
    }
}

static LOG: Log = Log;

extern "C" fn at_load() {
    register(&LOG).expect("room for one monitor");
}

/// Registers the monitor when the library is loaded, before `main`.
#[used]
#[unsafe(link_section = ".init_array")]
static AT_LOAD: extern "C" fn() = at_load;

drhook_attach::interpose!(preload);
