/* A C program instrumented with Dr.Hook's macros and linked with
 * libdrhook.so, run under the preload with DR_HOOK_OPT=memprof: its
 * routines allocate known sizes through the malloc family, on 4 threads,
 * with frees on another thread, a chain of reallocations and aligned
 * blocks. The test checks the -mem file has exactly those numbers. */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "drhook.h"

static void *kept[16];
static void *volatile escape; /* keeps the compiler from eliding a malloc/free pair */

/* 1000 bytes kept, 24 freed at once. */
__attribute__((noinline)) void mem_plain(void) {
  DRHOOK_START_BY_STRING("MEM:PLAIN");
  kept[0] = malloc(1000);
  escape = malloc(24);
  free(escape);
  DRHOOK_END();
}

/* 10 -> 100 -> 1000 bytes: three allocations, two frees. */
__attribute__((noinline)) void mem_chain(void) {
  DRHOOK_START_BY_STRING("MEM:CHAIN");
  char *p = malloc(10);
  p = realloc(p, 100);
  p = realloc(p, 1000);
  kept[1] = p;
  DRHOOK_END();
}

/* Aligned and zeroed blocks: 4096 + 512 + 100 bytes, the 512 freed. */
__attribute__((noinline)) void mem_aligned(void) {
  DRHOOK_START_BY_STRING("MEM:ALIGNED");
  void *a = NULL;
  if (posix_memalign(&a, 64, 4096) != 0 || ((size_t)a & 63) != 0) abort();
  char *b = aligned_alloc(256, 512);
  if (((size_t)b & 255) != 0 || malloc_usable_size(b) < 512) abort();
  memset(b, 2, 512);
  escape = b;
  free(escape);
  char *c = calloc(10, 10);
  for (int i = 0; i < 100; i++)
    if (c[i] != 0) abort();
  kept[2] = a;
  kept[3] = c;
  DRHOOK_END();
}

/* (k+1)*4096 bytes each, freed by the main thread. */
__attribute__((noinline)) void mem_worker(int k) {
  DRHOOK_START_BY_STRING("MEM:WORKER");
  kept[4 + k] = malloc((size_t)(k + 1) * 4096);
  DRHOOK_END();
}

static void *worker(void *arg) {
  mem_worker((int)(size_t)arg);
  return NULL;
}

__attribute__((noinline)) void mem_collect(void) {
  DRHOOK_START_BY_STRING("MEM:COLLECT");
  for (int k = 0; k < 4; k++) free(kept[4 + k]);
  free(kept[1]);
  DRHOOK_END();
}

int main(void) {
  pthread_t t[4];
  mem_plain();
  mem_chain();
  mem_aligned();
  for (int k = 0; k < 4; k++) pthread_create(&t[k], NULL, worker, (void *)(size_t)k);
  for (int k = 0; k < 4; k++) pthread_join(t[k], NULL);
  mem_collect();
  printf("mem done\n");
  return 0;
}
