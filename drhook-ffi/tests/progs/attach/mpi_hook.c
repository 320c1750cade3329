/* An MPI program instrumented with Dr.Hook's C macros and linked with
 * libdrhook.so: under the preload, its calls reach the preload's engine
 * (one engine: MPI_HOOK:WORK nested under the root region main, in one
 * profile per rank). Rank r calls MPI_HOOK:WORK r+1 times.
 * `mpi_hook exit` returns from main without MPI_Finalize (every rank, after
 * a barrier);
 * `mpi_hook abort` has rank 1 call MPI_Abort while the others wait in a
 * barrier;
 * `mpi_hook paths` also has the even ranks call MPI_HOOK:WORK once from
 * MPI_HOOK:B (a second call path, on half the ranks). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include "drhook.h"

static volatile double sink;

static void work(void) {
  DRHOOK_START_BY_STRING("MPI_HOOK:WORK");
  for (int i = 0; i < 1000000; i++) sink += i * 1e-9;
  DRHOOK_END();
}

static void b(void) {
  DRHOOK_START_BY_STRING("MPI_HOOK:B");
  work();
  DRHOOK_END();
}

int main(int argc, char **argv) {
  int rank = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 0; i <= rank; i++) work();
  if (argc > 1 && strcmp(argv[1], "paths") == 0 && rank % 2 == 0) b();
  if (argc > 1 && strcmp(argv[1], "exit") == 0) {
    MPI_Barrier(MPI_COMM_WORLD); /* all ranks done before any exits */
    return 0;
  }
  if (argc > 1 && strcmp(argv[1], "abort") == 0) {
    if (rank == 1) MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
