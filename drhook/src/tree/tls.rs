//! The engine's one thread-local value — the calling thread's tree — read
//! with the initial-exec TLS model.
//!
//! `thread_local!` in a library compiled as position-independent code uses
//! the general-dynamic model: the compiler emits a call to
//! `__tls_get_addr` and saves registers around it, even where the linker
//! later relaxes the call away (static linking). Stable Rust cannot choose
//! the model, so on x86-64 and aarch64 Linux the slot is defined in
//! assembly and read with an initial-exec sequence (two or three
//! instructions, no call). Initial-exec works in executables and in shared
//! libraries loaded at program start (`libdrhook.so` linked by the client);
//! the slot is 8 bytes of the static TLS reserve. Other targets use
//! `thread_local!`.

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
mod imp {
    /// The slot's symbol, versioned so that two versions of the engine in
    /// one program (two major versions in one dependency graph) each have
    /// their own slot instead of a duplicate definition.
    macro_rules! slot_symbol {
        () => {
            concat!(
                "drhook_engine_tls_current_",
                env!("CARGO_PKG_VERSION_MAJOR"),
                "_",
                env!("CARGO_PKG_VERSION_MINOR"),
                "_",
                env!("CARGO_PKG_VERSION_PATCH")
            )
        };
    }

    // An 8-byte, zero-initialised TLS slot, hidden so that another copy of
    // the engine in another shared object never binds to this one.
    std::arch::global_asm!(
        ".pushsection .tbss,\"awT\",@nobits",
        ".p2align 3",
        concat!(".globl ", slot_symbol!()),
        concat!(".hidden ", slot_symbol!()),
        concat!(".type ", slot_symbol!(), ", @object"),
        concat!(".size ", slot_symbol!(), ", 8"),
        concat!(slot_symbol!(), ":"),
        ".zero 8",
        ".popsection",
    );

    /// Address of the calling thread's slot.
    #[inline(always)]
    fn slot() -> *mut *const () {
        let p: *mut *const ();
        #[cfg(target_arch = "x86_64")]
        // SAFETY: computes the address of this thread's TLS slot (initial-exec:
        // offset from the GOT, added to the thread pointer); reads no memory
        // but the GOT entry.
        unsafe {
            std::arch::asm!(
                concat!("mov {p}, qword ptr [rip + ", slot_symbol!(), "@GOTTPOFF]"),
                "add {p}, qword ptr fs:0",
                p = out(reg) p,
                options(pure, readonly, nostack, preserves_flags),
            );
        }
        #[cfg(target_arch = "aarch64")]
        // SAFETY: as above, with the aarch64 initial-exec sequence.
        unsafe {
            std::arch::asm!(
                "mrs {t}, tpidr_el0",
                 concat!("adrp {p}, :gottprel:", slot_symbol!()),
                concat!("ldr {p}, [{p}, #:gottprel_lo12:", slot_symbol!(), "]"),
                "add {p}, {p}, {t}",
                p = out(reg) p,
                t = out(reg) _,
                options(pure, readonly, nostack, preserves_flags),
            );
        }
        p
    }

    /// The calling thread's value: on x86-64 the initial-exec load proper
    /// (offset from the GOT, then one `fs:`-relative load: two
    /// instructions, which the linker turns into an immediate and a load
    /// in an executable).
    #[inline(always)]
    pub fn get() -> *const () {
        #[cfg(target_arch = "x86_64")]
        {
            let v: *const ();
            // SAFETY: reads this thread's TLS slot (initial-exec: offset from
            // the GOT, load relative to the thread pointer); no other memory
            // but the GOT entry.
            unsafe {
                std::arch::asm!(
                    concat!("mov {v}, qword ptr [rip + ", slot_symbol!(), "@GOTTPOFF]"),
                    "mov {v}, qword ptr fs:[{v}]",
                    v = out(reg) v,
                    options(pure, readonly, nostack, preserves_flags),
                );
            }
            v
        }
        #[cfg(not(target_arch = "x86_64"))]
        // SAFETY: the slot is this thread's own, always 8-byte aligned.
        unsafe {
            slot().read()
        }
    }

    #[inline(always)]
    pub fn set(v: *const ()) {
        // SAFETY: as above.
        unsafe { slot().write(v) }
    }
}

#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
mod imp {
    use std::cell::Cell;

    thread_local! {
        static SLOT: Cell<*const ()> = const { Cell::new(std::ptr::null()) };
    }

    #[inline(always)]
    pub fn get() -> *const () {
        SLOT.with(|c| c.get())
    }

    #[inline(always)]
    pub fn set(v: *const ()) {
        SLOT.with(|c| c.set(v))
    }
}

/// The calling thread's value (null until set).
#[inline(always)]
pub(crate) fn get() -> *const () {
    imp::get()
}

/// Sets the calling thread's value.
#[inline(always)]
pub(crate) fn set(v: *const ()) {
    imp::set(v)
}

#[cfg(test)]
mod tests {
    #[test]
    fn per_thread() {
        let mine = 0x1000 as *const ();
        super::set(mine);
        assert_eq!(super::get(), mine);
        std::thread::spawn(|| {
            assert!(super::get().is_null(), "a new thread starts empty");
            super::set(0x2000 as *const ());
            assert_eq!(super::get(), 0x2000 as *const ());
        })
        .join()
        .unwrap();
        assert_eq!(
            super::get(),
            mine,
            "another thread's value does not leak here"
        );
        super::set(std::ptr::null());
    }
}
