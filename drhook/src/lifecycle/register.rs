//! The engine's lifecycle entry points as a C table ([`HOOKS`]), and the
//! constructor that hands it to the attach layer when one is loaded.
//!
//! The layer (`drhook-attach`, in `libdrhook_preload.so` or linked with
//! `--wrap`) exports `drhook_attach_register_engine_v1`. Every copy of the
//! engine refers to that symbol weakly: without the layer the reference is
//! null and the constructor does nothing (one load); with it, the engine
//! offers its table, and the layer decides which engine of the process
//! gets the events (the program's own, see `drhook-attach`).

use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicPtr, Ordering};

use crate::tree::site::Site;

use super::Start;

/// Version of [`Hooks`]; a layer accepts only tables of its own version.
pub const ABI_VERSION: u32 = 4;

/// The lifecycle operations of one copy of the engine, callable from
/// another copy's layer. Every entry catches panics.
#[repr(C)]
#[derive(Debug)]
pub struct Hooks {
    /// [`ABI_VERSION`].
    pub abi: u32,
    /// `size_of::<Hooks>()`.
    pub size: u32,
    /// The engine's crate version, NUL-terminated.
    pub version: *const c_char,
    /// [`super::process_begin`]; returns 1 when Dr.Hook is on.
    pub process_begin: extern "C" fn(cycles: u64, monotonic_ns: u64) -> c_int,
    /// [`super::main_return`]: `main` returned (its region ends; the
    /// profile is written by `process_end`).
    pub main_return: extern "C" fn(status: c_int),
    /// [`super::process_end`]; returns 1 when a profile was written.
    pub process_end: extern "C" fn(failure: c_int) -> c_int,
    /// [`super::thread_reserve`].
    pub thread_reserve: extern "C" fn() -> u32,
    /// [`super::thread_begin`].
    pub thread_begin: extern "C" fn(start_routine: usize, reserved: u32) -> u64,
    /// [`super::thread_end`].
    pub thread_end: extern "C" fn(token: u64),
    /// [`super::mpi_init`].
    pub mpi_init: extern "C" fn(rank: c_int, size: c_int),
    /// [`super::exec_begin`]: writes the environment entry into `buf`
    /// (not NUL-terminated) and returns its length; 0 when Dr.Hook is off
    /// or `buf` is too small.
    pub exec_begin: extern "C" fn(buf: *mut u8, cap: usize) -> usize,
    /// [`super::exec_failed`].
    pub exec_failed: extern "C" fn(),
    /// An I/O operation on the calling thread (`kind`: 0 read, 1 write, 2
    /// other; bytes; nanoseconds), for the I/O metric (`io`); returns the
    /// current routine's identity (0: none), for `routine_name`.
    pub io_event: extern "C" fn(kind: u32, bytes: u64, nanos: u64) -> usize,
    /// Writes `NAME@tid` of the calling thread's current routine into
    /// `buf` and returns its length (0: none).
    pub current_routine: extern "C" fn(buf: *mut u8, cap: usize) -> usize,
    /// Writes the calling thread's calling tree, `NAME@tid<CALLER<...`,
    /// into `buf` and returns its length (0: none); no allocation.
    pub current_path: extern "C" fn(buf: *mut u8, cap: usize) -> usize,
    /// Writes the name of a routine whose identity `io_event` returned
    /// into `buf` and returns its length.
    pub routine_name: extern "C" fn(id: usize, buf: *mut u8, cap: usize) -> usize,
    /// A program's `sigaction(sig, act, old)` (`act`, `old` null or valid):
    /// 1 when answered from the program's view of a signal Dr.Hook catches
    /// ([`crate::signals::program_action`]), 0 when the caller makes the
    /// real call. Async-signal-safe.
    pub signal_action:
        extern "C" fn(sig: c_int, act: *const libc::sigaction, old: *mut libc::sigaction) -> c_int,
    /// [`super::own_work`]: the layer's own work begins (1) or ends (0) on
    /// the calling thread.
    pub own_work: extern "C" fn(begin: c_int),
    /// [`super::companion_path`]: the path of this process's file
    /// `<stem>.<task>...` named by the profiles' rule (`child`: the name of
    /// a process that is not its task's main one, whatever it is now),
    /// written into `buf`; returns its length (0: Dr.Hook off, or `buf`
    /// too small).
    pub companion_path:
        extern "C" fn(stem: *const u8, len: usize, child: c_int, buf: *mut u8, cap: usize) -> usize,
    /// An MPI call begins (`DR_HOOK_OPT=mpi`): enters the routine named
    /// by the `len` bytes at `name` (a string that lives forever) on the
    /// calling thread and returns the handle for `mpi_exit` (0: none).
    /// `cache` is the caller's own word for that name (null until the
    /// first call), so that later calls look nothing up.
    pub mpi_enter: extern "C" fn(cache: *mut *mut c_void, name: *const u8, len: usize) -> u64,
    /// The MPI call of `handle` ends: adds its bytes sent and received,
    /// whether it had a data buffer (`data` ≠ 0) and the size of the
    /// communicator it named (0: none) to its row
    /// (`crate::tree::mpi::record`), then leaves it.
    pub mpi_exit: extern "C" fn(handle: u64, sent: u64, recv: u64, data: c_int, comm_size: u64),
    /// [`super::reduce_begin`]; returns 1 when `reduce` was asked (with a
    /// time profile).
    pub reduce_begin: extern "C" fn() -> c_int,
    /// [`super::reduce_take`]: hands this task's part, as bytes
    /// ([`super::ReducePart::encode`]), to `sink(ctx, bytes, len)`;
    /// returns 1 when there was one.
    pub reduce_take: extern "C" fn(sink: ReduceSink, ctx: *mut c_void) -> c_int,
    /// [`super::reduce_write_job`] (`cols` 0) or
    /// [`super::reduce_write_cols_job`] (1) of the `len` combined bytes at
    /// `merged`, the identity lines joined by `\n` (`ilen` bytes at
    /// `identity`): 0 when written, else the length of the reason, written
    /// into `err` (at most `cap` bytes).
    pub reduce_write: extern "C" fn(
        cols: c_int,
        merged: *const u8,
        len: usize,
        identity: *const u8,
        ilen: usize,
        err: *mut u8,
        cap: usize,
    ) -> usize,
}

/// Receives the bytes of [`Hooks::reduce_take`] (`ctx`, then the bytes).
pub type ReduceSink = extern "C" fn(ctx: *mut c_void, bytes: *const u8, len: usize);

// SAFETY: the table is immutable; `version` points to a static string.
unsafe impl Sync for Hooks {}

fn guard<R>(fallback: R, f: impl FnOnce() -> R) -> R {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or(fallback)
}

extern "C" fn h_process_begin(cycles: u64, monotonic_ns: u64) -> c_int {
    guard(0, || {
        super::process_begin(Start {
            cycles,
            monotonic_ns,
        }) as c_int
    })
}

extern "C" fn h_main_return(status: c_int) {
    guard((), || super::main_return(status))
}

extern "C" fn h_process_end(failure: c_int) -> c_int {
    guard(0, || super::process_end(failure != 0) as c_int)
}

extern "C" fn h_thread_reserve() -> u32 {
    guard(0, super::thread_reserve)
}

extern "C" fn h_thread_begin(start: usize, reserved: u32) -> u64 {
    guard(0, || super::thread_begin(start, reserved))
}

extern "C" fn h_thread_end(token: u64) {
    guard((), || super::thread_end(token))
}

extern "C" fn h_mpi_init(rank: c_int, size: c_int) {
    guard((), || {
        // `is_enabled` starts the engine if it was not yet (a program
        // linked with `libdrhook_mpi` whose first Dr.Hook call comes after
        // `MPI_Init`): the profile is then named after the rank from the
        // start.
        if rank >= 0 && size > 0 && crate::runtime::is_enabled() {
            super::mpi_init(rank as u32, size as u32)
        }
    })
}

extern "C" fn h_exec_begin(buf: *mut u8, cap: usize) -> usize {
    guard(0, || {
        let Some(entry) = super::exec_begin() else {
            return 0;
        };
        if buf.is_null() || entry.len() > cap {
            return 0;
        }
        // SAFETY: the caller provides `cap` writable bytes at `buf`.
        unsafe { std::ptr::copy_nonoverlapping(entry.as_ptr(), buf, entry.len()) };
        entry.len()
    })
}

extern "C" fn h_exec_failed() {
    guard((), super::exec_failed)
}

extern "C" fn h_io_event(kind: u32, bytes: u64, nanos: u64) -> usize {
    crate::tree::io::record(kind, bytes, nanos)
}

extern "C" fn h_routine_name(id: usize, buf: *mut u8, cap: usize) -> usize {
    guard(0, || {
        if buf.is_null() || id == 0 {
            return 0;
        }
        // SAFETY: the caller provides `cap` writable bytes at `buf`.
        let b = unsafe { std::slice::from_raw_parts_mut(buf, cap) };
        // SAFETY: `id` came from this table's `io_event` (the contract).
        unsafe { crate::tree::io::routine_name(id, b) }
    })
}

extern "C" fn h_current_routine(buf: *mut u8, cap: usize) -> usize {
    guard(0, || {
        if buf.is_null() {
            return 0;
        }
        // SAFETY: the caller provides `cap` writable bytes at `buf`.
        let b = unsafe { std::slice::from_raw_parts_mut(buf, cap) };
        crate::tree::io::current_routine(b)
    })
}

extern "C" fn h_current_path(buf: *mut u8, cap: usize) -> usize {
    guard(0, || {
        if buf.is_null() {
            return 0;
        }
        // SAFETY: the caller provides `cap` writable bytes at `buf`.
        let b = unsafe { std::slice::from_raw_parts_mut(buf, cap) };
        crate::tree::io::current_path(b)
    })
}

extern "C" fn h_signal_action(
    sig: c_int,
    act: *const libc::sigaction,
    old: *mut libc::sigaction,
) -> c_int {
    // SAFETY: the table's contract: null or valid pointers. (No panic
    // guard: nothing here panics, and the entry must stay
    // async-signal-safe.)
    unsafe { crate::crash::signals::program_action(sig, act, old) }
}

extern "C" fn h_own_work(begin: c_int) {
    guard((), || super::own_work(begin != 0))
}

extern "C" fn h_companion_path(
    stem: *const u8,
    len: usize,
    child: c_int,
    buf: *mut u8,
    cap: usize,
) -> usize {
    guard(0, || {
        if stem.is_null() || buf.is_null() {
            return 0;
        }
        // SAFETY: the caller provides `len` readable bytes at `stem`.
        let stem = unsafe { std::slice::from_raw_parts(stem, len) };
        let Ok(stem) = std::str::from_utf8(stem) else {
            return 0;
        };
        let Some(p) = super::companion_path(stem, child != 0) else {
            return 0;
        };
        let p = p.as_os_str().as_encoded_bytes();
        if p.len() > cap {
            return 0;
        }
        // SAFETY: the caller provides `cap` writable bytes at `buf`.
        unsafe { std::ptr::copy_nonoverlapping(p.as_ptr(), buf, p.len()) };
        p.len()
    })
}

extern "C" fn h_mpi_enter(cache: *mut *mut c_void, name: *const u8, len: usize) -> u64 {
    if cache.is_null() {
        return 0;
    }
    // SAFETY: the table's contract: an aligned word used only through
    // these entries, holding null or a `&'static Site`.
    let cache = unsafe { AtomicPtr::from_ptr(cache.cast::<*mut Site>()) };
    // SAFETY: only `&'static Site`s are stored in the cache.
    if let Some(s) = unsafe { cache.load(Ordering::Relaxed).as_ref() } {
        if let Some(h) = crate::engine::enter_handle_fast(s, true) {
            return h;
        }
    }
    mpi_enter_slow(cache, name, len)
}

/// [`h_mpi_enter`] past its call-free path: the first call of the name
/// (its site looked up and remembered in `cache`), or the full enter.
#[cold]
#[inline(never)]
fn mpi_enter_slow(cache: &AtomicPtr<Site>, name: *const u8, len: usize) -> u64 {
    // SAFETY: only `&'static Site`s are stored in the cache.
    if let Some(s) = unsafe { cache.load(Ordering::Relaxed).as_ref() } {
        return guard(0, || crate::engine::enter_handle(s));
    }
    if name.is_null() {
        return 0;
    }
    guard(0, || {
        // SAFETY: the caller provides `len` readable bytes that live forever.
        let bytes = unsafe { std::slice::from_raw_parts(name, len) };
        let Ok(text) = std::str::from_utf8(bytes) else {
            return 0;
        };
        let s = crate::tree::site::site_for_name(text, None);
        cache.store(s as *const Site as *mut Site, Ordering::Relaxed);
        crate::engine::enter_handle(s)
    })
}

extern "C" fn h_mpi_exit(handle: u64, sent: u64, recv: u64, data: c_int, comm_size: u64) {
    if handle == 0 {
        return;
    }
    // The common case: the call's row is the top; figures and exit at once.
    if crate::tree::mpi::exit_recorded(handle, sent, recv, data != 0, comm_size) {
        return;
    }
    mpi_exit_slow(handle, sent, recv, data != 0, comm_size);
}

#[cold]
#[inline(never)]
fn mpi_exit_slow(handle: u64, sent: u64, recv: u64, data: bool, comm_size: u64) {
    crate::tree::mpi::record(sent, recv, data, comm_size);
    if !crate::engine::exit_handle_fast(handle, true) {
        guard((), || crate::engine::exit_handle(handle, 0, None));
    }
}

extern "C" fn h_reduce_begin() -> c_int {
    guard(0, || super::reduce_begin() as c_int)
}

extern "C" fn h_reduce_take(sink: ReduceSink, ctx: *mut c_void) -> c_int {
    guard(0, || match super::reduce_take() {
        Some(p) => {
            let b = p.encode();
            sink(ctx, b.as_ptr(), b.len());
            1
        }
        None => 0,
    })
}

extern "C" fn h_reduce_write(
    cols: c_int,
    merged: *const u8,
    len: usize,
    identity: *const u8,
    ilen: usize,
    err: *mut u8,
    cap: usize,
) -> usize {
    let r = guard(Err("the engine failed (panic)".to_string()), || {
        if merged.is_null() || identity.is_null() {
            return Err("no bytes".to_string());
        }
        // SAFETY: the caller provides `len` and `ilen` readable bytes.
        let (merged, identity) = unsafe {
            (
                std::slice::from_raw_parts(merged, len),
                std::slice::from_raw_parts(identity, ilen),
            )
        };
        let lines: Vec<String> = String::from_utf8_lossy(identity)
            .split('\n')
            .map(String::from)
            .collect();
        if cols != 0 {
            super::reduce_write_cols_job(merged, &lines)
        } else {
            super::reduce_write_job(merged, &lines)
        }
    });
    match r {
        Ok(_) => 0,
        Err(e) => {
            let e = if e.is_empty() {
                "failed".to_string()
            } else {
                e
            };
            let n = e.len().min(cap);
            if !err.is_null() && n > 0 {
                // SAFETY: the caller provides `cap` writable bytes at `err`.
                unsafe { std::ptr::copy_nonoverlapping(e.as_ptr(), err, n) };
            }
            n.max(1)
        }
    }
}

/// This copy of the engine's table.
pub static HOOKS: Hooks = Hooks {
    abi: ABI_VERSION,
    size: size_of::<Hooks>() as u32,
    version: concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr() as *const c_char,
    process_begin: h_process_begin,
    main_return: h_main_return,
    process_end: h_process_end,
    thread_reserve: h_thread_reserve,
    thread_begin: h_thread_begin,
    thread_end: h_thread_end,
    mpi_init: h_mpi_init,
    exec_begin: h_exec_begin,
    exec_failed: h_exec_failed,
    io_event: h_io_event,
    current_routine: h_current_routine,
    current_path: h_current_path,
    routine_name: h_routine_name,
    signal_action: h_signal_action,
    own_work: h_own_work,
    companion_path: h_companion_path,
    mpi_enter: h_mpi_enter,
    mpi_exit: h_mpi_exit,
    reduce_begin: h_reduce_begin,
    reduce_take: h_reduce_take,
    reduce_write: h_reduce_write,
};

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod announce {
    use super::{HOOKS, Hooks};

    fn layer() -> usize {
        let p: usize;
        #[cfg(target_arch = "x86_64")]
        // SAFETY: loads the GOT entry of a weak symbol (null unless the
        // attach layer is in the process); reads nothing else. The `.weak`
        // directive is in the same asm, so it is in the object that refers
        // to the symbol whatever the code generation units.
        unsafe {
            std::arch::asm!(
                ".weak drhook_attach_register_engine_v1",
                "mov {p}, qword ptr [rip + drhook_attach_register_engine_v1@GOTPCREL]",
                p = out(reg) p,
                options(pure, readonly, nostack, preserves_flags),
            );
        }
        #[cfg(target_arch = "aarch64")]
        // SAFETY: as above, with the aarch64 GOT sequence.
        unsafe {
            std::arch::asm!(
                ".weak drhook_attach_register_engine_v1",
                "adrp {p}, :got:drhook_attach_register_engine_v1",
                "ldr {p}, [{p}, #:got_lo12:drhook_attach_register_engine_v1]",
                p = out(reg) p,
                options(pure, readonly, nostack, preserves_flags),
            );
        }
        p
    }

    extern "C" fn offer() {
        let f = layer();
        if f != 0 {
            // SAFETY: the layer defines the symbol with this signature.
            let register: extern "C" fn(*const Hooks) -> i32 =
                unsafe { std::mem::transmute::<usize, extern "C" fn(*const Hooks) -> i32>(f) };
            register(&HOOKS);
        }
    }

    /// Runs when the object holding this engine is loaded (before `main`
    /// for a program and the libraries it is linked with).
    #[used]
    #[unsafe(link_section = ".init_array")]
    static OFFER: extern "C" fn() = offer;
}
