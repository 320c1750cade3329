/* n times pthread_create+join ("t") or fork+waitpid ("f"): the cost of the
 * wrapped calls under callgrind (BENCHMARKS.md, issue 26). */
#include <pthread.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
static void *work(void *a) { return a; }
int main(int argc, char **argv) {
    int n = atoi(argv[2]);
    for (int i = 0; i < n; i++) {
        if (argv[1][0] == 't') { pthread_t t; pthread_create(&t, NULL, work, NULL); pthread_join(t, NULL); }
        else { pid_t p = fork(); if (p == 0) _exit(0); waitpid(p, NULL, 0); }
    }
    return 0;
}
