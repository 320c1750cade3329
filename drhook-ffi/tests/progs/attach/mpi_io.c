/* An MPI-IO program whose calls are known (tests/attach/mpi_link.rs and
 * mpi_calls.rs: the MPI-IO level of the I/O report), 4 ranks, one shared
 * file "mpiio.dat" in the working directory:
 *   MPI_File_open (1), then on each rank at its own offsets
 *   3 x MPI_File_write_at of 100 ints (400 bytes each, 1200 in all),
 *   MPI_File_sync (1),
 *   2 x MPI_File_read_at of 50 doubles (400 bytes each, 800 in all),
 *   MPI_File_close (1). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  int rank, size;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_File fh;
  if (MPI_File_open(MPI_COMM_WORLD, "mpiio.dat", MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh) !=
      MPI_SUCCESS) {
    fprintf(stderr, "rank %d: MPI_File_open failed\n", rank);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int ints[100];
  for (int i = 0; i < 100; i++) ints[i] = rank * 1000 + i;
  MPI_Offset base = (MPI_Offset)rank * 1200;
  for (int k = 0; k < 3; k++)
    MPI_File_write_at(fh, base + k * 400, ints, 100, MPI_INT, MPI_STATUS_IGNORE);
  MPI_File_sync(fh);
  double d[50];
  for (int k = 0; k < 2; k++)
    MPI_File_read_at(fh, base + k * 400, d, 50, MPI_DOUBLE, MPI_STATUS_IGNORE);
  MPI_File_close(&fh);
  int check;
  memcpy(&check, d, sizeof check);
  printf("rank %d read %d\n", rank, check);
  MPI_Finalize();
  return 0;
}
