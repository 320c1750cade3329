//! A static library with the whole of libdrhook *and* a Rust routine
//! instrumented with `#[drhook]`, exported to C and Fortran as
//! `rust_leaf`. Linked into a Fortran program, the Rust routine nests under
//! the calling Fortran routine in the same per-thread calling tree: one
//! engine instance serves both front doors (`tests/fortran.rs` checks the
//! call path in the profile).
//!
//! Built by `cargo test` (examples are built) into
//! `target/<profile>/examples/librust_in_fortran.a`.

// libdrhook's modules, at the crate root as in the library (they refer to
// each other through `crate::`).
#[path = "../src/boundary.rs"]
mod boundary;
#[path = "../src/c_api.rs"]
mod c_api;
#[path = "../src/compat.rs"]
mod compat;
#[path = "../src/fortran.rs"]
mod fortran;
#[path = "../src/hook.rs"]
mod hook;
#[path = "../src/hpm_api.rs"]
mod hpm_api;
#[path = "../src/init.rs"]
mod init;
#[path = "../src/mpi_assert.rs"]
mod mpi_assert;
#[path = "../src/names.rs"]
mod names;
#[path = "../src/omp.rs"]
mod omp;
#[path = "../src/switch.rs"]
mod switch;

use drhook::drhook;

/// Adds `n` to `*x` inside a Dr.Hook region named `RUST:LEAF`.
///
/// # Safety
/// `x` must be valid; `n` must point to an integer (Fortran passes both by
/// reference).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rust_leaf(x: *mut f64, n: *const i32) {
    // SAFETY: caller contract.
    unsafe { *x = leaf(*x, *n) };
}

#[drhook(name = "RUST:LEAF")]
fn leaf(x: f64, n: i32) -> f64 {
    x + f64::from(n)
}
