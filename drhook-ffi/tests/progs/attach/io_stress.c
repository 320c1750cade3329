/* Stress for the I/O profile: `io_stress opens` opens and closes one file
 * 100000 times and 5000 distinct files once each; `io_stress threads`
 * has 64 threads write 1000 x 10 bytes each to their own file at once;
 * both close descriptors they never opened and check errno. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void bad_closes(void) {
  errno = 0;
  if (close(12345) != -1 || errno != EBADF) abort();
  errno = 0;
  if (close(-1) != -1 || errno != EBADF) abort();
}

static void *writer(void *arg) {
  char name[64];
  snprintf(name, sizeof name, "t%02d.dat", (int)(size_t)arg);
  int fd = open(name, O_CREAT | O_TRUNC | O_WRONLY, 0644);
  if (fd < 0) abort();
  for (int i = 0; i < 1000; i++)
    if (write(fd, "0123456789", 10) != 10) abort();
  close(fd);
  return NULL;
}

int main(int argc, char **argv) {
  bad_closes();
  if (argc > 1 && strcmp(argv[1], "threads") == 0) {
    pthread_t t[64];
    for (int i = 0; i < 64; i++) pthread_create(&t[i], NULL, writer, (void *)(size_t)i);
    for (int i = 0; i < 64; i++) pthread_join(t[i], NULL);
  } else {
    int fd = open("same.dat", O_CREAT | O_WRONLY, 0644);
    close(fd);
    for (int i = 0; i < 100000; i++) {
      fd = open("same.dat", O_RDONLY);
      if (fd < 0) abort();
      close(fd);
    }
    if (system("mkdir -p many") != 0) abort();
    for (int i = 0; i < 5000; i++) {
      char name[64];
      snprintf(name, sizeof name, "many/f%04d", i);
      fd = open(name, O_CREAT | O_WRONLY, 0644);
      if (fd < 0) abort();
      close(fd);
    }
  }
  printf("stress done\n");
  return 0;
}
