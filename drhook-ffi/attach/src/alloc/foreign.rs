//! Allocators the header scheme cannot serve, found at the decision: one
//! with its own functions on `malloc`'s blocks (jemalloc's `sallocx`,
//! `dallocx`, `rallocx`; tcmalloc's, mimalloc's, rpmalloc's), which would
//! get addresses 16 bytes into its blocks; a `malloc` that is not the C
//! library's (the next one after the preload library is not in glibc);
//! AddressSanitizer, whose checks need its own blocks as it gave them.
//!
//! The allocators' functions are looked up in the process's global scope
//! as `dlsym(RTLD_DEFAULT, ...)` would, through weak references (bound
//! when the library is loaded, after the program's libraries: nothing is
//! called, nothing allocated while the first `malloc` decides; a static
//! program linked with the wrap list gets them from its own link).

use std::ffi::{CStr, c_void};

use super::Source;
use crate::sys::diag_parts;

mod weak {
    crate::__weak_address!(asan_init, "__asan_init");
    crate::__weak_address!(mallocx, "mallocx");
    crate::__weak_address!(tc_malloc_size, "tc_malloc_size");
    crate::__weak_address!(mi_malloc, "mi_malloc");
    crate::__weak_address!(rpmalloc, "rpmalloc");
}

/// The address of a weakly referenced function (null: not defined).
type Address = fn() -> *mut c_void;

/// A function of each allocator with its own API on `malloc`'s blocks:
/// its address, its name, the allocator's name.
const APIS: [(Address, &str, &str); 4] = [
    (weak::mallocx, "mallocx", "jemalloc"),
    (weak::tc_malloc_size, "tc_malloc_size", "tcmalloc"),
    (weak::mi_malloc, "mi_malloc", "mimalloc"),
    (weak::rpmalloc, "rpmalloc", "rpmalloc"),
];

/// An allocator the header scheme cannot serve.
#[derive(Clone, Copy, Debug)]
pub(super) enum Foreign {
    /// AddressSanitizer's runtime (`__asan_init`).
    Asan,
    /// An allocator with its own functions on `malloc`'s blocks.
    Api {
        /// The function found.
        symbol: &'static str,
        /// The allocator's name.
        allocator: &'static str,
    },
    /// `malloc` defined in this file, not the C library.
    Elsewhere(&'static CStr),
}

/// The allocator of the process if the header scheme cannot serve it.
pub(super) fn detect<S: Source>() -> Option<Foreign> {
    if !weak::asan_init().is_null() {
        return Some(Foreign::Asan);
    }
    for (address, symbol, allocator) in APIS {
        if !address().is_null() {
            return Some(Foreign::Api { symbol, allocator });
        }
    }
    let file = S::malloc_file()?;
    (!is_glibc(file.to_bytes())).then_some(Foreign::Elsewhere(file))
}

/// Whether `file` is glibc's C library (or its malloc-debugging library,
/// glibc's allocator with checks, which keeps glibc's blocks).
fn is_glibc(file: &[u8]) -> bool {
    let name = file.rsplit(|&c| c == b'/').next().unwrap_or(file);
    name.starts_with(b"libc.so") || name.starts_with(b"libc_malloc_debug.so")
}

/// What is lost without headers.
const COUNTED: &[u8] = b"blocks get no header: allocations and their bytes are counted per \
routine; frees, leaked bytes and heap high-water marks are not";

impl Foreign {
    /// Whether the `malloc` family passes through untracked (nothing
    /// counted) rather than counting.
    pub(super) fn passes_through(self) -> bool {
        matches!(self, Foreign::Asan)
    }

    /// The one message: which allocator, and what the memory profile
    /// does with it.
    pub(super) fn say(self) {
        match self {
            Foreign::Asan => diag_parts(&[b"memory profile: AddressSanitizer serves malloc and \
its checks need its own blocks: the malloc family passes through untracked, no allocation is \
counted per routine (ASan reports leaks itself)"]),
            Foreign::Api { symbol, allocator } => diag_parts(&[
                b"memory profile: malloc is ",
                allocator.as_bytes(),
                b"'s (",
                symbol.as_bytes(),
                b" is defined), whose own functions take malloc's blocks: ",
                COUNTED,
            ]),
            Foreign::Elsewhere(file) => diag_parts(&[
                b"memory profile: malloc comes from ",
                file.to_bytes(),
                b", not the C library: ",
                COUNTED,
            ]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_glibc;

    #[test]
    fn glibc_is_recognised_by_its_file_name() {
        assert!(is_glibc(b"/lib/x86_64-linux-gnu/libc.so.6"));
        assert!(is_glibc(b"libc.so.6"));
        assert!(is_glibc(b"/usr/lib64/libc_malloc_debug.so.0"));
        assert!(!is_glibc(b"/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"));
        assert!(!is_glibc(
            b"/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4"
        ));
        assert!(!is_glibc(b"/usr/lib/libcmalloc.so"));
    }
}
