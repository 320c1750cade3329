/* An MPI program instrumented with Dr.Hook's C macros, for
 * tests/mpi.rs: rank r (0-based) calls MPI_C:WORK 10*(r+1) times, every
 * rank calls MPI_C:EXCHANGE 3 times (an MPI_Allreduce), and only even
 * ranks call MPI_C:EVEN_ONLY, so the merge has imbalance, exact call
 * counts and a routine missing on half of the tasks. */
#include <mpi.h>
#include <stdio.h>
#include "drhook.h"

static volatile double sink;

static void work(int n) {
  DRHOOK_START_BY_STRING("MPI_C:WORK");
  double x = 0.0;
  for (int i = 0; i < n; i++) x += (double)i * 1e-9;
  sink += x;
  DRHOOK_END();
}

static void exchange(int rank) {
  DRHOOK_START_BY_STRING("MPI_C:EXCHANGE");
  double v = rank, s = 0.0;
  MPI_Allreduce(&v, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  sink += s;
  DRHOOK_END();
}

static void even_only(void) {
  DRHOOK_START_BY_STRING("MPI_C:EVEN_ONLY");
  sink += 1.0;
  DRHOOK_END();
}

int main(int argc, char **argv) {
  int rank = 0, size = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  {
    DRHOOK_START_BY_STRING("MPI_C:MAIN");
    for (int step = 0; step < 10 * (rank + 1); step++) work(1000000);
    for (int k = 0; k < 3; k++) exchange(rank);
    if (rank % 2 == 0) even_only();
    DRHOOK_END();
  }
  MPI_Finalize();
  printf("rank %d of %d done\n", rank, size);
  return 0;
}
