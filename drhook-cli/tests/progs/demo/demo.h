/* A small library whose header has every kind of declaration the wrapper
 * generator must handle (drhook-cli/tests/wrap.rs). */
#ifndef DEMO_H
#define DEMO_H
#include <stdarg.h>
#include <stddef.h>

struct vec3 {
  double x, y, z;
};
typedef int (*demo_cb)(void *ctx, int value);

int demo_add(int a, int b);
struct vec3 demo_scale(struct vec3 v, double f);             /* struct by value */
int demo_apply(demo_cb cb, void *ctx, int n);                 /* function pointer */
size_t demo_copy(char *restrict dst, const char *restrict src, size_t n); /* SIZE n */
int demo_fail(int code);                                      /* errno = code, -1 */
int demo_log(const char *fmt, ...) __attribute__((format(printf, 1, 2))); /* -> demo_vlog */
int demo_vlog(const char *fmt, va_list ap);
int demo_sum(int n, ...);                                     /* no va_list variant */
int demo_legacy();                                            /* f(), takes none (--void) */
int demo_unknown();                                           /* f(), unknown arguments */
static inline int demo_inline(int x) { return x + 1; }        /* inline */
int demo_macro(int x);                                        /* also a function-like macro */
#define demo_macro(x) demo_macro((x) * 1)
__attribute__((deprecated)) int demo_old(void);
int demo_missing(void);                                       /* not in the library */
double demo_norm(const double v[3]);                          /* array parameter */
void (*demo_handler(int which))(int);                         /* returns a function pointer */
_Noreturn void demo_exit(int status);
void demo_die(int status) __attribute__((noreturn));
#endif
