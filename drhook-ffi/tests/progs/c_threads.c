/* Thread numbers: OpenMP threads are @omp_get_thread_num()+1 (thread t
 * calls c_work 5*(t+1) times); two plain pthreads started afterwards get
 * numbers of their own (7 calls each), never an OpenMP thread's. */
#include <pthread.h>
#include <stdio.h>
#include <omp.h>
#include "drhook.h"

/* Added to by the OpenMP threads at once: an atomic addition (a plain one
 * loses updates when the threads run in parallel). */
static double sink;

static void c_work(void) {
  DRHOOK_START(c_work);
#pragma omp atomic
  sink += 1.0;
  DRHOOK_END();
}

static void *plain_thread(void *arg) {
  int i;
  (void)arg;
  for (i = 0; i < 7; i++) c_work();
  return NULL;
}

int main(void) {
  pthread_t a, b;
  DRHOOK_START(main);
#pragma omp parallel num_threads(4)
  {
    int i, t = omp_get_thread_num();
    for (i = 0; i < 5 * (t + 1); i++) c_work();
  }
  pthread_create(&a, NULL, plain_thread, NULL);
  pthread_join(a, NULL);
  pthread_create(&b, NULL, plain_thread, NULL);
  pthread_join(b, NULL);
  DRHOOK_END();
  printf("sink=%g\n", sink);
  return 0;
}
