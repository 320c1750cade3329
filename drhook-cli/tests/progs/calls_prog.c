/* Many short calls (issue 28): PARENT calls LEAF argv[1] times (default
 * 200000), LEAF does almost nothing, so what the instrumentation costs per
 * call (hpmprof's counter reads) is what PARENT's self time shows unless
 * it is removed. */
#include <stdlib.h>

#include "drhook.h"

static volatile double sink;

static void leaf(int i) {
  DRHOOK_START(LEAF);
  sink += i * 1e-9;
  DRHOOK_END(0);
}

static void parent(int n) {
  DRHOOK_START(PARENT);
  for (int i = 0; i < n; i++) leaf(i);
  DRHOOK_END(0);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 200000;
  drhook_init(argc, argv);
  DRHOOK_START(MAIN);
  parent(n);
  DRHOOK_END(0);
  return 0;
}
