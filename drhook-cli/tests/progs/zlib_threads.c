/* Threads calling a wrapped function: each of <threads> pthreads runs the
 * Dr.Hook routine `worker`, which calls crc32 <calls> times.
 * Usage: zlib_threads <threads> <calls>. */
#include <drhook.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

static int calls;
static unsigned char buf[256];

static void *worker(void *arg) {
  unsigned long c = 0;
  DRHOOK_START(worker);
  for (int i = 0; i < calls; i++) c = crc32(c, buf + (i % 128), 128);
  DRHOOK_END(0);
  *(unsigned long *)arg = c;
  return 0;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 4;
  calls = argc > 2 ? atoi(argv[2]) : 1000;
  pthread_t t[64];
  unsigned long r[64];
  for (size_t i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)(i * 13 + 1);
  DRHOOK_START(main);
  for (int i = 0; i < n; i++) pthread_create(&t[i], 0, worker, &r[i]);
  for (int i = 0; i < n; i++) pthread_join(t[i], 0);
  for (int i = 1; i < n; i++)
    if (r[i] != r[0]) printf("thread %d differs\n", i);
  printf("%d threads, crc %08lx\n", n, r[0]);
  DRHOOK_END(0);
  return 0;
}
