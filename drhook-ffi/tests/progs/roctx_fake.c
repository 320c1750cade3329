/* A fake libroctx64.so: records roctxRangePushA / roctxRangePop with the
 * calling thread to the file named by ROCTX_TEST_LOG (same lines as
 * nvtx_inject.c). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static FILE *out;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void line(const char *what, const char *name) {
  pthread_mutex_lock(&lock);
  if (!out) {
    out = fopen(getenv("ROCTX_TEST_LOG"), "w");
    if (out) setvbuf(out, NULL, _IOLBF, 0);
  }
  if (out) fprintf(out, "%ld %s%s%s\n", (long)syscall(SYS_gettid), what, name ? " " : "", name ? name : "");
  pthread_mutex_unlock(&lock);
}

int roctxRangePushA(const char *message) {
  line("push", message);
  return 0;
}

int roctxRangePop(void) {
  line("pop", NULL);
  return 0;
}
