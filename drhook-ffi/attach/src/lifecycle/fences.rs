//! The bottom frame of every stack the program sees: `main` and each
//! thread's start routine are called from a small function written in
//! assembly (with its unwind information), whose extent and call
//! instruction are known exactly. libmonitor marks the same places with
//! labels ("fences") in its `monitor_main` and `monitor_begin_thread`, and
//! a tool's unwinder (HPCToolkit's) asks for them:
//! `monitor_unwind_process_bottom_frame` / `_thread_bottom_frame` (an
//! address anywhere in the function), `monitor_in_start_func_wide` (the
//! same) and `monitor_in_start_func_narrow` (the call itself, where the
//! return address of `main` or of the start routine points).
//!
//! On x86_64 and aarch64; elsewhere `main` and the start routine are
//! called from Rust and the questions answer 0.

use std::ffi::{c_char, c_int, c_void};

use super::start::MainFn;
use super::threads::StartFn;

#[cfg(target_arch = "x86_64")]
std::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl drhook_attach_call_main",
    ".hidden drhook_attach_call_main",
    ".type drhook_attach_call_main,@function",
    ".globl drhook_attach_main_fence1, drhook_attach_main_fence2, drhook_attach_main_fence3, drhook_attach_main_fence4",
    ".hidden drhook_attach_main_fence1, drhook_attach_main_fence2, drhook_attach_main_fence3, drhook_attach_main_fence4",
    // (main, argc, argv, envp) -> main(argc, argv, envp)
    "drhook_attach_call_main:",
    "drhook_attach_main_fence1:",
    ".cfi_startproc",
    "pushq %rbp",
    ".cfi_def_cfa_offset 16",
    ".cfi_offset %rbp, -16",
    "movq %rsp, %rbp",
    ".cfi_def_cfa_register %rbp",
    "movq %rdi, %rax",
    "movl %esi, %edi",
    "movq %rdx, %rsi",
    "movq %rcx, %rdx",
    "drhook_attach_main_fence2:",
    "callq *%rax",
    "drhook_attach_main_fence3:",
    "popq %rbp",
    ".cfi_def_cfa %rsp, 8",
    "retq",
    ".cfi_endproc",
    "drhook_attach_main_fence4:",
    ".size drhook_attach_call_main, . - drhook_attach_call_main",
    ".p2align 4",
    ".globl drhook_attach_call_start",
    ".hidden drhook_attach_call_start",
    ".type drhook_attach_call_start,@function",
    ".globl drhook_attach_thread_fence1, drhook_attach_thread_fence2, drhook_attach_thread_fence3, drhook_attach_thread_fence4",
    ".hidden drhook_attach_thread_fence1, drhook_attach_thread_fence2, drhook_attach_thread_fence3, drhook_attach_thread_fence4",
    // (start, arg) -> start(arg)
    "drhook_attach_call_start:",
    "drhook_attach_thread_fence1:",
    ".cfi_startproc",
    "pushq %rbp",
    ".cfi_def_cfa_offset 16",
    ".cfi_offset %rbp, -16",
    "movq %rsp, %rbp",
    ".cfi_def_cfa_register %rbp",
    "movq %rdi, %rax",
    "movq %rsi, %rdi",
    "drhook_attach_thread_fence2:",
    "callq *%rax",
    "drhook_attach_thread_fence3:",
    "popq %rbp",
    ".cfi_def_cfa %rsp, 8",
    "retq",
    ".cfi_endproc",
    "drhook_attach_thread_fence4:",
    ".size drhook_attach_call_start, . - drhook_attach_call_start",
    options(att_syntax)
);

#[cfg(target_arch = "aarch64")]
std::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl drhook_attach_call_main",
    ".hidden drhook_attach_call_main",
    ".type drhook_attach_call_main,%function",
    ".globl drhook_attach_main_fence1, drhook_attach_main_fence2, drhook_attach_main_fence3, drhook_attach_main_fence4",
    ".hidden drhook_attach_main_fence1, drhook_attach_main_fence2, drhook_attach_main_fence3, drhook_attach_main_fence4",
    "drhook_attach_call_main:",
    "drhook_attach_main_fence1:",
    ".cfi_startproc",
    "stp x29, x30, [sp, #-16]!",
    ".cfi_def_cfa_offset 16",
    ".cfi_offset x29, -16",
    ".cfi_offset x30, -8",
    "mov x29, sp",
    "mov x9, x0",
    "mov w0, w1",
    "mov x1, x2",
    "mov x2, x3",
    "drhook_attach_main_fence2:",
    "blr x9",
    "drhook_attach_main_fence3:",
    "ldp x29, x30, [sp], #16",
    ".cfi_def_cfa_offset 0",
    ".cfi_restore x29",
    ".cfi_restore x30",
    "ret",
    ".cfi_endproc",
    "drhook_attach_main_fence4:",
    ".size drhook_attach_call_main, . - drhook_attach_call_main",
    ".p2align 4",
    ".globl drhook_attach_call_start",
    ".hidden drhook_attach_call_start",
    ".type drhook_attach_call_start,%function",
    ".globl drhook_attach_thread_fence1, drhook_attach_thread_fence2, drhook_attach_thread_fence3, drhook_attach_thread_fence4",
    ".hidden drhook_attach_thread_fence1, drhook_attach_thread_fence2, drhook_attach_thread_fence3, drhook_attach_thread_fence4",
    "drhook_attach_call_start:",
    "drhook_attach_thread_fence1:",
    ".cfi_startproc",
    "stp x29, x30, [sp, #-16]!",
    ".cfi_def_cfa_offset 16",
    ".cfi_offset x29, -16",
    ".cfi_offset x30, -8",
    "mov x29, sp",
    "mov x9, x0",
    "mov x0, x1",
    "drhook_attach_thread_fence2:",
    "blr x9",
    "drhook_attach_thread_fence3:",
    "ldp x29, x30, [sp], #16",
    ".cfi_def_cfa_offset 0",
    ".cfi_restore x29",
    ".cfi_restore x30",
    "ret",
    ".cfi_endproc",
    "drhook_attach_thread_fence4:",
    ".size drhook_attach_call_start, . - drhook_attach_call_start",
);

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
mod asm {
    use super::*;
    unsafe extern "C-unwind" {
        pub fn drhook_attach_call_main(
            main: MainFn,
            argc: c_int,
            argv: *mut *mut c_char,
            envp: *mut *mut c_char,
        ) -> c_int;
        pub fn drhook_attach_call_start(start: StartFn, arg: *mut c_void) -> *mut c_void;
    }
    unsafe extern "C" {
        pub static drhook_attach_main_fence1: u8;
        pub static drhook_attach_main_fence2: u8;
        pub static drhook_attach_main_fence3: u8;
        pub static drhook_attach_main_fence4: u8;
        pub static drhook_attach_thread_fence1: u8;
        pub static drhook_attach_thread_fence2: u8;
        pub static drhook_attach_thread_fence3: u8;
        pub static drhook_attach_thread_fence4: u8;
    }

    /// `(fence1, fence2, fence3, fence4)` of the main and thread shims.
    pub fn fences(thread: bool) -> [usize; 4] {
        // Only the labels' addresses are taken (no read): safe.
        if thread {
            [
                &raw const drhook_attach_thread_fence1 as usize,
                &raw const drhook_attach_thread_fence2 as usize,
                &raw const drhook_attach_thread_fence3 as usize,
                &raw const drhook_attach_thread_fence4 as usize,
            ]
        } else {
            [
                &raw const drhook_attach_main_fence1 as usize,
                &raw const drhook_attach_main_fence2 as usize,
                &raw const drhook_attach_main_fence3 as usize,
                &raw const drhook_attach_main_fence4 as usize,
            ]
        }
    }
}

/// Calls the program's `main` from the bottom frame.
///
/// # Safety
/// `main` is the program's, with its own arguments.
#[inline(always)]
pub unsafe fn call_main(
    main: MainFn,
    argc: c_int,
    argv: *mut *mut c_char,
    envp: *mut *mut c_char,
) -> c_int {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    // SAFETY: the shim calls `main` with the same arguments and returns
    // its result; the caller's contract.
    unsafe {
        asm::drhook_attach_call_main(main, argc, argv, envp)
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    // SAFETY: the caller's contract.
    unsafe {
        main(argc, argv, envp)
    }
}

/// Calls a thread's start routine from the bottom frame.
///
/// # Safety
/// `start` is the program's start routine, `arg` its argument.
#[inline(always)]
pub unsafe fn call_start(start: StartFn, arg: *mut c_void) -> *mut c_void {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    // SAFETY: the shim calls `start(arg)` and returns its result; the
    // caller's contract.
    unsafe {
        asm::drhook_attach_call_start(start, arg)
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    // SAFETY: the caller's contract.
    unsafe {
        start(arg)
    }
}

fn within(addr: usize, thread: bool, narrow: bool) -> bool {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    {
        let f = asm::fences(thread);
        let (lo, hi) = if narrow { (f[1], f[2]) } else { (f[0], f[3]) };
        lo <= addr && addr <= hi
    }
    #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let _ = (addr, thread, narrow);
        false
    }
}

/// `monitor_unwind_process_bottom_frame`: `addr` is in the function that
/// calls `main`.
pub fn in_main_bottom(addr: usize) -> bool {
    within(addr, false, false)
}

/// `monitor_unwind_thread_bottom_frame`: `addr` is in the function that
/// calls a thread's start routine.
pub fn in_thread_bottom(addr: usize) -> bool {
    within(addr, true, false)
}

/// `monitor_in_start_func_wide` (`narrow` false: anywhere in either
/// bottom function) and `_narrow` (the call of `main` or of the start
/// routine, up to its return address).
pub fn in_start_func(addr: usize, narrow: bool) -> bool {
    within(addr, false, narrow) || within(addr, true, narrow)
}
