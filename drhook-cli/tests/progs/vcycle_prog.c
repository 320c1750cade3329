/* A recursive multigrid-like V-cycle under Dr.Hook (issue 28): MAIN
 * spins argv[2] ms (default 20) then calls MG_VCYCLE argv[1] levels deep
 * (default 7), each level spending ~0.3 ms of its own, under the 1 ms
 * resolution of the text profile's columns. */
#define _POSIX_C_SOURCE 199309L
#include <stdlib.h>
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
    for (int i = 0; i < 100; i++) x += i * 1e-9;
  sink = x;
}

static void vcycle(int level) {
  DRHOOK_START(MG_VCYCLE);
  spin(0.0002);
  if (level > 1) vcycle(level - 1);
  spin(0.0001);
  DRHOOK_END(0);
}

int main(int argc, char **argv) {
  int levels = argc > 1 ? atoi(argv[1]) : 7;
  double main_ms = argc > 2 ? atof(argv[2]) : 20.0;
  drhook_init(argc, argv);
  DRHOOK_START(MAIN);
  spin(main_ms * 1e-3);
  vcycle(levels);
  DRHOOK_END(0);
  return 0;
}
