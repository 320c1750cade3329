/* A program for libmonitor's callbacks: threads, fork (child _exits,
 * exits or returns per argv[1]), dlopen, then an ending chosen by argv[1]. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void *work(void *arg) { return arg; }

int main(int argc, char **argv)
{
    const char *end = argc > 1 ? argv[1] : "return";
    pthread_t t[3];
    for (int i = 0; i < 3; i++) {
        pthread_create(&t[i], NULL, work, NULL);
        pthread_join(t[i], NULL);
    }
    pid_t pid = fork();
    if (pid == 0) {
        pthread_t c;
        pthread_create(&c, NULL, work, NULL);
        pthread_join(c, NULL);
        exit(3);
    }
    int st;
    waitpid(pid, &st, 0);
    void *h = dlopen("libm.so.6", RTLD_NOW);
    if (h)
        dlclose(h);
    if (strcmp(end, "exit") == 0)
        exit(5);
    if (strcmp(end, "_exit") == 0)
        _exit(6);
    if (strcmp(end, "abort") == 0)
        abort();
    if (strcmp(end, "exec") == 0)
        execl("/bin/true", "true", (char *) NULL);
    return 0;
}
