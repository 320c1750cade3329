//! `MPI_File_open` in Fortran (`mpi_file_open_`, `use mpi_f08`'s
//! `mpi_file_open_f08_`...), which the table cannot describe: its file
//! name is a `CHARACTER` argument, whose length the compiler passes last,
//! after the error code. The wrappers make the call a row of the C
//! binding's function, `MPI_File_open`, and with the I/O report on name
//! the file of the new handle (converted to the C handle with
//! `PMPI_File_f2c`, as the Fortran binding's other `MPI_File_*` calls
//! are), so that a Fortran program's MPI-IO calls are the file's MPI-IO
//! level as a C program's are.

use std::ffi::{CString, c_char, c_int};

/// After a Fortran `MPI_File_open` of the `len` bytes at `name` (blank-
/// padded) that wrote its handle at `fh` and its error code at `ierr`
/// (null: `use mpi_f08`'s optional `ierror` absent): hands the opening to
/// the I/O report's MPI-IO level (when it is on).
///
/// # Safety
/// `name` points to `len` bytes (or is null), `fh` and `ierr` to
/// `INTEGER`s (or are null), as the binding's contract says.
pub unsafe fn fortran_file_opened(
    name: *const c_char,
    len: usize,
    fh: *const c_int,
    ierr: *const c_int,
) {
    let Some(s) = crate::events::mpi_io_sink() else {
        return;
    };
    // SAFETY: the caller's contract.
    let ok = ierr.is_null() || unsafe { *ierr } == 0;
    if !ok || name.is_null() || fh.is_null() {
        return;
    }
    // SAFETY: the caller's contract: `len` bytes at `name`.
    let bytes = unsafe { std::slice::from_raw_parts(name.cast::<u8>(), len) };
    let end = bytes.iter().rposition(|&b| b != b' ').map_or(0, |i| i + 1);
    let Ok(path) = CString::new(&bytes[..end]) else {
        return;
    };
    // SAFETY: the caller's contract: the handle MPI wrote.
    let h = super::measure::file_f2c(unsafe { *fh });
    (s.opened)(h, &path);
}

/// The Fortran wrappers of `MPI_File_open` (inside the module of the
/// table's wrappers, next to `MPI_File_open`'s, whose row they share).
#[macro_export]
#[doc(hidden)]
macro_rules! __mpi_file_open_f {
    ($p:literal, $mode:ident) => {
        #[allow(non_snake_case, clippy::missing_safety_doc, missing_docs)]
        pub mod MPI_File_open_fortran {
            use std::ffi::{c_char, c_int};
            $crate::__mpi_file_open_f!(@one $p, $mode, f1, "mpi_file_open_");
            $crate::__mpi_file_open_f!(@one $p, $mode, f2, "mpi_file_open__");
            $crate::__mpi_file_open_f!(@one $p, $mode, f3, "mpi_file_open");
            $crate::__mpi_file_open_f!(@one $p, $mode, f08, "mpi_file_open_f08_");
        }
    };
    (@one $p:literal, $mode:ident, $w:ident, $name:literal) => {
        #[unsafe(export_name = concat!($p, $name))]
        pub unsafe extern "C" fn $w(
            comm: usize,
            name: *const c_char,
            amode: usize,
            info: usize,
            fh: *mut c_int,
            ierr: *mut c_int,
            len: usize,
        ) {
            type R = unsafe extern "C" fn(usize, *const c_char, usize, usize, *mut c_int, *mut c_int, usize);
            let real = $crate::__mpi_real!($mode, "p", $name, R);
            if !$crate::__mpi_enabled!($mode) {
                // SAFETY: the binding's contract: the caller's arguments, passed on.
                return unsafe { real(comm, name, amode, info, fh, ierr, len) };
            }
            // SAFETY: the binding's contract: the caller's arguments,
            // passed on; the table's `MPI_File_open` measures nothing.
            unsafe {
                $crate::mpi_calls::call(
                    &super::MPI_File_open::F,
                    $crate::mpi_calls::Binding::Fortran,
                    &[comm, name as usize, amode, info, fh as usize],
                    || real(comm, name, amode, info, fh, ierr, len),
                );
                $crate::mpi_calls::fortran_file_opened(name, len, fh, ierr);
            }
        }
    };
}
