/* The I/O profile's harder cases (drhook-ffi/tests/attach.rs), one per
 * argument; the program prints what it saw, which must not change under
 * the preload:
 *   eintr  a read of a FIFO interrupted by a timer's signal (no SA_RESTART): -1
 *          and EINTR reach the program; then a 5-byte write and read.
 *   procs  a file written with O_APPEND by the parent and 4 children at
 *          once: each process writes 100 records of its own size.
 *   omp    4 OpenMP threads, each writing its own file with stdio
 *          (thread t: 100 fwrite of 10 * (t + 1) bytes), then reading it
 *          back with read(). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_alarm(int sig) { (void)sig; }

static int eintr(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm; /* no SA_RESTART: the read is interrupted */
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGALRM, &sa, NULL) != 0) return 1;
  unlink("fifo");
  if (mkfifo("fifo", 0600) != 0) return 1;
  int fd = open("fifo", O_RDWR); /* does not block: we are both ends */
  if (fd < 0) return 1;
  /* Every 20 ms: a tick that came before the read began (a loaded
     machine) does not leave it blocked forever. */
  struct itimerval t = {{0, 20000}, {0, 20000}};
  setitimer(ITIMER_REAL, &t, NULL);
  char buf[16];
  errno = 0;
  ssize_t r = read(fd, buf, sizeof buf);
  int e = errno;
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  printf("read %zd %s\n", r, e == EINTR ? "EINTR" : strerror(e));
  ssize_t w = write(fd, "hello", 5);
  r = read(fd, buf, sizeof buf);
  printf("write %zd read %zd %.5s\n", w, r, buf);
  close(fd);
  unlink("fifo");
  return 0;
}

static int procs(void) {
  unlink("shared.dat");
  pid_t kids[4];
  for (int k = 0; k < 4; k++) {
    kids[k] = fork();
    if (kids[k] < 0) return 1;
    if (kids[k] == 0) {
      int fd = open("shared.dat", O_WRONLY | O_CREAT | O_APPEND, 0644);
      char rec[64];
      memset(rec, 'a' + k, sizeof rec);
      for (int i = 0; i < 100; i++)
        if (write(fd, rec, 10 + k) != 10 + k) _exit(2);
      close(fd);
      _exit(0);
    }
  }
  int fd = open("shared.dat", O_WRONLY | O_CREAT | O_APPEND, 0644);
  char rec[64];
  memset(rec, 'p', sizeof rec);
  for (int i = 0; i < 100; i++)
    if (write(fd, rec, 50) != 50) return 1;
  close(fd);
  int bad = 0;
  for (int k = 0; k < 4; k++) {
    int st;
    if (waitpid(kids[k], &st, 0) != kids[k] || !WIFEXITED(st) || WEXITSTATUS(st) != 0) bad = 1;
  }
  struct stat s;
  stat("shared.dat", &s);
  printf("procs %s size %lld\n", bad ? "failed" : "ok", (long long)s.st_size);
  return bad;
}

static int omp(void) {
  long total = 0;
#pragma omp parallel num_threads(4) reduction(+ : total)
  {
    int t = omp_get_thread_num();
    char name[32], rec[64];
    snprintf(name, sizeof name, "thread%d.dat", t);
    memset(rec, '0' + t, sizeof rec);
    FILE *f = fopen(name, "w");
    for (int i = 0; i < 100; i++) fwrite(rec, 1, 10 * (t + 1), f);
    fclose(f);
    int fd = open(name, O_RDONLY);
    char buf[512];
    ssize_t r;
    while ((r = read(fd, buf, sizeof buf)) > 0) total += r;
    close(fd);
  }
  printf("omp read %ld\n", total);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  if (strcmp(argv[1], "eintr") == 0) return eintr();
  if (strcmp(argv[1], "procs") == 0) return procs();
  if (strcmp(argv[1], "omp") == 0) return omp();
  return 2;
}
