//! The exported `malloc` family (`__interpose_alloc!`).

/// Exports the `malloc` family (see the module documentation); `$p` is the
/// symbol prefix, `$src` the [`Source`] of the real functions.
#[macro_export]
#[doc(hidden)]
macro_rules! __interpose_alloc {
    ($p:literal, preload) => {
        $crate::__interpose_alloc!(@exports $p, $crate::alloc::Preload, {});
    };
    ($p:literal, wrap) => {
        $crate::__interpose_alloc!(@exports $p, W, {
            /// The real functions: `__real_<name>` (`-Wl,--wrap=<name>`).
            pub struct W;
            mod weak {
                $crate::__weak_address!(malloc, "__real_malloc");
                $crate::__weak_address!(free, "__real_free");
                $crate::__weak_address!(calloc, "__real_calloc");
                $crate::__weak_address!(realloc, "__real_realloc");
                $crate::__weak_address!(usable, "__real_malloc_usable_size");
                $crate::__weak_address!(posix_memalign, "__real_posix_memalign");
                $crate::__weak_address!(aligned_alloc, "__real_aligned_alloc");
                $crate::__weak_address!(memalign, "__real_memalign");
                $crate::__weak_address!(valloc, "__real_valloc");
                $crate::__weak_address!(pvalloc, "__real_pvalloc");
            }
            macro_rules! w {
                ($f:ident, $ty:ty) => {
                    fn $f() -> Option<$ty> {
                        let p = weak::$f();
                        // SAFETY: `__real_<name>` is the wrapped function.
                        (!p.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, $ty>(p) })
                    }
                };
            }
            impl a::Source for W {
                w!(malloc, a::MallocFn);
                w!(free, a::FreeFn);
                w!(calloc, a::CallocFn);
                w!(realloc, a::ReallocFn);
                w!(usable, a::UsableFn);
                w!(posix_memalign, a::PosixMemalignFn);
                w!(aligned_alloc, a::MemalignFn);
                w!(memalign, a::MemalignFn);
                w!(valloc, a::MallocFn);
                w!(pvalloc, a::MallocFn);
            }
        });
    };
    (@exports $p:literal, $src:ty, { $($extra:tt)* }) => {
        /// The `malloc` family (memory profile).
        #[doc(hidden)]
        #[allow(clippy::missing_safety_doc, missing_docs)]
        pub mod __drhook_alloc_exports {
            use std::ffi::{c_int, c_void};
            use $crate::alloc as a;
            $($extra)*
            type S = $src;
            /// The untracked shortcuts (statics of the library itself).
            static SHORT: a::Shortcuts = a::Shortcuts::new();
            extern "C" fn register_shortcuts() {
                a::register::<S>(&SHORT);
            }
            #[used]
            #[unsafe(link_section = ".init_array")]
            static REGISTER_SHORTCUTS: extern "C" fn() = register_shortcuts;

            #[unsafe(export_name = concat!($p, "malloc"))]
            pub unsafe extern "C" fn malloc(n: usize) -> *mut c_void {
                if let Some(real) = SHORT.malloc() {
                    // SAFETY: the C contract.
                    return unsafe { real(n) };
                }
                if let Some(real) = SHORT.tracked_malloc() {
                    // SAFETY: the C contract, in the tracked mode.
                    return unsafe { a::malloc_tracked(n, real) };
                }
                // SAFETY: the C contract.
                unsafe { a::malloc_full::<S>(n) }
            }
            #[unsafe(export_name = concat!($p, "free"))]
            pub unsafe extern "C" fn free(p: *mut c_void) {
                if let Some(real) = SHORT.free() {
                    // SAFETY: the C contract.
                    return unsafe { real(p) };
                }
                if let Some(real) = SHORT.tracked_free() {
                    // SAFETY: the C contract, in the tracked mode.
                    return unsafe { a::free_tracked(p, real) };
                }
                // SAFETY: the C contract.
                unsafe { a::free_full::<S>(p) }
            }
            #[unsafe(export_name = concat!($p, "calloc"))]
            pub unsafe extern "C" fn calloc(n: usize, s: usize) -> *mut c_void {
                if let Some(real) = SHORT.calloc() {
                    // SAFETY: the C contract.
                    return unsafe { real(n, s) };
                }
                // SAFETY: the C contract.
                unsafe { a::calloc_full::<S>(n, s) }
            }
            #[unsafe(export_name = concat!($p, "realloc"))]
            pub unsafe extern "C" fn realloc(p: *mut c_void, n: usize) -> *mut c_void {
                if let Some(real) = SHORT.realloc() {
                    // SAFETY: the C contract.
                    return unsafe { real(p, n) };
                }
                // SAFETY: the C contract.
                unsafe { a::realloc_full::<S>(p, n) }
            }
            #[unsafe(export_name = concat!($p, "reallocarray"))]
            pub unsafe extern "C" fn reallocarray(p: *mut c_void, n: usize, s: usize) -> *mut c_void {
                // SAFETY: the C contract.
                unsafe { a::reallocarray::<S>(p, n, s) }
            }
            #[unsafe(export_name = concat!($p, "posix_memalign"))]
            pub unsafe extern "C" fn posix_memalign(o: *mut *mut c_void, al: usize, n: usize) -> c_int {
                // SAFETY: the C contract.
                unsafe { a::posix_memalign::<S>(o, al, n) }
            }
            #[unsafe(export_name = concat!($p, "aligned_alloc"))]
            pub unsafe extern "C" fn aligned_alloc(al: usize, n: usize) -> *mut c_void {
                // SAFETY: the C contract.
                unsafe { a::aligned_alloc::<S>(al, n) }
            }
            #[unsafe(export_name = concat!($p, "memalign"))]
            pub unsafe extern "C" fn memalign(al: usize, n: usize) -> *mut c_void {
                // SAFETY: the C contract.
                unsafe { a::memalign::<S>(al, n) }
            }
            #[unsafe(export_name = concat!($p, "valloc"))]
            pub unsafe extern "C" fn valloc(n: usize) -> *mut c_void {
                // SAFETY: the C contract.
                unsafe { a::valloc::<S>(n) }
            }
            #[unsafe(export_name = concat!($p, "pvalloc"))]
            pub unsafe extern "C" fn pvalloc(n: usize) -> *mut c_void {
                // SAFETY: the C contract.
                unsafe { a::pvalloc::<S>(n) }
            }
            #[unsafe(export_name = concat!($p, "malloc_usable_size"))]
            pub unsafe extern "C" fn malloc_usable_size(p: *mut c_void) -> usize {
                // SAFETY: the C contract.
                unsafe { a::malloc_usable_size::<S>(p) }
            }
        }
    };
}
