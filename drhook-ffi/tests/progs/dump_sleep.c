/* Sleeps 3 s inside a region (no region entered or left meanwhile). */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <time.h>
#include "drhook.h"

static void sleepy(void) {
  struct timespec t = {3, 0};
  DRHOOK_START(SLEEPY);
  nanosleep(&t, NULL);
  DRHOOK_END();
}

int main(void) {
  sleepy();
  printf("done\n");
  return 0;
}
