/* A small program for the summary, the HTML report and the timeline:
 * MAIN -> SETUP (short), SOLVE -> KERNEL (200 calls, busy ~50 us each),
 * argv[1] leaf routines LEAF:Rnnn under MAIN (default 60, named at run
 * time), a routine named <script>alert(1)</script> (names are escaped
 * wherever rendered), and two pthreads that run KERNEL too. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "drhook.h"

static volatile double sink;

static void spin_us(long us) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do {
    sink += 1.0;
    clock_gettime(CLOCK_MONOTONIC, &b);
  } while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us);
}

static void kernel(void) {
  DRHOOK_START_BY_STRING("KERNEL");
  spin_us(50);
  DRHOOK_END();
}

static void solve(int n) {
  int i;
  DRHOOK_START_BY_STRING("SOLVE");
  for (i = 0; i < n; i++) kernel();
  DRHOOK_END();
}

static void leaf(long i) {
  char buf[32];
  int len = snprintf(buf, sizeof buf, "LEAF:R%03ld", i);
  double key;
  int tid = 1, size = 0;
  c_drhook_start_(buf, &tid, &key, NULL, &size, (size_t)len, 0);
  spin_us(2);
  c_drhook_end_(buf, &tid, &key, NULL, &size, (size_t)len, 0);
}

static void *worker(void *arg) {
  (void)arg;
  DRHOOK_START_BY_STRING("WORKER");
  solve(100);
  DRHOOK_END();
  return NULL;
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 60, i;
  pthread_t t[2];
  DRHOOK_START_BY_STRING("MAIN");
  {
    DRHOOK_START_BY_STRING("SETUP");
    spin_us(100);
    DRHOOK_END();
  }
  solve(200);
  for (i = 0; i < n; i++) leaf(i);
  {
    DRHOOK_START_BY_STRING("<script>alert(1)</script>");
    spin_us(300);
    DRHOOK_END();
  }
  for (i = 0; i < 2; i++) pthread_create(&t[i], NULL, worker, NULL);
  for (i = 0; i < 2; i++) pthread_join(t[i], NULL);
  DRHOOK_END();
  printf("sink>0: %d\n", sink > 0);
  return 0;
}
