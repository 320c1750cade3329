/* The memory profile's costs: `bench_malloc alloc N` times N malloc(64) +
 * free pairs; `bench_malloc pair N` times N Dr.Hook enter/exit pairs of a
 * leaf routine under its parent (linked with libdrhook.so). Prints the
 * nanoseconds per operation (median of 7 batches). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "drhook.h"

static void *volatile sink;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

__attribute__((noinline)) static void leaf(void) {
  DRHOOK_START_BY_STRING("BENCH:LEAF");
  DRHOOK_END();
}

int main(int argc, char **argv) {
  long n = argc > 2 ? atol(argv[2]) : 1000000;
  int pair = argc > 1 && strcmp(argv[1], "pair") == 0;
  double r[7];
  DRHOOK_START_BY_STRING("BENCH:PARENT");
  for (int b = 0; b < 7; b++) {
    double t = now();
    if (pair) {
      for (long i = 0; i < n; i++) leaf();
    } else {
      for (long i = 0; i < n; i++) {
        sink = malloc(64);
        free(sink);
      }
    }
    r[b] = (now() - t) / n;
  }
  DRHOOK_END();
  qsort(r, 7, sizeof r[0], cmp);
  printf("%.3f\n", r[3]);
  return 0;
}
