/* Known I/O patterns whose Darshan counters follow from the program itself
 * (drhook-ffi/tests/io_counters.rs holds the expected values and the
 * reasoning): access sizes at and around every bin edge up to 4 MiB,
 * sequential and consecutive accesses over two opens, forward and
 * backward jumps, read/write switches, an O_APPEND descriptor, one file
 * reached through `..` and through a symbolic link, and two system files. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char *buf;

static void must(int ok, const char *what) {
    if (!ok) {
        perror(what);
        exit(1);
    }
}

int main(void) {
    const long edges[] = {100, 1024, 10240, 102400, 1048576, 4194304};
    buf = calloc(1, 4194304 + 1);
    must(buf != NULL, "calloc");

    int fd = open("bins.dat", O_CREAT | O_TRUNC | O_RDWR, 0644);
    must(fd >= 0, "bins.dat");
    for (int e = 0; e < 6; e++)
        for (long d = -1; d <= 1; d++)
            must(write(fd, buf, edges[e] + d) == edges[e] + d, "write");
    must(lseek(fd, 0, SEEK_SET) == 0, "lseek");
    for (int e = 0; e < 6; e++)
        for (long d = -1; d <= 1; d++)
            must(read(fd, buf, edges[e] + d) == edges[e] + d, "read");
    close(fd);

    fd = open("seq.dat", O_CREAT | O_TRUNC | O_WRONLY, 0644);
    must(fd >= 0, "seq.dat");
    for (int i = 0; i < 10; i++)
        must(write(fd, buf, 100) == 100, "write");
    close(fd);
    fd = open("seq.dat", O_WRONLY);
    must(fd >= 0, "seq.dat again");
    for (int i = 0; i < 5; i++)
        must(write(fd, buf, 100) == 100, "write");
    must(pwrite(fd, buf, 100, 10000) == 100, "pwrite forward");
    must(pwrite(fd, buf, 100, 50) == 100, "pwrite backward");
    must(write(fd, buf, 100) == 100, "write at 500");
    close(fd);

    fd = open("rw.dat", O_CREAT | O_TRUNC | O_RDWR, 0644);
    must(fd >= 0, "rw.dat");
    must(write(fd, buf, 100) == 100, "write");
    must(pread(fd, buf, 100, 0) == 100, "pread");
    must(pwrite(fd, buf, 100, 100) == 100, "pwrite");
    must(pread(fd, buf, 50, 150) == 50, "pread");
    close(fd);

    fd = open("append.dat", O_CREAT | O_TRUNC | O_WRONLY | O_APPEND, 0644);
    must(fd >= 0, "append.dat");
    for (int i = 0; i < 3; i++)
        must(write(fd, buf, 10) == 10, "append");
    close(fd);

    fd = open("same.dat", O_CREAT | O_TRUNC | O_WRONLY, 0644);
    must(fd >= 0, "same.dat");
    must(write(fd, buf, 10) == 10, "write");
    close(fd);
    mkdir("sub", 0755);
    unlink("lnk.dat");
    must(symlink("same.dat", "lnk.dat") == 0, "symlink");
    fd = open("sub/../same.dat", O_RDONLY);
    must(fd >= 0, "through ..");
    must(read(fd, buf, 10) == 10, "read");
    close(fd);
    fd = open("lnk.dat", O_RDONLY);
    must(fd >= 0, "through the link");
    must(read(fd, buf, 10) == 10, "read");
    close(fd);
    /* A dup, renames (away from a known file, onto a known file), an
     * unaligned buffer. */
    fd = open("dup.dat", O_CREAT | O_TRUNC | O_WRONLY, 0644);
    must(fd >= 0, "dup.dat");
    int fd2 = dup(fd);
    must(fd2 >= 0, "dup");
    must(write(fd2, buf, 10) == 10, "write on the dup");
    must(write(fd, buf + 1, 10) == 10, "write from an unaligned buffer");
    close(fd2);
    close(fd);
    fd = open("tgt.dat", O_CREAT | O_TRUNC | O_WRONLY, 0644);
    must(fd >= 0, "tgt.dat");
    close(fd);
    fd = open("old.dat", O_CREAT | O_TRUNC | O_WRONLY, 0644);
    must(fd >= 0, "old.dat");
    must(write(fd, buf, 10) == 10, "write");
    close(fd);
    must(rename("old.dat", "tgt.dat") == 0, "rename");

    /* System files: one record together, unless DRHOOK_IO_EXCLUDE says. */
    const char *sys[] = {"/proc/self/status", "/etc/passwd"};
    for (int i = 0; i < 2; i++) {
        fd = open(sys[i], O_RDONLY);
        must(fd >= 0, sys[i]);
        must(read(fd, buf, 64) > 0, "read a system file");
        close(fd);
    }
    puts("darshan done");
    return 0;
}
