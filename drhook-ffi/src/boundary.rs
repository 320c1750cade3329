//! The panic boundary: every exported function runs its body through
//! [`guard`], so no panic ever unwinds into C or Fortran, and warnings for
//! things that are accepted but not implemented are printed once.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};

/// Runs `f`; a panic is reported on stderr and `fallback` is returned.
#[inline(always)]
pub fn guard<R>(entry: &'static str, fallback: R, f: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            // One out-of-line call that takes the payload: the landing pad
            // then keeps nothing live, so the entry points need no saved
            // registers for it.
            report_panic(entry, p);
            fallback
        }
    }
}

#[cold]
#[inline(never)]
fn report_panic(entry: &str, p: Box<dyn std::any::Any + Send>) {
    let msg = p
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "panic".into());
    // Printing must not panic again: ignore every error.
    let _ = catch_unwind(|| {
        drhook::diag::emit(
            entry,
            file!(),
            line!(),
            &format!(
                "internal error caught at the C/Fortran boundary: {msg}; the call was ignored"
            ),
        )
    });
    // A payload whose destructor panics must not escape either.
    let _ = catch_unwind(AssertUnwindSafe(move || drop(p)));
}

/// Things that are accepted but not implemented, each warned about once.
#[derive(Clone, Copy)]
#[repr(u32)]
pub enum Unimplemented {
    /// `c_drhook_print_` options other than 2 and 3.
    PrintOption = 0,
    /// Printing to a Fortran unit other than 0 (stderr) and 6 (stdout).
    FortranUnit = 1,
}

static WARNED: AtomicU64 = AtomicU64::new(0);

/// Prints `text` once per kind.
pub fn warn_once(kind: Unimplemented, entry: &str, text: &str) {
    let bit = 1u64 << kind as u32;
    if WARNED.fetch_or(bit, Ordering::Relaxed) & bit == 0 {
        drhook::diag::emit(entry, file!(), line!(), &format!("Warning - {text}"));
    }
}
