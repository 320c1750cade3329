#define _POSIX_C_SOURCE 200809L
/* Four OpenMP threads in a region each: thread 0 blocked in read(2) on a
 * pipe, the others waiting in the barrier after it. */
#include <omp.h>
#include <stdio.h>
#include <unistd.h>
#include "drhook.h"

static void worker(int t) {
  DRHOOK_START(OMP_WORKER);
  if (t == 0) {
    DRHOOK_START(READER);
    char c = 0;
    printf("waiting\n");
    fflush(stdout);
    if (read(0, &c, 1) != 1) printf("read failed\n");
    DRHOOK_END();
  }
#pragma omp barrier
  DRHOOK_END();
}

int main(void) {
  DRHOOK_START(MAIN_REGION);
#pragma omp parallel num_threads(4)
  worker(omp_get_thread_num());
  DRHOOK_END();
  printf("done\n");
  return 0;
}
