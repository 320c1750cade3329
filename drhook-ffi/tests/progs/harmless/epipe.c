/* Says what it was started with (SIGPIPE's disposition; with the argument
 * `mask`, whether SIGUSR1 is blocked, and nothing more), then writes to its
 * stdout until a write fails and says how on stderr: with its reader gone,
 * a program gets EPIPE when SIGPIPE is ignored and is killed by SIGPIPE
 * otherwise. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    struct sigaction old;
    sigaction(SIGPIPE, NULL, &old);
    fprintf(stderr, "SIGPIPE %s\n",
            old.sa_handler == SIG_IGN   ? "ignored"
            : old.sa_handler == SIG_DFL ? "default"
                                        : "a handler");
    if (argc > 1 && strcmp(argv[1], "mask") == 0) {
        sigset_t mask;
        sigprocmask(SIG_BLOCK, NULL, &mask);
        printf("SIGUSR1 %s\n", sigismember(&mask, SIGUSR1) ? "blocked" : "not blocked");
        return 0;
    }
    char buf[4096];
    memset(buf, 'y', sizeof buf);
    for (;;) {
        if (write(1, buf, sizeof buf) < 0) {
            fprintf(stderr, "write: %s\n", errno == EPIPE ? "EPIPE" : strerror(errno));
            return 3;
        }
    }
}
