/* The cost of a wrapped library call: crc32 called in a loop from an
 * instrumented parent, three ways in one process, timed alternately:
 *   plain: the real crc32 (libz's own definition, from dlsym on libz),
 *   pair:  the real crc32 inside a hand-written Dr.Hook enter/exit pair
 *          (drhook.h macros): the reference "one enter/exit pair",
 *   crc:   crc32 as the program calls it: through the wrapper when it is
 *          preloaded (run time) or linked with --wrap (link time).
 *   bench_wrap time N SAMPLES LEN -> plain=... pair=... crc=... (ns per call:
 *                                    medians, minimums, paired differences)
 *   bench_wrap plain|pair|crc N LEN -> one loop (callgrind --toggle-collect=loop_<which>)
 * LEN: bytes per crc32 call (64; 0 leaves only the call). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>
#include "drhook.h"

static unsigned char buf[64];
static uInt len = sizeof buf;
static volatile uLong sink;
static uLong (*real_crc32)(uLong, const Bytef *, uInt);

__attribute__((noinline)) static uLong crc_pair(uLong c) {
  DRHOOK_START_BY_STRING("crc32_pair");
  c = real_crc32(c, buf, len);
  DRHOOK_END();
  return c;
}

__attribute__((noinline)) void loop_plain(long n) {
  long i;
  uLong c = 0;
  DRHOOK_START_BY_STRING("BENCH:PLAIN_PARENT");
  for (i = 0; i < n; i++) c = real_crc32(c, buf, len);
  sink = c;
  DRHOOK_END();
}

__attribute__((noinline)) void loop_pair(long n) {
  long i;
  uLong c = 0;
  DRHOOK_START_BY_STRING("BENCH:PAIR_PARENT");
  for (i = 0; i < n; i++) c = crc_pair(c);
  sink = c;
  DRHOOK_END();
}

__attribute__((noinline)) void loop_crc(long n) {
  long i;
  uLong c = 0;
  DRHOOK_START_BY_STRING("BENCH:CRC_PARENT");
  for (i = 0; i < n; i++) c = crc32(c, buf, len);
  sink = c;
  DRHOOK_END();
}

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(const double *v, int n) {
  double *w = malloc(n * sizeof *w), m;
  memcpy(w, v, n * sizeof *w);
  qsort(w, n, sizeof *w, cmp);
  m = w[n / 2];
  free(w);
  return m;
}

static double minimum(const double *v, int n) {
  double m = v[0];
  for (int i = 1; i < n; i++)
    if (v[i] < m) m = v[i];
  return m;
}

static double timed(void (*f)(long), long n) {
  double t = now_ns();
  f(n);
  return (now_ns() - t) / n;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "time";
  long n = argc > 2 ? atol(argv[2]) : 1000000;
  int timing = strcmp(mode, "time") == 0;
  int samples = timing && argc > 3 ? atoi(argv[3]) : 9;
  int larg = timing ? 4 : 3;
  if (argc > larg) len = (uInt)atoi(argv[larg]);
  for (size_t i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)(i * 31 + 7);
  /* libz's own crc32, whatever the program's crc32 symbol resolves to. */
  void *z = dlopen("libz.so.1", RTLD_LAZY | RTLD_NOLOAD);
  real_crc32 = z ? (uLong(*)(uLong, const Bytef *, uInt))dlsym(z, "crc32") : 0;
  if (!real_crc32) {
    fprintf(stderr, "libz.so.1 is not loaded: %s\n", dlerror());
    return 1;
  }
  if (!timing) {
    void (*f)(long) = !strcmp(mode, "plain") ? loop_plain : !strcmp(mode, "pair") ? loop_pair : loop_crc;
    f(n);
    return 0;
  }
  double *p = malloc(samples * sizeof *p), *q = malloc(samples * sizeof *q),
         *c = malloc(samples * sizeof *c), *d = malloc(samples * sizeof *d);
  loop_plain(n / 10); /* warm up: resolution, first calls, caches */
  loop_pair(n / 10);
  loop_crc(n / 10);
  for (int s = 0; s < samples; s++) {
    p[s] = timed(loop_plain, n);
    q[s] = timed(loop_pair, n);
    c[s] = timed(loop_crc, n);
    d[s] = c[s] - q[s];
  }
  printf("plain=%.3f plain_min=%.3f pair=%.3f pair_min=%.3f crc=%.3f crc_min=%.3f diff=%.3f\n",
         median(p, samples), minimum(p, samples), median(q, samples), minimum(q, samples),
         median(c, samples), minimum(c, samples), median(d, samples));
  return 0;
}
