/* DR_HOOK_ASSERT_MPI_INITIALIZED: `mpi_assert before` makes its first
 * Dr.Hook call (DRHOOK_START) before MPI_Init, which the reference's
 * assertion rejects in an MPI-launched process; `mpi_assert after` makes
 * it after MPI_Init. Each rank prints "rank R done" at the end. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include "drhook.h"

static volatile double sink;

static void work(void) {
  DRHOOK_START_BY_STRING("MPI_ASSERT:WORK");
  for (int i = 0; i < 100000; i++) sink += i * 1e-9;
  DRHOOK_END();
}

int main(int argc, char **argv) {
  int rank = 0;
  int before = argc > 1 && strcmp(argv[1], "before") == 0;
  if (before) work();
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  work();
  MPI_Finalize();
  printf("rank %d done\n", rank);
  return 0;
}
