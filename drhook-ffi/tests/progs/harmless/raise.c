/* Raises the signal named by argv[1] (a number) at itself and says whether
 * it survived: a program started with that signal ignored (`trap '' INT`)
 * survives it. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    int sig = argc > 1 ? atoi(argv[1]) : SIGINT;
    struct sigaction old;
    sigaction(sig, NULL, &old);
    printf("disposition %s\n", old.sa_handler == SIG_IGN   ? "ignored"
                               : old.sa_handler == SIG_DFL ? "default"
                                                           : "a handler");
    fflush(stdout);
    raise(sig);
    printf("survived signal %d\n", sig);
    return 0;
}
