/* A runtime that installs its handler only where the disposition is still
 * the default (as Rust's standard library does for its stack-overflow
 * handler): the handler says so and ends the program with status 3. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void on_segv(int sig) {
    (void)sig;
    static const char m[] = "the runtime's handler caught SIGSEGV\n";
    write(1, m, sizeof m - 1);
    _exit(3);
}

int main(void) {
    struct sigaction old;
    sigaction(SIGSEGV, NULL, &old);
    if (old.sa_handler == SIG_DFL) {
        struct sigaction s;
        memset(&s, 0, sizeof s);
        s.sa_handler = on_segv;
        sigaction(SIGSEGV, &s, NULL);
        printf("installed the runtime's handler\n");
    } else {
        printf("someone else handles SIGSEGV: left alone\n");
    }
    fflush(stdout);
    volatile int *p = 0;
    return *p;
}
