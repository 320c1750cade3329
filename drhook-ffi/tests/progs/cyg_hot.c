#define _POSIX_C_SOURCE 200809L
/* A tiny function called 300 000 times (throttled by TAU's rule) and a
 * slow one called 3 times (never throttled). */
#include <stdio.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void tiny(unsigned long i) { sink += i; }

__attribute__((noinline)) static void slow(void) {
  struct timespec t = {0, 20 * 1000 * 1000};
  nanosleep(&t, NULL);
}

int main(void) {
  for (unsigned long i = 0; i < 300000; i++)
    tiny(i);
  for (int i = 0; i < 3; i++)
    slow();
  printf("%lu\n", sink);
  return 0;
}
