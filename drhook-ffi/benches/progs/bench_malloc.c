/* The memory profile's costs: `bench_malloc alloc N` times N malloc(64) +
 * free pairs; `bench_malloc pair N` times N Dr.Hook enter/exit pairs of a
 * leaf routine under its parent (linked with libdrhook.so). A third
 * argument sets the number of batches (7). Prints the nanoseconds per
 * operation (median of the batches). */
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
  int batches = argc > 3 ? atoi(argv[3]) : 7;
  if (batches < 1 || batches > 64) batches = 7;
  double r[64];
  DRHOOK_START_BY_STRING("BENCH:PARENT");
  for (int b = 0; b < batches; b++) {
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
  qsort(r, batches, sizeof r[0], cmp);
  printf("%.3f\n", r[batches / 2]);
  return 0;
}
