//! `dlopen` and `dlclose`: a jump to the real `dlopen` unless a monitor
//! wants the event (so the library search is the caller's own), the real
//! call then the monitors otherwise.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::atomic::{AtomicPtr, Ordering};

use crate::events::{self, Events};
use crate::real::{self, slots};
use crate::sys::{errno, set_errno};

/// The real `dlopen` for the fast path (see [`crate::interpose!`]).
#[doc(hidden)]
pub static DLOPEN_REAL: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

/// At library load: what the fast paths need before any call.
pub(crate) fn resolve_early() {
    if real::link_mode() {
        return;
    }
    if let Some(p) = slots::DLOPEN.get() {
        DLOPEN_REAL.store(p, Ordering::Release);
    }
}

unsafe extern "C" {
    fn drhook_attach_c_pre_main();
}

/// `dlopen` when a monitor wants it (or the real one is not known yet,
/// before the library's constructor; a `dlopen` before `main` also starts
/// the tools that see such events):
/// the real call, then the monitors. The fast path (nobody wants
/// `dlopen`) jumps to the real `dlopen` directly, so the library search
/// is the caller's own (its `RUNPATH`).
///
/// # Safety
/// As `dlopen(3)`.
pub unsafe extern "C" fn dlopen_slow(file: *const c_char, flags: c_int) -> *mut c_void {
    if super::start::before_main() {
        // A library's constructor: the tools that see it start first
        // (`c/pre_main.c`, which calls the `pre_main` tools of
        // `interpose!`).
        // SAFETY: a C function without arguments.
        unsafe { drhook_attach_c_pre_main() };
    }
    // SAFETY: NUL-terminated when not null.
    let name = (!file.is_null()).then(|| unsafe { CStr::from_ptr(file) });
    events::each(Events::DLOPEN, |m| m.pre_dlopen(name, flags));
    // SAFETY: caller contract.
    let h = unsafe { real::dlopen(file, flags) };
    if !h.is_null() {
        let e = errno();
        events::each(Events::DLOPEN, |m| m.dlopen(name, flags, h));
        set_errno(e);
    }
    h
}

/// `dlclose`.
///
/// # Safety
/// As `dlclose(3)`.
pub unsafe fn dlclose(handle: *mut c_void) -> c_int {
    events::each(Events::DLOPEN, |m| m.dlclose(handle));
    // SAFETY: caller contract.
    let r = unsafe { real::dlclose(handle) };
    if events::interest().contains(Events::DLOPEN) {
        let e = errno();
        events::each(Events::DLOPEN, |m| m.post_dlclose(handle, r));
        set_errno(e);
    }
    r
}

/// The `dlopen` fast path: a jump to the real `dlopen` (the caller's
/// return address stays on the stack, so `dlopen` searches as the caller
/// would) unless a monitor wants `dlopen` events.
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
#[doc(hidden)]
pub unsafe extern "C" fn dlopen_fast() {
    std::arch::naked_asm!(
        "mov eax, dword ptr [rip + {interest}]",
        "test eax, 16",
        "jnz 2f",
        "mov rax, qword ptr [rip + {real}]",
        "test rax, rax",
        "jz 2f",
        "jmp rax",
        "2:",
        "jmp {slow}",
        interest = sym crate::events::INTEREST,
        real = sym DLOPEN_REAL,
        slow = sym dlopen_slow,
    )
}

/// As the x86-64 version.
#[cfg(target_arch = "aarch64")]
#[unsafe(naked)]
#[doc(hidden)]
pub unsafe extern "C" fn dlopen_fast() {
    std::arch::naked_asm!(
        "adrp x16, {interest}",
        "ldr w16, [x16, :lo12:{interest}]",
        "tbnz w16, #4, 2f",
        "adrp x16, {real}",
        "ldr x16, [x16, :lo12:{real}]",
        "cbz x16, 2f",
        "br x16",
        "2:",
        "b {slow}",
        interest = sym crate::events::INTEREST,
        real = sym DLOPEN_REAL,
        slow = sym dlopen_slow,
    )
}
