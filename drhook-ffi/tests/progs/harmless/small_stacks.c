/* Threads with the smallest stacks the C library allows (issue 22, item
 * 14): PTHREAD_STACK_MIN (16 KiB on x86-64 glibc), sysconf's
 * _SC_THREAD_STACK_MIN, and a 16 KiB stack of the program's own
 * (pthread_attr_setstack). Each start routine checks how much stack is
 * left below its frame, works on 4 KiB of it and prints a line.
 *
 * With the argument `measure`, prints instead how much of each thread's
 * stack was used, in bytes from the top (TLS and thread descriptor
 * included): `entry <kind> N` down to the start routine's frame; on a
 * painted stack of the program's own, `start <kind> N`, the deepest byte
 * written before the start routine ran, and `end <kind> N`, the deepest
 * written after it (the stack below its frame is painted again), the
 * thread's end included. */
#define _GNU_SOURCE
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAINT 0xa5
#define BIG (1 << 20)

struct job {
  const char *kind;
  char *lo, *hi;     /* the stack, when the program gave it */
  size_t entry_used; /* top of the stack to the start routine's frame */
  size_t left;       /* below the start routine's frame */
  size_t start_used; /* painted: the deepest byte written before the routine */
  long sum;
};

static int measuring;

static long work(volatile char *buf, size_t n) {
  long s = 0;
  for (size_t i = 0; i < n; i++) buf[i] = (char)(i * 7);
  for (size_t i = 0; i < n; i++) s += buf[i];
  return s;
}

static void *start(void *p) {
  struct job *j = p;
  char here;
  char *lo = j->lo, *hi = j->hi;
  if (!hi) {
    pthread_attr_t a;
    void *addr;
    size_t size;
    pthread_getattr_np(pthread_self(), &a);
    pthread_attr_getstack(&a, &addr, &size);
    pthread_attr_destroy(&a);
    lo = addr;
    hi = lo + size;
  }
  j->entry_used = (size_t)(hi - &here);
  j->left = (size_t)(&here - lo);
  if (j->lo && measuring) {
    /* What the thread's start wrote, then painted again below this
     * frame, so that the scan after the end sees the end's depth. */
    size_t untouched = 0;
    while ((unsigned char)lo[untouched] == PAINT) untouched++;
    j->start_used = (size_t)(hi - lo) - untouched;
    uintptr_t end = (uintptr_t)&here - 512;
    for (uintptr_t q = (uintptr_t)lo + untouched; q < end; q++) *(volatile char *)q = (char)PAINT;
  }
  if (!measuring) {
    /* A few KiB of the stack, as a small worker would use. */
    volatile char buf[4096];
    j->sum = work(buf, sizeof buf);
    printf("%s: sum %ld, %s\n", j->kind, j->sum,
           j->left >= 8192 ? "8 KiB left" : "less than 8 KiB left");
    fflush(stdout);
  }
  return NULL;
}

static void run(struct job *j, pthread_attr_t *a) {
  pthread_t t;
  int r = pthread_create(&t, a, start, j);
  if (r) {
    printf("%s: pthread_create: %s\n", j->kind, strerror(r));
    return;
  }
  pthread_join(t, NULL);
}

static void with_size(const char *kind, size_t size) {
  struct job j = {kind, NULL, NULL, 0, 0, 0, 0};
  pthread_attr_t a;
  pthread_attr_init(&a);
  int r = pthread_attr_setstacksize(&a, size);
  if (r) {
    printf("%s: pthread_attr_setstacksize(%zu): %s\n", kind, size, strerror(r));
    return;
  }
  run(&j, &a);
  pthread_attr_destroy(&a);
  if (measuring) printf("entry %s %zu\n", kind, j.entry_used);
}

/* A stack of the program's own, painted, `size` bytes. */
static void own_stack(const char *kind, size_t size) {
  char *lo = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (lo == MAP_FAILED) {
    perror("mmap");
    exit(1);
  }
  memset(lo, PAINT, size);
  struct job j = {kind, lo, lo + size, 0, 0, 0, 0};
  pthread_attr_t a;
  pthread_attr_init(&a);
  pthread_attr_setstack(&a, lo, size);
  run(&j, &a);
  pthread_attr_destroy(&a);
  size_t untouched = 0;
  while (untouched < size && (unsigned char)lo[untouched] == PAINT) untouched++;
  if (measuring) {
    printf("entry %s %zu\n", kind, j.entry_used);
    printf("start %s %zu\n", kind, j.start_used);
    printf("end %s %zu\n", kind, size - untouched);
  }
  munmap(lo, size);
}

int main(int argc, char **argv) {
  measuring = argc > 1 && strcmp(argv[1], "measure") == 0;
  long min = sysconf(_SC_THREAD_STACK_MIN);
  if (measuring) {
    /* The first thread of a start routine, then the next. */
    own_stack("own 1 MiB", BIG);
    own_stack("own 1 MiB again", BIG);
  }
  for (int i = 0; i < 3; i++) {
    with_size("PTHREAD_STACK_MIN", PTHREAD_STACK_MIN);
    with_size("_SC_THREAD_STACK_MIN", min > 0 ? (size_t)min : PTHREAD_STACK_MIN);
    own_stack("own 16 KiB", 16384);
  }
  printf("done\n");
  return 0;
}
