/* Process-lifecycle costs under a preloaded layer (benches/attach_overhead.rs):
 *   bench_attach threads N SAMPLES   -> ns per pthread_create+join (median of samples)
 *   bench_attach fork N SAMPLES      -> ns per fork+waitpid (the child _exits at once)
 *   bench_attach execfail N SAMPLES  -> ns per failed execv (no such file)
 * Prints "ns=<median> min=<minimum> cpu=<median CPU ns>": wall time, and
 * the CPU time (user + system) of this process and its children per
 * operation, which a loaded machine disturbs less. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static double cpu_ns(void) {
  struct rusage s, c;
  getrusage(RUSAGE_SELF, &s);
  getrusage(RUSAGE_CHILDREN, &c);
  return (s.ru_utime.tv_sec + s.ru_stime.tv_sec + c.ru_utime.tv_sec + c.ru_stime.tv_sec) * 1e9 +
         (s.ru_utime.tv_usec + s.ru_stime.tv_usec + c.ru_utime.tv_usec + c.ru_stime.tv_usec) * 1e3;
}

static void *nothing(void *a) { return a; }

static void threads(long n) {
  for (long i = 0; i < n; i++) {
    pthread_t t;
    pthread_create(&t, NULL, nothing, NULL);
    pthread_join(t, NULL);
  }
}

static void forks(long n) {
  for (long i = 0; i < n; i++) {
    pid_t p = fork();
    if (p == 0) _exit(0);
    waitpid(p, NULL, 0);
  }
}

static void execfails(long n) {
  char *argv[] = {"x", NULL};
  for (long i = 0; i < n; i++) execv("/nonexistent/program", argv);
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc < 4) return 2;
  long n = atol(argv[2]);
  int ns = atoi(argv[3]);
  void (*f)(long) = !strcmp(argv[1], "threads") ? threads
                  : !strcmp(argv[1], "fork")    ? forks
                  : !strcmp(argv[1], "execfail") ? execfails : NULL;
  if (!f || ns < 1) return 2;
  double *v = malloc(ns * sizeof *v), *c = malloc(ns * sizeof *c);
  f(n / 10 + 1); /* warm-up */
  for (int s = 0; s < ns; s++) {
    double t = now_ns(), u = cpu_ns();
    f(n);
    v[s] = (now_ns() - t) / n;
    c[s] = (cpu_ns() - u) / n;
  }
  qsort(v, ns, sizeof *v, cmp);
  qsort(c, ns, sizeof *c, cmp);
  printf("ns=%.1f min=%.1f cpu=%.1f\n", v[ns / 2], v[0], c[ns / 2]);
  return 0;
}
