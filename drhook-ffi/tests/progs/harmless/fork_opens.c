/* Forks 1000 times while 4 threads open and close files of their own in a
 * loop (issue 22, item 8). Each child opens a file, writes a byte and
 * ends: `exit(0)` (argv[1] "exit") or `execv("/bin/true")` ("exec"). The
 * parent waits for each child under an `alarm`: a child that hangs (a lock
 * it inherited held by a thread it does not have) is killed and named, and
 * the forking stops. Prints how many children exited 0. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHILDREN 1000
#define THREADS 4

static volatile int stop;
static volatile sig_atomic_t timed_out;

static void *opener(void *arg) {
    char name[32];
    snprintf(name, sizeof name, "thread%ld.tmp", (long)arg);
    while (!stop) {
        int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0)
            close(fd);
    }
    return NULL;
}

static void on_alarm(int sig) {
    (void)sig;
    timed_out = 1;
}

int main(int argc, char **argv) {
    int use_exec = argc > 1 && strcmp(argv[1], "exec") == 0;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm; /* no SA_RESTART: waitpid returns EINTR */
    sigaction(SIGALRM, &sa, NULL);

    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, opener, (void *)i);

    int ok = 0, started = 0;
    for (int k = 0; k < CHILDREN; k++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            break;
        }
        if (pid == 0) {
            int fd = open("children.out", O_WRONLY | O_CREAT | O_APPEND, 0644);
            if (fd >= 0) {
                if (write(fd, "x", 1) != 1)
                    _exit(3);
                close(fd);
            }
            if (use_exec) {
                char *args[] = {"/bin/true", NULL};
                execv("/bin/true", args);
                _exit(127);
            }
            exit(0);
        }
        started++;
        timed_out = 0;
        alarm(20);
        int status = 0;
        pid_t r;
        do {
            r = waitpid(pid, &status, 0);
        } while (r < 0 && errno == EINTR && !timed_out);
        alarm(0);
        if (r < 0) {
            printf("child %d hung\n", k);
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            break;
        }
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
            ok++;
    }
    stop = 1;
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < THREADS; i++) {
        char name[32];
        snprintf(name, sizeof name, "thread%d.tmp", i);
        unlink(name);
    }
    printf("%d of %d children started, %d exited 0\n", started, CHILDREN, ok);
    return 0;
}
