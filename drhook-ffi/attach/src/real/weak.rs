//! Addresses of weakly referenced symbols (null when no object defines
//! them): the `__real_<name>` functions of a program linked with `--wrap`,
//! and MPI's symbols in a static program (where `dlsym` does not work).

use std::ffi::{CStr, c_void};

/// Defines `$f()`, the address of the weak symbol `$sym` (null when no
/// object defines it).
#[macro_export]
#[doc(hidden)]
macro_rules! __weak_address {
    ($f:ident, $sym:expr) => {
        #[doc(hidden)]
        pub fn $f() -> *mut std::ffi::c_void {
            let p: *mut std::ffi::c_void;
            #[cfg(target_arch = "x86_64")]
            // SAFETY: loads a GOT entry (0 for an absent weak symbol);
            // `.weak` in the same asm, so in the object that refers to it.
            unsafe {
                std::arch::asm!(
                    concat!(".weak ", $sym),
                    concat!("mov {p}, qword ptr [rip + ", $sym, "@GOTPCREL]"),
                    p = out(reg) p,
                    options(pure, readonly, nostack, preserves_flags),
                );
            }
            #[cfg(target_arch = "aarch64")]
            // SAFETY: as above.
            unsafe {
                std::arch::asm!(
                    concat!(".weak ", $sym),
                    concat!("adrp {p}, :got:", $sym),
                    concat!("ldr {p}, [{p}, #:got_lo12:", $sym, "]"),
                    p = out(reg) p,
                    options(pure, readonly, nostack, preserves_flags),
                );
            }
            #[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
            {
                p = std::ptr::null_mut();
            }
            p
        }
    };
}

crate::__weak_address!(pmpi_comm_rank, "PMPI_Comm_rank");
crate::__weak_address!(pmpi_comm_size, "PMPI_Comm_size");
crate::__weak_address!(ompi_mpi_comm_world, "ompi_mpi_comm_world");
crate::__weak_address!(pmpi_type_size, "PMPI_Type_size");
crate::__weak_address!(pmpi_type_f2c, "PMPI_Type_f2c");
crate::__weak_address!(pmpi_comm_f2c, "PMPI_Comm_f2c");

/// Linked with `--wrap`: an MPI symbol, through a weak reference (a
/// program without MPI has none; `dlsym` does not work in a static
/// program).
pub(crate) fn mpi_symbol(name: &CStr) -> *mut c_void {
    match name.to_bytes() {
        b"PMPI_Comm_rank" => pmpi_comm_rank(),
        b"PMPI_Comm_size" => pmpi_comm_size(),
        b"ompi_mpi_comm_world" => ompi_mpi_comm_world(),
        // The figures of DR_HOOK_OPT=mpi (`mpi_calls::measure`).
        b"PMPI_Type_size" => pmpi_type_size(),
        b"PMPI_Type_f2c" => pmpi_type_f2c(),
        b"PMPI_Comm_f2c" => pmpi_comm_f2c(),
        _ => std::ptr::null_mut(),
    }
}
