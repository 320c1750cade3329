/* A C program instrumented with Dr.Hook's macros and linked with
 * libdrhook.so, run under the preload: its calls must reach the same
 * engine as the layer's root regions (one profile, HOOKED:WORK under
 * main and under the thread's root). */
#include <pthread.h>
#include <stdio.h>
#include "drhook.h"

static volatile double sink;

void hooked_work(void) {
  DRHOOK_START_BY_STRING("HOOKED:WORK");
  for (int i = 0; i < 1000000; i++) sink += i * 1e-9;
  DRHOOK_END();
}

void *hooked_thread(void *arg) {
  (void)arg;
  for (int i = 0; i < 2; i++) hooked_work();
  return NULL;
}

int main(void) {
  pthread_t t;
  for (int i = 0; i < 3; i++) hooked_work();
  pthread_create(&t, NULL, hooked_thread, NULL);
  pthread_join(t, NULL);
  printf("hooked done\n");
  return 0;
}
