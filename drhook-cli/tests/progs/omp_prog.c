/* An OpenMP program whose threads run different routines at the same
 * time (issue 28): thread 0 spins in PHYSICS, the others in DYNAMICS,
 * each for ~0.3 s, twice. The run lasts ~0.6 s; the reference's
 * "Wall-time" (the sum over routines of the busiest thread's self time)
 * counts the concurrent routines twice (~1.2 s). */
#include <omp.h>
#include <stdio.h>
#include <time.h>

#include "drhook.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static volatile double sink;

static void spin(double secs) {
  double end = now() + secs;
  double x = 0;
  while (now() < end)
    for (int i = 0; i < 1000; i++) x += i * 1e-9;
  sink = x;
}

static void physics(void) {
  DRHOOK_START(PHYSICS);
  spin(0.3);
  DRHOOK_END(0);
}

static void dynamics(void) {
  DRHOOK_START(DYNAMICS);
  spin(0.3);
  DRHOOK_END(0);
}

int main(int argc, char **argv) {
  drhook_init(argc, argv);
  DRHOOK_START(MAIN);
  for (int step = 0; step < 2; step++) {
#pragma omp parallel num_threads(2)
    {
      if (omp_get_thread_num() == 0)
        physics();
      else
        dynamics();
    }
  }
  DRHOOK_END(0);
  printf("done\n");
  return 0;
}
