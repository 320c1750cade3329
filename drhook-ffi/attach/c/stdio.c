/* The printf and scanf families with variable arguments, which Rust cannot
 * define, and their v* forms: each takes its va_list and hands it to the
 * I/O layer (drhook_attach_io_vprintf, in Rust: io/printf.rs), which calls
 * the real v* function. The exported fprintf, printf... are Rust
 * trampolines that jump here with the arguments untouched
 * (drhook_attach::interpose!). */

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

extern int drhook_attach_io_vprintf(int which, int kind, FILE *fp, int fd,
                                    int flag, const char *fmt, va_list ap);

/* The real function of each exported one, by the index its trampoline
 * gives (io/exports.rs, __io_variadic!): set by io/printf.rs at the first
 * call that finds I/O not profiled; null until then, and while profiled. */
__attribute__((visibility("hidden"))) void *drhook_attach_c_fast[20];

/* What drhook_attach_io_vprintf calls (io/printf.rs numbers them the
 * same); a null stream is stdout. */
enum { VFPRINTF, VFPRINTF_CHK, VDPRINTF, VDPRINTF_CHK, VFSCANF, ISOC99_VFSCANF };

#define NAME(n) drhook_attach_c_##n

/* A variadic function on a stream (or a descriptor) and its v* form. */
#define VARIADIC(which, name, kind, params, fp, fd, flag)                      \
    int NAME(name) params {                                                    \
        va_list ap;                                                            \
        va_start(ap, fmt);                                                     \
        int r = drhook_attach_io_vprintf(which, kind, fp, fd, flag, fmt, ap);  \
        va_end(ap);                                                            \
        return r;                                                              \
    }
#define VFORM(which, name, kind, params, fp, fd, flag)                         \
    int NAME(name) params {                                                    \
        return drhook_attach_io_vprintf(which, kind, fp, fd, flag, fmt, ap);   \
    }

VARIADIC(0, fprintf, VFPRINTF, (FILE * s, const char *fmt, ...), s, -1, 0)
VARIADIC(1, printf, VFPRINTF, (const char *fmt, ...), NULL, -1, 0)
VARIADIC(2, fprintf_chk, VFPRINTF_CHK, (FILE * s, int fl, const char *fmt, ...),
         s, -1, fl)
VARIADIC(3, printf_chk, VFPRINTF_CHK, (int fl, const char *fmt, ...), NULL, -1,
         fl)
VARIADIC(4, dprintf, VDPRINTF, (int d, const char *fmt, ...), NULL, d, 0)
VARIADIC(5, dprintf_chk, VDPRINTF_CHK, (int d, int fl, const char *fmt, ...), NULL,
         d, fl)
VARIADIC(6, fscanf, VFSCANF, (FILE * s, const char *fmt, ...), s, -1, 0)
VARIADIC(7, scanf, VFSCANF, (const char *fmt, ...), NULL, -1, 0)
VARIADIC(8, isoc99_fscanf, ISOC99_VFSCANF, (FILE * s, const char *fmt, ...), s,
         -1, 0)
VARIADIC(9, isoc99_scanf, ISOC99_VFSCANF, (const char *fmt, ...), NULL, -1, 0)

VFORM(10, vfprintf, VFPRINTF, (FILE * s, const char *fmt, va_list ap), s, -1, 0)
VFORM(11, vprintf, VFPRINTF, (const char *fmt, va_list ap), NULL, -1, 0)
VFORM(12, vfprintf_chk, VFPRINTF_CHK,
      (FILE * s, int fl, const char *fmt, va_list ap), s, -1, fl)
VFORM(13, vprintf_chk, VFPRINTF_CHK, (int fl, const char *fmt, va_list ap), NULL,
      -1, fl)
VFORM(14, vdprintf, VDPRINTF, (int d, const char *fmt, va_list ap), NULL, d, 0)
VFORM(15, vdprintf_chk, VDPRINTF_CHK, (int d, int fl, const char *fmt, va_list ap),
      NULL, d, fl)
VFORM(16, vfscanf, VFSCANF, (FILE * s, const char *fmt, va_list ap), s, -1, 0)
VFORM(17, vscanf, VFSCANF, (const char *fmt, va_list ap), NULL, -1, 0)
VFORM(18, isoc99_vfscanf, ISOC99_VFSCANF, (FILE * s, const char *fmt, va_list ap),
      s, -1, 0)
VFORM(19, isoc99_vscanf, ISOC99_VFSCANF, (const char *fmt, va_list ap), NULL, -1,
      0)
