//! A call's figures from its arguments: bytes sent and received (count ×
//! type size of each buffer the call names, as [`Spec`] says), whether it
//! had a data buffer, and the size of its communicator. Handles and
//! counts are read as the binding passes them: machine words in C (an
//! `int` in the low half), pointers to `INTEGER`s in Fortran (handles
//! converted with `PMPI_Type_f2c`/`PMPI_Comm_f2c`). The MPI functions
//! are found once, with `dlsym`; their answers are remembered per handle
//! (`super::cache`).

use std::ffi::{CStr, c_int, c_void};
use std::sync::atomic::{AtomicPtr, Ordering};

use super::cache::{COMM_RANKS, COMM_SIZES, TYPE_SIZES};
use crate::lifecycle::mpi::symbol;

/// The binding a call came through.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Binding {
    /// C: arguments by value.
    C,
    /// Fortran (`mpif.h`, `use mpi`, `use mpi_f08`): arguments by
    /// reference, handles as `INTEGER`s.
    Fortran,
}

/// Which way a buffer's bytes go.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Dir {
    /// None: the term is unused.
    None,
    /// Sent (written, for `MPI_File_*`).
    Sent,
    /// Received (read, for `MPI_File_*`).
    Recv,
}

/// How a buffer's count × type size scales.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Scale {
    /// As it is.
    One,
    /// × the communicator's size (one block per process).
    TimesSize,
    /// As it is, at the root only (elsewhere the argument is ignored).
    AtRoot,
    /// × the communicator's size, at the root only.
    AtRootTimesSize,
    /// As it is, everywhere but at the root.
    NotAtRoot,
    /// The count argument is an array of one count per process: their sum.
    SumOfCounts,
    /// As [`Scale::SumOfCounts`], at the root only.
    AtRootSumOfCounts,
    /// The count argument is an array of one count per process: this
    /// process's.
    CountOfRank,
}

/// One buffer of a call: its direction, the indexes of its count and type
/// arguments, and how it scales.
#[derive(Clone, Copy, Debug)]
pub struct Term {
    /// Its direction.
    pub dir: Dir,
    /// The count argument's index.
    pub count: u8,
    /// The datatype argument's index.
    pub ty: u8,
    /// How it scales.
    pub scale: Scale,
}

/// What a call's figures are made of.
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    /// Its buffers (unused ones: [`Dir::None`]).
    pub terms: [Term; 2],
    /// The index of its communicator argument, whose size is recorded
    /// (collectives), or -1.
    pub comm: i8,
    /// The index of its root argument, or -1.
    pub root: i8,
    /// No root and every buffer as it is ([`Scale::One`]): a C call's
    /// figures take [`measure`]'s short path.
    pub simple: bool,
}

const NO_TERM: Term = Term {
    dir: Dir::None,
    count: 0,
    ty: 0,
    scale: Scale::One,
};

impl Spec {
    /// Calls and time only.
    pub const NONE: Spec = Spec {
        terms: [NO_TERM, NO_TERM],
        comm: -1,
        root: -1,
        simple: true,
    };

    /// A buffer sent: count and type at these indexes.
    pub const fn sent(self, count: u8, ty: u8, scale: Scale) -> Spec {
        self.term(Dir::Sent, count, ty, scale)
    }

    /// A buffer received.
    pub const fn recv(self, count: u8, ty: u8, scale: Scale) -> Spec {
        self.term(Dir::Recv, count, ty, scale)
    }

    const fn term(mut self, dir: Dir, count: u8, ty: u8, scale: Scale) -> Spec {
        let t = Term {
            dir,
            count,
            ty,
            scale,
        };
        self.simple = self.simple && matches!(scale, Scale::One);
        if matches!(self.terms[0].dir, Dir::None) {
            self.terms[0] = t;
        } else {
            self.terms[1] = t;
        }
        self
    }

    /// A collective on the communicator at `comm`.
    pub const fn comm(mut self, comm: i8) -> Spec {
        self.comm = comm;
        self
    }

    /// With a root at `root`.
    pub const fn root(mut self, root: i8) -> Spec {
        self.root = root;
        self.simple = false;
        self
    }
}

/// A call's figures.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Measured {
    /// Bytes sent.
    pub sent: u64,
    /// Bytes received.
    pub recv: u64,
    /// Whether it had a data buffer.
    pub data: bool,
    /// Its communicator's size (0: none).
    pub comm_size: u64,
}

/// An MPI function looked up once.
struct Lookup {
    name: &'static CStr,
    ptr: AtomicPtr<c_void>,
}

impl Lookup {
    const fn new(name: &'static CStr) -> Lookup {
        Lookup {
            name,
            ptr: AtomicPtr::new(std::ptr::null_mut()),
        }
    }

    #[inline]
    fn get(&self) -> *mut c_void {
        let p = self.ptr.load(Ordering::Relaxed);
        if !p.is_null() {
            return p;
        }
        let p = symbol(self.name);
        self.ptr.store(p, Ordering::Relaxed);
        p
    }
}

static TYPE_SIZE: Lookup = Lookup::new(c"PMPI_Type_size");
static COMM_SIZE: Lookup = Lookup::new(c"PMPI_Comm_size");
static COMM_RANK: Lookup = Lookup::new(c"PMPI_Comm_rank");
static TYPE_F2C: Lookup = Lookup::new(c"PMPI_Type_f2c");
static COMM_F2C: Lookup = Lookup::new(c"PMPI_Comm_f2c");
static FILE_F2C: Lookup = Lookup::new(c"PMPI_File_f2c");

/// `int f(handle, int *)` of `l` on `h`; None when MPI has no such
/// function or it failed.
fn query(l: &Lookup, h: usize) -> Option<c_int> {
    let f = l.get();
    if f.is_null() {
        return None;
    }
    type Query = unsafe extern "C" fn(usize, *mut c_int) -> c_int;
    // SAFETY: `int PMPI_X(handle, int *)`; a handle is one machine word.
    let f = unsafe { std::mem::transmute::<*mut c_void, Query>(f) };
    let mut v: c_int = 0;
    // SAFETY: a valid handle of the program's call, an int to write.
    (unsafe { f(h, &mut v) } == 0).then_some(v)
}

/// A C handle from a Fortran one (`PMPI_X_f2c`).
fn f2c(l: &Lookup, fint: c_int) -> usize {
    let f = l.get();
    if f.is_null() {
        return fint as usize;
    }
    type F2c = unsafe extern "C" fn(c_int) -> usize;
    // SAFETY: `MPI_X PMPI_X_f2c(MPI_Fint)`; the handle is one word (an
    // int handle's upper half is never read back by MPI).
    let f = unsafe { std::mem::transmute::<*mut c_void, F2c>(f) };
    // SAFETY: any MPI_Fint is accepted.
    unsafe { f(fint) }
}

/// The C handle of a Fortran binding's file handle (`PMPI_File_f2c`).
pub(super) fn file_f2c(fint: c_int) -> usize {
    f2c(&FILE_F2C, fint)
}

/// The arguments of one call in one binding.
struct Args<'a> {
    b: Binding,
    a: &'a [usize],
}

impl Args<'_> {
    /// The `int` at index `i`.
    fn int(&self, i: u8) -> Option<c_int> {
        let w = *self.a.get(i as usize)?;
        match self.b {
            Binding::C => Some(w as c_int),
            // SAFETY: a Fortran argument: a valid pointer to an INTEGER.
            Binding::Fortran => (w != 0).then(|| unsafe { *(w as *const c_int) }),
        }
    }

    /// The `n` ints of the array at index `i`.
    fn ints(&self, i: u8, n: usize) -> &[c_int] {
        let w = self.a.get(i as usize).copied().unwrap_or(0);
        if w == 0 || n == 0 {
            return &[];
        }
        // SAFETY: an array of one count per process, as MPI requires.
        unsafe { std::slice::from_raw_parts(w as *const c_int, n) }
    }

    /// Whether the buffer before the count at `count` is `MPI_IN_PLACE`
    /// in C (`(void *) 1` in Open MPI, `(void *) -1` in the MPICH family):
    /// its count and type are then not the caller's to give (the buffer
    /// argument comes right before its count in every call of the table
    /// but the reductions', whose count is shared).
    fn in_place(&self, count: u8) -> bool {
        self.b == Binding::C
            && count > 0
            && matches!(self.a.get(count as usize - 1), Some(&1 | &usize::MAX))
    }

    /// The C handle at index `i` (`f2c` its Fortran conversion).
    fn handle(&self, i: u8, f2c_of: &Lookup) -> Option<usize> {
        match self.b {
            Binding::C => self.a.get(i as usize).copied(),
            Binding::Fortran => Some(f2c(f2c_of, self.int(i)?)),
        }
    }
}

/// The figures of a call to a function of `spec`, with arguments `args`.
///
/// # Safety
/// `args` are a call's arguments in `binding` (pointers valid as MPI
/// requires of them).
#[inline(always)]
pub unsafe fn measure(spec: &Spec, binding: Binding, args: &[usize]) -> Measured {
    if spec.simple && binding == Binding::C {
        simple(spec, args)
    } else {
        // SAFETY: the caller's contract.
        unsafe { general(spec, binding, args) }
    }
}

/// [`measure`] of a C call with no root and no scaling (point-to-point,
/// reductions, MPI-IO...): counts and handles are the argument words.
/// Written term by term, without a loop, so that a wrapper's constant
/// [`Spec`] folds it to the few loads and lookups its own call needs.
#[inline(always)]
fn simple(spec: &Spec, args: &[usize]) -> Measured {
    let word = |i: u8| args.get(i as usize).copied().unwrap_or(0);
    let mut m = Measured::default();
    if spec.comm >= 0 {
        let c = word(spec.comm as u8);
        m.comm_size = COMM_SIZES
            .get(c, |c| query(&COMM_SIZE, c))
            .unwrap_or(0)
            .max(0) as u64;
    }
    // (handle, size) of the last type: both buffers of a reduction share one.
    let mut last: (usize, u64) = (0, 0);
    let [t0, t1] = spec.terms;
    simple_term(&t0, &word, &mut last, &mut m);
    simple_term(&t1, &word, &mut last, &mut m);
    m
}

/// One term of [`simple`]: adds its bytes to `m`.
#[inline(always)]
fn simple_term(t: &Term, word: &impl Fn(u8) -> usize, last: &mut (usize, u64), m: &mut Measured) {
    if t.dir == Dir::None {
        return;
    }
    m.data = true;
    // `MPI_IN_PLACE` before the count: see `Args::in_place`.
    if t.count > 0 && matches!(word(t.count - 1), 1 | usize::MAX) {
        return;
    }
    let count = (word(t.count) as c_int).max(0) as u64;
    if count == 0 {
        return;
    }
    let ty = word(t.ty);
    let each = if ty == last.0 && ty != 0 {
        last.1
    } else {
        let s = TYPE_SIZES
            .get(ty, |t| query(&TYPE_SIZE, t))
            .unwrap_or(0)
            .max(0) as u64;
        *last = (ty, s);
        s
    };
    let bytes = count.saturating_mul(each);
    if t.dir == Dir::Sent {
        m.sent += bytes;
    } else {
        m.recv += bytes;
    }
}

/// [`measure`] of any call.
///
/// # Safety
/// As [`measure`].
unsafe fn general(spec: &Spec, binding: Binding, args: &[usize]) -> Measured {
    let a = Args {
        b: binding,
        a: args,
    };
    let mut m = Measured::default();
    let needs_size = spec.comm >= 0;
    let comm = if needs_size {
        a.handle(spec.comm as u8, &COMM_F2C)
    } else {
        None
    };
    let size = comm
        .and_then(|c| COMM_SIZES.get(c, |c| query(&COMM_SIZE, c)))
        .unwrap_or(0)
        .max(0) as u64;
    m.comm_size = size;
    let at_root = || -> bool {
        if spec.root < 0 {
            return true;
        }
        let rank = comm.and_then(|c| COMM_RANKS.get(c, |c| query(&COMM_RANK, c)));
        rank.is_some() && rank == a.int(spec.root as u8)
    };
    let mut root_known: Option<bool> = None;
    // (index, size) of the last type looked up: both buffers of a
    // reduction share one.
    let mut last_type: Option<(u8, u64)> = None;
    let mut is_root = || *root_known.get_or_insert_with(at_root);
    for t in spec.terms {
        if t.dir == Dir::None {
            continue;
        }
        m.data = true;
        if a.in_place(t.count) {
            continue;
        }
        let count: u64 = match t.scale {
            Scale::One | Scale::TimesSize => a.int(t.count).unwrap_or(0).max(0) as u64,
            Scale::AtRoot | Scale::AtRootTimesSize => {
                if !is_root() {
                    continue;
                }
                a.int(t.count).unwrap_or(0).max(0) as u64
            }
            Scale::NotAtRoot => {
                if is_root() {
                    continue;
                }
                a.int(t.count).unwrap_or(0).max(0) as u64
            }
            Scale::SumOfCounts => sum(a.ints(t.count, size as usize)),
            Scale::AtRootSumOfCounts => {
                if !is_root() {
                    continue;
                }
                sum(a.ints(t.count, size as usize))
            }
            Scale::CountOfRank => {
                let rank = comm
                    .and_then(|c| COMM_RANKS.get(c, |c| query(&COMM_RANK, c)))
                    .unwrap_or(-1);
                if rank < 0 || rank as u64 >= size {
                    continue;
                }
                a.ints(t.count, size as usize)
                    .get(rank as usize)
                    .map_or(0, |&c| c.max(0) as u64)
            }
        };
        if count == 0 {
            continue;
        }
        let each = match last_type {
            Some((i, size)) if i == t.ty => size,
            _ => {
                let Some(ty) = a.handle(t.ty, &TYPE_F2C) else {
                    continue;
                };
                let size = TYPE_SIZES
                    .get(ty, |t| query(&TYPE_SIZE, t))
                    .unwrap_or(0)
                    .max(0) as u64;
                last_type = Some((t.ty, size));
                size
            }
        };
        let times = if matches!(t.scale, Scale::TimesSize | Scale::AtRootTimesSize) {
            size
        } else {
            1
        };
        let bytes = count.saturating_mul(each).saturating_mul(times);
        match t.dir {
            Dir::Sent => m.sent += bytes,
            Dir::Recv => m.recv += bytes,
            Dir::None => {}
        }
    }
    m
}

fn sum(counts: &[c_int]) -> u64 {
    counts.iter().map(|&c| c.max(0) as u64).sum()
}
