//! The `printf` family on streams and descriptors (`fprintf`, `printf`,
//! `vfprintf`, `vprintf`, `dprintf`, `vdprintf`, their `__*_chk` forms
//! that `_FORTIFY_SOURCE` substitutes), the `scanf` family on streams
//! (`fscanf`, `scanf`, `vfscanf`, `vscanf`, their `__isoc99_` forms), and
//! `puts`, `putc`, `putchar`. The functions with variable arguments are C
//! (`c/stdio.c`): they take their `va_list` and come to
//! [`drhook_attach_io_vprintf`], which calls the real `v*` function.
//! Bytes: `printf`'s result; `scanf`'s, the bytes it consumed from the
//! stream's buffer. `sprintf`/`snprintf` (no I/O) are not wrapped.

use std::ffi::{c_char, c_int};
use std::sync::atomic::Ordering;

use super::recording;
use super::slots::{self as s, *};
use super::stdio::{data_call, fputc_as, stdio_data_fd};
use super::stream::{Given, consumed, read_at, wrote_through};

/// The functions of `c/stdio.c` the exported ones jump to.
#[doc(hidden)]
#[allow(missing_docs)]
pub mod c {
    unsafe extern "C" {
        pub fn drhook_attach_c_fprintf();
        pub fn drhook_attach_c_printf();
        pub fn drhook_attach_c_fprintf_chk();
        pub fn drhook_attach_c_printf_chk();
        pub fn drhook_attach_c_dprintf();
        pub fn drhook_attach_c_dprintf_chk();
        pub fn drhook_attach_c_fscanf();
        pub fn drhook_attach_c_scanf();
        pub fn drhook_attach_c_isoc99_fscanf();
        pub fn drhook_attach_c_isoc99_scanf();
        pub fn drhook_attach_c_vfprintf();
        pub fn drhook_attach_c_vprintf();
        pub fn drhook_attach_c_vfprintf_chk();
        pub fn drhook_attach_c_vprintf_chk();
        pub fn drhook_attach_c_vdprintf();
        pub fn drhook_attach_c_vdprintf_chk();
        pub fn drhook_attach_c_vfscanf();
        pub fn drhook_attach_c_vscanf();
        pub fn drhook_attach_c_isoc99_vfscanf();
        pub fn drhook_attach_c_isoc99_vscanf();
        /// The real function of each exported one (`__io_variadic!`),
        /// null until a call finds I/O not profiled.
        pub static drhook_attach_c_fast: [std::sync::atomic::AtomicPtr<std::ffi::c_void>; 20];
    }
}

/// The exported functions in the order of `c/stdio.c`'s indices.
static EXPORTED: [Slot; 20] = [
    Slot::new(c"fprintf"),
    Slot::new(c"printf"),
    Slot::new(c"__fprintf_chk"),
    Slot::new(c"__printf_chk"),
    Slot::new(c"dprintf"),
    Slot::new(c"__dprintf_chk"),
    Slot::new(c"fscanf"),
    Slot::new(c"scanf"),
    Slot::new(c"__isoc99_fscanf"),
    Slot::new(c"__isoc99_scanf"),
    Slot::new(c"vfprintf"),
    Slot::new(c"vprintf"),
    Slot::new(c"__vfprintf_chk"),
    Slot::new(c"__vprintf_chk"),
    Slot::new(c"vdprintf"),
    Slot::new(c"__vdprintf_chk"),
    Slot::new(c"vfscanf"),
    Slot::new(c"vscanf"),
    Slot::new(c"__isoc99_vfscanf"),
    Slot::new(c"__isoc99_vscanf"),
];

/// I/O is not profiled in this process: the exported function `which`
/// jumps straight to its real one from now on.
#[cold]
#[inline(never)]
fn go_direct(which: c_int) {
    if !super::decided_off() {
        return;
    }
    if let Some(slot) = EXPORTED.get(which as usize)
        && let Some(p) = Preload::get(slot)
    {
        // SAFETY: `c/stdio.c`'s table of 20 pointers, written atomically.
        unsafe { c::drhook_attach_c_fast[which as usize].store(p, Ordering::Relaxed) };
    }
}

unsafe extern "C" {
    static stdout: *mut libc::FILE;
}

/// The program's `stdout` now.
#[inline(always)]
fn out() -> *mut libc::FILE {
    // SAFETY: the C library's variable, read.
    unsafe { std::ptr::addr_of!(stdout).read() }
}

/// What [`drhook_attach_io_vprintf`] calls (`c/stdio.c` numbers them the
/// same).
const VFPRINTF: c_int = 0;
const VFPRINTF_CHK: c_int = 1;
const VDPRINTF: c_int = 2;
const VDPRINTF_CHK: c_int = 3;
const VFSCANF: c_int = 4;
const ISOC99_VFSCANF: c_int = 5;

/// The `printf` and `scanf` families, from `c/stdio.c`: `which` the
/// exported function (its index in `EXPORTED`), `kind` which real
/// function (above), on the stream `fp` (null: `stdout`) or the
/// descriptor `fd`, `flag` the fortify level of a `__*_chk` one.
///
/// # Safety
/// The C contract of the function `kind` names; `ap` is the C shim's
/// `va_list`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn drhook_attach_io_vprintf(
    which: c_int,
    kind: c_int,
    fp: *mut libc::FILE,
    fd: c_int,
    flag: c_int,
    fmt: *const c_char,
    ap: VaList,
) -> c_int {
    let fp = if fp.is_null() && kind != VDPRINTF && kind != VDPRINTF_CHK {
        out()
    } else {
        fp
    };
    let rec = recording();
    if !rec {
        go_direct(which);
    }
    if !rec {
        // SAFETY: the C contract.
        return unsafe { plain(kind, fp, fd, flag, fmt, ap) };
    }
    // One function per kind, inlined only in optimised builds: a thread's
    // stack may be as small as the C library allows, and an unoptimised
    // build would give this frame the locals of every kind at once (3 992
    // bytes; optimised, 88 bytes, and a call more would cost 14
    // instructions per `fprintf`).
    // SAFETY: the C contract.
    unsafe {
        match kind {
            VFPRINTF => rec_vfprintf(fp, fmt, ap),
            VFPRINTF_CHK => rec_vfprintf_chk(fp, flag, fmt, ap),
            VDPRINTF | VDPRINTF_CHK => rec_vdprintf(kind, fd, flag, fmt, ap),
            VFSCANF | ISOC99_VFSCANF => rec_vfscanf(kind, fp, fmt, ap),
            _ => {
                crate::sys::set_errno(libc::EINVAL);
                -1
            }
        }
    }
}

/// The real `v*` function of `kind`, recording off.
///
/// # Safety
/// As [`drhook_attach_io_vprintf`].
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
unsafe fn plain(
    kind: c_int,
    fp: *mut libc::FILE,
    fd: c_int,
    flag: c_int,
    fmt: *const c_char,
    ap: VaList,
) -> c_int {
    type P = Preload;
    match kind {
        VFPRINTF | VFSCANF | ISOC99_VFSCANF => {
            let f = match kind {
                VFPRINTF => real!(P, s::VFPRINTF, VfprintfFn),
                VFSCANF => real!(P, s::VFSCANF, VfprintfFn),
                _ => real!(P, s::ISOC99_VFSCANF, VfprintfFn),
            };
            // SAFETY: the C contract.
            unsafe { f(fp, fmt, ap) }
        }
        VFPRINTF_CHK => {
            let f = real!(P, s::VFPRINTF_CHK, VfprintfChkFn);
            // SAFETY: the C contract.
            unsafe { f(fp, flag, fmt, ap) }
        }
        VDPRINTF => {
            let f = real!(P, s::VDPRINTF, VdprintfFn);
            // SAFETY: the C contract.
            unsafe { f(fd, fmt, ap) }
        }
        VDPRINTF_CHK => {
            let f = real!(P, s::VDPRINTF_CHK, VdprintfChkFn);
            // SAFETY: the C contract.
            unsafe { f(fd, flag, fmt, ap) }
        }
        _ => {
            crate::sys::set_errno(libc::EINVAL);
            -1
        }
    }
}

/// `vfprintf`, recording on.
///
/// # Safety
/// The C contract.
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
unsafe fn rec_vfprintf(fp: *mut libc::FILE, fmt: *const c_char, ap: VaList) -> c_int {
    let f = real!(Preload, s::VFPRINTF, VfprintfFn);
    // SAFETY: the C contract.
    printed(fp, || unsafe { f(fp, fmt, ap) })
}

/// `__vfprintf_chk`, recording on.
///
/// # Safety
/// The C contract.
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
unsafe fn rec_vfprintf_chk(
    fp: *mut libc::FILE,
    flag: c_int,
    fmt: *const c_char,
    ap: VaList,
) -> c_int {
    let f = real!(Preload, s::VFPRINTF_CHK, VfprintfChkFn);
    // SAFETY: the C contract.
    printed(fp, || unsafe { f(fp, flag, fmt, ap) })
}

/// `vdprintf`, `__vdprintf_chk`, recording on.
///
/// # Safety
/// The C contract.
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
unsafe fn rec_vdprintf(
    kind: c_int,
    fd: c_int,
    flag: c_int,
    fmt: *const c_char,
    ap: VaList,
) -> c_int {
    type P = Preload;
    let call = || {
        if kind == VDPRINTF {
            let f = real!(P, s::VDPRINTF, VdprintfFn);
            // SAFETY: the C contract.
            unsafe { f(fd, fmt, ap) }
        } else {
            let f = real!(P, s::VDPRINTF_CHK, VdprintfChkFn);
            // SAFETY: the C contract.
            unsafe { f(fd, flag, fmt, ap) }
        }
    };
    super::record::timed(call, |r, a, t| {
        let n = r.max(0) as u64;
        stdio_data_fd(fd, false, true, n, a, t);
        wrote_through(fd, n, a, t);
    })
}

/// `vfscanf`, `__isoc99_vfscanf`, recording on.
///
/// # Safety
/// The C contract.
#[cfg_attr(debug_assertions, inline(never))]
#[cfg_attr(not(debug_assertions), inline(always))]
unsafe fn rec_vfscanf(kind: c_int, fp: *mut libc::FILE, fmt: *const c_char, ap: VaList) -> c_int {
    let slot = if kind == VFSCANF {
        &s::VFSCANF
    } else {
        &s::ISOC99_VFSCANF
    };
    let f = real!(Preload, *slot, VfprintfFn);
    let at = read_at(fp);
    // SAFETY: the C contract.
    data_call(
        fp,
        false,
        Given::Pieces,
        || unsafe { f(fp, fmt, ap) },
        |_| consumed(fp, at),
    )
}

/// A `printf` on `fp`, recording on: its result the bytes written.
#[inline(always)]
fn printed(fp: *mut libc::FILE, f: impl FnOnce() -> c_int) -> c_int {
    data_call(fp, true, Given::Pieces, f, |r| r.max(0) as u64)
}

/// `puts`: the string and a newline on `stdout`.
///
/// # Safety
/// The C contract.
pub unsafe fn puts<S: Source>(str: *const c_char) -> c_int {
    let f = real!(S, s::PUTS, PutsFn);
    if !recording() || str.is_null() {
        // SAFETY: the C contract.
        return unsafe { f(str) };
    }
    // SAFETY: a C string.
    let n = unsafe { libc::strlen(str) } as u64 + 1;
    // SAFETY: the C contract.
    data_call(
        out(),
        true,
        Given::Piece,
        || unsafe { f(str) },
        |r| if r >= 0 { n } else { 0 },
    )
}

/// `putchar`.
///
/// # Safety
/// The C contract.
pub unsafe fn putchar<S: Source>(ch: c_int) -> c_int {
    let f = real!(S, s::PUTCHAR, PutcharFn);
    if !recording() {
        // SAFETY: the C contract.
        return unsafe { f(ch) };
    }
    // SAFETY: the C contract.
    data_call(
        out(),
        true,
        Given::Piece,
        || unsafe { f(ch) },
        |r| (r >= 0) as u64,
    )
}

/// `putc`, `_IO_putc`.
///
/// # Safety
/// The C contract.
pub unsafe fn putc<S: Source>(which: &'static Slot, ch: c_int, fp: *mut libc::FILE) -> c_int {
    // SAFETY: the C contract.
    unsafe { fputc_as::<S>(which, ch, fp) }
}
