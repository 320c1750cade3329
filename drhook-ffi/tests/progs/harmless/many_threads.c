/* Threads created one after the other (issue 22, item 13): `many_threads
 * N` creates N threads in turn, each making a few instrumented calls
 * through libdrhook (worker -> step x2 -> leaf x2 each), and joins each
 * before the next; prints the count and a checksum. What a thread costs
 * once it ended is the process's peak resident memory over N. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "drhook.h"

static volatile double sink;

static void leaf(int i) {
  DRHOOK_START(leaf);
  sink += i;
  DRHOOK_END();
}

static void step(int i) {
  DRHOOK_START(step);
  leaf(i);
  leaf(i + 1);
  DRHOOK_END();
}

static void *worker(void *arg) {
  int i = (int)(long)arg;
  step(i);
  step(i + 2);
  return NULL;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 1000;
  for (long i = 0; i < n; i++) {
    pthread_t t;
    int r = pthread_create(&t, NULL, worker, (void *)(i & 1023));
    if (r != 0) {
      fprintf(stderr, "pthread_create: %d\n", r);
      return 1;
    }
    pthread_join(t, NULL);
  }
  printf("threads %ld sink %g\n", n, sink);
  return 0;
}
