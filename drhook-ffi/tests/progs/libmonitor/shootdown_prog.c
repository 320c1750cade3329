/* Threads still running when the process ends: two blocked in a read
 * that never completes, and the end comes from main (`exit`) or, with
 * the argument `side`, from a third thread while main waits in pause().
 * libmonitor gives each running thread its monitor_fini_thread on itself
 * before monitor_fini_process (its "shootdown"). Run with tool.c by
 * tests/libmonitor.rs (fini_thread_for_every_running_thread). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fds[2];
static pthread_barrier_t started;

static void *blocked(void *arg) {
  char c;
  (void)arg;
  pthread_barrier_wait(&started);
  if (read(fds[0], &c, 1) < 0) return NULL;
  return NULL;
}

static void *ender(void *arg) {
  (void)arg;
  pthread_barrier_wait(&started);
  usleep(100000);
  exit(0);
}

int main(int argc, char **argv) {
  int side = argc > 1 && strcmp(argv[1], "side") == 0;
  pthread_t t;
  if (pipe(fds) != 0) return 2;
  pthread_barrier_init(&started, NULL, side ? 4 : 3);
  pthread_create(&t, NULL, blocked, NULL);
  pthread_create(&t, NULL, blocked, NULL);
  if (side) pthread_create(&t, NULL, ender, NULL);
  pthread_barrier_wait(&started);
  if (side)
    for (;;) pause();
  usleep(100000);
  exit(0);
}
