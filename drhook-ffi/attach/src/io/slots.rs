//! The real functions of the I/O wrappers: one [`Slot`] per wrapped
//! function (its name, and its lookup when preloaded), reached through a
//! [`Source`] (the mode), and their C types.

use std::ffi::{CStr, c_char, c_int, c_void};

/// The real functions of one mode.
pub trait Source {
    /// The real function called `name` (None when absent).
    fn get(slot: &'static Slot) -> Option<*mut c_void>;
}

/// One real function: its name and, in preload mode, its lookup.
pub struct Slot {
    /// The function's name.
    pub name: &'static CStr,
    /// The preload mode's lookup.
    pub real: crate::real::Real,
}

impl Slot {
    /// A slot for `name`.
    pub const fn new(name: &'static CStr) -> Slot {
        Slot {
            name,
            real: crate::real::Real::new(name),
        }
    }
}

/// The preload library's real functions (`dlsym(RTLD_NEXT)`).
pub struct Preload;
impl Source for Preload {
    #[inline(always)]
    fn get(slot: &'static Slot) -> Option<*mut c_void> {
        slot.real.get()
    }
}

macro_rules! real {
    ($s:ty, $slot:expr, $ty:ty) => {
        match <$s>::get(&$slot) {
            // SAFETY: the slot holds the function of this signature.
            Some(p) => unsafe { std::mem::transmute::<*mut std::ffi::c_void, $ty>(p) },
            None => crate::real::missing($slot.name),
        }
    };
}

// The slots, one per wrapped function.
macro_rules! slots {
    ($($id:ident = $name:literal;)*) => {
        $(
            #[allow(missing_docs)]
            pub static $id: Slot = Slot::new($name);
        )*
    };
}
slots! {
    OPEN = c"open"; OPEN64 = c"open64"; OPENAT = c"openat"; OPENAT64 = c"openat64";
    CREAT = c"creat"; CREAT64 = c"creat64"; CLOSE = c"close";
    READ = c"read"; WRITE = c"write"; PREAD = c"pread"; PREAD64 = c"pread64";
    PWRITE = c"pwrite"; PWRITE64 = c"pwrite64"; READV = c"readv"; WRITEV = c"writev";
    PREADV = c"preadv"; PWRITEV = c"pwritev";
    LSEEK = c"lseek"; LSEEK64 = c"lseek64"; FSYNC = c"fsync"; FDATASYNC = c"fdatasync";
    FTRUNCATE = c"ftruncate"; FTRUNCATE64 = c"ftruncate64";
    DUP = c"dup"; DUP2 = c"dup2"; DUP3 = c"dup3"; FCNTL = c"fcntl"; FCNTL64 = c"fcntl64";
    MMAP = c"mmap"; MMAP64 = c"mmap64";
    STAT = c"stat"; LSTAT = c"lstat"; FSTAT = c"fstat"; ACCESS = c"access";
    UNLINK = c"unlink"; RENAME = c"rename";
    FOPEN = c"fopen"; FOPEN64 = c"fopen64"; FDOPEN = c"fdopen"; FREOPEN = c"freopen";
    FCLOSE = c"fclose"; FREAD = c"fread"; FWRITE = c"fwrite"; FPUTS = c"fputs";
    FGETS = c"fgets"; FPUTC = c"fputc"; FGETC = c"fgetc"; GETLINE = c"getline";
    GETC = c"getc"; IO_GETC = c"_IO_getc"; GETDELIM = c"getdelim"; GETDELIM_ = c"__getdelim";
    FFLUSH = c"fflush"; FSEEK = c"fseek"; FTELL = c"ftell"; REWIND = c"rewind";
    SETVBUF = c"setvbuf"; SETBUF = c"setbuf";
    AIO_READ = c"aio_read"; AIO_WRITE = c"aio_write"; AIO_RETURN = c"aio_return";
    AIO_SUSPEND = c"aio_suspend"; AIO_ERROR = c"aio_error";
    OPEN_2 = c"__open_2"; OPEN64_2 = c"__open64_2"; OPENAT_2 = c"__openat_2";
    OPENAT64_2 = c"__openat64_2"; READ_CHK = c"__read_chk"; PREAD_CHK = c"__pread_chk";
    PREAD64_CHK = c"__pread64_chk"; FREAD_CHK = c"__fread_chk"; FGETS_CHK = c"__fgets_chk";
    VFPRINTF = c"vfprintf"; VFPRINTF_CHK = c"__vfprintf_chk"; VDPRINTF = c"vdprintf";
    VDPRINTF_CHK = c"__vdprintf_chk"; VFSCANF = c"vfscanf";
    ISOC99_VFSCANF = c"__isoc99_vfscanf"; PUTS = c"puts"; PUTC = c"putc";
    IO_PUTC = c"_IO_putc"; PUTCHAR = c"putchar";
    COPY_FILE_RANGE = c"copy_file_range"; SENDFILE = c"sendfile"; SENDFILE64 = c"sendfile64";
}

pub(super) type OpenFn = unsafe extern "C" fn(*const c_char, c_int, libc::mode_t) -> c_int;
pub(super) type OpenatFn = unsafe extern "C" fn(c_int, *const c_char, c_int, libc::mode_t) -> c_int;
pub(super) type CreatFn = unsafe extern "C" fn(*const c_char, libc::mode_t) -> c_int;
pub(super) type FdFn = unsafe extern "C" fn(c_int) -> c_int;
pub(super) type RwFn = unsafe extern "C" fn(c_int, *mut c_void, usize) -> isize;
pub(super) type PrwFn = unsafe extern "C" fn(c_int, *mut c_void, usize, libc::off_t) -> isize;
pub(super) type VFn = unsafe extern "C" fn(c_int, *const libc::iovec, c_int) -> isize;
pub(super) type PvFn = unsafe extern "C" fn(c_int, *const libc::iovec, c_int, libc::off_t) -> isize;
pub(super) type SeekFn = unsafe extern "C" fn(c_int, libc::off_t, c_int) -> libc::off_t;
pub(super) type TruncFn = unsafe extern "C" fn(c_int, libc::off_t) -> c_int;
pub(super) type Dup2Fn = unsafe extern "C" fn(c_int, c_int) -> c_int;
pub(super) type Dup3Fn = unsafe extern "C" fn(c_int, c_int, c_int) -> c_int;
pub(super) type FcntlFn = unsafe extern "C" fn(c_int, c_int, usize) -> c_int;
pub(super) type MmapFn =
    unsafe extern "C" fn(*mut c_void, usize, c_int, c_int, c_int, libc::off_t) -> *mut c_void;
pub(super) type StatFn = unsafe extern "C" fn(*const c_char, *mut libc::stat) -> c_int;
pub(super) type FstatFn = unsafe extern "C" fn(c_int, *mut libc::stat) -> c_int;
pub(super) type AccessFn = unsafe extern "C" fn(*const c_char, c_int) -> c_int;
pub(super) type PathFn = unsafe extern "C" fn(*const c_char) -> c_int;
pub(super) type RenameFn = unsafe extern "C" fn(*const c_char, *const c_char) -> c_int;
pub(super) type FopenFn = unsafe extern "C" fn(*const c_char, *const c_char) -> *mut libc::FILE;
pub(super) type FdopenFn = unsafe extern "C" fn(c_int, *const c_char) -> *mut libc::FILE;
pub(super) type FreopenFn =
    unsafe extern "C" fn(*const c_char, *const c_char, *mut libc::FILE) -> *mut libc::FILE;
pub(super) type FileFn = unsafe extern "C" fn(*mut libc::FILE) -> c_int;
pub(super) type FrwFn = unsafe extern "C" fn(*mut c_void, usize, usize, *mut libc::FILE) -> usize;
pub(super) type FputsFn = unsafe extern "C" fn(*const c_char, *mut libc::FILE) -> c_int;
pub(super) type FgetsFn = unsafe extern "C" fn(*mut c_char, c_int, *mut libc::FILE) -> *mut c_char;
pub(super) type FputcFn = unsafe extern "C" fn(c_int, *mut libc::FILE) -> c_int;
pub(super) type GetlineFn =
    unsafe extern "C" fn(*mut *mut c_char, *mut usize, *mut libc::FILE) -> isize;
pub(super) type GetdelimFn =
    unsafe extern "C" fn(*mut *mut c_char, *mut usize, c_int, *mut libc::FILE) -> isize;
pub(super) type FseekFn = unsafe extern "C" fn(*mut libc::FILE, libc::c_long, c_int) -> c_int;
pub(super) type FtellFn = unsafe extern "C" fn(*mut libc::FILE) -> libc::c_long;
pub(super) type RewindFn = unsafe extern "C" fn(*mut libc::FILE);
pub(super) type SetvbufFn =
    unsafe extern "C" fn(*mut libc::FILE, *mut c_char, c_int, usize) -> c_int;
pub(super) type SetbufFn = unsafe extern "C" fn(*mut libc::FILE, *mut c_char);
pub(super) type AiocbFn = unsafe extern "C" fn(*mut libc::aiocb) -> c_int;
pub(super) type AioRetFn = unsafe extern "C" fn(*mut libc::aiocb) -> isize;
pub(super) type AioErrFn = unsafe extern "C" fn(*const libc::aiocb) -> c_int;
pub(super) type AioSuspendFn =
    unsafe extern "C" fn(*const *const libc::aiocb, c_int, *const libc::timespec) -> c_int;

pub(super) type Open2Fn = unsafe extern "C" fn(*const c_char, c_int) -> c_int;
pub(super) type Openat2Fn = unsafe extern "C" fn(c_int, *const c_char, c_int) -> c_int;
pub(super) type ReadChkFn = unsafe extern "C" fn(c_int, *mut c_void, usize, usize) -> isize;
pub(super) type PreadChkFn =
    unsafe extern "C" fn(c_int, *mut c_void, usize, libc::off_t, usize) -> isize;
pub(super) type FreadChkFn =
    unsafe extern "C" fn(*mut c_void, usize, usize, usize, *mut libc::FILE) -> usize;
pub(super) type FgetsChkFn =
    unsafe extern "C" fn(*mut c_char, usize, c_int, *mut libc::FILE) -> *mut c_char;
/// `va_list` as the C ABI passes it: a pointer (x86-64: the array
/// decays; AArch64: the structure, larger than 16 bytes, is passed by
/// reference).
pub(super) type VaList = *mut c_void;
pub(super) type VfprintfFn = unsafe extern "C" fn(*mut libc::FILE, *const c_char, VaList) -> c_int;
pub(super) type VfprintfChkFn =
    unsafe extern "C" fn(*mut libc::FILE, c_int, *const c_char, VaList) -> c_int;
pub(super) type VdprintfFn = unsafe extern "C" fn(c_int, *const c_char, VaList) -> c_int;
pub(super) type VdprintfChkFn = unsafe extern "C" fn(c_int, c_int, *const c_char, VaList) -> c_int;
pub(super) type PutsFn = unsafe extern "C" fn(*const c_char) -> c_int;
pub(super) type PutcharFn = unsafe extern "C" fn(c_int) -> c_int;
pub(super) type CopyRangeFn =
    unsafe extern "C" fn(c_int, *mut i64, c_int, *mut i64, usize, libc::c_uint) -> isize;
pub(super) type SendfileFn = unsafe extern "C" fn(c_int, c_int, *mut libc::off_t, usize) -> isize;

pub(super) use real;
