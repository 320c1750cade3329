#define _POSIX_C_SOURCE 200809L
/* Blocked in read(2) on a pipe inside two DR_HOOK regions; prints what
 * read returned (a dump must not make it fail with EINTR). */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include "drhook.h"

static void wait_input(void) {
  char c = 0;
  ssize_t n;
  DRHOOK_START(WAIT_INPUT);
  printf("waiting\n");
  fflush(stdout);
  n = read(0, &c, 1);
  printf("read %d errno %d byte %c\n", (int)n, n < 0 ? errno : 0, c);
  DRHOOK_END();
}

static void outer(void) {
  DRHOOK_START(OUTER);
  wait_input();
  DRHOOK_END();
}

int main(void) {
  outer();
  return 0;
}
