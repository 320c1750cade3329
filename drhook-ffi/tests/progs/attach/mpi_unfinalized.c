/* An MPI program that ends without MPI_Finalize: `exit` returns from main
 * without it (every rank), `abort` has rank 1 call MPI_Abort while the
 * others wait in a barrier. Instrumented like mpi_hook.c (rank r calls
 * MPI_HOOK:WORK r+1 times), linked with libdrhook.so. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include "drhook.h"

static volatile double sink;

static void work(void) {
  DRHOOK_START_BY_STRING("MPI_HOOK:WORK");
  for (int i = 0; i < 100000; i++) sink += i * 1e-9;
  DRHOOK_END();
}

int main(int argc, char **argv) {
  int rank = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 0; i <= rank; i++) work();
  printf("rank %d worked\n", rank);
  fflush(stdout);
  if (argc > 1 && strcmp(argv[1], "abort") == 0) {
    if (rank == 1) MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  return 0;
}
