/* A program that uses the dump signal itself (SIGRTMIN+6): it finds the
 * default there, installs its handler, raises the signal. */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdio.h>
#include <string.h>

static volatile sig_atomic_t got;

static void on_sig(int s) {
  (void)s;
  got = 1;
}

int main(void) {
  int sig = SIGRTMIN + 6;
  struct sigaction old, s;
  sigaction(sig, NULL, &old);
  printf("default=%d\n", old.sa_handler == SIG_DFL);
  memset(&s, 0, sizeof s);
  s.sa_handler = on_sig;
  sigaction(sig, &s, NULL);
  raise(sig);
  printf("handled=%d\n", (int)got);
  return 0;
}
