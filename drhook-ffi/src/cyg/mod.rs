//! Compiler hooks: `__cyg_profile_func_enter` / `__cyg_profile_func_exit`,
//! which code compiled with `-finstrument-functions` (gcc, g++, gfortran,
//! clang, flang) calls at the entry and exit of every function. Each
//! function becomes a region of the same engine and tree as the `DR_HOOK`
//! calls (a code that has both gets one tree), named after its symbol
//! ([`naming`]), resolved once per address and kept in a lock-free table
//! ([`table`]); tiny hot functions stop being timed ([`throttle`]).
//!
//! Dr.Hook off (`drhook_lhook` 0): one load and a branch in each hook. The hot path (a
//! function seen before): the table's home slot (a
//! multiply, a shift, three loads), a plain counter update, and the
//! engine's call-free handle enter; at exit the home slot again, the
//! engine's top-of-stack check and call-free exit. The exit names the
//! function, not an activation: it leaves the innermost activation when it
//! is this function's, and does nothing otherwise (a function not timed:
//! excluded, throttled, or entered while Dr.Hook was off).
//!
//! A `longjmp` out of instrumented functions skips their exits: their
//! activations stay open until the profile is written, and the functions
//! entered afterwards are counted beneath them.
//!
//! glibc defines both as empty functions; `libdrhook` (linked before the C
//! library) and the preload library take their place.

pub mod naming;
pub mod table;
pub mod throttle;

use std::cell::Cell;
use std::ffi::c_void;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use drhook::Site;

use crate::boundary::guard;
use crate::switch::lhook;
use table::{Entry, OFF};

/// Entry of a function compiled with `-finstrument-functions`.
///
/// # Safety
/// Called by compiled code with the function's address.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __cyg_profile_func_enter(func: *mut c_void, call_site: *mut c_void) {
    let _ = call_site;
    // Dr.Hook off (`drhook_lhook`, the C macros' switch: 1 until the
    // environment is read, then 0 when off): one load and a branch; the
    // rest out of line, so that this path saves no register.
    if lhook().load(Ordering::Relaxed) == 0 {
        return;
    }
    enter_on(func as usize)
}

#[inline(never)]
fn enter_on(addr: usize) {
    if let Some(e) = table::first(addr) {
        let c = e.ctl.load(Ordering::Relaxed);
        if c & OFF != 0 {
            return;
        }
        if let Some(site) = e.site() {
            e.ctl.store(c + 1, Ordering::Relaxed);
            if c & throttle::CHECK != throttle::CHECK
                && drhook::engine::enter_handle_fast(site, true).is_some()
            {
                return;
            }
            return enter_slow(e, site, c & throttle::CHECK == throttle::CHECK);
        }
    }
    enter_cold(addr)
}

/// Exit of a function compiled with `-finstrument-functions`.
///
/// # Safety
/// Called by compiled code with the function's address.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __cyg_profile_func_exit(func: *mut c_void, call_site: *mut c_void) {
    let _ = call_site;
    if lhook().load(Ordering::Relaxed) == 0 {
        return;
    }
    exit_on(func as usize)
}

#[inline(never)]
fn exit_on(addr: usize) {
    let site = match table::first(addr) {
        Some(e) => e.site(),
        None => site_elsewhere(addr),
    };
    let Some(site) = site else { return };
    let h = drhook::engine::top_handle_of(site);
    if h == 0 || drhook::engine::exit_handle_fast(h, true) {
        return;
    }
    exit_slow(h, site)
}

#[inline(never)]
fn site_elsewhere(addr: usize) -> Option<&'static Site> {
    table::find(addr).and_then(Entry::site)
}

#[inline(never)]
fn exit_slow(h: u64, site: &'static Site) {
    // With `memprof` (stampers that cannot panic), before the guard.
    if drhook::engine::exit_handle_stamped(h, true, 0) {
        return;
    }
    guard("__cyg_profile_func_exit", (), || {
        drhook::engine::exit_handle(h, 0, Some(site))
    })
}

/// The enter of a known function when the call-free path did not do it
/// (Dr.Hook not started or off, the function's first call under this
/// parent, a slow clock, a throttling check due).
#[inline(never)]
fn enter_slow(e: &'static Entry, site: &'static Site, check: bool) {
    if !check && drhook::engine::enter_handle_stamped(site, true).is_some() {
        return;
    }
    guard("__cyg_profile_func_enter", (), || {
        if !crate::init::ensure() {
            return;
        }
        if drhook::engine::enter_handle(site) != 0 && check {
            throttle::check(e);
        }
    })
}

thread_local! {
    /// This thread is resolving a function's name: the calls that makes
    /// (an instrumented allocator, ...) are not timed.
    static RESOLVING: Cell<bool> = const { Cell::new(false) };
}

/// First call of a function (or one the table had no room for).
#[cold]
#[inline(never)]
fn enter_cold(addr: usize) {
    guard("__cyg_profile_func_enter", (), || {
        if !crate::init::ensure() || RESOLVING.with(Cell::get) {
            return;
        }
        let Some((e, new)) = table::claim(addr) else {
            static SAID: AtomicBool = AtomicBool::new(false);
            if !SAID.swap(true, Ordering::Relaxed) {
                drhook::diag::emit(
                    "__cyg_profile_func_enter",
                    file!(),
                    line!(),
                    &format!(
                        "Warning - more than {} functions compiled with -finstrument-functions: the others are not timed",
                        table::CAPACITY
                    ),
                );
            }
            return;
        };
        if new {
            resolve(e, addr);
        }
        // Another thread resolving it: wait for the name.
        let site = loop {
            if let Some(s) = e.site() {
                break s;
            }
            std::thread::yield_now();
        };
        let c = e.ctl.load(Ordering::Relaxed);
        if c & OFF == 0 {
            e.ctl.store(c + 1, Ordering::Relaxed);
            drhook::engine::enter_handle(site);
        }
    })
}

/// Names the function at `addr` and publishes its site in `e`.
fn resolve(e: &'static Entry, addr: usize) {
    static HEADER: Once = Once::new();
    HEADER.call_once(|| drhook::set_header_lines(throttle::header_lines));
    RESOLVING.with(|r| r.set(true));
    // A site is published whatever happens (other threads wait for it).
    let name = std::panic::catch_unwind(|| naming::region_name(addr))
        .unwrap_or_else(|_| format!("{addr:#x}"));
    if std::panic::catch_unwind(|| naming::excluded(&name)).unwrap_or(false) {
        e.ctl.fetch_or(OFF, Ordering::Relaxed);
    }
    let site = drhook::site_for_name(&name, None);
    RESOLVING.with(|r| r.set(false));
    e.site
        .store(site as *const Site as *mut Site, Ordering::Release);
}
