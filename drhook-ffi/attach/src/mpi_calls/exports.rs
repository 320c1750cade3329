//! The exported wrappers of the MPI functions of [`super::table`]: for
//! each, a module named after it holding its [`super::Func`], the C
//! wrapper and, for the `both` ones, the Fortran wrappers, each calling
//! [`super::call`] around the real function (the next definition of the
//! same name; linked with `--wrap`, `__real_<name>`: `__real!`; in the
//! link-time library `libdrhook_mpi`, mode `pmpi`, the profiling
//! interface's `PMPI_<name>`/`pmpi_<name>`: `__mpi_real!`); `MPI_Abort`'s,
//! and in mode `pmpi` `MPI_Init*`/`MPI_Finalize` (`crate::interpose!`'s
//! elsewhere).

/// The real function of a wrapper: `__real!` of its own name, or in mode
/// `pmpi` (`libdrhook_mpi`) the profiling name, `$p` (`P` in C, `p` in
/// Fortran) before it, looked up with `dlsym(RTLD_NEXT)` at the first call.
#[macro_export]
#[doc(hidden)]
macro_rules! __mpi_real {
    (pmpi, $p:literal, $name:expr, $ty:ty) => {
        $crate::__real!(preload, concat!($p, $name), $ty)
    };
    ($mode:ident, $p:literal, $name:expr, $ty:ty) => {
        $crate::__real!($mode, $name, $ty)
    };
}

/// Whether MPI calls are rows ([`super::enabled`]; in mode `pmpi`,
/// [`super::enabled_link_time`]).
#[macro_export]
#[doc(hidden)]
macro_rules! __mpi_enabled {
    (pmpi) => {
        $crate::mpi_calls::enabled_link_time()
    };
    ($mode:ident) => {
        $crate::mpi_calls::enabled()
    };
}

/// One Fortran wrapper: `$f$suffix` (arguments by reference, the error
/// code last).
#[macro_export]
#[doc(hidden)]
macro_rules! __mpi_fortran {
    ($p:literal, $mode:ident, $w:ident, $f:ident, $suffix:literal, ($($a:ident)*)) => {
        #[unsafe(export_name = concat!($p, stringify!($f), $suffix))]
        pub unsafe extern "C" fn $w($($a: usize,)* ierr: usize) {
            type R = unsafe extern "C" fn($($a: usize,)* ierr: usize);
            let real = $crate::__mpi_real!($mode, "p", concat!(stringify!($f), $suffix), R);
            if !$crate::__mpi_enabled!($mode) {
                // SAFETY: the binding's contract: the caller's arguments, passed on.
                return unsafe { real($($a,)* ierr) };
            }
            // SAFETY: the binding's contract: the caller's arguments, passed on.
            unsafe {
                $crate::mpi_calls::call(&F, $crate::mpi_calls::Binding::Fortran, &[$($a),*], || {
                    real($($a,)* ierr)
                })
            }
        }
    };
}

/// The C wrapper of `$c` (and its Fortran ones with `$f`).
#[macro_export]
#[doc(hidden)]
macro_rules! __mpi_function {
    ($p:literal, $mode:ident, $c:ident, ($($a:ident)*), $spec:expr, $fortran:tt) => {
        #[allow(non_snake_case, clippy::missing_safety_doc, clippy::too_many_arguments, missing_docs)]
        pub mod $c {
            use std::ffi::c_int;
            #[allow(unused_imports)]
            use $crate::mpi_calls::table::*;

            static SITE: std::sync::atomic::AtomicPtr<std::ffi::c_void> =
                std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());
            pub static F: $crate::mpi_calls::Func = $crate::mpi_calls::Func::new(stringify!($c), $spec, &SITE);

            #[unsafe(export_name = concat!($p, stringify!($c)))]
            pub unsafe extern "C" fn c($($a: usize),*) -> c_int {
                type R = unsafe extern "C" fn($($a: usize),*) -> c_int;
                let real = $crate::__mpi_real!($mode, "P", stringify!($c), R);
                if !$crate::__mpi_enabled!($mode) {
                    // SAFETY: MPI's contract: the caller's arguments, passed on.
                    return unsafe { real($($a),*) };
                }
                // SAFETY: MPI's contract: the caller's arguments, passed on.
                unsafe {
                    $crate::mpi_calls::call(&F, $crate::mpi_calls::Binding::C, &[$($a),*], || {
                        real($($a),*)
                    })
                }
            }
            $crate::__mpi_fortrans!($p, $mode, $fortran, ($($a)*));
        }
    };
}

/// The Fortran wrappers of a `both` function (`{name}`), none for a
/// `c_only` one (`{}`).
#[macro_export]
#[doc(hidden)]
macro_rules! __mpi_fortrans {
    ($p:literal, $mode:ident, {}, $args:tt) => {};
    ($p:literal, $mode:ident, {$f:ident}, $args:tt) => {
        $crate::__mpi_fortran!($p, $mode, f1, $f, "_", $args);
        $crate::__mpi_fortran!($p, $mode, f2, $f, "__", $args);
        $crate::__mpi_fortran!($p, $mode, f3, $f, "", $args);
        $crate::__mpi_fortran!($p, $mode, f08, $f, "_f08_", $args);
    };
}

/// Every wrapper of the table (the callback of `__mpi_table!`).
#[macro_export]
#[doc(hidden)]
macro_rules! __mpi_wrappers {
    (
        $p:literal, $mode:ident;
        both: [ $( $c:ident $f:ident ( $($a:ident)* ) $spec:expr ; )* ]
        c_only: [ $( $c2:ident ( $($a2:ident)* ) $spec2:expr ; )* ]
    ) => {
        $( $crate::__mpi_function!($p, $mode, $c, ($($a)*), $spec, {$f}); )*
        $( $crate::__mpi_function!($p, $mode, $c2, ($($a2)*), $spec2, {}); )*
        $crate::__mpi_file_open_f!($p, $mode);
    };
}

/// The names the wrappers export (the callback of `__mpi_table!`), for
/// the `--wrap` list: `pub const NAMES: &[&str]`.
#[macro_export]
#[doc(hidden)]
macro_rules! __mpi_names {
    (
        ;
        both: [ $( $c:ident $f:ident ( $($a:ident)* ) $spec:expr ; )* ]
        c_only: [ $( $c2:ident ( $($a2:ident)* ) $spec2:expr ; )* ]
    ) => {
        /// Every symbol the MPI wrappers export, C then Fortran names.
        pub const NAMES: &[&str] = &[
            $( stringify!($c), concat!(stringify!($f), "_"), concat!(stringify!($f), "__"),
               stringify!($f), concat!(stringify!($f), "_f08_"), )*
            $( stringify!($c2), )*
            "mpi_file_open_", "mpi_file_open__", "mpi_file_open", "mpi_file_open_f08_",
            "MPI_Abort", "mpi_abort_", "mpi_abort__", "mpi_abort", "mpi_abort_f08_",
        ];
    };
}

/// Exports the MPI wrappers (`DR_HOOK_OPT=mpi`), and `MPI_Abort`'s
/// (its reports written first, `crate::lifecycle::mpi::before_abort`). In
/// mode `pmpi` (the link-time library `libdrhook_mpi`, which has no
/// lifecycle layer) also `MPI_Init*` and `MPI_Finalize` (`rank`, `reduce`
/// and the end without `MPI_Finalize` for the program's engine).
#[macro_export]
#[doc(hidden)]
macro_rules! __interpose_mpi_calls {
    ($p:literal, $mode:ident) => {
        /// The MPI functions wrapped (`drhook-attach`'s `mpi_calls`).
        #[doc(hidden)]
        #[allow(clippy::missing_safety_doc, missing_docs)]
        pub mod __drhook_mpi_calls {
            $crate::__mpi_table!(__mpi_wrappers, $p, $mode);

            #[allow(non_snake_case, clippy::missing_safety_doc, missing_docs)]
            pub mod MPI_Abort {
                use std::ffi::c_int;
                #[unsafe(export_name = concat!($p, "MPI_Abort"))]
                pub unsafe extern "C" fn c(comm: usize, code: c_int) -> c_int {
                    type R = unsafe extern "C" fn(usize, c_int) -> c_int;
                    let real = $crate::__mpi_real!($mode, "P", "MPI_Abort", R);
                    $crate::mpi_calls::before_abort(code, $crate::__mpi_layer!($mode));
                    // SAFETY: MPI's contract.
                    unsafe { real(comm, code) }
                }
                $crate::__mpi_abort_f!($p, $mode, f1, "mpi_abort_");
                $crate::__mpi_abort_f!($p, $mode, f2, "mpi_abort__");
                $crate::__mpi_abort_f!($p, $mode, f3, "mpi_abort");
                $crate::__mpi_abort_f!($p, $mode, f08, "mpi_abort_f08_");
            }

            $crate::__mpi_linked_lifecycle!($mode);
        }
    };
}

/// `MPI_Init*` and `MPI_Finalize` of the link-time library (mode `pmpi`);
/// elsewhere the lifecycle layer's (`crate::interpose!`).
#[macro_export]
#[doc(hidden)]
macro_rules! __mpi_linked_lifecycle {
    (pmpi) => {
        $crate::__mpi_lifecycle!("", pmpi);
    };
    ($mode:ident) => {};
}

/// A Fortran `MPI_ABORT(comm, errorcode, ierr)`.
#[macro_export]
#[doc(hidden)]
macro_rules! __mpi_abort_f {
    ($p:literal, $mode:ident, $w:ident, $name:literal) => {
        #[unsafe(export_name = concat!($p, $name))]
        pub unsafe extern "C" fn $w(comm: usize, code: *const c_int, ierr: usize) {
            type R = unsafe extern "C" fn(usize, *const c_int, usize);
            let real = $crate::__mpi_real!($mode, "p", $name, R);
            // SAFETY: the binding's contract: a valid INTEGER (or null).
            let c = if code.is_null() { 1 } else { unsafe { *code } };
            $crate::mpi_calls::before_abort(c, $crate::__mpi_layer!($mode));
            // SAFETY: the binding's contract.
            unsafe { real(comm, code, ierr) }
        }
    };
}

#[cfg(test)]
mod tests {
    crate::__mpi_table!(__mpi_names,);

    #[test]
    fn the_wrap_list_names_every_wrapper() {
        let list = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../share/drhook-wrap-mpi.list"
        ))
        .unwrap();
        let listed: std::collections::BTreeSet<&str> = list
            .lines()
            .filter_map(|l| l.strip_prefix("--wrap="))
            .collect();
        let missing: Vec<&&str> = NAMES.iter().filter(|n| !listed.contains(**n)).collect();
        assert!(
            missing.is_empty(),
            "not in drhook-wrap-mpi.list: {missing:?}"
        );
        let mut seen = std::collections::BTreeSet::new();
        for n in NAMES {
            assert!(seen.insert(*n), "{n} twice in the table");
        }
    }
}
