//! The engine's operations — the hot path: every front door (guards,
//! `#[drhook]`, the FFI, a tracing layer) enters and leaves routines through
//! [`enter`] and [`exit`].
//!
//! The whole per-call decision is one relaxed load of the mode word
//! (`setup::MODE`): `0` when Dr.Hook is off (an enter/exit pair is then that
//! load and a branch), `UNINIT` before the environment has been read,
//! otherwise the set of clocks to read. The first call of the process goes
//! through the cold path to `runtime`, which reads the configuration.

use std::sync::atomic::Ordering;

use crate::runtime::mode;
use crate::setup::MODE;
use crate::sys::clock;
use crate::tree::bits;
use crate::tree::node::Node;
use crate::tree::site::Site;
use crate::tree::spans::SpanState;
use crate::tree::thread;

/// An entered activation, handed back to [`exit`]. Opaque: it is only ever
/// compared with the top of the thread's stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token(*const Node);

impl Token {
    /// The token of an enter that did nothing (Dr.Hook off).
    pub const NONE: Token = Token(std::ptr::null());

    /// Whether this token refers to an activation.
    #[inline]
    pub fn is_active(self) -> bool {
        !self.0.is_null()
    }

    /// The token as a number (to keep it where a pointer cannot be kept,
    /// e.g. across a C interface). Only ever compared, never dereferenced.
    #[inline]
    pub fn to_bits(self) -> u64 {
        self.0 as usize as u64
    }

    /// The token [`Token::to_bits`] gave.
    #[inline]
    pub fn from_bits(bits: u64) -> Token {
        Token(std::ptr::without_provenance(bits as usize))
    }
}

/// Enters the routine of `site` on the calling thread.
///
/// Only the off test is inlined into the instrumented function; the rest is
/// one out-of-line call, so that an instrumented function does not carry the
/// engine's register pressure (and prologue) when Dr.Hook is off.
#[inline(always)]
pub fn enter(site: &'static Site) -> Token {
    let mode = MODE.load(Ordering::Relaxed);
    if mode == 0 {
        return Token::NONE;
    }
    enter_on(site, mode)
}

/// Out of line: only the off test is inlined into instrumented functions.
/// The thread-local read is an initial-exec access (`tls.rs`), so this
/// path makes no call and saves no registers.
#[inline(never)]
fn enter_on(site: &'static Site, mode: u32) -> Token {
    // Before initialisation no thread has a tree, so this also catches UNINIT.
    let td = thread::current();
    if td.is_null() {
        return enter_cold(site);
    }
    // SAFETY: `td` is the calling thread's own tree.
    Token(unsafe { (*td).enter(site, site.raw_id(), mode) })
}

#[cold]
#[inline(never)]
fn enter_cold(site: &'static Site) -> Token {
    let mode = mode();
    if mode == 0 {
        return Token::NONE;
    }
    let td = thread::register_current(mode, clock::wall(mode & bits::WALL_MONO != 0));
    // SAFETY: `td` is the calling thread's own tree.
    Token(unsafe { td.enter(site, site.raw_id(), mode) })
}

/// Leaves the activation `token`, attaching `size` (0 = none).
#[inline(always)]
pub fn exit(token: Token, size: u64) {
    if token.0.is_null() {
        return;
    }
    // `size` is usually a compile-time 0 here (a guard without set_size).
    if size == 0 {
        exit_on(token)
    } else {
        exit_sized(token, size)
    }
}

/// Out of line, as `enter_on`. The mode word comes from the thread's tree
/// (the same value as `MODE`, in the cache line of the top of the stack).
#[inline(never)]
fn exit_on(token: Token) {
    let td = thread::current();
    if td.is_null() {
        return exit_without_tree(token);
    }
    // SAFETY: `td` is the calling thread's own tree; the token is only compared.
    unsafe { (*td).exit(token.0, 0, (*td).mode()) }
}

#[inline(never)]
fn exit_sized(token: Token, size: u64) {
    let td = thread::current();
    if td.is_null() {
        return exit_without_tree(token);
    }
    // SAFETY: as in `exit_on`.
    unsafe { (*td).exit(token.0, size, (*td).mode()) }
}

// --- resumable activations: futures and spans -----------------------------

/// Enters `site` for an activation that resumes an earlier call of it (a
/// later poll of an instrumented future, a re-entered tracing span): like
/// [`enter`], but not counted as a call. `suspended_since` is the stamp
/// [`exit_stamped`] returned when the call's previous activation ended (on
/// any thread); the wall time in between counts in the routine's total
/// time, not in its self time. 0 means unknown (nothing is added).
///
/// So for a call made of several activations, the profile shows one call,
/// self time = the time spent in its activations (minus children), total
/// time = from the start of the first activation to the end of the last.
#[inline]
pub fn resume(site: &'static Site, suspended_since: u64) -> Token {
    let mode = MODE.load(Ordering::Relaxed);
    if mode == 0 {
        return Token::NONE;
    }
    resume_on(site, mode, suspended_since)
}

#[inline(never)]
fn resume_on(site: &'static Site, mode: u32, suspended_since: u64) -> Token {
    let mut td = thread::current();
    if td.is_null() {
        // First instrumented call of this thread (a future migrated here).
        if mode & bits::UNINIT != 0 {
            let token = enter_cold(site);
            // An uninitialised engine cannot have had a previous activation.
            return token;
        }
        td = thread::register_current(mode, clock::wall(mode & bits::WALL_MONO != 0));
    }
    // SAFETY: `td` is the calling thread's own tree.
    Token(unsafe { (*td).resume(site, site.raw_id(), mode, suspended_since) })
}

/// As [`exit`], returning the wall-clock stamp of the exit for a later
/// [`resume`] (0 when wall time is not measured or Dr.Hook is off).
#[inline]
pub fn exit_stamped(token: Token, size: u64) -> u64 {
    if token.0.is_null() {
        return 0;
    }
    exit_stamped_on(token, size)
}

#[inline(never)]
fn exit_stamped_on(token: Token, size: u64) -> u64 {
    let td = thread::current();
    if td.is_null() {
        exit_without_tree(token);
        return 0;
    }
    // SAFETY: `td` is the calling thread's own tree; the token is only compared.
    unsafe { (*td).exit_stamped(token.0, size, (*td).mode()) }
}

/// Leaves `token` if it is on the calling thread's stack, first closing
/// whatever was entered after it and not left yet; does nothing otherwise.
/// Never reports a mismatch. Returns the exit's stamp as
/// [`exit_stamped`] does (0 if nothing was left). For front doors whose
/// regions need not nest (tracing spans); their sites should come from
/// [`crate::site_for_span`], so that a strict exit (a guard, C, Fortran)
/// below them closes them silently too.
#[inline]
pub fn exit_lenient(token: Token) -> u64 {
    if token.0.is_null() {
        return 0;
    }
    exit_lenient_on(token)
}

#[inline(never)]
fn exit_lenient_on(token: Token) -> u64 {
    let td = thread::current();
    if td.is_null() {
        return 0;
    }
    // SAFETY: `td` is the calling thread's own tree; the token is only compared.
    unsafe { (*td).exit_lenient(token.0, (*td).mode()) }
}

// --- tracing spans ----------------------------------------------------------

/// Enters an activation of tracing span `id` on the calling thread: a
/// first activation counts a call, a later one (after an exit on any
/// thread, recorded in `state`) resumes it, as [`resume`] does. The
/// activation is kept on the thread's span stack, so that [`exit_span`]
/// needs only the id. Inlined into the layer's callback: its fast path
/// makes no call, every other case is one tail call.
#[cfg_attr(not(feature = "tracing"), allow(dead_code))]
#[inline(always)]
pub(crate) fn enter_span(site: &'static Site, id: u64, state: &'static SpanState) {
    // A thread has a tree only when Dr.Hook is on: no tree (off, not
    // initialised, first call of the thread) is the cold path's question.
    let td = thread::current();
    if td.is_null() {
        return enter_span_cold(site, id, state);
    }
    // SAFETY: `td` is the calling thread's own tree.
    unsafe { (*td).enter_span(site, id, state, (*td).mode()) }
}

#[cfg_attr(not(feature = "tracing"), allow(dead_code))]
#[cold]
#[inline(never)]
fn enter_span_cold(site: &'static Site, id: u64, state: &'static SpanState) {
    let mode = mode();
    if mode == 0 {
        return;
    }
    let td = thread::register_current(mode, clock::wall(mode & bits::WALL_MONO != 0));
    // SAFETY: `td` is the calling thread's own tree.
    unsafe { td.enter_span(site, id, state, mode) }
}

/// Leaves the activation of tracing span `id` on the calling thread if it
/// is entered there, as [`exit_lenient`] does (first closing whatever was
/// entered after it; never a mismatch), and records the exit's stamp in
/// the span's state for a later resumption.
#[cfg_attr(not(feature = "tracing"), allow(dead_code))]
#[inline(always)]
pub(crate) fn exit_span(id: u64) {
    let td = thread::current();
    if td.is_null() {
        return;
    }
    // SAFETY: `td` is the calling thread's own tree.
    unsafe { (*td).exit_span(id, (*td).mode()) }
}

// --- callers that name the routine at exit, not the activation ---------

/// The 64-bit handle of the calling thread's innermost activation when it
/// is one of `site` (0 otherwise: Dr.Hook off, no tree, nothing active, or
/// another routine on top). For front doors whose exit names the routine
/// instead of presenting a handle (`__cyg_profile_func_exit`): the handle
/// then goes to [`exit_handle_fast`] / [`exit_handle`]. Makes no call.
#[inline(always)]
pub fn top_handle_of(site: &'static Site) -> u64 {
    let td = thread::current();
    if td.is_null() {
        return 0;
    }
    // SAFETY: `td` is the calling thread's own tree; `current` is a node of
    // its arena (or null).
    unsafe {
        let top = (*td).current();
        if top.is_null() || !std::ptr::eq((*top).site, site) {
            return 0;
        }
        (*top).handle64()
    }
}

/// Calls and mean inclusive seconds per completed call of the calling
/// thread's innermost activation's node (wall time when measured, else
/// CPU time); None when nothing is active or Dr.Hook is not running. For
/// throttling decisions (cold: reads the clock rate).
pub fn top_figures() -> Option<(u64, f64)> {
    let e = crate::setup::engine_if_ready()?;
    let td = thread::current();
    if td.is_null() {
        return None;
    }
    // SAFETY: as in `top_handle_of`.
    let top = unsafe { (*td).current().as_ref() }?;
    if top.site.is_null() {
        return None;
    }
    let calls = top.calls.load(Ordering::Relaxed);
    let done = calls.saturating_sub(1).max(1) as f64;
    let secs = if e.mode & bits::WALL != 0 {
        let tps =
            clock::ticks_per_second(e.wall_source, e.start, clock::ClockPair::now(e.wall_source));
        top.wall_incl.load(Ordering::Relaxed) as f64 / tps
    } else {
        top.cpu_incl.load(Ordering::Relaxed) as f64 * 1e-9
    };
    Some((calls, secs / done))
}

// --- foreign callers: handles instead of tokens ---------------------------

/// Enters `site` for a foreign caller (C, Fortran) and returns the 64-bit
/// handle that [`exit_handle`] checks (see [`crate::handle`]); 0 when
/// Dr.Hook is off. Inlined into the caller: the fast path makes no calls.
#[inline(always)]
pub fn enter_handle(site: &'static Site) -> u64 {
    enter_handle_any(site, true)
}

/// As [`enter_handle`], for 4-byte handles.
#[inline(always)]
pub fn enter_handle32(site: &'static Site) -> u32 {
    enter_handle_any(site, false) as u32
}

#[inline(always)]
fn enter_handle_any(site: &'static Site, wide: bool) -> u64 {
    let mode = MODE.load(Ordering::Relaxed);
    if mode == 0 {
        return 0;
    }
    let td = thread::current();
    if td.is_null() {
        return enter_handle_cold(site, wide);
    }
    // SAFETY: `td` is the calling thread's own tree.
    unsafe { (*td).enter_handle(site, site.raw_id(), mode, wide) }
}

/// The part of [`enter_handle`] that makes no call and cannot panic:
/// `Some(handle)` when done, `None` when [`enter_handle`] is needed (Dr.Hook
/// off or not initialised, first call of the site on this thread or under
/// this parent, a slow clock). For foreign entry points that keep their
/// panic guard off the fast path. A thread has a tree only when Dr.Hook is
/// on, so the mode word comes from the tree.
#[inline(always)]
pub fn enter_handle_fast(site: &'static Site, wide: bool) -> Option<u64> {
    let td = thread::current();
    if td.is_null() {
        return None;
    }
    // SAFETY: `td` is the calling thread's own tree.
    unsafe { (*td).enter_handle_fast(site.raw_id(), (*td).mode(), wide) }
}

/// The enter of a foreign caller when the mode calls stampers that cannot
/// panic (`memprof`): no panic guard needed, for the slow path of an entry
/// point to try before its guard (inlined there). `None` when the full
/// path ([`enter_handle`]) is needed.
#[inline(always)]
pub fn enter_handle_stamped(site: &'static Site, wide: bool) -> Option<u64> {
    let td = thread::current();
    if td.is_null() {
        return None;
    }
    // SAFETY: `td` is the calling thread's own tree.
    unsafe { (*td).enter_handle_stamped(site.raw_id(), (*td).mode(), wide) }
}

/// As [`enter_handle_stamped`] for the exit: true when the handle was the
/// top of the stack and has been left (with `size` > 0 added to the
/// routine's size statistics), false when [`exit_handle`] is needed.
#[inline(always)]
pub fn exit_handle_stamped(handle: u64, wide: bool, size: u64) -> bool {
    let td = thread::current();
    if td.is_null() {
        return false;
    }
    // SAFETY: `td` is the calling thread's own tree; the handle is only compared.
    unsafe { (*td).exit_handle_stamped(handle, wide, size, (*td).mode()) }
}

/// The part of [`exit_handle`] that makes no call and cannot panic: true
/// when the handle was the top of the stack and has been left (or is 0),
/// false when [`exit_handle`] is needed (sizes, slow clocks, strict
/// regions, a mismatch).
#[inline(always)]
pub fn exit_handle_fast(handle: u64, wide: bool) -> bool {
    exit_handle_try(handle, wide, 0)
}

/// As [`exit_handle_fast`] for a 64-bit handle that the caller knows is
/// not 0 (the C macros call their exit only with the handle their enter
/// returned, when it is not 0): no zero test.
///
/// # Safety
/// `handle != 0`: 0 is the root's handle, which this would close.
#[inline(always)]
pub unsafe fn exit_handle_fast_nonzero(handle: u64) -> bool {
    // SAFETY: caller contract.
    unsafe { exit_top_try(handle, true, 0) }
}

#[inline(always)]
fn exit_handle_try(handle: u64, wide: bool, size: u64) -> bool {
    if handle == 0 {
        return true;
    }
    // SAFETY: `handle != 0`.
    unsafe { exit_top_try(handle, wide, size) }
}

/// The call-free exit of a non-zero handle.
///
/// # Safety
/// `handle != 0` (the root's handle).
#[inline(always)]
unsafe fn exit_top_try(handle: u64, wide: bool, size: u64) -> bool {
    let td = thread::current();
    if td.is_null() {
        return false;
    }
    // SAFETY: `td` is the calling thread's own tree; the handle is only
    // compared, and it is not the root's (caller contract).
    unsafe {
        let mode = (*td).mode();
        mode & (bits::SYSCALL_CLOCKS | bits::STRICT) == 0
            && (*td).exit_handle_fast(handle, wide, size, mode)
    }
}

#[cold]
#[inline(never)]
fn enter_handle_cold(site: &'static Site, wide: bool) -> u64 {
    let token = enter_cold(site);
    let td = thread::current();
    if token.0.is_null() || td.is_null() {
        return 0;
    }
    // SAFETY: the token was just returned by this thread's enter.
    unsafe {
        if wide {
            (*td).top_handle64(token.0)
        } else {
            (*token.0).handle32() as u64
        }
    }
}

/// Leaves the activation designated by a 64-bit handle from
/// [`enter_handle`]. `site` is the routine named by the exit call, used in
/// diagnostics and, with `DR_HOOK_STRICT_REGIONS`, checked against the
/// routine being left. A handle that does not designate the top of the
/// calling thread's stack is reported through [`crate::mismatch`]; it is
/// never dereferenced.
#[inline(always)]
pub fn exit_handle(handle: u64, size: u64, site: Option<&'static Site>) {
    exit_handle_lazy(handle, size, || site);
}

/// As [`exit_handle`], with the exit's routine name computed only when it
/// is needed (a mismatch, `DR_HOOK_STRICT_REGIONS`, or a slow clock): the
/// common path then does no name lookup at all.
#[inline(always)]
pub fn exit_handle_lazy(handle: u64, size: u64, site: impl FnOnce() -> Option<&'static Site>) {
    exit_handle_any(handle, true, size, site);
}

/// As [`exit_handle`], for 4-byte handles from [`enter_handle32`].
#[inline(always)]
pub fn exit_handle32(handle: u32, size: u64, site: Option<&'static Site>) {
    exit_handle_any(handle as u64, false, size, || site);
}

/// As [`exit_handle_lazy`], for 4-byte handles.
#[inline(always)]
pub fn exit_handle32_lazy(handle: u32, size: u64, site: impl FnOnce() -> Option<&'static Site>) {
    exit_handle_any(handle as u64, false, size, site);
}

#[inline(always)]
fn exit_handle_any<F: FnOnce() -> Option<&'static Site>>(
    handle: u64,
    wide: bool,
    size: u64,
    site: F,
) {
    if exit_handle_try(handle, wide, size) {
        return;
    }
    // One call, in tail position: the fast path above keeps no registers.
    exit_handle_slow(handle, wide, size, site);
}

#[inline(never)]
fn exit_handle_slow<F: FnOnce() -> Option<&'static Site>>(
    handle: u64,
    wide: bool,
    size: u64,
    site: F,
) {
    exit_handle_checked(handle, wide, size, site());
}

/// The general exit of a foreign handle: slow clocks, strict regions,
/// mismatches.
#[inline(never)]
fn exit_handle_checked(handle: u64, wide: bool, size: u64, site: Option<&'static Site>) {
    let mode = MODE.load(Ordering::Relaxed);
    let td = thread::current();
    if td.is_null() {
        return exit_without_tree(Token(std::ptr::null()));
    }
    // SAFETY: `td` is the calling thread's own tree; the handle is only compared.
    unsafe { (*td).exit_handle(handle, wide, size, mode, site, mode & bits::STRICT != 0) }
}

/// Installs the function that proposes each thread's number at its first
/// instrumented call, e.g. `omp_get_thread_num() + 1` so that `@tid` in the
/// profile matches OpenMP thread numbers. A proposal already used by
/// another thread (nested parallel regions, plain pthreads) is replaced by a
/// fresh number: two threads never share one. Without a hint, the main
/// thread is 1 and the others are numbered in order of first call.
pub fn set_thread_number_hint(hint: fn() -> Option<u32>) {
    thread::set_thread_number_hint(hint);
}

/// Dr.Hook thread number of the calling thread, if it has entered a routine.
pub fn current_thread_number() -> Option<u32> {
    let td = thread::current();
    // SAFETY: the calling thread's own tree (freed only once the thread ended it).
    (!td.is_null()).then(|| unsafe { (*td).tid })
}

#[cold]
#[inline(never)]
fn exit_without_tree(token: Token) {
    crate::tree::mismatch::report(&crate::tree::mismatch::Mismatch {
        tid: 0,
        leaving: None,
        top: None,
        on_stack: false,
        open_above: 0,
        token: token.0 as usize as u64,
        expected: 0,
        name_differs: false,
    });
}

/// Bytes allocated for the calling thread's tree (nodes, lookup tables and
/// bookkeeping), or `None` before its first instrumented call. Used by the
/// memory benchmark and tests.
pub fn thread_tree_bytes() -> Option<usize> {
    let td = thread::current();
    // SAFETY: the calling thread's own tree (freed only once the thread ended it).
    (!td.is_null()).then(|| unsafe { (*td).allocated_bytes() })
}

/// Whether Dr.Hook is on (reads the environment on first use).
pub use crate::runtime::is_enabled;
