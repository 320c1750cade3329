//! MPI calls as rows of the calling tree (`DR_HOOK_OPT=mpi`, implied by
//! `drhook run --mpi`): every MPI function of [`table`], C and Fortran
//! bindings, is wrapped (the MPI profiling interface: the wrapper calls
//! the next definition of the same name, `PMPI_*`'s alias in the MPI
//! library), and each call is a Dr.Hook routine named by its MPI name
//! (`MPI_Send`, also when the program called `mpi_send` from Fortran)
//! under the routine that called it: calls and time like any routine,
//! plus, in `<profile>-mpi`, the bytes sent and received (count × type
//! size of the call's buffers, `PMPI_Type_size`), a message-size histogram
//! and, for the calls that name a communicator (collectives), its size
//! (`PMPI_Comm_size`). Time spent in `MPI_Wait*`/`MPI_Test*` is a row
//! under the routine that waited.
//!
//! The wrappers keep the MPI ABI neutral: handles (`MPI_Comm`,
//! `MPI_Datatype`, `MPI_Request`...) and every other argument travel as
//! machine words untouched, so that Open MPI (pointers) and the MPICH
//! family (integers) take the same code; the MPI functions the figures
//! need (`PMPI_Type_size`, `PMPI_Comm_size`, `PMPI_Comm_rank`, and
//! `PMPI_Type_f2c`/`PMPI_Comm_f2c` for Fortran handles) are found with
//! `dlsym` once (no link-time MPI dependency).
//!
//! Whether calls are recorded is decided once, at the first wrapped call,
//! from `DR_HOOK`, `DR_HOOK_OPT` (the `mpi` token) and whether the engine
//! is on; otherwise a wrapper is a load, a branch and the real call. An
//! MPI call made inside another one (an MPI library calling its own public
//! names) or by the layer itself is not a row.
//!
//! MPI-IO (`MPI_File_*`): the calls are rows with their bytes (written as
//! "sent", read as "received"); with the I/O report on (`io`), the C
//! and Fortran bindings' calls are also its MPI-IO level, per file
//! (`events::MpiIoSink`, which the I/O tool installs: opens, reads and
//! writes with their bytes, other calls), above what the MPI library's
//! own POSIX calls do to the file (seen by the I/O tool as any others,
//! under the `MPI_File_*` row).
//!
//! * [`table`] — the MPI functions, their arguments and their figures, as
//!   data (`__mpi_table!`).
//! * [`measure`] — a call's bytes and communicator size from its
//!   arguments.
//! * `cache` — datatype sizes, communicator sizes and ranks per handle.
//! * `exports` — the exported wrappers (`__interpose_mpi_calls!`);
//!   `fortran_open` — Fortran's `MPI_File_open` (a `CHARACTER` argument).

mod cache;
mod exports;
mod fortran_open;
pub mod measure;
pub mod table;

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicPtr, AtomicU8, Ordering};

use crate::engine::hooks;
use crate::sys::env::dr_hook_opt_has;
use crate::sys::tls;

pub use crate::lifecycle::mpi::before_abort;
pub use fortran_open::fortran_file_opened;
pub use measure::{Binding, Dir, Scale, Spec, Term};

/// Guard bit of an MPI call in progress on this thread (a call made
/// inside it is not a row).
const IN_MPI: u64 = 1 << 9;

const UNDECIDED: u8 = 0;
const OFF: u8 = 1;
const ON: u8 = 2;
static MODE: AtomicU8 = AtomicU8::new(UNDECIDED);

/// Whether MPI calls are rows in this process.
#[inline(always)]
pub fn enabled() -> bool {
    match MODE.load(Ordering::Relaxed) {
        ON => true,
        OFF => false,
        _ => decide(),
    }
}

/// [`enabled`] in the link-time library `libdrhook_mpi`, which has no
/// lifecycle layer: on when `DR_HOOK_OPT` has `mpi` and the program's
/// `libdrhook` offered its engine (its constructor did, as to the preload
/// layer: see `crate::engine`). Under `drhook run` the preload library's
/// layer takes that offer, and only its wrappers record.
#[inline(always)]
pub fn enabled_link_time() -> bool {
    match MODE.load(Ordering::Relaxed) {
        ON => true,
        OFF => false,
        _ => decide_link_time(),
    }
}

#[cold]
#[inline(never)]
fn decide() -> bool {
    settle(dr_hook_opt_has(&[b"MPI"]) && crate::engine::on())
}

#[cold]
#[inline(never)]
fn decide_link_time() -> bool {
    settle(dr_hook_opt_has(&[b"MPI"]) && crate::engine::is_programs_engine())
}

fn settle(on: bool) -> bool {
    let m = if on { ON } else { OFF };
    match MODE.compare_exchange(UNDECIDED, m, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => on,
        Err(other) => other == ON,
    }
}

/// One wrapped MPI function: its MPI name (the row's) and the engine's
/// site for it. Immutable itself (the site is the wrapper's own static
/// word), so that each wrapper's inlined [`call`] reads its fields as
/// constants: the figures of its [`Spec`] are folded into the wrapper.
pub struct Func {
    name: &'static str,
    site: &'static AtomicPtr<c_void>,
    spec: Spec,
    file: FileOp,
    forget: cache::Forget,
}

impl Func {
    /// The function called `name` (its C name) with the figures of
    /// `spec`; `site` is its word for the engine's site (null at first).
    pub const fn new(name: &'static str, spec: Spec, site: &'static AtomicPtr<c_void>) -> Func {
        Func {
            name,
            site,
            spec,
            file: FileOp::of(name, &spec),
            forget: if is(name.as_bytes(), b"MPI_Type_free", true) {
                cache::Forget::Types
            } else if is(name.as_bytes(), b"MPI_Comm_free", true) {
                cache::Forget::Comms
            } else {
                cache::Forget::Nothing
            },
        }
    }
}

/// Whether `a` starts with `b` (`whole`: is `b`), in a constant.
const fn is(a: &[u8], b: &[u8], whole: bool) -> bool {
    if a.len() < b.len() || (whole && a.len() != b.len()) {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// What an `MPI_File_*` call is to the I/O report's MPI-IO level.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum FileOp {
    /// Not an MPI-IO call on a handle (nor `MPI_File_open`).
    None,
    /// `MPI_File_open`: the handle is written at argument 4.
    Open,
    /// `MPI_File_close`: the handle is read at argument 0.
    Close,
    /// Reads its received bytes from the handle at argument 0.
    Read,
    /// Writes its sent bytes.
    Write,
    /// Another call on the handle at argument 0.
    Other,
}

impl FileOp {
    const fn of(name: &str, spec: &Spec) -> FileOp {
        let n = name.as_bytes();
        if !is(n, b"MPI_File_", false) || is(n, b"MPI_File_delete", true) {
            FileOp::None
        } else if is(n, b"MPI_File_open", true) {
            FileOp::Open
        } else if is(n, b"MPI_File_close", true) {
            FileOp::Close
        } else {
            match spec.terms[0].dir {
                Dir::Sent => FileOp::Write,
                Dir::Recv => FileOp::Read,
                Dir::None => FileOp::Other,
            }
        }
    }
}

/// Whether a wrapper's result says the call succeeded (`MPI_SUCCESS`; a
/// Fortran wrapper's error code is an argument: not known).
pub trait Outcome {
    /// Whether it succeeded.
    fn succeeded(&self) -> bool;
}

impl Outcome for c_int {
    fn succeeded(&self) -> bool {
        *self == 0
    }
}

impl Outcome for () {
    fn succeeded(&self) -> bool {
        false
    }
}

/// The C handle of the file of an `MPI_File_*` call (its argument 0),
/// read before the call (`MPI_File_close` sets it to `MPI_FILE_NULL`): in
/// C the handle itself (`MPI_File_close`: the one its pointer points
/// to), in Fortran the `INTEGER` it points to, converted.
///
/// # Safety
/// `args` are the call's arguments in `binding`.
#[cold]
#[inline(never)]
unsafe fn file_handle(f: &Func, binding: Binding, args: &[usize]) -> usize {
    let Some(&a) = args.first() else {
        return 0;
    };
    match binding {
        Binding::C if f.file != FileOp::Close => a,
        _ if a == 0 => 0,
        // SAFETY: MPI_File_close's contract: a valid `MPI_File *`.
        Binding::C => unsafe { *(a as *const usize) },
        // SAFETY: the Fortran binding's contract: a valid INTEGER.
        Binding::Fortran => measure::file_f2c(unsafe { *(a as *const c_int) }),
    }
}

/// Hands an `MPI_File_*` call to the I/O report (when it is on): the
/// file's C `handle` (see [`file_handle`]). A Fortran `MPI_File_open` is
/// handed over by its own wrapper ([`fortran_file_opened`]).
#[cold]
#[inline(never)]
fn to_io_report(
    f: &Func,
    binding: Binding,
    args: &[usize],
    handle: usize,
    ok: bool,
    m: &measure::Measured,
) {
    let Some(s) = crate::events::mpi_io_sink() else {
        return;
    };
    match f.file {
        FileOp::None => {}
        FileOp::Open if binding == Binding::Fortran => {}
        FileOp::Open => {
            let name = args.get(1).copied().unwrap_or(0);
            let fh = args.get(4).copied().unwrap_or(0);
            if ok && name != 0 && fh != 0 {
                // SAFETY: MPI_File_open's contract: a C string, and the
                // handle it wrote at `fh` (it succeeded).
                let (path, h) = unsafe {
                    (
                        std::ffi::CStr::from_ptr(name as *const std::ffi::c_char),
                        *(fh as *const usize),
                    )
                };
                (s.opened)(h, path);
            }
        }
        FileOp::Close => (s.closed)(handle),
        FileOp::Read => (s.data)(handle, false, m.recv),
        FileOp::Write => (s.data)(handle, true, m.sent),
        FileOp::Other => (s.other)(handle),
    }
}

/// The body of every wrapper: `real` is the real call, with the
/// arguments `args` (as machine words) of a call in `binding`. Records
/// the call as a row (the wrapper checked that MPI calls are recorded:
/// [`enabled`]), unless it is made inside another MPI call or by the
/// layer itself.
///
/// # Safety
/// `args` are the arguments of a call to `f`'s function in `binding`, as
/// its caller passed them (pointers valid as MPI requires).
#[inline(always)]
pub unsafe fn call<R: Outcome>(
    f: &'static Func,
    binding: Binding,
    args: &[usize],
    real: impl FnOnce() -> R,
) -> R {
    let g = tls::get(tls::GUARD);
    if g & (IN_MPI | tls::OWN_WORK) != 0 {
        return real();
    }
    tls::set(tls::GUARD, g | IN_MPI);
    if f.forget != cache::Forget::Nothing {
        cache::forget(f.forget);
    }
    // SAFETY: caller contract.
    let m = unsafe { measure::measure(&f.spec, binding, args) };
    let file = f.file != FileOp::None;
    let handle = if file {
        // SAFETY: caller contract.
        unsafe { file_handle(f, binding, args) }
    } else {
        0
    };
    let hk = hooks();
    let h = (hk.mpi_enter)(f.site.as_ptr(), f.name.as_ptr(), f.name.len());
    let r = real();
    (hk.mpi_exit)(h, m.sent, m.recv, m.data as c_int, m.comm_size);
    if file {
        to_io_report(f, binding, args, handle, r.succeeded(), &m);
    }
    tls::set(tls::GUARD, g);
    r
}
