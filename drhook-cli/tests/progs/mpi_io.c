/* I/O of known sizes from 4 MPI ranks (tests/io_job.rs): rank r writes
 * (r+1) KiB into the shared file "shared.dat" with one pwrite at the end
 * of the ranks before it, and two writes of 100*(r+1) bytes into its own
 * file "rank<r>.dat"; after a barrier rank 0 reads "shared.dat" back in
 * reads of 4096 bytes (4096, 4096, 2048, then 0 at the end). */
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int rank, size;
    static char buf[4096];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    memset(buf, 'a' + rank, sizeof buf);
    int fd = open("shared.dat", O_WRONLY | O_CREAT, 0644);
    off_t at = 0;
    for (int k = 0; k < rank; k++) at += (k + 1) * 1024;
    if (fd < 0 || pwrite(fd, buf, (size_t)(rank + 1) * 1024, at) != (rank + 1) * 1024) return 1;
    close(fd);
    char name[32];
    snprintf(name, sizeof name, "rank%d.dat", rank);
    fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    for (int k = 0; k < 2; k++)
        if (write(fd, buf, (size_t)(rank + 1) * 100) != (rank + 1) * 100) return 1;
    close(fd);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        fd = open("shared.dat", O_RDONLY);
        long total = 0;
        ssize_t n;
        while ((n = read(fd, buf, sizeof buf)) > 0) total += n;
        close(fd);
        printf("read %ld\n", total);
    }
    printf("rank %d of %d done\n", rank, size);
    MPI_Finalize();
    return 0;
}
