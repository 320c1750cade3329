/* An unmodified MPI program (no Dr.Hook calls). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv) {
  int rank = -1, size = -1;
  double v, s = 0.0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  v = rank;
  for (int i = 0; i < 5; i++) MPI_Allreduce(&v, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  printf("rank %d of %d sum %g\n", rank, size, s);
  return 0;
}
