//! The exported I/O functions (`__interpose_io!`): each calls its body in
//! [`posix`](super::posix), [`stdio`](super::stdio) or [`aio`](super::aio).

/// Exports the I/O functions (see the module documentation); `$p` is the
/// symbol prefix.
#[macro_export]
#[doc(hidden)]
macro_rules! __interpose_io {
    ($p:literal, preload) => {
        /// The I/O functions (I/O profile).
        #[doc(hidden)]
        // Each body forwards its arguments under the C contract of the
        // function it replaces.
        #[allow(
            clippy::missing_safety_doc,
            clippy::undocumented_unsafe_blocks,
            missing_docs
        )]
        pub mod __drhook_io_exports {
            use std::ffi::{c_char, c_int, c_long, c_void};
            use $crate::io;
            use $crate::io::slots as s;
            type S = io::Preload;

            #[unsafe(export_name = concat!($p, "open"))]
            pub unsafe extern "C" fn open(p: *const c_char, f: c_int, m: libc::mode_t) -> c_int {
                unsafe { io::open::<S>(&s::OPEN, p, f, m) }
            }
            #[unsafe(export_name = concat!($p, "open64"))]
            pub unsafe extern "C" fn open64(p: *const c_char, f: c_int, m: libc::mode_t) -> c_int {
                unsafe { io::open::<S>(&s::OPEN64, p, f, m) }
            }
            #[unsafe(export_name = concat!($p, "openat"))]
            pub unsafe extern "C" fn openat(
                d: c_int,
                p: *const c_char,
                f: c_int,
                m: libc::mode_t,
            ) -> c_int {
                unsafe { io::openat::<S>(&s::OPENAT, d, p, f, m) }
            }
            #[unsafe(export_name = concat!($p, "openat64"))]
            pub unsafe extern "C" fn openat64(
                d: c_int,
                p: *const c_char,
                f: c_int,
                m: libc::mode_t,
            ) -> c_int {
                unsafe { io::openat::<S>(&s::OPENAT64, d, p, f, m) }
            }
            #[unsafe(export_name = concat!($p, "creat"))]
            pub unsafe extern "C" fn creat(p: *const c_char, m: libc::mode_t) -> c_int {
                unsafe { io::creat::<S>(&s::CREAT, p, m) }
            }
            #[unsafe(export_name = concat!($p, "creat64"))]
            pub unsafe extern "C" fn creat64(p: *const c_char, m: libc::mode_t) -> c_int {
                unsafe { io::creat::<S>(&s::CREAT64, p, m) }
            }
            #[unsafe(export_name = concat!($p, "close"))]
            pub unsafe extern "C" fn close(fd: c_int) -> c_int {
                unsafe { io::close::<S>(fd) }
            }
            #[unsafe(export_name = concat!($p, "read"))]
            pub unsafe extern "C" fn read(fd: c_int, b: *mut c_void, n: usize) -> isize {
                unsafe { io::rw::<S>(&s::READ, false, fd, b, n) }
            }
            #[unsafe(export_name = concat!($p, "write"))]
            pub unsafe extern "C" fn write(fd: c_int, b: *const c_void, n: usize) -> isize {
                unsafe { io::rw::<S>(&s::WRITE, true, fd, b as *mut c_void, n) }
            }
            #[unsafe(export_name = concat!($p, "pread"))]
            pub unsafe extern "C" fn pread(
                fd: c_int,
                b: *mut c_void,
                n: usize,
                o: libc::off_t,
            ) -> isize {
                unsafe { io::prw::<S>(&s::PREAD, false, fd, b, n, o) }
            }
            #[unsafe(export_name = concat!($p, "pread64"))]
            pub unsafe extern "C" fn pread64(
                fd: c_int,
                b: *mut c_void,
                n: usize,
                o: libc::off_t,
            ) -> isize {
                unsafe { io::prw::<S>(&s::PREAD64, false, fd, b, n, o) }
            }
            #[unsafe(export_name = concat!($p, "pwrite"))]
            pub unsafe extern "C" fn pwrite(
                fd: c_int,
                b: *const c_void,
                n: usize,
                o: libc::off_t,
            ) -> isize {
                unsafe { io::prw::<S>(&s::PWRITE, true, fd, b as *mut c_void, n, o) }
            }
            #[unsafe(export_name = concat!($p, "pwrite64"))]
            pub unsafe extern "C" fn pwrite64(
                fd: c_int,
                b: *const c_void,
                n: usize,
                o: libc::off_t,
            ) -> isize {
                unsafe { io::prw::<S>(&s::PWRITE64, true, fd, b as *mut c_void, n, o) }
            }
            #[unsafe(export_name = concat!($p, "readv"))]
            pub unsafe extern "C" fn readv(fd: c_int, v: *const libc::iovec, n: c_int) -> isize {
                unsafe { io::rwv::<S>(&s::READV, false, fd, v, n) }
            }
            #[unsafe(export_name = concat!($p, "writev"))]
            pub unsafe extern "C" fn writev(fd: c_int, v: *const libc::iovec, n: c_int) -> isize {
                unsafe { io::rwv::<S>(&s::WRITEV, true, fd, v, n) }
            }
            #[unsafe(export_name = concat!($p, "preadv"))]
            pub unsafe extern "C" fn preadv(
                fd: c_int,
                v: *const libc::iovec,
                n: c_int,
                o: libc::off_t,
            ) -> isize {
                unsafe { io::prwv::<S>(&s::PREADV, false, fd, v, n, o) }
            }
            #[unsafe(export_name = concat!($p, "pwritev"))]
            pub unsafe extern "C" fn pwritev(
                fd: c_int,
                v: *const libc::iovec,
                n: c_int,
                o: libc::off_t,
            ) -> isize {
                unsafe { io::prwv::<S>(&s::PWRITEV, true, fd, v, n, o) }
            }
            #[unsafe(export_name = concat!($p, "lseek"))]
            pub unsafe extern "C" fn lseek(fd: c_int, o: libc::off_t, w: c_int) -> libc::off_t {
                unsafe { io::lseek::<S>(&s::LSEEK, fd, o, w) }
            }
            #[unsafe(export_name = concat!($p, "lseek64"))]
            pub unsafe extern "C" fn lseek64(fd: c_int, o: libc::off_t, w: c_int) -> libc::off_t {
                unsafe { io::lseek::<S>(&s::LSEEK64, fd, o, w) }
            }
            #[unsafe(export_name = concat!($p, "fsync"))]
            pub unsafe extern "C" fn fsync(fd: c_int) -> c_int {
                unsafe { io::sync::<S>(&s::FSYNC, fd) }
            }
            #[unsafe(export_name = concat!($p, "fdatasync"))]
            pub unsafe extern "C" fn fdatasync(fd: c_int) -> c_int {
                unsafe { io::sync::<S>(&s::FDATASYNC, fd) }
            }
            #[unsafe(export_name = concat!($p, "ftruncate"))]
            pub unsafe extern "C" fn ftruncate(fd: c_int, l: libc::off_t) -> c_int {
                unsafe { io::ftruncate::<S>(&s::FTRUNCATE, fd, l) }
            }
            #[unsafe(export_name = concat!($p, "ftruncate64"))]
            pub unsafe extern "C" fn ftruncate64(fd: c_int, l: libc::off_t) -> c_int {
                unsafe { io::ftruncate::<S>(&s::FTRUNCATE64, fd, l) }
            }
            #[unsafe(export_name = concat!($p, "fstat"))]
            pub unsafe extern "C" fn fstat(fd: c_int, st: *mut libc::stat) -> c_int {
                unsafe { io::fstat::<S>(fd, st) }
            }
            #[unsafe(export_name = concat!($p, "stat"))]
            pub unsafe extern "C" fn stat(p: *const c_char, st: *mut libc::stat) -> c_int {
                unsafe { io::stat::<S>(&s::STAT, p, st) }
            }
            #[unsafe(export_name = concat!($p, "lstat"))]
            pub unsafe extern "C" fn lstat(p: *const c_char, st: *mut libc::stat) -> c_int {
                unsafe { io::stat::<S>(&s::LSTAT, p, st) }
            }
            #[unsafe(export_name = concat!($p, "access"))]
            pub unsafe extern "C" fn access(p: *const c_char, m: c_int) -> c_int {
                unsafe { io::access::<S>(p, m) }
            }
            #[unsafe(export_name = concat!($p, "unlink"))]
            pub unsafe extern "C" fn unlink(p: *const c_char) -> c_int {
                unsafe { io::unlink::<S>(p) }
            }
            #[unsafe(export_name = concat!($p, "rename"))]
            pub unsafe extern "C" fn rename(p: *const c_char, q: *const c_char) -> c_int {
                unsafe { io::rename::<S>(p, q) }
            }
            #[unsafe(export_name = concat!($p, "dup"))]
            pub unsafe extern "C" fn dup(fd: c_int) -> c_int {
                unsafe { io::dup::<S>(fd) }
            }
            #[unsafe(export_name = concat!($p, "dup2"))]
            pub unsafe extern "C" fn dup2(fd: c_int, t: c_int) -> c_int {
                unsafe { io::dup2::<S>(fd, t) }
            }
            #[unsafe(export_name = concat!($p, "dup3"))]
            pub unsafe extern "C" fn dup3(fd: c_int, t: c_int, f: c_int) -> c_int {
                unsafe { io::dup3::<S>(fd, t, f) }
            }
            #[unsafe(export_name = concat!($p, "fcntl"))]
            pub unsafe extern "C" fn fcntl(fd: c_int, cmd: c_int, a: usize) -> c_int {
                unsafe { io::fcntl::<S>(&s::FCNTL, fd, cmd, a) }
            }
            #[unsafe(export_name = concat!($p, "fcntl64"))]
            pub unsafe extern "C" fn fcntl64(fd: c_int, cmd: c_int, a: usize) -> c_int {
                unsafe { io::fcntl::<S>(&s::FCNTL64, fd, cmd, a) }
            }
            #[unsafe(export_name = concat!($p, "mmap"))]
            pub unsafe extern "C" fn mmap(
                a: *mut c_void,
                n: usize,
                p: c_int,
                f: c_int,
                fd: c_int,
                o: libc::off_t,
            ) -> *mut c_void {
                unsafe { io::mmap::<S>(&s::MMAP, a, n, p, f, fd, o) }
            }
            #[unsafe(export_name = concat!($p, "mmap64"))]
            pub unsafe extern "C" fn mmap64(
                a: *mut c_void,
                n: usize,
                p: c_int,
                f: c_int,
                fd: c_int,
                o: libc::off_t,
            ) -> *mut c_void {
                unsafe { io::mmap::<S>(&s::MMAP64, a, n, p, f, fd, o) }
            }
            #[unsafe(export_name = concat!($p, "fopen"))]
            pub unsafe extern "C" fn fopen(p: *const c_char, m: *const c_char) -> *mut libc::FILE {
                unsafe { io::fopen::<S>(&s::FOPEN, p, m) }
            }
            #[unsafe(export_name = concat!($p, "fopen64"))]
            pub unsafe extern "C" fn fopen64(
                p: *const c_char,
                m: *const c_char,
            ) -> *mut libc::FILE {
                unsafe { io::fopen::<S>(&s::FOPEN64, p, m) }
            }
            #[unsafe(export_name = concat!($p, "fdopen"))]
            pub unsafe extern "C" fn fdopen(fd: c_int, m: *const c_char) -> *mut libc::FILE {
                unsafe { io::fdopen::<S>(fd, m) }
            }
            #[unsafe(export_name = concat!($p, "freopen"))]
            pub unsafe extern "C" fn freopen(
                p: *const c_char,
                m: *const c_char,
                f: *mut libc::FILE,
            ) -> *mut libc::FILE {
                unsafe { io::freopen::<S>(p, m, f) }
            }
            #[unsafe(export_name = concat!($p, "fclose"))]
            pub unsafe extern "C" fn fclose(f: *mut libc::FILE) -> c_int {
                unsafe { io::fclose::<S>(f) }
            }
            #[unsafe(export_name = concat!($p, "fread"))]
            pub unsafe extern "C" fn fread(
                b: *mut c_void,
                z: usize,
                n: usize,
                f: *mut libc::FILE,
            ) -> usize {
                unsafe { io::frw::<S>(&s::FREAD, false, b, z, n, f) }
            }
            #[unsafe(export_name = concat!($p, "fwrite"))]
            pub unsafe extern "C" fn fwrite(
                b: *const c_void,
                z: usize,
                n: usize,
                f: *mut libc::FILE,
            ) -> usize {
                unsafe { io::frw::<S>(&s::FWRITE, true, b as *mut c_void, z, n, f) }
            }
            #[unsafe(export_name = concat!($p, "fputs"))]
            pub unsafe extern "C" fn fputs(t: *const c_char, f: *mut libc::FILE) -> c_int {
                unsafe { io::fputs::<S>(t, f) }
            }
            #[unsafe(export_name = concat!($p, "puts"))]
            pub unsafe extern "C" fn puts(t: *const c_char) -> c_int {
                unsafe { io::puts::<S>(t) }
            }
            #[unsafe(export_name = concat!($p, "putchar"))]
            pub unsafe extern "C" fn putchar(ch: c_int) -> c_int {
                unsafe { io::putchar::<S>(ch) }
            }
            #[unsafe(export_name = concat!($p, "putc"))]
            pub unsafe extern "C" fn putc(ch: c_int, f: *mut libc::FILE) -> c_int {
                unsafe { io::putc::<S>(&s::PUTC, ch, f) }
            }
            #[unsafe(export_name = concat!($p, "_IO_putc"))]
            pub unsafe extern "C" fn io_putc(ch: c_int, f: *mut libc::FILE) -> c_int {
                unsafe { io::putc::<S>(&s::IO_PUTC, ch, f) }
            }
            // The printf and scanf families (C: `c/stdio.c`).
            $crate::__io_variadic!(
                $p,
                "fprintf",
                fprintf,
                $crate::io::printf::c::drhook_attach_c_fprintf,
                0
            );
            $crate::__io_variadic!(
                $p,
                "printf",
                printf,
                $crate::io::printf::c::drhook_attach_c_printf,
                1
            );
            $crate::__io_variadic!(
                $p,
                "__fprintf_chk",
                fprintf_chk,
                $crate::io::printf::c::drhook_attach_c_fprintf_chk,
                2
            );
            $crate::__io_variadic!(
                $p,
                "__printf_chk",
                printf_chk,
                $crate::io::printf::c::drhook_attach_c_printf_chk,
                3
            );
            $crate::__io_variadic!(
                $p,
                "dprintf",
                dprintf,
                $crate::io::printf::c::drhook_attach_c_dprintf,
                4
            );
            $crate::__io_variadic!(
                $p,
                "__dprintf_chk",
                dprintf_chk,
                $crate::io::printf::c::drhook_attach_c_dprintf_chk,
                5
            );
            $crate::__io_variadic!(
                $p,
                "fscanf",
                fscanf,
                $crate::io::printf::c::drhook_attach_c_fscanf,
                6
            );
            $crate::__io_variadic!(
                $p,
                "scanf",
                scanf,
                $crate::io::printf::c::drhook_attach_c_scanf,
                7
            );
            $crate::__io_variadic!(
                $p,
                "__isoc99_fscanf",
                isoc99_fscanf,
                $crate::io::printf::c::drhook_attach_c_isoc99_fscanf,
                8
            );
            $crate::__io_variadic!(
                $p,
                "__isoc99_scanf",
                isoc99_scanf,
                $crate::io::printf::c::drhook_attach_c_isoc99_scanf,
                9
            );
            $crate::__io_variadic!(
                $p,
                "vfprintf",
                vfprintf,
                $crate::io::printf::c::drhook_attach_c_vfprintf,
                10
            );
            $crate::__io_variadic!(
                $p,
                "vprintf",
                vprintf,
                $crate::io::printf::c::drhook_attach_c_vprintf,
                11
            );
            $crate::__io_variadic!(
                $p,
                "__vfprintf_chk",
                vfprintf_chk,
                $crate::io::printf::c::drhook_attach_c_vfprintf_chk,
                12
            );
            $crate::__io_variadic!(
                $p,
                "__vprintf_chk",
                vprintf_chk,
                $crate::io::printf::c::drhook_attach_c_vprintf_chk,
                13
            );
            $crate::__io_variadic!(
                $p,
                "vdprintf",
                vdprintf,
                $crate::io::printf::c::drhook_attach_c_vdprintf,
                14
            );
            $crate::__io_variadic!(
                $p,
                "__vdprintf_chk",
                vdprintf_chk,
                $crate::io::printf::c::drhook_attach_c_vdprintf_chk,
                15
            );
            $crate::__io_variadic!(
                $p,
                "vfscanf",
                vfscanf,
                $crate::io::printf::c::drhook_attach_c_vfscanf,
                16
            );
            $crate::__io_variadic!(
                $p,
                "vscanf",
                vscanf,
                $crate::io::printf::c::drhook_attach_c_vscanf,
                17
            );
            $crate::__io_variadic!(
                $p,
                "__isoc99_vfscanf",
                isoc99_vfscanf,
                $crate::io::printf::c::drhook_attach_c_isoc99_vfscanf,
                18
            );
            $crate::__io_variadic!(
                $p,
                "__isoc99_vscanf",
                isoc99_vscanf,
                $crate::io::printf::c::drhook_attach_c_isoc99_vscanf,
                19
            );
            #[unsafe(export_name = concat!($p, "fgets"))]
            pub unsafe extern "C" fn fgets(
                b: *mut c_char,
                n: c_int,
                f: *mut libc::FILE,
            ) -> *mut c_char {
                unsafe { io::fgets::<S>(b, n, f) }
            }
            #[unsafe(export_name = concat!($p, "fputc"))]
            pub unsafe extern "C" fn fputc(ch: c_int, f: *mut libc::FILE) -> c_int {
                unsafe { io::fputc::<S>(ch, f) }
            }
            #[unsafe(export_name = concat!($p, "fgetc"))]
            pub unsafe extern "C" fn fgetc(f: *mut libc::FILE) -> c_int {
                unsafe { io::fgetc_as::<S>(&s::FGETC, f) }
            }
            #[unsafe(export_name = concat!($p, "getc"))]
            pub unsafe extern "C" fn getc(f: *mut libc::FILE) -> c_int {
                unsafe { io::fgetc_as::<S>(&s::GETC, f) }
            }
            #[unsafe(export_name = concat!($p, "_IO_getc"))]
            pub unsafe extern "C" fn io_getc(f: *mut libc::FILE) -> c_int {
                unsafe { io::fgetc_as::<S>(&s::IO_GETC, f) }
            }
            // `getline` and `getdelim` as -O2 inlines them (bits/stdio.h).
            #[unsafe(export_name = concat!($p, "getdelim"))]
            pub unsafe extern "C" fn getdelim(
                l: *mut *mut c_char,
                n: *mut usize,
                d: c_int,
                f: *mut libc::FILE,
            ) -> isize {
                unsafe { io::getdelim::<S>(&s::GETDELIM, l, n, d, f) }
            }
            #[unsafe(export_name = concat!($p, "__getdelim"))]
            pub unsafe extern "C" fn getdelim_(
                l: *mut *mut c_char,
                n: *mut usize,
                d: c_int,
                f: *mut libc::FILE,
            ) -> isize {
                unsafe { io::getdelim::<S>(&s::GETDELIM_, l, n, d, f) }
            }
            #[unsafe(export_name = concat!($p, "getline"))]
            pub unsafe extern "C" fn getline(
                l: *mut *mut c_char,
                n: *mut usize,
                f: *mut libc::FILE,
            ) -> isize {
                unsafe { io::getline::<S>(l, n, f) }
            }
            #[unsafe(export_name = concat!($p, "fflush"))]
            pub unsafe extern "C" fn fflush(f: *mut libc::FILE) -> c_int {
                unsafe { io::fflush::<S>(f) }
            }
            #[unsafe(export_name = concat!($p, "fseek"))]
            pub unsafe extern "C" fn fseek(f: *mut libc::FILE, o: c_long, w: c_int) -> c_int {
                unsafe { io::fseek::<S>(f, o, w) }
            }
            #[unsafe(export_name = concat!($p, "ftell"))]
            pub unsafe extern "C" fn ftell(f: *mut libc::FILE) -> c_long {
                unsafe { io::ftell::<S>(f) }
            }
            #[unsafe(export_name = concat!($p, "rewind"))]
            pub unsafe extern "C" fn rewind(f: *mut libc::FILE) {
                unsafe { io::rewind::<S>(f) }
            }
            #[unsafe(export_name = concat!($p, "setvbuf"))]
            pub unsafe extern "C" fn setvbuf(
                f: *mut libc::FILE,
                b: *mut c_char,
                m: c_int,
                n: usize,
            ) -> c_int {
                unsafe { io::setvbuf::<S>(f, b, m, n) }
            }
            #[unsafe(export_name = concat!($p, "setbuf"))]
            pub unsafe extern "C" fn setbuf(f: *mut libc::FILE, b: *mut c_char) {
                unsafe { io::setbuf::<S>(f, b) }
            }
            #[unsafe(export_name = concat!($p, "aio_read"))]
            pub unsafe extern "C" fn aio_read(cb: *mut libc::aiocb) -> c_int {
                unsafe { io::aio_submit::<S>(&s::AIO_READ, false, cb) }
            }
            #[unsafe(export_name = concat!($p, "aio_write"))]
            pub unsafe extern "C" fn aio_write(cb: *mut libc::aiocb) -> c_int {
                unsafe { io::aio_submit::<S>(&s::AIO_WRITE, true, cb) }
            }
            #[unsafe(export_name = concat!($p, "aio_return"))]
            pub unsafe extern "C" fn aio_return(cb: *mut libc::aiocb) -> isize {
                unsafe { io::aio_return::<S>(cb) }
            }
            #[unsafe(export_name = concat!($p, "aio_error"))]
            pub unsafe extern "C" fn aio_error(cb: *const libc::aiocb) -> c_int {
                unsafe { io::aio_error::<S>(cb) }
            }
            #[unsafe(export_name = concat!($p, "__open_2"))]
            pub unsafe extern "C" fn open_2(p: *const c_char, f: c_int) -> c_int {
                unsafe { io::open_2::<S>(&s::OPEN_2, p, f) }
            }
            #[unsafe(export_name = concat!($p, "__open64_2"))]
            pub unsafe extern "C" fn open64_2(p: *const c_char, f: c_int) -> c_int {
                unsafe { io::open_2::<S>(&s::OPEN64_2, p, f) }
            }
            #[unsafe(export_name = concat!($p, "__openat_2"))]
            pub unsafe extern "C" fn openat_2(d: c_int, p: *const c_char, f: c_int) -> c_int {
                unsafe { io::openat_2::<S>(&s::OPENAT_2, d, p, f) }
            }
            #[unsafe(export_name = concat!($p, "__openat64_2"))]
            pub unsafe extern "C" fn openat64_2(d: c_int, p: *const c_char, f: c_int) -> c_int {
                unsafe { io::openat_2::<S>(&s::OPENAT64_2, d, p, f) }
            }
            #[unsafe(export_name = concat!($p, "__read_chk"))]
            pub unsafe extern "C" fn read_chk(
                fd: c_int,
                b: *mut c_void,
                n: usize,
                l: usize,
            ) -> isize {
                unsafe { io::read_chk::<S>(fd, b, n, l) }
            }
            #[unsafe(export_name = concat!($p, "__pread_chk"))]
            pub unsafe extern "C" fn pread_chk(
                fd: c_int,
                b: *mut c_void,
                n: usize,
                o: libc::off_t,
                l: usize,
            ) -> isize {
                unsafe { io::pread_chk::<S>(&s::PREAD_CHK, fd, b, n, o, l) }
            }
            #[unsafe(export_name = concat!($p, "__pread64_chk"))]
            pub unsafe extern "C" fn pread64_chk(
                fd: c_int,
                b: *mut c_void,
                n: usize,
                o: libc::off_t,
                l: usize,
            ) -> isize {
                unsafe { io::pread_chk::<S>(&s::PREAD64_CHK, fd, b, n, o, l) }
            }
            #[unsafe(export_name = concat!($p, "__fread_chk"))]
            pub unsafe extern "C" fn fread_chk(
                b: *mut c_void,
                l: usize,
                z: usize,
                n: usize,
                f: *mut libc::FILE,
            ) -> usize {
                unsafe { io::fread_chk::<S>(b, l, z, n, f) }
            }
            #[unsafe(export_name = concat!($p, "__fgets_chk"))]
            pub unsafe extern "C" fn fgets_chk(
                b: *mut c_char,
                l: usize,
                n: c_int,
                f: *mut libc::FILE,
            ) -> *mut c_char {
                unsafe { io::fgets_chk::<S>(b, l, n, f) }
            }
            #[unsafe(export_name = concat!($p, "copy_file_range"))]
            pub unsafe extern "C" fn copy_file_range(
                i: c_int,
                io_: *mut i64,
                o: c_int,
                oo: *mut i64,
                n: usize,
                f: libc::c_uint,
            ) -> isize {
                unsafe { io::copy_file_range::<S>(i, io_, o, oo, n, f) }
            }
            #[unsafe(export_name = concat!($p, "sendfile"))]
            pub unsafe extern "C" fn sendfile(
                o: c_int,
                i: c_int,
                off: *mut libc::off_t,
                n: usize,
            ) -> isize {
                unsafe { io::sendfile::<S>(&s::SENDFILE, o, i, off, n) }
            }
            #[unsafe(export_name = concat!($p, "sendfile64"))]
            pub unsafe extern "C" fn sendfile64(
                o: c_int,
                i: c_int,
                off: *mut libc::off_t,
                n: usize,
            ) -> isize {
                unsafe { io::sendfile::<S>(&s::SENDFILE64, o, i, off, n) }
            }
            #[unsafe(export_name = concat!($p, "aio_suspend"))]
            pub unsafe extern "C" fn aio_suspend(
                l: *const *const libc::aiocb,
                n: c_int,
                t: *const libc::timespec,
            ) -> c_int {
                unsafe { io::aio_suspend::<S>(l, n, t) }
            }
        }
    };
    ($p:literal, wrap) => {};
}

/// One of the printf family's exported functions (`k`: its index in
/// `c/stdio.c`'s `drhook_attach_c_fast`): with I/O not profiled, one load,
/// a branch and a jump to the real function, its arguments untouched (the
/// real function's address is in the table once the first call found I/O
/// off); otherwise, and until then, a jump to the C shim `$c`, which takes
/// the `va_list` and comes to `drhook_attach_io_vprintf`.
#[macro_export]
#[doc(hidden)]
macro_rules! __io_variadic {
    ($p:literal, $name:literal, $f:ident, $c:path, $k:literal) => {
        #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
        #[unsafe(naked)]
        #[unsafe(export_name = concat!($p, $name))]
        pub unsafe extern "C" fn $f() {
            // r11 (x86-64) and x16 (AArch64) are scratch registers that
            // pass no argument (al, the vector count of a variadic call, is
            // kept).
            #[cfg(target_arch = "x86_64")]
            std::arch::naked_asm!(
                "mov r11, qword ptr [rip + {fast} + {off}]",
                "test r11, r11",
                "jz {c}",
                "jmp r11",
                fast = sym $crate::io::printf::c::drhook_attach_c_fast,
                off = const $k * 8,
                c = sym $c,
            );
            #[cfg(target_arch = "aarch64")]
            std::arch::naked_asm!(
                "adrp x16, {fast}",
                "add x16, x16, :lo12:{fast}",
                "ldr x16, [x16, #{off}]",
                "cbnz x16, 1f",
                "b {c}",
                "1:",
                "br x16",
                fast = sym $crate::io::printf::c::drhook_attach_c_fast,
                off = const $k * 8,
                c = sym $c,
            );
        }
    };
}
