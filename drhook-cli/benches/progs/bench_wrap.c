/* The cost of a wrapped library call: crc32 on 64 bytes, called in a loop
 * from an instrumented parent.
 *   bench_wrap time N SAMPLES [LEN] -> crc=... pair=... (ns per call: medians, minimums)
 *   bench_wrap crc|pair N [LEN]     -> one loop (callgrind --toggle-collect=loop_<which>)
 * LEN: bytes per crc32 call (64; 0 leaves only the call itself). 
 * loop_crc calls crc32 directly (wrapped or not, depending on how the
 * program is linked or preloaded); loop_pair calls it inside a
 * hand-written Dr.Hook enter/exit pair (drhook.h), the reference for
 * "one enter/exit pair". */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>
#include "drhook.h"

static unsigned char buf[64];
static uInt len = sizeof buf;
static volatile uLong sink;

__attribute__((noinline)) static uLong crc_pair(uLong c) {
  DRHOOK_START_BY_STRING("crc32_pair");
  c = crc32(c, buf, len);
  DRHOOK_END();
  return c;
}

__attribute__((noinline)) void loop_crc(long n) {
  long i;
  uLong c = 0;
  DRHOOK_START_BY_STRING("BENCH:CRC_PARENT");
  for (i = 0; i < n; i++) c = crc32(c, buf, len);
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

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, n, sizeof *v, cmp);
  return v[n / 2];
}

int main(int argc, char **argv) {
  long n = argc > 2 ? atol(argv[2]) : 1000000;
  int samples = argc > 3 ? atoi(argv[3]) : 9, s;
  for (size_t i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)(i * 31 + 7);
  if (argc > 1 && strcmp(argv[1], "time") != 0 && argc > 3) len = (uInt)atoi(argv[3]);
  if (argc > 4) len = (uInt)atoi(argv[4]);
  if (argc > 1 && strcmp(argv[1], "crc") == 0) {
    loop_crc(n);
    return 0;
  }
  if (argc > 1 && strcmp(argv[1], "pair") == 0) {
    loop_pair(n);
    return 0;
  }
  double *crc = malloc(samples * sizeof *crc), *pair = malloc(samples * sizeof *pair);
  loop_crc(n / 10); /* warm up: resolution, first-call paths, caches */
  loop_pair(n / 10);
  for (s = 0; s < samples; s++) {
    double t = now_ns();
    loop_crc(n);
    crc[s] = (now_ns() - t) / n;
    t = now_ns();
    loop_pair(n);
    pair[s] = (now_ns() - t) / n;
  }
  double cmed = median(crc, samples), cmin = crc[0];
  double pmed = median(pair, samples), pmin = pair[0];
  printf("crc=%.3f crc_min=%.3f pair=%.3f pair_min=%.3f\n", cmed, cmin, pmed, pmin);
  return 0;
}
