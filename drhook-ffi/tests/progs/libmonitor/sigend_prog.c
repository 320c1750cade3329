/* A process ended by a signal: a thread is started (and waits), then
 * argv[1] (a signal number) ends the process as argv[2] says: "raise"
 * (its default action), "fault" (a real fault, for SIGSEGV), "handler"
 * (the program's handler, which calls _exit(7)), "ignore" (SIG_IGN, so
 * the process goes on and returns 0), "ignore-exec" (SIG_IGN, then a shell
 * that sends itself the signal and says "alive"). Prints the program's view of the
 * signal's disposition before it changes it. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int ready[2];

static void *waiter(void *arg)
{
    (void) arg;
    char c = 1;
    if (write(ready[1], &c, 1) != 1)
        return NULL;
    for (;;)
        pause();
    return NULL;
}

static void on_sig(int sig)
{
    (void) sig;
    _exit(7);
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    int sig = atoi(argv[1]);
    const char *how = argv[2];
    struct sigaction old;
    sigaction(sig, NULL, &old);
    printf("view=%s\n", old.sa_handler == SIG_DFL ? "default" : "other");
    fflush(stdout);
    if (pipe(ready) != 0)
        return 2;
    pthread_t t;
    pthread_create(&t, NULL, waiter, NULL);
    char c;
    if (read(ready[0], &c, 1) != 1)
        return 2;
    if (strcmp(how, "handler") == 0)
        signal(sig, on_sig);
    if (strcmp(how, "ignore") == 0 || strcmp(how, "ignore-exec") == 0)
        signal(sig, SIG_IGN);
    if (strcmp(how, "ignore-exec") == 0) {
        /* The new program inherits the ignored signal. */
        char cmd[64];
        snprintf(cmd, sizeof cmd, "kill -%d $$; echo alive", sig);
        execl("/bin/sh", "sh", "-c", cmd, (char *) NULL);
        return 2;
    }
    if (strcmp(how, "fault") == 0) {
        volatile int *p = (int *) (long) (argc - 3);
        *p = 1;
    }
    raise(sig);
    sigaction(sig, NULL, &old);
    printf("survived, view=%s\n", old.sa_handler == SIG_IGN ? "ignored" : "other");
    return 0;
}
