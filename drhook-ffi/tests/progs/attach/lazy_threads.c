#define _DEFAULT_SOURCE
/* Threads that call Dr.Hook routines and threads that do not, under the
 * preload, linked with libdrhook.so: a thread started through the layer
 * gets no tree until its first instrumented call (issue 29), and its
 * profile lines must be those of a tree made at its start.
 *
 *   lazy_threads N   N plain threads and N hooked ones, created and
 *                    joined one after the other (plain, hooked, plain,
 *                    ...); then one thread that runs plain code before
 *                    its first instrumented call, and a pool thread still
 *                    running plain code when the program ends.
 *   lazy_threads N term   the same, then SIGTERM while the pool thread
 *                    runs (the traceback shows its root region).
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "drhook.h"

static volatile double sink;

static void spin(long n) {
  for (long i = 0; i < n; i++) sink += i * 1e-9;
}

void hooked_work(void) {
  DRHOOK_START_BY_STRING("LAZY:WORK");
  spin(20000);
  DRHOOK_END();
}

void *plain_worker(void *arg) {
  (void)arg;
  spin(20000);
  return NULL;
}

void *hooked_worker(void *arg) {
  (void)arg;
  hooked_work();
  return NULL;
}

/* Plain code for three times as long as its one instrumented call. */
void *late_hooked(void *arg) {
  (void)arg;
  spin(3000000);
  DRHOOK_START_BY_STRING("LAZY:LATE");
  spin(1000000);
  DRHOOK_END();
  return NULL;
}

/* Plain code that overflows its thread's stack. */
static int deep(int n) {
  volatile char frame[1024];
  frame[0] = (char)n;
  return n <= 0 ? frame[0] : deep(n - 1) + frame[0];
}

void *overflow_worker(void *arg) {
  (void)arg;
  return (void *)(long)deep(1 << 30);
}

static volatile int pool_started;

void *pool(void *arg) {
  (void)arg;
  pool_started = 1;
  for (;;) pause();
  return NULL;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 4;
  pthread_t t;
  hooked_work();
  for (int i = 0; i < n; i++) {
    pthread_create(&t, NULL, plain_worker, NULL);
    pthread_join(t, NULL);
    pthread_create(&t, NULL, hooked_worker, NULL);
    pthread_join(t, NULL);
  }
  pthread_create(&t, NULL, late_hooked, NULL);
  pthread_join(t, NULL);
  pthread_create(&t, NULL, pool, NULL);
  pthread_detach(t);
  while (!pool_started) usleep(1000);
  spin(1000000);
  if (argc > 2 && !strcmp(argv[2], "term")) raise(SIGTERM);
  if (argc > 2 && !strcmp(argv[2], "overflow")) {
    pthread_create(&t, NULL, overflow_worker, NULL);
    pthread_join(t, NULL);
  }
  printf("threads %d\n", 2 * n + 2);
  return 0;
}
