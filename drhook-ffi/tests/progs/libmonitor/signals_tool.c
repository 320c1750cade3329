/* A libmonitor tool that takes SIGUSR1 and SIGTERM in front of the program
 * (monitor_sigaction): it handles the first signal itself and passes the
 * others on to the program's disposition. Written only against monitor.h.
 * Used by tests/libmonitor.rs (support_functions). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "monitor.h"

static volatile int tool_calls[65];

static int handler(int sig, siginfo_t *info, void *context) {
  (void)info;
  (void)context;
  tool_calls[sig]++;
  return tool_calls[sig] == 1 ? 0 : 1; /* 0: handled here */
}

void *monitor_init_process(int *argc, char **argv, void *data) {
  (void)argc;
  (void)argv;
  if (monitor_sigaction(SIGUSR1, handler, 0, NULL) != 0) {
    fprintf(stderr, "tool: monitor_sigaction(SIGUSR1) failed\n");
    exit(3);
  }
  /* One Dr.Hook also catches: the tool comes first, then Dr.Hook's
   * handler, which calls the program's. */
  if (monitor_sigaction(SIGTERM, handler, 0, NULL) != 0) {
    fprintf(stderr, "tool: monitor_sigaction(SIGTERM) failed\n");
    exit(3);
  }
  if (monitor_sigaction(SIGKILL, handler, 0, NULL) != -1) {
    fprintf(stderr, "tool: monitor_sigaction(SIGKILL) accepted\n");
    exit(3);
  }
  return data;
}

int tool_signal_calls(int sig) { return tool_calls[sig]; }
