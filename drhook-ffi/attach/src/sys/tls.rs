//! The layer's per-thread words, read with the initial-exec TLS model as
//! the engine's slot is (`drhook/src/tree/tls.rs`): no `__tls_get_addr`,
//! nothing allocated, usable from the first instruction of a thread in a
//! library loaded at program start. Other targets use `thread_local!`.
//!
//! Words: [`GUARD`] (bits of the layer's own work in progress on this
//! thread, so that a function the layer calls and also wraps — `dlsym`
//! allocating, a callback calling `fork` — is not wrapped again), and
//! [`THREAD`] (the thread's root-region token and state).
//!
//! Guard bits in use: 1 (a `dlsym` lookup in progress, `real`),
//! [`OWN_WORK`] (the layer's or Dr.Hook's own work: not the program's I/O)
//! and 1 << 9 (an MPI call in progress, `mpi_calls`).

/// Reentrancy bits of the calling thread.
pub const GUARD: usize = 0;
/// The thread's state: 0 not begun, otherwise `token << 2 | state`.
pub const THREAD: usize = 1;

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod imp {
    // 2 x 8 bytes, zero-initialised, hidden: another copy of this layer in
    // another object has its own.
    std::arch::global_asm!(
        ".pushsection .tbss,\"awT\",@nobits",
        ".p2align 3",
        ".globl drhook_attach_tls_words_v1",
        ".hidden drhook_attach_tls_words_v1",
        ".type drhook_attach_tls_words_v1, @object",
        ".size drhook_attach_tls_words_v1, 16",
        "drhook_attach_tls_words_v1:",
        ".zero 16",
        ".popsection",
    );

    #[inline(always)]
    pub fn words() -> *mut u64 {
        let p: *mut u64;
        #[cfg(target_arch = "x86_64")]
        // SAFETY: computes this thread's address of the slot (initial-exec).
        unsafe {
            std::arch::asm!(
                "mov {p}, qword ptr [rip + drhook_attach_tls_words_v1@GOTTPOFF]",
                "add {p}, qword ptr fs:0",
                p = out(reg) p,
                options(pure, readonly, nostack, preserves_flags),
            );
        }
        #[cfg(target_arch = "aarch64")]
        // SAFETY: as above, aarch64 initial-exec sequence.
        unsafe {
            std::arch::asm!(
                "mrs {t}, tpidr_el0",
                "adrp {p}, :gottprel:drhook_attach_tls_words_v1",
                "ldr {p}, [{p}, #:gottprel_lo12:drhook_attach_tls_words_v1]",
                "add {p}, {p}, {t}",
                p = out(reg) p,
                t = out(reg) _,
                options(pure, readonly, nostack, preserves_flags),
            );
        }
        p
    }
}

#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
mod imp {
    use std::cell::UnsafeCell;
    thread_local! {
        static WORDS: UnsafeCell<[u64; 2]> = const { UnsafeCell::new([0; 2]) };
    }
    #[inline(always)]
    pub fn words() -> *mut u64 {
        WORDS.with(|w| w.get() as *mut u64)
    }
}

/// Word `i` of the calling thread.
#[inline(always)]
pub fn get(i: usize) -> u64 {
    debug_assert!(i < 2);
    // SAFETY: the thread's own, aligned, two words.
    unsafe { imp::words().add(i).read() }
}

/// Sets word `i` of the calling thread.
#[inline(always)]
pub fn set(i: usize, v: u64) {
    debug_assert!(i < 2);
    // SAFETY: as above.
    unsafe { imp::words().add(i).write(v) }
}

/// Guard bit: the work in progress on this thread is the layer's or
/// Dr.Hook's own (a report written, a thread's name read from the symbol
/// tables), not the program's: the I/O wrappers do not record it.
pub const OWN_WORK: u64 = 1 << 8;

/// Runs `f` (always) with [`OWN_WORK`] set on the calling thread: Dr.Hook's
/// own work in the lifecycle callbacks (a new thread's name read from the
/// symbol tables, the profiles written at the end) is not the program's.
pub fn unrecorded<R>(f: impl FnOnce() -> R) -> R {
    let before = get(GUARD) & OWN_WORK;
    set(GUARD, get(GUARD) | OWN_WORK);
    let r = f();
    set(GUARD, (get(GUARD) & !OWN_WORK) | before);
    r
}

/// Runs `f` with `bit` of [`GUARD`] set; `None` (and `f` not run) if the
/// bit was already set on this thread (a reentrant call).
#[inline]
pub fn guarded<R>(bit: u64, f: impl FnOnce() -> R) -> Option<R> {
    let g = get(GUARD);
    if g & bit != 0 {
        return None;
    }
    set(GUARD, g | bit);
    let r = f();
    set(GUARD, get(GUARD) & !bit);
    Some(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_per_thread_and_guards_nest() {
        set(THREAD, 7);
        std::thread::spawn(|| assert_eq!(get(THREAD), 0))
            .join()
            .unwrap();
        assert_eq!(get(THREAD), 7);
        set(THREAD, 0);
        let outer = guarded(1, || {
            guarded(1, || ()).is_none() && guarded(2, || ()).is_some()
        });
        assert_eq!(outer, Some(true));
        assert_eq!(get(GUARD), 0);
    }
}
