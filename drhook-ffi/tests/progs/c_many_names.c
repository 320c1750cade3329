/* N distinct routine names (argv[1]), each built in a stack buffer and
 * entered once through c_drhook_start_ under one parent; then the first
 * 10 names again, which must find their routines. */
#include <stdio.h>
#include <stdlib.h>
#include "drhook.h"

static void call(long i) {
  char buf[32];
  int len = snprintf(buf, sizeof buf, "MANY:R%07ld", i);
  double key;
  int tid = 1, size = 0;
  c_drhook_start_(buf, &tid, &key, NULL, &size, (size_t)len, 0);
  c_drhook_end_(buf, &tid, &key, NULL, &size, (size_t)len, 0);
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000, i;
  double key;
  int tid = 1, size = 0;
  c_drhook_start_("MANY:MAIN", &tid, &key, NULL, &size, 9, 0);
  for (i = 0; i < n; i++) call(i);
  for (i = 0; i < 10; i++) call(i);
  c_drhook_end_("MANY:MAIN", &tid, &key, NULL, &size, 9, 0);
  printf("called %ld\n", n);
  return 0;
}
