/* The reduction benchmark's MPI program: every rank calls N distinct
 * routines once (names R00000 ...), rank r calls BENCH:WORK r+1 times;
 * the ranks meet in a barrier before MPI_Finalize, so the reduction's time
 * on rank 0 is the reduction's, not the wait for ranks still running.
 * Linked with libdrhook.so, run under drhook run. */
#include <mpi.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include "drhook.h"

static volatile double sink;

int main(int argc, char **argv) {
  int rank = 0;
  int n = argc > 1 ? atoi(argv[1]) : 1000;
  char name[32];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  void **sites = calloc(n, sizeof *sites); /* one site per routine */
  for (int i = 0; i < n; i++) {
    snprintf(name, sizeof name, "R%05d", i);
    uint64_t h = drhook_c_start(&sites[i], name, __FILE__);
    sink += i;
    drhook_c_end(&sites[i], h, 0);
  }
  for (int k = 0; k <= rank; k++) {
    DRHOOK_START_BY_STRING("BENCH:WORK");
    for (int i = 0; i < 100000; i++) sink += i * 1e-9;
    DRHOOK_END();
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
