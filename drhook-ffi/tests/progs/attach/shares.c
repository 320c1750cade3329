/* Known CPU shares for the sampling tests: on each of 4 threads,
 * work_a runs 3 times the loop iterations of work_b (the same loop body),
 * so 3/4 of the CPU time is in work_a and 1/4 in work_b. Built with
 * -DWITH_DRHOOK, work_a runs inside the Dr.Hook regions outer > region_a
 * and work_b inside outer > region_b; without it the program is
 * unmodified (`drhook run --sample`).
 *
 * Arguments: `units` (default 20), then optionally `sigprof` (the program
 * runs its own ITIMER_PROF with a SIGPROF handler and says how many ticks
 * it got) or `fork` (the work runs again in a fork child, which the
 * parent waits for) or `rtsig` (the program looks at SIGRTMAX's
 * disposition, installs its own handler for it, raises it once, and says
 * how many it received in the end). The output is the same measured or
 * not. */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef WITH_DRHOOK
#include "drhook.h"
#define REGION_START(n) DRHOOK_START(n)
#define REGION_END() DRHOOK_END()
#else
#define REGION_START(n) {
#define REGION_END() }
#endif

#define THREADS 4
#define UNIT 5000000L

static long units = 20;

__attribute__((noinline)) static long work_a(long n) {
  volatile long acc = 0;
  long i;
  for (i = 0; i < 3 * n; i++) acc += i;
  return acc;
}

__attribute__((noinline)) static long work_b(long n) {
  volatile long acc = 0;
  long i;
  for (i = 0; i < n; i++) acc += i;
  return acc;
}

__attribute__((noinline)) static long region_a(void) {
  long r;
  REGION_START(region_a);
  r = work_a(UNIT);
  REGION_END();
  return r;
}

__attribute__((noinline)) static long region_b(void) {
  long r;
  REGION_START(region_b);
  r = work_b(UNIT);
  REGION_END();
  return r;
}

static void *worker(void *arg) {
  long k, sum = 0;
  REGION_START(outer);
  for (k = 0; k < units; k++) {
    sum += region_a();
    sum += region_b();
  }
  REGION_END();
  *(long *)arg = sum;
  return NULL;
}

static long run_threads(void) {
  pthread_t t[THREADS];
  long sums[THREADS], total = 0;
  int i;
  for (i = 0; i < THREADS; i++) pthread_create(&t[i], NULL, worker, &sums[i]);
  for (i = 0; i < THREADS; i++) {
    pthread_join(t[i], NULL);
    total += sums[i];
  }
  return total;
}

static volatile sig_atomic_t ticks, rt_received;

static void on_rt(int sig) {
  (void)sig;
  rt_received++;
}

static void on_prof(int sig) {
  (void)sig;
  ticks++;
}

int main(int argc, char **argv) {
  long total;
  if (argc > 1) units = atol(argv[1]);
  if (argc > 2 && strcmp(argv[2], "sigprof") == 0) {
    struct sigaction sa;
    struct itimerval it = {{0, 1000}, {0, 1000}};
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_prof;
    sigaction(SIGPROF, &sa, NULL);
    setitimer(ITIMER_PROF, &it, NULL);
  }
  if (argc > 2 && strcmp(argv[2], "rtsig") == 0) {
    struct sigaction sa, old;
    sigaction(SIGRTMAX, NULL, &old);
    printf("SIGRTMAX at start: %s\n",
           old.sa_handler == SIG_DFL ? "default" : "a handler");
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_rt;
    sigaction(SIGRTMAX, &sa, NULL);
    raise(SIGRTMAX);
    sigaction(SIGRTMAX, NULL, &old);
    printf("SIGRTMAX now: %s\n", old.sa_handler == on_rt ? "its handler" : "another");
  }
  if (argc > 2 && strcmp(argv[2], "fork") == 0) {
    int status;
    pid_t pid = fork();
    if (pid == 0) {
      total = run_threads();
      printf("child total=%ld\n", total);
      fflush(stdout);
      exit(0);
    }
    waitpid(pid, &status, 0);
    printf("child status=%d\n", status);
  }
  total = run_threads();
  printf("total=%ld\n", total);
  if (argc > 2 && strcmp(argv[2], "rtsig") == 0)
    printf("SIGRTMAX received: %d\n", (int)rt_received);
  if (argc > 2 && strcmp(argv[2], "sigprof") == 0) {
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_PROF, &off, NULL);
    printf("sigprof ticks>0: %s\n", ticks > 0 ? "yes" : "no");
  }
  return 0;
}
