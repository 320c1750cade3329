//! MPI start and end, from the C and the Fortran bindings alike, once per
//! process. The rank and size come from MPI itself
//! (`PMPI_Comm_rank/size(MPI_COMM_WORLD)`, found with `dlsym`: the layer
//! has no link-time MPI dependency), so a launcher that sets no rank
//! variable still gets one profile per rank. `MPI_COMM_WORLD` is
//! `&ompi_mpi_comm_world` in Open MPI and `0x44000000` in the MPICH family
//! (MPICH, Intel MPI, MVAPICH, Cray MPICH).
//!
//! The bodies of the wrapped `MPI_Init`, `MPI_Init_thread`,
//! `MPI_Finalize` and `MPI_Abort` (C and Fortran bindings) are here too,
//! for both layers that wrap them ([`Layer`]): the lifecycle layer, and
//! the link-time MPI library `libdrhook_mpi`.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use super::process;
use crate::engine;
use crate::events::{self, Ending, Events};

static INITIALISED: AtomicBool = AtomicBool::new(false);
static FINALISED: AtomicBool = AtomicBool::new(false);
static RANK: AtomicI32 = AtomicI32::new(-1);
static SIZE: AtomicI32 = AtomicI32::new(-1);

/// Which library a wrapper is in.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Layer {
    /// The lifecycle layer (the preload library, or linked with `--wrap`):
    /// the process ends through its state machine (`process`).
    Lifecycle,
    /// The link-time MPI library `libdrhook_mpi`, which has no lifecycle
    /// layer: the program's own engine (the one its `libdrhook` offered)
    /// is told directly. Without that offer (under `drhook run` the
    /// preload library's layer takes it, and its wrappers, called first,
    /// do the work) these wrappers only pass the calls on.
    Linked,
}

impl Layer {
    /// Whether this layer's wrappers do anything.
    fn live(self) -> bool {
        self == Layer::Lifecycle || engine::is_programs_engine()
    }
}

/// The MPICH family's `MPI_COMM_WORLD`.
const MPICH_COMM_WORLD: usize = 0x4400_0000;

/// An MPI symbol (`dlsym`; through a weak reference in a static program).
pub fn symbol(name: &CStr) -> *mut c_void {
    if crate::real::link_mode() {
        return crate::real::weak::mpi_symbol(name);
    }
    // SAFETY: global lookup of a NUL-terminated name.
    unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) }
}

/// `MPI_COMM_WORLD`'s handle.
pub(super) fn world_comm() -> usize {
    let ompi = symbol(c"ompi_mpi_comm_world");
    if ompi.is_null() {
        MPICH_COMM_WORLD
    } else {
        ompi as usize
    }
}

/// `(rank, size)` of `MPI_COMM_WORLD`, asked of MPI.
fn world() -> Option<(c_int, c_int)> {
    let rank_f = symbol(c"PMPI_Comm_rank");
    let size_f = symbol(c"PMPI_Comm_size");
    if rank_f.is_null() || size_f.is_null() {
        return None;
    }
    let comm = world_comm();
    type Query = unsafe extern "C" fn(usize, *mut c_int) -> c_int;
    // SAFETY: `int PMPI_Comm_rank(MPI_Comm, int *)`; MPI_Comm is a pointer
    // (Open MPI) or an int (MPICH), both passed in one register.
    let (rank_f, size_f): (Query, Query) = unsafe {
        (
            std::mem::transmute::<*mut c_void, Query>(rank_f),
            std::mem::transmute::<*mut c_void, Query>(size_f),
        )
    };
    let (mut rank, mut size) = (-1, -1);
    // SAFETY: MPI is initialised (called after a successful MPI_Init).
    let ok = unsafe { rank_f(comm, &mut rank) == 0 && size_f(comm, &mut size) == 0 };
    (ok && rank >= 0 && size > 0).then_some((rank, size))
}

/// After a successful `MPI_Init*` (any binding).
pub(crate) fn after_init(layer: Layer) {
    if !layer.live() || INITIALISED.swap(true, Ordering::AcqRel) {
        return;
    }
    let Some((rank, size)) = world() else {
        crate::sys::diag("MPI is initialised but its rank could not be read (PMPI_Comm_rank)");
        return;
    };
    RANK.store(rank, Ordering::Release);
    SIZE.store(size, Ordering::Release);
    if layer == Layer::Linked {
        let _ = std::panic::catch_unwind(|| engine::mpi_init_linked(rank, size));
        // A process that exits without MPI_Finalize says so (its engine
        // writes its reports at its exit, as it always does): registered
        // after the engine started (`mpi_init_linked`), so that the
        // message comes before that write.
        // SAFETY: registers a plain `extern "C"` function.
        unsafe { libc::atexit(linked_exit) };
        return;
    }
    let _ = std::panic::catch_unwind(|| engine::mpi_init(rank, size));
    events::each(Events::MPI, |m| m.init_mpi(rank, size));
}

/// At the exit of a process linked with `libdrhook_mpi` (see [`after_init`]).
extern "C" fn linked_exit() {
    ending_unfinalised(Ending::Exit(0));
}

/// Just before `MPI_Init*` (any binding), while MPI is not initialised.
pub(crate) fn before_init(layer: Layer) {
    if layer == Layer::Lifecycle && !INITIALISED.load(Ordering::Acquire) {
        events::each(Events::MPI, |m| m.pre_init_mpi());
    }
}

/// After `MPI_Finalize` (any binding) returned, once.
pub(crate) fn after_finalize(layer: Layer) {
    static DONE: AtomicBool = AtomicBool::new(false);
    if layer == Layer::Lifecycle
        && FINALISED.load(Ordering::Acquire)
        && !DONE.swap(true, Ordering::AcqRel)
    {
        events::each(Events::MPI, |m| m.post_fini_mpi());
    }
}

/// Just before `MPI_Finalize` (any binding): the MPI monitors' `fini_mpi`,
/// then the process ends (its profile is written now, while MPI and the
/// rank are known). In `libdrhook_mpi` ([`Layer::Linked`]) the process
/// ends here only with `reduce` (else the program's engine writes its
/// reports at its exit, as without the library).
pub(crate) fn before_finalize(layer: Layer) {
    if !layer.live()
        || !INITIALISED.load(Ordering::Acquire)
        || FINALISED.swap(true, Ordering::AcqRel)
    {
        return;
    }
    // `DR_HOOK_OPT=reduce` (the process's engine, whichever copy it is):
    // this rank's profile is folded as it is made, then the ranks reduce
    // before PMPI_Finalize.
    let reduce = engine::reduce_begin();
    match layer {
        Layer::Lifecycle => {
            events::each(Events::MPI, |m| m.fini_mpi());
            process::fini_process(Ending::MpiFinalize);
        }
        Layer::Linked if reduce => engine::end_linked(false),
        Layer::Linked => {}
    }
    if let (true, Some(rank), Some(size)) = (reduce, rank(), size()) {
        super::mpi_reduce::reduce(rank, size);
    }
}

/// `MPI_Abort(comm, code)` (any binding), before the real one, which ends
/// the job: this process ends now, its profile written (the MPI monitors
/// get no `fini_mpi`: MPI may not be usable any more), with a message.
pub fn before_abort(code: c_int, layer: Layer) {
    if !layer.live() || FINALISED.swap(true, Ordering::AcqRel) {
        return;
    }
    let mut line = [0u8; 96];
    let n = rank_line(
        &mut line,
        b"called MPI_Abort (error code ",
        code as i64,
        b")",
    );
    crate::sys::diag_parts(&[&line[..n], b"; its reports are written now"]);
    match layer {
        Layer::Lifecycle => {
            process::fini_process(Ending::Abort);
        }
        Layer::Linked => engine::end_linked(true),
    }
}

/// The process ends (any way but `MPI_Finalize`) while MPI is initialised
/// and not finalised: says so (its reports are written as for any end).
pub(crate) fn ending_unfinalised(how: Ending) {
    if !INITIALISED.load(Ordering::Acquire) || FINALISED.load(Ordering::Acquire) {
        return;
    }
    if matches!(how, Ending::Exec | Ending::MpiFinalize) {
        return;
    }
    let mut line = [0u8; 96];
    let n = rank_line(&mut line, b"ends without MPI_Finalize", i64::MIN, b"");
    crate::sys::diag_parts(&[&line[..n], b"; its reports are written at its end"]);
}

/// `MPI rank R <what>[<value><tail>]` into `buf`, without allocating; its
/// length.
fn rank_line(buf: &mut [u8], what: &[u8], value: i64, tail: &[u8]) -> usize {
    use std::io::Write as _;
    let mut c = std::io::Cursor::new(buf);
    let _ = write!(c, "MPI rank {} ", RANK.load(Ordering::Acquire));
    let _ = c.write_all(what);
    if value != i64::MIN {
        let _ = write!(c, "{value}");
    }
    let _ = c.write_all(tail);
    c.position() as usize
}

/// This process's rank in `MPI_COMM_WORLD`, once MPI is initialised.
pub fn rank() -> Option<c_int> {
    let r = RANK.load(Ordering::Acquire);
    (r >= 0).then_some(r)
}

/// The size of `MPI_COMM_WORLD`, once MPI is initialised.
pub fn size() -> Option<c_int> {
    let s = SIZE.load(Ordering::Acquire);
    (s > 0).then_some(s)
}

// --- the wrappers' bodies ---------------------------------------------------

/// `MPI_Init(argc, argv)`.
///
/// # Safety
/// As `MPI_Init`; `real` is the real one.
pub unsafe fn mpi_init(
    layer: Layer,
    real: unsafe extern "C" fn(*mut c_int, *mut *mut *mut c_char) -> c_int,
    argc: *mut c_int,
    argv: *mut *mut *mut c_char,
) -> c_int {
    before_init(layer);
    // SAFETY: caller contract.
    let r = unsafe { real(argc, argv) };
    if r == 0 {
        after_init(layer);
    }
    r
}

/// `MPI_Init_thread(argc, argv, required, provided)`.
///
/// # Safety
/// As `MPI_Init_thread`; `real` is the real one.
pub unsafe fn mpi_init_thread(
    layer: Layer,
    real: unsafe extern "C" fn(*mut c_int, *mut *mut *mut c_char, c_int, *mut c_int) -> c_int,
    argc: *mut c_int,
    argv: *mut *mut *mut c_char,
    required: c_int,
    provided: *mut c_int,
) -> c_int {
    before_init(layer);
    // SAFETY: caller contract.
    let r = unsafe { real(argc, argv, required, provided) };
    if r == 0 {
        after_init(layer);
    }
    r
}

/// `MPI_Finalize()`.
///
/// # Safety
/// As `MPI_Finalize`; `real` is the real one.
pub unsafe fn mpi_finalize(layer: Layer, real: unsafe extern "C" fn() -> c_int) -> c_int {
    before_finalize(layer);
    // SAFETY: caller contract.
    let r = unsafe { real() };
    after_finalize(layer);
    r
}

/// Fortran `MPI_INIT(ierr)`.
///
/// # Safety
/// As the Fortran binding; `real` is the real one.
pub unsafe fn mpi_init_f(layer: Layer, real: unsafe extern "C" fn(*mut c_int), ierr: *mut c_int) {
    before_init(layer);
    // SAFETY: caller contract.
    unsafe { real(ierr) };
    // SAFETY: `ierr` is the caller's INTEGER.
    if ierr.is_null() || unsafe { *ierr } == 0 {
        after_init(layer);
    }
}

/// Fortran `MPI_INIT_THREAD(required, provided, ierr)`.
///
/// # Safety
/// As the Fortran binding; `real` is the real one.
pub unsafe fn mpi_init_thread_f(
    layer: Layer,
    real: unsafe extern "C" fn(*const c_int, *mut c_int, *mut c_int),
    required: *const c_int,
    provided: *mut c_int,
    ierr: *mut c_int,
) {
    before_init(layer);
    // SAFETY: caller contract.
    unsafe { real(required, provided, ierr) };
    // SAFETY: as above.
    if ierr.is_null() || unsafe { *ierr } == 0 {
        after_init(layer);
    }
}

/// Fortran `MPI_FINALIZE(ierr)`.
///
/// # Safety
/// As the Fortran binding; `real` is the real one.
pub unsafe fn mpi_finalize_f(
    layer: Layer,
    real: unsafe extern "C" fn(*mut c_int),
    ierr: *mut c_int,
) {
    before_finalize(layer);
    // SAFETY: caller contract.
    unsafe { real(ierr) };
    after_finalize(layer);
}
