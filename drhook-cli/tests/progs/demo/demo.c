#include "demo.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int demo_add(int a, int b) { return a + b; }
struct vec3 demo_scale(struct vec3 v, double f) {
  struct vec3 r = {v.x * f, v.y * f, v.z * f};
  return r;
}
int demo_apply(demo_cb cb, void *ctx, int n) {
  int s = 0;
  for (int i = 0; i < n; i++) s += cb(ctx, i);
  return s;
}
size_t demo_copy(char *restrict dst, const char *restrict src, size_t n) {
  memcpy(dst, src, n);
  return n;
}
int demo_fail(int code) {
  errno = code;
  return -1;
}
int demo_vlog(const char *fmt, va_list ap) { return vprintf(fmt, ap); }
int demo_log(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int r = demo_vlog(fmt, ap);
  va_end(ap);
  return r;
}
int demo_sum(int n, ...) {
  va_list ap;
  va_start(ap, n);
  int s = 0;
  for (int i = 0; i < n; i++) s += va_arg(ap, int);
  va_end(ap);
  return s;
}
int demo_legacy() { return 7; }
int demo_unknown(a) int a; { return a; }
int (demo_macro)(int x) { return 2 * x; }
int demo_old(void) { return 1; }
double demo_norm(const double v[3]) { return sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]); }
static void handler_a(int x) { printf("handler %d\n", x); }
void (*demo_handler(int which))(int) { return which ? handler_a : 0; }
void demo_exit(int status) {
  fflush(stdout);
  exit(status);
}
void demo_die(int status) { _exit(status); }
