/* Functions compiled with -finstrument-functions and a DR_HOOK region:
 * one tree. Known call counts: leaf 3*N, mid N, region N, twice_static 2. */
#include <stdio.h>
#include "drhook.h"

#define N 1000
static volatile double sink;

__attribute__((noinline)) static double leaf(double x) { return x * 1.0001; }

__attribute__((noinline)) double mid(double x) {
  x = leaf(x);
  x = leaf(x);
  return leaf(x);
}

__attribute__((noinline)) static void region(int i) {
  DRHOOK_START(C_REGION);
  sink = mid((double)i);
  DRHOOK_END();
}

__attribute__((noinline)) static void twice_static(void) { sink += 1.0; }

int main(void) {
  for (int i = 0; i < N; i++)
    region(i);
  twice_static();
  twice_static();
  printf("done %g\n", sink);
  return 0;
}
