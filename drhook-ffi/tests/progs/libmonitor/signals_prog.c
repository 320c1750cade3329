/* A program run with signals_tool.c: its own view of SIGUSR1 behind the
 * tool's handler, monitor_broadcast_signal to its threads, and the bottom
 * frames of its stacks (libmonitor's fences). The monitor_* functions are
 * found with dlsym, so the program links without any monitor library. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef int (*addr_q)(void *);

static addr_q q(const char *name) {
  addr_q f = (addr_q)dlsym(RTLD_DEFAULT, name);
  if (!f) {
    printf("missing %s\n", name);
    _exit(4);
  }
  return f;
}

static volatile sig_atomic_t prog_calls, term_calls;
static void on_usr1(int s) {
  (void)s;
  prog_calls++;
}
static void on_term(int s) {
  (void)s;
  term_calls++;
}

static int usr2_total;
static __thread volatile int usr2_here;
static void on_usr2(int s) {
  (void)s;
  usr2_here = 1;
  __atomic_add_fetch(&usr2_total, 1, __ATOMIC_SEQ_CST);
}

static pthread_barrier_t barrier;
static int bottom[3][2];

static void *thread_main(void *arg) {
  int i = (int)(long)arg;
  void *ra = __builtin_return_address(0);
  bottom[i][0] = q("monitor_unwind_thread_bottom_frame")(ra) &&
                 q("monitor_in_start_func_narrow")(ra);
  bottom[i][1] = q("monitor_unwind_process_bottom_frame")(ra);
  pthread_barrier_wait(&barrier);
  for (int k = 0; k < 500 && !usr2_here; k++) usleep(10000);
  return NULL;
}

int main(void) {
  void *ra = __builtin_return_address(0);
  printf("main bottom: process=%d thread=%d wide=%d narrow=%d\n",
         q("monitor_unwind_process_bottom_frame")(ra),
         q("monitor_unwind_thread_bottom_frame")(ra),
         q("monitor_in_start_func_wide")(ra),
         q("monitor_in_start_func_narrow")(ra));
  printf("main itself: wide=%d\n", q("monitor_in_start_func_wide")((void *)main));

  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sigaction(SIGUSR1, &sa, NULL);
  sigaction(SIGUSR1, NULL, &old);
  printf("view: %s\n", old.sa_handler == on_usr1 ? "own handler" : "another");
  raise(SIGUSR1);
  raise(SIGUSR1);
  int (*calls)(int) = (int (*)(int))dlsym(RTLD_DEFAULT, "tool_signal_calls");
  printf("tool %d program %d\n", calls ? calls(SIGUSR1) : -1, (int)prog_calls);
  signal(SIGUSR1, SIG_IGN);
  raise(SIGUSR1);
  printf("ignored: survived, tool %d program %d\n", calls ? calls(SIGUSR1) : -1, (int)prog_calls);
  signal(SIGTERM, on_term);
  raise(SIGTERM);
  raise(SIGTERM);
  printf("SIGTERM: tool %d program %d\n", calls ? calls(SIGTERM) : -1, (int)term_calls);

  signal(SIGUSR2, on_usr2);
  pthread_t t[3];
  pthread_barrier_init(&barrier, NULL, 4);
  for (long i = 0; i < 3; i++) pthread_create(&t[i], NULL, thread_main, (void *)i);
  pthread_barrier_wait(&barrier);
  int (*broadcast)(int) = (int (*)(int))dlsym(RTLD_DEFAULT, "monitor_broadcast_signal");
  printf("broadcast: %d\n", broadcast ? broadcast(SIGUSR2) : -9);
  for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
  for (int i = 0; i < 3; i++)
    printf("thread %d bottom: thread=%d process=%d\n", i, bottom[i][0], bottom[i][1]);
  printf("SIGUSR2: threads %d, main %d\n", usr2_total, (int)usr2_here);
  return 0;
}
