/* An MPI program instrumented with Dr.Hook's C macros and linked with
 * libdrhook.so: under the preload, its calls reach the preload's engine
 * (one engine: MPI_HOOK:WORK nested under the root region main, in one
 * profile per rank). Rank r calls MPI_HOOK:WORK r+1 times.
 * `mpi_hook exit` returns from main without MPI_Finalize (every rank, after
 * a barrier);
 * `mpi_hook abort` has rank 1 call MPI_Abort while the others wait in a
 * barrier;
 * `mpi_hook paths` also has the even ranks call MPI_HOOK:WORK once from
 * MPI_HOOK:B (a second call path, on half the ranks);
 * `mpi_hook io` has rank r, in MPI_HOOK:IO, allocate and free 1000(r+1)
 * bytes, write 100(r+1) bytes into shared.dat (at offset 4096 r) and
 * 10(r+1) bytes into rank<r>.dat, and read shared.dat's first 4 bytes. */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
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

static void io(int rank) {
  DRHOOK_START_BY_STRING("MPI_HOOK:IO");
  char *p = malloc(1000 * (rank + 1));
  memset(p, 'x', 1000 * (rank + 1));
  int fd = open("shared.dat", O_RDWR | O_CREAT, 0644);
  if (pwrite(fd, p, 100 * (rank + 1), 4096 * (off_t)rank) < 0) perror("pwrite");
  char b[4];
  if (pread(fd, b, 4, 0) < 0) perror("pread");
  close(fd);
  char name[32];
  snprintf(name, sizeof name, "rank%d.dat", rank);
  fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (write(fd, p, 10 * (rank + 1)) < 0) perror("write");
  close(fd);
  free(p);
  DRHOOK_END();
}

int main(int argc, char **argv) {
  int rank = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 0; i <= rank; i++) work();
  if (argc > 1 && strcmp(argv[1], "paths") == 0 && rank % 2 == 0) b();
  if (argc > 1 && strcmp(argv[1], "io") == 0) {
    /* shared.dat exists before any rank reads it */
    if (rank == 0) close(open("shared.dat", O_WRONLY | O_CREAT, 0644));
    MPI_Barrier(MPI_COMM_WORLD);
    io(rank);
  }
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
