/* C twin of the engine benchmark (see bench_f.F90), plus the floor of any
 * exact wall-clock profile: two rdtsc reads around the uninstrumented call.
 *   bench_c time N SAMPLES        -> ns=... base=... floor=... (medians, minimums, paired)
 *   bench_c leaf|plain|floor N    -> one loop (callgrind --toggle-collect)
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>
#include "drhook.h"

/* With BENCH_CYG (bench_cyg.c, compiled with -finstrument-functions): the
 * leaf is a region through the compiler's hooks alone; the loops are
 * hooked too (the parents), everything else is not. */
#ifdef BENCH_CYG
#define NI __attribute__((no_instrument_function))
#define LEAF_START
#define LEAF_END
#else
#define NI
#define LEAF_START DRHOOK_START_BY_STRING("BENCH:LEAF");
#define LEAF_END DRHOOK_END();
#endif

static volatile unsigned long long tsc_sink;

__attribute__((noinline)) void leaf(double *x) {
  LEAF_START
  *x += 1.0;
  LEAF_END
}

NI __attribute__((noinline)) void plain(double *x) { *x += 1.0; }

NI __attribute__((noinline)) void two_tsc(double *x) {
  unsigned long long a = __rdtsc();
  plain(x);
  tsc_sink = __rdtsc() - a;
}

__attribute__((noinline)) void loop_leaf(long n, double *x) {
  long i;
  DRHOOK_START_BY_STRING("BENCH:PARENT");
  for (i = 0; i < n; i++) leaf(x);
  DRHOOK_END();
}

__attribute__((noinline)) void loop_plain(long n, double *x) {
  long i;
  DRHOOK_START_BY_STRING("BENCH:PLAIN_PARENT");
  for (i = 0; i < n; i++) plain(x);
  DRHOOK_END();
}

NI __attribute__((noinline)) void loop_floor(long n, double *x) {
  long i;
  for (i = 0; i < n; i++) two_tsc(x);
}

NI static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

NI static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

NI static double median(const double *v, int n) {
  double *w = malloc(n * sizeof *w);
  double m;
  memcpy(w, v, n * sizeof *w);
  qsort(w, n, sizeof *w, cmp);
  m = w[n / 2];
  free(w);
  return m;
}

NI static double minimum(const double *v, int n) {
  double m = v[0];
  int i;
  for (i = 1; i < n; i++) if (v[i] < m) m = v[i];
  return m;
}

typedef void (*loop_fn)(long, double *);

NI static double timed(loop_fn f, long n, double *x) {
  double t = now_ns();
  f(n, x);
  return (now_ns() - t) / n;
}

NI int main(int argc, char **argv) {
  double x = 0;
  long n;
  if (argc < 3) return 2;
  n = atol(argv[2]);
  loop_leaf(10, &x);  /* warm-up: environment, names */
  loop_plain(10, &x);
  if (!strcmp(argv[1], "leaf")) {
    loop_leaf(n, &x);
  } else if (!strcmp(argv[1], "plain")) {
    loop_plain(n, &x);
  } else if (!strcmp(argv[1], "floor")) {
    loop_floor(n, &x);
  } else {
    int s, ns = argc > 3 ? atoi(argv[3]) : 15;
    double *a = malloc(ns * sizeof *a), *b = malloc(ns * sizeof *b);
    double *f = malloc(ns * sizeof *f), *ra = malloc(ns * sizeof *ra);
    double *rf = malloc(ns * sizeof *rf);
    loop_leaf(n / 10, &x);
    loop_plain(n / 10, &x);
    loop_floor(n / 10, &x);
    for (s = 0; s < ns; s++) {
      if (s % 2 == 0) {
        a[s] = timed(loop_leaf, n, &x);
        b[s] = timed(loop_plain, n, &x);
        f[s] = timed(loop_floor, n, &x);
      } else {
        f[s] = timed(loop_floor, n, &x);
        b[s] = timed(loop_plain, n, &x);
        a[s] = timed(loop_leaf, n, &x);
      }
      ra[s] = a[s] / b[s];
      rf[s] = f[s] / b[s];
    }
    printf("ns=%.4f base=%.4f ns_min=%.4f base_min=%.4f paired=%.4f floor=%.4f floor_min=%.4f floor_paired=%.4f\n",
           median(a, ns), median(b, ns), minimum(a, ns), minimum(b, ns), median(ra, ns),
           median(f, ns), minimum(f, ns), median(rf, ns));
  }
  if (x < 0) printf("%g\n", x);
  return 0;
}
