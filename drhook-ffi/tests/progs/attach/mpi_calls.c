/* An MPI program whose MPI calls are known (tests/attach/mpi_calls.rs):
 * each under a Dr.Hook routine of its own (C macros, linked with
 * libdrhook.so), 4 ranks (an even number: the ring below pairs them).
 *   MPI_CALLS:P2P   3 x (MPI_Send + MPI_Recv) of 100 doubles (800 bytes)
 *   MPI_CALLS:NB    2 x (MPI_Isend + MPI_Irecv) of 10 ints (40 bytes),
 *                   each completed by MPI_Wait (4 per round)
 *   MPI_CALLS:COLL  5 x MPI_Allreduce of 1 double, 2 x MPI_Bcast of 256
 *                   bytes from rank 0, 3 x MPI_Barrier
 * With an argument "abort", rank 1 calls MPI_Abort(..., 3) after them; with
 * "nofinalize", every rank returns from main without MPI_Finalize. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include "drhook.h"

static int rank, size;

static void p2p(void) {
  DRHOOK_START_BY_STRING("MPI_CALLS:P2P");
  double buf[100] = {0};
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  for (int i = 0; i < 3; i++) {
    if (rank % 2 == 0) {
      MPI_Send(buf, 100, MPI_DOUBLE, next, 1, MPI_COMM_WORLD);
      MPI_Recv(buf, 100, MPI_DOUBLE, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf, 100, MPI_DOUBLE, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, 100, MPI_DOUBLE, next, 1, MPI_COMM_WORLD);
    }
  }
  DRHOOK_END();
}

static void nb(void) {
  DRHOOK_START_BY_STRING("MPI_CALLS:NB");
  int out[10] = {0}, in[10];
  int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  for (int i = 0; i < 2; i++) {
    MPI_Request r[2];
    MPI_Irecv(in, 10, MPI_INT, prev, 2, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(out, 10, MPI_INT, next, 2, MPI_COMM_WORLD, &r[1]);
    MPI_Wait(&r[0], MPI_STATUS_IGNORE);
    MPI_Wait(&r[1], MPI_STATUS_IGNORE);
  }
  DRHOOK_END();
}

static void coll(void) {
  DRHOOK_START_BY_STRING("MPI_CALLS:COLL");
  double v = rank, s = 0;
  char bytes[256];
  memset(bytes, rank, sizeof bytes);
  for (int i = 0; i < 5; i++) MPI_Allreduce(&v, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  for (int i = 0; i < 2; i++) MPI_Bcast(bytes, 256, MPI_BYTE, 0, MPI_COMM_WORLD);
  for (int i = 0; i < 3; i++) MPI_Barrier(MPI_COMM_WORLD);
  printf("rank %d sum %g byte %d\n", rank, s, bytes[7]);
  DRHOOK_END();
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  p2p();
  nb();
  coll();
  fflush(stdout);
  if (argc > 1 && strcmp(argv[1], "abort") == 0) {
    if (rank == 1) MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_Barrier(MPI_COMM_WORLD); /* the others wait to be ended */
  }
  if (argc > 1 && strcmp(argv[1], "nofinalize") == 0) return 0;
  MPI_Finalize();
  return 0;
}
