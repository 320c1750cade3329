//! Layer 4: the built-in monitor, the Dr.Hook engine of the process. The
//! lifecycle (layer 5) gives it every event first at the start and last
//! at the end; the tools reach it for their per-routine events
//! ([`hooks`]).
//!
//! A process has one engine. By default it is the one linked into the
//! layer's library; a program that carries its own (a Rust binary with
//! `#[drhook]` code, a program linked statically with `libdrhook.a`)
//! offers it from a constructor through `drhook_attach_register_engine_v1`
//! (see `drhook::lifecycle`), and every event then goes to the program's
//! engine. A program linked with `libdrhook.so` needs nothing of the sort:
//! the preload library exports the same entry points, so the program's
//! calls bind to the preload's engine, and the engine inside
//! `libdrhook.so` is never used (its offer is declined).

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering};

use drhook::lifecycle::{ABI_VERSION, HOOKS, Hooks};

use crate::events::Ending;
use crate::sys::tls::{self, unrecorded};
use crate::sys::{diag, object_base};

static REGISTERED: AtomicPtr<Hooks> = AtomicPtr::new(std::ptr::null_mut());
static BEGUN: AtomicBool = AtomicBool::new(false);
static ON: AtomicBool = AtomicBool::new(false);

/// The engine that gets the events.
pub fn hooks() -> &'static Hooks {
    let p = REGISTERED.load(Ordering::Acquire);
    if p.is_null() {
        &HOOKS
    } else {
        // SAFETY: only accepted, 'static tables are stored.
        unsafe { &*p }
    }
}

/// Whether the process's engine is the program's own (not the layer's).
pub fn is_programs_engine() -> bool {
    !REGISTERED.load(Ordering::Acquire).is_null()
}

/// Whether Dr.Hook is on in this process (known from process start).
#[inline]
pub fn on() -> bool {
    ON.load(Ordering::Relaxed)
}

/// Whether the object holding `h` is a shared library whose Dr.Hook entry
/// points this layer's library also exports — calls to them bind to ours,
/// so that object's engine never runs (`libdrhook.so` under the preload) —
/// or one that carries a layer of its own (it exports
/// `drhook_attach_register_engine_v1`: the link-time MPI library
/// `libdrhook_mpi` under the preload), whose copy of the engine serves
/// only that layer, never the program.
fn entry_points_are_ours(h: *const Hooks) -> bool {
    if crate::real::link_mode() {
        return false;
    }
    // SAFETY: plain data that dladdr fills in.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the address.
    if unsafe { libc::dladdr(h.cast(), &mut info) } == 0 || info.dli_fname.is_null() {
        return false;
    }
    // SAFETY: getauxval has no preconditions.
    let main_phdr = unsafe { libc::getauxval(libc::AT_PHDR) } as *const c_void;
    if object_base(main_phdr) == info.dli_fbase as usize {
        // The executable's own calls always bind to its own definitions.
        return false;
    }
    // SAFETY: a NOLOAD dlopen of an object already loaded (its own name).
    let handle = unsafe { libc::dlopen(info.dli_fname, libc::RTLD_NOLOAD | libc::RTLD_LAZY) };
    if handle.is_null() {
        return false;
    }
    // SAFETY: lookups in a valid handle.
    let (sym, layer) = unsafe {
        (
            libc::dlsym(handle, c"c_drhook_start_".as_ptr()),
            libc::dlsym(handle, c"drhook_attach_register_engine_v1".as_ptr()),
        )
    };
    // SAFETY: releases the reference the NOLOAD dlopen took.
    unsafe { libc::dlclose(handle) };
    if !layer.is_null() && object_base(layer) == info.dli_fbase as usize {
        return true;
    }
    // SAFETY: global lookup of a NUL-terminated name.
    let ours = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"c_drhook_start_".as_ptr()) };
    !sym.is_null()
        && object_base(sym) == info.dli_fbase as usize
        && !ours.is_null()
        && object_base(ours) != info.dli_fbase as usize
}

/// A copy of the engine offers its table (see the module documentation).
/// Returns 1 if it becomes the process's engine.
///
/// # Safety
/// `h` is null or a table from `drhook::lifecycle` that lives forever.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn drhook_attach_register_engine_v1(h: *const Hooks) -> c_int {
    let r = std::panic::catch_unwind(|| {
        if h.is_null() || std::ptr::eq(h, &HOOKS) {
            return 0;
        }
        // SAFETY: caller contract.
        let t = unsafe { &*h };
        if t.abi != ABI_VERSION || (t.size as usize) < size_of::<Hooks>() {
            diag(
                "a copy of the Dr.Hook engine of another version offered itself; it is not used by the preload layer (two engines: two profiles)",
            );
            return 0;
        }
        if entry_points_are_ours(h) {
            return 0;
        }
        if BEGUN.load(Ordering::Acquire) {
            diag(
                "a copy of the Dr.Hook engine was loaded after the program started (dlopen); it keeps its own profile",
            );
            return 0;
        }
        match REGISTERED.compare_exchange(
            std::ptr::null_mut(),
            h as *mut Hooks,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => 1,
            Err(_) => {
                diag(
                    "the program holds two copies of the Dr.Hook engine; the first one gets the process events",
                );
                0
            }
        }
    });
    r.unwrap_or(0)
}

/// Process start: the engine starts and enters `main`.
pub(crate) fn process_begin(start: drhook::lifecycle::Start) {
    BEGUN.store(true, Ordering::Release);
    let on = unrecorded(|| (hooks().process_begin)(start.cycles, start.monotonic_ns)) != 0;
    ON.store(on, Ordering::Release);
}

/// Thread start (on the new thread). The thread's word (`tls::THREAD`):
/// bit 0 begun, bit 1 ended, the engine's token above.
pub(crate) fn thread_begin(start: usize, reserved: u32) {
    if !on() || tls::get(tls::THREAD) != 0 {
        return;
    }
    let token = unrecorded(|| (hooks().thread_begin)(start, reserved));
    tls::set(tls::THREAD, token << 2 | 1);
}

/// Before a thread is created: its number, reserved by the engine (0: none).
pub(crate) fn thread_reserve() -> u32 {
    if on() { (hooks().thread_reserve)() } else { 0 }
}

/// Thread end, given the thread's word before it was marked ended.
pub(crate) fn thread_end(word: u64) {
    let token = word >> 2;
    if word & 1 != 0 && token != 0 {
        unrecorded(|| (hooks().thread_end)(token));
    }
}

/// `main` returned: its root region ends (the profile is written when
/// the process ends, after the exit handlers).
pub(crate) fn main_returned(status: c_int) {
    if on() {
        unrecorded(|| (hooks().main_return)(status));
    }
}

/// The process ends.
pub(crate) fn process_end(how: Ending) {
    if !on() {
        return;
    }
    unrecorded(|| match how {
        Ending::Exec => {}
        other => {
            (hooks().process_end)(other.is_failure() as c_int);
        }
    })
}

/// Before an `exec`: writes the environment entry the new program gets
/// into `buf`, NUL-terminated; returns its length (0: none).
pub(crate) fn exec_begin(buf: &mut [u8]) -> usize {
    if !on() || buf.len() < 2 {
        return 0;
    }
    let n = unrecorded(|| (hooks().exec_begin)(buf.as_mut_ptr(), buf.len() - 1));
    if n != 0 {
        buf[n] = 0;
    }
    n
}

/// The `exec` failed.
pub(crate) fn exec_failed() {
    if on() {
        unrecorded(|| (hooks().exec_failed)());
    }
}

/// MPI told this process's rank.
pub(crate) fn mpi_init(rank: c_int, size: c_int) {
    if on() {
        unrecorded(|| (hooks().mpi_init)(rank, size));
    }
}

/// A program's `sigaction(sig, act, old)`: 1 when the engine answered it
/// from the program's view of a signal it catches, 0 when the caller makes
/// the real call (Dr.Hook off, or not one of its signals).
/// Async-signal-safe.
pub(crate) fn signal_action(
    sig: c_int,
    act: *const libc::sigaction,
    old: *mut libc::sigaction,
) -> c_int {
    if !on() {
        return 0;
    }
    (hooks().signal_action)(sig, act, old)
}

/// Runs `f` as the layer's own work for the engine: its allocations are
/// not the program's routines' (the monitors' events: the environment the
/// I/O layer sets for the children). The I/O tool marks its own I/O
/// itself (a monitor that finds `OWN_WORK` set would skip its work).
pub(crate) fn own_work<R>(f: impl FnOnce() -> R) -> R {
    if !on() {
        return f();
    }
    (hooks().own_work)(1);
    let r = f();
    (hooks().own_work)(0);
    r
}

/// The link-time MPI library (`libdrhook_mpi`, no lifecycle layer) ends
/// the process (`MPI_Abort`; `MPI_Finalize` with `reduce`): the program's
/// engine, the one its `libdrhook` offered, writes its reports now (once:
/// its own writer at exit then finds them written). Nothing without that
/// engine.
pub(crate) fn end_linked(failure: bool) {
    if is_programs_engine() {
        unrecorded(|| (hooks().process_end)(failure as c_int));
    }
}

/// MPI told the rank, in the link-time MPI library: to the program's
/// engine (see [`end_linked`]).
pub(crate) fn mpi_init_linked(rank: c_int, size: c_int) {
    if is_programs_engine() {
        unrecorded(|| (hooks().mpi_init)(rank, size));
    }
}

/// `DR_HOOK_OPT=reduce`: the process's engine folds this task's profile
/// when it writes it. Whether `reduce` was asked (with a time profile).
pub(crate) fn reduce_begin() -> bool {
    unrecorded(|| (hooks().reduce_begin)() != 0)
}

/// After the end's write: this task's part of the job profile, from the
/// process's engine (whichever copy it is: the bytes cross between them).
pub(crate) fn reduce_take() -> Option<drhook::lifecycle::ReducePart> {
    extern "C" fn sink(ctx: *mut c_void, bytes: *const u8, len: usize) {
        if ctx.is_null() || bytes.is_null() {
            return;
        }
        // SAFETY: `ctx` is the `Option<ReducePart>` below, `bytes` the
        // engine's `len` readable bytes (the table's contract).
        unsafe {
            *ctx.cast::<Option<drhook::lifecycle::ReducePart>>() =
                drhook::lifecycle::ReducePart::decode(std::slice::from_raw_parts(bytes, len));
        }
    }
    let mut part: Option<drhook::lifecycle::ReducePart> = None;
    unrecorded(|| (hooks().reduce_take)(sink, (&raw mut part).cast()));
    part
}

/// On rank 0, after the reduction: the process's engine writes the job
/// profile (`cols`: the memory, I/O or MPI one) from the combined merger
/// bytes, with the run's `identity` lines first.
pub(crate) fn reduce_write(cols: bool, merged: &[u8], identity: &[String]) -> Result<(), String> {
    let id = identity.join("\n");
    let mut err = [0u8; 512];
    let n = unrecorded(|| {
        (hooks().reduce_write)(
            cols as c_int,
            merged.as_ptr(),
            merged.len(),
            id.as_ptr(),
            id.len(),
            err.as_mut_ptr(),
            err.len(),
        )
    });
    if n == 0 {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&err[..n.min(err.len())]).into_owned())
    }
}
