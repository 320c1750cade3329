/* The printf and scanf families with variable arguments, which Rust cannot
 * define, and their v* forms: each takes its va_list and hands it to the
 * I/O layer (drhook_attach_io_vprintf, in Rust: io/printf.rs), which calls
 * the real v* function. The exported fprintf, printf... are Rust
 * trampolines that jump here with the arguments untouched
 * (drhook_attach::interpose!). */

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

extern int drhook_attach_io_vprintf(int kind, FILE *fp, int fd, int flag,
                                    const char *fmt, va_list ap);

/* What drhook_attach_io_vprintf calls (io/printf.rs numbers them the
 * same); a null stream is stdout. */
enum { VFPRINTF, VFPRINTF_CHK, VDPRINTF, VDPRINTF_CHK, VFSCANF, ISOC99_VFSCANF };

#define NAME(n) drhook_attach_c_##n

/* A variadic function on a stream (or a descriptor) and its v* form. */
#define VARIADIC(name, kind, params, fp, fd, flag)                             \
    int NAME(name) params {                                                    \
        va_list ap;                                                            \
        va_start(ap, fmt);                                                     \
        int r = drhook_attach_io_vprintf(kind, fp, fd, flag, fmt, ap);         \
        va_end(ap);                                                            \
        return r;                                                              \
    }
#define VFORM(name, kind, params, fp, fd, flag)                                \
    int NAME(name) params {                                                    \
        return drhook_attach_io_vprintf(kind, fp, fd, flag, fmt, ap);          \
    }

VARIADIC(fprintf, VFPRINTF, (FILE * s, const char *fmt, ...), s, -1, 0)
VARIADIC(printf, VFPRINTF, (const char *fmt, ...), NULL, -1, 0)
VARIADIC(fprintf_chk, VFPRINTF_CHK, (FILE * s, int fl, const char *fmt, ...),
         s, -1, fl)
VARIADIC(printf_chk, VFPRINTF_CHK, (int fl, const char *fmt, ...), NULL, -1,
         fl)
VARIADIC(dprintf, VDPRINTF, (int d, const char *fmt, ...), NULL, d, 0)
VARIADIC(dprintf_chk, VDPRINTF_CHK, (int d, int fl, const char *fmt, ...), NULL,
         d, fl)
VARIADIC(fscanf, VFSCANF, (FILE * s, const char *fmt, ...), s, -1, 0)
VARIADIC(scanf, VFSCANF, (const char *fmt, ...), NULL, -1, 0)
VARIADIC(isoc99_fscanf, ISOC99_VFSCANF, (FILE * s, const char *fmt, ...), s,
         -1, 0)
VARIADIC(isoc99_scanf, ISOC99_VFSCANF, (const char *fmt, ...), NULL, -1, 0)

VFORM(vfprintf, VFPRINTF, (FILE * s, const char *fmt, va_list ap), s, -1, 0)
VFORM(vprintf, VFPRINTF, (const char *fmt, va_list ap), NULL, -1, 0)
VFORM(vfprintf_chk, VFPRINTF_CHK,
      (FILE * s, int fl, const char *fmt, va_list ap), s, -1, fl)
VFORM(vprintf_chk, VFPRINTF_CHK, (int fl, const char *fmt, va_list ap), NULL,
      -1, fl)
VFORM(vdprintf, VDPRINTF, (int d, const char *fmt, va_list ap), NULL, d, 0)
VFORM(vdprintf_chk, VDPRINTF_CHK, (int d, int fl, const char *fmt, va_list ap),
      NULL, d, fl)
VFORM(vfscanf, VFSCANF, (FILE * s, const char *fmt, va_list ap), s, -1, 0)
VFORM(vscanf, VFSCANF, (const char *fmt, va_list ap), NULL, -1, 0)
VFORM(isoc99_vfscanf, ISOC99_VFSCANF, (FILE * s, const char *fmt, va_list ap),
      s, -1, 0)
VFORM(isoc99_vscanf, ISOC99_VFSCANF, (const char *fmt, va_list ap), NULL, -1,
      0)
