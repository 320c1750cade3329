/* MPI_Allreduce of 8 bytes (one double, MPI_SUM), for mpi_overhead.rs:
 * `bench_mpi N BATCHES` under mpirun -n 2; rank 0 prints the median over
 * the batches of ns per call (each batch: N calls after a barrier). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  long n = argc > 1 ? atol(argv[1]) : 1000000;
  int batches = argc > 2 ? atoi(argv[2]) : 7;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double v = rank + 1, s = 0, per[64];
  if (batches > 64) batches = 64;
  for (int b = 0; b < batches; b++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_ns();
    for (long i = 0; i < n; i++) MPI_Allreduce(&v, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    per[b] = (now_ns() - t0) / n;
  }
  qsort(per, batches, sizeof per[0], cmp);
  if (rank == 0) printf("%.2f\n", per[batches / 2]);
  if (s != 3) fprintf(stderr, "wrong sum %g\n", s);
  MPI_Finalize();
  return 0;
}
