/* How much of the C library's heap is in use after four threads, one after
 * the other, each entering 500 routines of its own (the engine makes a
 * tree, nodes and names for them): Dr.Hook's own data must not be in it
 * (libdrhook's own heap). */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include "drhook.h"

static void routine(long t, int i) {
  char name[64];
  snprintf(name, sizeof name, "HEAPUSE:T%ld_R%04d", t, i);
  DRHOOK_START_BY_STRING(name);
  DRHOOK_END();
}

static void *work(void *arg) {
  long t = (long)arg;
  DRHOOK_START_BY_STRING("HEAPUSE:WORK");
  for (int i = 0; i < 500; i++) routine(t, i);
  DRHOOK_END();
  return NULL;
}

int main(void) {
  pthread_t t;
  /* One thread first: the C library's own first-thread allocations. */
  pthread_create(&t, NULL, work, (void *)100L);
  pthread_join(t, NULL);
  struct mallinfo2 a = mallinfo2();
  for (long i = 0; i < 4; i++) {
    pthread_create(&t, NULL, work, (void *)i);
    pthread_join(t, NULL);
  }
  struct mallinfo2 b = mallinfo2();
  printf("heap in use changed by %ld bytes\n", (long)(b.uordblks - a.uordblks));
  return 0;
}
