/* The job I/O report (DR_HOOK_OPT=io,reduce): rank r writes (r+1) blocks
 * of 1000 bytes to its own file own.<r>; then every rank writes its 512
 * bytes at offset 512*r of one shared file and reads back its
 * neighbour's 512 bytes. */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
  int rank, size, fd, i;
  char buf[1000], in[512], name[32];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  memset(buf, 'a' + rank % 26, sizeof buf);
  snprintf(name, sizeof name, "own.%d", rank);
  fd = open(name, O_CREAT | O_WRONLY | O_TRUNC, 0644);
  for (i = 0; i <= rank; i++)
    if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
      return 1;
  close(fd);
  if (rank == 0)
    close(open("shared", O_CREAT | O_WRONLY | O_TRUNC, 0644));
  MPI_Barrier(MPI_COMM_WORLD);
  fd = open("shared", O_WRONLY);
  lseek(fd, (off_t)rank * 512, SEEK_SET);
  if (write(fd, buf, 512) != 512)
    return 1;
  close(fd);
  MPI_Barrier(MPI_COMM_WORLD);
  fd = open("shared", O_RDONLY);
  lseek(fd, (off_t)((rank + 1) % size) * 512, SEEK_SET);
  if (read(fd, in, 512) != 512 || in[0] != 'a' + (rank + 1) % size % 26)
    return 1;
  close(fd);
  MPI_Finalize();
  return 0;
}
