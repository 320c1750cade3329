/* The I/O profile's costs: `bench_io write N B` times N write()s of 16
 * bytes to a regular file, `bench_io fwrite N B` N fwrite()s of 16 bytes
 * (a buffered stream), `bench_io fprintf N B` N fprintf()s of a short line
 * ("line %ld\n", 6 to 12 bytes, a buffered stream); B batches, prints the
 * median ns per call. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  int fw = argc > 1 && strcmp(argv[1], "fwrite") == 0;
  int fp = argc > 1 && strcmp(argv[1], "fprintf") == 0;
  long n = argc > 2 ? atol(argv[2]) : 1000000;
  int batches = argc > 3 ? atoi(argv[3]) : 7;
  if (batches < 1 || batches > 64) batches = 7;
  double r[64];
  char buf[16];
  memset(buf, 'x', sizeof buf);
  for (int b = 0; b < batches; b++) {
    int fd = open("bench_io.dat", O_CREAT | O_TRUNC | O_WRONLY, 0644);
    FILE *f = fw || fp ? fdopen(fd, "w") : NULL;
    double t = now();
    if (fp) {
      for (long i = 0; i < n; i++) fprintf(f, "line %ld\n", i);
    } else if (fw) {
      for (long i = 0; i < n; i++) fwrite(buf, 1, sizeof buf, f);
    } else {
      for (long i = 0; i < n; i++)
        if (write(fd, buf, sizeof buf) != sizeof buf) abort();
    }
    r[b] = (now() - t) / n;
    if (f) fclose(f); else close(fd);
  }
  qsort(r, batches, sizeof r[0], cmp);
  printf("%.3f\n", r[batches / 2]);
  unlink("bench_io.dat");
  return 0;
}
