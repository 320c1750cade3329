/* Returns from main, with (argument "thread") or without a second thread
 * parked in pause(): a process-directed signal goes to a thread that does
 * not hold it. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void *park(void *arg) {
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "thread") == 0) {
        pthread_t t;
        pthread_create(&t, NULL, park, NULL);
    }
    puts("main done");
    fflush(stdout); /* the SIGTERM ends the process before stdio's own flush */
    return 0;
}
