/* The seed's "hello_c" mix for the I/O profile: POSIX calls with known
 * sizes, a buffered stream with setvbuf, POSIX AIO, and a forked child
 * that writes a file of its own. The routines are Dr.Hook regions
 * (linked with libdrhook.so), so the per-routine columns can be checked. */
#define _GNU_SOURCE
#include <aio.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "drhook.h"

static char buf[16384];

/* 100 writes of 1000 bytes, a seek, 10 reads of 10000, one pwrite and
 * one pread of 4096 at 200000, fsync, close. */
static void posix_io(void) {
  DRHOOK_START_BY_STRING("IO:POSIX");
  int fd = open("posix.dat", O_CREAT | O_TRUNC | O_RDWR, 0644);
  if (fd < 0) abort();
  for (int i = 0; i < 100; i++)
    if (write(fd, buf, 1000) != 1000) abort();
  if (lseek(fd, 0, SEEK_SET) != 0) abort();
  for (int i = 0; i < 10; i++)
    if (read(fd, buf, 10000) != 10000) abort();
  if (pwrite(fd, buf, 4096, 200000) != 4096) abort();
  if (pread(fd, buf, 4096, 200000) != 4096) abort();
  if (fsync(fd) != 0) abort();
  /* A failed call keeps its errno. */
  errno = 0;
  if (read(-1, buf, 1) != -1 || errno != EBADF) abort();
  if (close(fd) != 0) abort();
  DRHOOK_END();
}

/* A stream with a 64 KiB buffer: 1000 fwrites of 10 bytes and one fputs. */
static void stdio_io(void) {
  DRHOOK_START_BY_STRING("IO:STDIO");
  FILE *f = fopen("stdio.txt", "w");
  if (!f) abort();
  if (setvbuf(f, NULL, _IOFBF, 65536) != 0) abort();
  for (int i = 0; i < 1000; i++)
    if (fwrite("0123456789", 1, 10, f) != 10) abort();
  if (fputs("end\n", f) < 0) abort();
  if (fclose(f) != 0) abort();
  DRHOOK_END();
}

/* Four asynchronous writes of 8192 bytes. */
static void aio_io(void) {
  DRHOOK_START_BY_STRING("IO:AIO");
  int fd = open("aio.dat", O_CREAT | O_TRUNC | O_RDWR, 0644);
  if (fd < 0) abort();
  struct aiocb cb[4];
  const struct aiocb *list[4];
  memset(cb, 0, sizeof cb);
  for (int i = 0; i < 4; i++) {
    cb[i].aio_fildes = fd;
    cb[i].aio_buf = buf;
    cb[i].aio_nbytes = 8192;
    cb[i].aio_offset = (off_t)i * 8192;
    list[i] = &cb[i];
    if (aio_write(&cb[i]) != 0) abort();
  }
  for (int i = 0; i < 4; i++) {
    while (aio_error(&cb[i]) == EINPROGRESS) aio_suspend(list, 4, NULL);
    if (aio_return(&cb[i]) != 8192) abort();
  }
  close(fd);
  DRHOOK_END();
}

int main(void) {
  memset(buf, 'x', sizeof buf);
  posix_io();
  stdio_io();
  aio_io();
  pid_t p = fork();
  if (p == 0) {
    int fd = open("child.txt", O_CREAT | O_TRUNC | O_WRONLY, 0644);
    for (int i = 0; i < 5; i++) write(fd, "child\n", 6);
    close(fd);
    exit(0);
  }
  int st;
  waitpid(p, &st, 0);
  printf("io done\n");
  return 0;
}
