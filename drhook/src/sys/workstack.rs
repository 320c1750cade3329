//! Roomy stacks for the engine's own work at a thread's start and end, so
//! that it costs the thread's own stack almost nothing: a thread created
//! with the smallest stack the C library allows (`PTHREAD_STACK_MIN`, 16
//! KiB, most of it taken by the thread's TLS and descriptor) has room for
//! its start routine and little else, while registering its tree and
//! naming its root region after the start routine (symbol tables,
//! demangling) take tens of KiB in a debug build.
//!
//! [`on_work_stack`] runs a closure on a stack of its own: a mapping of
//! [`SIZE`] bytes above a guard page, taken from a small pool of spare
//! stacks (slots taken and returned with one atomic swap each: threads that
//! start one after the other map one stack in all) and given back as soon
//! as the closure returns. The switch is a few instructions (x86-64 and
//! aarch64; elsewhere the closure runs in place) with call-frame
//! information, so that a backtrace taken on the work stack continues on
//! the thread's own. A panic does not cross the switch: it is caught on the
//! work stack and resumed on the thread's.
//!
//! Signals may arrive meanwhile: their handlers run on the alternate
//! signal stack when one is set, or below the work stack's frames (the
//! kernel does not care which mapping the stack pointer is in).

use std::cell::Cell;
use std::ffi::c_void;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// Bytes of a work stack, above its guard page.
pub(crate) const SIZE: usize = 256 * 1024;

/// Spare stacks: threads that start or end at the same moment each take
/// one; more than this at once map and unmap their own.
static SPARE: [AtomicPtr<c_void>; 8] = [const { AtomicPtr::new(std::ptr::null_mut()) }; 8];

fn page() -> usize {
    // Asked once: `sysconf` costs ~60 instructions, twice per thread on
    // the work stacks' switches (issue 29).
    static PAGE: AtomicUsize = AtomicUsize::new(0);
    match PAGE.load(Ordering::Relaxed) {
        0 => {
            // SAFETY: sysconf has no preconditions.
            let n = match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
                n if n > 0 => n as usize,
                _ => 4096,
            };
            PAGE.store(n, Ordering::Relaxed);
            n
        }
        n => n,
    }
}

/// A work stack: the base of its mapping (guard page first).
struct Stack(*mut c_void);

impl Stack {
    /// A spare stack, or a new mapping; `None` when none can be mapped.
    fn take() -> Option<Stack> {
        for s in &SPARE {
            if !s.load(Ordering::Relaxed).is_null() {
                let p = s.swap(std::ptr::null_mut(), Ordering::AcqRel);
                if !p.is_null() {
                    return Some(Stack(p));
                }
            }
        }
        let p = map_guarded(SIZE);
        (!p.is_null()).then_some(Stack(p))
    }

    /// The first address above the stack (16-byte aligned).
    fn top(&self) -> *mut u8 {
        // SAFETY: one past the end of the mapping.
        unsafe { (self.0 as *mut u8).add(page() + SIZE) }
    }

    /// Back to the pool, or unmapped when the pool is full.
    fn give_back(self) {
        for s in &SPARE {
            if s.compare_exchange(
                std::ptr::null_mut(),
                self.0,
                Ordering::AcqRel,
                Ordering::Relaxed,
            )
            .is_ok()
            {
                return;
            }
        }
        // SAFETY: our own mapping, no longer in use.
        unsafe { libc::munmap(self.0, page() + SIZE) };
    }
}

thread_local! {
    /// The calling thread's stack pointer where it switched to a work
    /// stack (0: not on one).
    static CALLER_SP: Cell<usize> = const { Cell::new(0) };
}

/// Where the calling thread left its own stack for a work stack, or 0
/// when it is not on one: what a measure of the thread's stack depth
/// (the memory profile's) takes on a work stack.
pub(crate) fn caller_sp() -> usize {
    CALLER_SP.try_with(Cell::get).unwrap_or(0)
}

/// What the work stack's side of the switch receives.
struct Call<F, R> {
    f: Option<F>,
    out: Option<std::thread::Result<R>>,
}

/// Runs on the work stack: calls the closure, catching a panic.
extern "C" fn run_call<F: FnOnce() -> R, R>(p: *mut c_void) {
    // SAFETY: `on_work_stack` passes its `Call<F, R>`, which outlives the
    // switch and is not otherwise touched meanwhile.
    let call = unsafe { &mut *(p as *mut Call<F, R>) };
    if let Some(f) = call.f.take() {
        call.out = Some(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
    }
}

/// Runs `f` on a work stack (see the module documentation) and returns
/// its value; in place when already on one, when no stack can be had, or
/// on other architectures.
pub(crate) fn on_work_stack<F: FnOnce() -> R, R>(f: F) -> R {
    if !SWITCHES || caller_sp() != 0 {
        return f();
    }
    let Some(stack) = Stack::take() else {
        return f();
    };
    let mut call = Call {
        f: Some(f),
        out: None,
    };
    let here = 0u8;
    let sp = std::hint::black_box(&here) as *const u8 as usize;
    let _ = CALLER_SP.try_with(|c| c.set(sp));
    // SAFETY: `top` is the 16-byte aligned top of a mapping of SIZE bytes
    // that nothing else uses until it is given back; `run_call` is
    // instantiated for this closure and receives `call`, which lives on
    // this frame across the switch.
    unsafe {
        switch_and_call(
            &mut call as *mut Call<F, R> as *mut c_void,
            run_call::<F, R>,
            stack.top(),
        )
    };
    stack.give_back();
    let _ = CALLER_SP.try_with(|c| c.set(0));
    match call.out {
        Some(Ok(r)) => r,
        Some(Err(p)) => std::panic::resume_unwind(p),
        None => unreachable!("the work stack's call did not run"),
    }
}

/// Maps a stack of `size` bytes above a guard page, kept for the life of
/// the process (the crash handler's, mapped at start-up so that a signal
/// handler never maps one), and returns its top (16-byte aligned); null
/// when it cannot be mapped or this architecture does not switch. The
/// memory is reserved, not committed: a page costs only once touched.
pub(crate) fn map_kept(size: usize) -> *mut u8 {
    if !SWITCHES {
        return std::ptr::null_mut();
    }
    let guard = page();
    let size = size.next_multiple_of(guard);
    let p = map_guarded(size);
    if p.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: one past the end of the mapping.
    unsafe { (p as *mut u8).add(guard + size) }
}

/// A stack's memory: `size` bytes (a multiple of the page) above a guard
/// page, reserved (`MAP_NORESERVE`: a page costs only once touched); the
/// mapping's start, or null when it cannot be had.
fn map_guarded(size: usize) -> *mut libc::c_void {
    let guard = page();
    // SAFETY: an anonymous private mapping, checked for failure.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            guard + size,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE | libc::MAP_STACK,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return std::ptr::null_mut();
    }
    // The guard page: an overflow faults instead of writing below.
    // SAFETY: the first page of the mapping just made.
    unsafe { libc::mprotect(p, guard, libc::PROT_NONE) };
    p
}

/// Runs on the other stack: calls the closure (a panic cannot unwind out
/// of this `extern "C"` function: it aborts).
extern "C" fn run_once<F: FnOnce()>(p: *mut c_void) {
    // SAFETY: `on_stack` passes its `Option<F>`, which outlives the switch.
    if let Some(f) = unsafe { &mut *(p as *mut Option<F>) }.take() {
        f();
    }
}

/// Runs `f` with the stack pointer at `top`, then returns on the caller's
/// stack. Async-signal-safe: no allocation, no thread-local state, no
/// unwinding across the switch (a panic in `f` aborts). For a signal
/// handler whatever stack the signal arrived on: the thread's own, the
/// program's alternate stack, however small.
///
/// # Safety
/// `top` is the top of a stack from [`map_kept`] that no other thread uses
/// meanwhile and that is large enough for `f`.
pub(crate) unsafe fn on_stack<F: FnOnce()>(top: *mut u8, f: F) {
    if top.is_null() || !SWITCHES {
        return f();
    }
    let mut call = Some(f);
    // SAFETY: the caller's stack; `run_once` is instantiated for this
    // closure and receives `call`, which lives on this frame across the
    // switch.
    unsafe {
        switch_and_call(
            &mut call as *mut Option<F> as *mut c_void,
            run_once::<F>,
            top,
        )
    };
}

/// Whether this architecture switches stacks.
const SWITCHES: bool = cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));

/// Calls `f(arg)` with the stack pointer at `top`, then returns on the
/// caller's stack. The frame pointer keeps the caller's stack pointer, and
/// the call-frame information says so, so unwinders walk through.
///
/// # Safety
/// `top` is the 16-byte aligned top of a stack that is large enough for
/// `f`; `f` does not unwind.
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
unsafe extern "C" fn switch_and_call(
    arg: *mut c_void,
    f: extern "C" fn(*mut c_void),
    top: *mut u8,
) {
    std::arch::naked_asm!(
        ".cfi_startproc",
        "push rbp",
        ".cfi_def_cfa_offset 16",
        ".cfi_offset rbp, -16",
        "mov rbp, rsp",
        ".cfi_def_cfa_register rbp",
        "mov rsp, rdx",
        "call rsi",
        "mov rsp, rbp",
        ".cfi_def_cfa rsp, 16",
        "pop rbp",
        ".cfi_def_cfa_offset 8",
        "ret",
        ".cfi_endproc",
    )
}

/// As the x86-64 version (the frame record holds the caller's stack
/// pointer in x29).
///
/// # Safety
/// As the x86-64 version.
#[cfg(target_arch = "aarch64")]
#[unsafe(naked)]
unsafe extern "C" fn switch_and_call(
    arg: *mut c_void,
    f: extern "C" fn(*mut c_void),
    top: *mut u8,
) {
    std::arch::naked_asm!(
        ".cfi_startproc",
        "stp x29, x30, [sp, #-16]!",
        ".cfi_def_cfa_offset 16",
        ".cfi_offset x29, -16",
        ".cfi_offset x30, -8",
        "mov x29, sp",
        ".cfi_def_cfa x29, 16",
        "mov sp, x2",
        "blr x1",
        "mov sp, x29",
        ".cfi_def_cfa sp, 16",
        "ldp x29, x30, [sp], #16",
        ".cfi_def_cfa_offset 0",
        ".cfi_restore x29",
        ".cfi_restore x30",
        "ret",
        ".cfi_endproc",
    )
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
unsafe extern "C" fn switch_and_call(
    _arg: *mut c_void,
    _f: extern "C" fn(*mut c_void),
    _top: *mut u8,
) {
    unreachable!("no stack switch on this architecture")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sp() -> usize {
        let here = 0u8;
        std::hint::black_box(&here) as *const u8 as usize
    }

    #[test]
    fn runs_on_another_stack_and_returns_its_value() {
        let mine = sp();
        assert_eq!(caller_sp(), 0);
        let (theirs, left, v) = on_work_stack(|| (sp(), caller_sp(), 6 * 7));
        assert_eq!(v, 42);
        assert_eq!(caller_sp(), 0);
        if SWITCHES {
            assert!(left.abs_diff(mine) < 4096, "{left:#x} {mine:#x}");
            // Nested: in place.
            assert!(on_work_stack(|| {
                let outer = caller_sp();
                outer != 0 && on_work_stack(caller_sp) == outer
            }));
        }
        if SWITCHES {
            assert!(
                mine.abs_diff(theirs) > SIZE / 2 || theirs > mine,
                "{mine:#x} {theirs:#x}"
            );
        }
        // Deep recursion fits (a debug build's symbolisation needs tens
        // of KiB).
        fn deep(n: u32) -> u32 {
            let pad = std::hint::black_box([n as u8; 512]);
            if n == 0 {
                pad[0] as u32
            } else {
                deep(n - 1) + 1
            }
        }
        assert_eq!(on_work_stack(|| deep(200)), 200);
    }

    #[test]
    fn a_kept_stack_runs_a_closure_and_comes_back() {
        let top = map_kept(64 * 1024);
        if !SWITCHES {
            assert!(top.is_null());
            return;
        }
        assert!(!top.is_null());
        let mine = sp();
        let mut seen = 0;
        // SAFETY: a kept stack of this test alone.
        unsafe { on_stack(top, || seen = sp()) };
        assert!(seen < top as usize && seen > top as usize - 64 * 1024);
        assert!(mine.abs_diff(seen) > 4096, "{mine:#x} {seen:#x}");
    }

    #[test]
    fn a_panic_comes_back_on_the_callers_stack() {
        let r = std::panic::catch_unwind(|| on_work_stack(|| panic!("on the work stack")));
        let msg = r.unwrap_err();
        assert_eq!(msg.downcast_ref::<&str>(), Some(&"on the work stack"));
        // The stack went back to the pool and is used again.
        assert_eq!(on_work_stack(|| 1), 1);
    }

    #[test]
    fn many_threads_share_few_stacks() {
        let hs: Vec<_> = (0..32)
            .map(|i| std::thread::spawn(move || on_work_stack(move || i * 2)))
            .collect();
        let sum: i32 = hs.into_iter().map(|h| h.join().unwrap()).sum();
        assert_eq!(sum, (0..32).map(|i| i * 2).sum::<i32>());
    }
}
