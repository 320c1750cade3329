/* A parent and its fork child, each asleep 3 s in a region. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "drhook.h"

static void sleepy(void) {
  struct timespec t = {3, 0};
  DRHOOK_START(SLEEPY);
  nanosleep(&t, NULL);
  DRHOOK_END();
}

int main(void) {
  pid_t c;
  DRHOOK_START(BEFORE_FORK);
  DRHOOK_END();
  c = fork();
  sleepy();
  if (c == 0) return 0;
  waitpid(c, NULL, 0);
  printf("done\n");
  return 0;
}
