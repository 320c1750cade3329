/* Two ranks, built with -finstrument-functions and run under drhook run:
 * rank 0 waits for a file named "go" in wait_for_file(), rank 1 waits in
 * MPI_Barrier inside collective(). */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

void wait_for_file(void) {
  struct timespec t = {0, 10 * 1000 * 1000};
  printf("waiting\n");
  fflush(stdout);
  while (access("go", F_OK) != 0) nanosleep(&t, NULL);
}

void collective(int rank) {
  printf("rank %d in collective\n", rank);
  fflush(stdout);
  MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
  int rank;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) wait_for_file();
  collective(rank);
  printf("rank %d done\n", rank);
  MPI_Finalize();
  return 0;
}
