/* Ways a process ends, each with work done at the end (argv[1]):
 *   atexit        an atexit handler writes results.bin (1 MiB), a
 *                 destructor writes dtor.txt; main returns 0;
 *   exit_atexit   the same, ended by exit(0);
 *   two_exits     two threads call exit(0) at the same moment;
 *   quick         an at_quick_exit handler writes quick.txt; quick_exit(0);
 *   pthread_exit  main calls pthread_exit; a thread writes thread.txt and
 *                 the process ends when it returns. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void write_file(const char *name, size_t n) {
    static char buf[65536];
    int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return;
    memset(buf, 'x', sizeof buf);
    while (n > 0) {
        size_t k = n < sizeof buf ? n : sizeof buf;
        if (write(fd, buf, k) != (ssize_t)k)
            break;
        n -= k;
    }
    close(fd);
}

static void results(void) { write_file("results.bin", 1 << 20); }
static void quick(void) { write_file("quick.txt", 100); }

static int with_dtor;
__attribute__((destructor)) static void dtor(void) {
    if (with_dtor)
        write_file("dtor.txt", 10);
}

static pthread_barrier_t barrier;
static void *exiter(void *arg) {
    (void)arg;
    pthread_barrier_wait(&barrier);
    exit(0);
}

static void *late_writer(void *arg) {
    (void)arg;
    usleep(100000);
    write_file("thread.txt", 1000);
    return NULL;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "atexit";
    if (strcmp(mode, "atexit") == 0 || strcmp(mode, "exit_atexit") == 0) {
        atexit(results);
        with_dtor = 1;
        printf("main done\n");
        if (strcmp(mode, "exit_atexit") == 0)
            exit(0);
        return 0;
    }
    if (strcmp(mode, "two_exits") == 0) {
        pthread_t a, b;
        pthread_barrier_init(&barrier, NULL, 2);
        pthread_create(&a, NULL, exiter, NULL);
        pthread_create(&b, NULL, exiter, NULL);
        pthread_join(a, NULL);
        pthread_join(b, NULL);
        return 1;
    }
    if (strcmp(mode, "quick") == 0) {
        at_quick_exit(quick);
        printf("quick\n");
        fflush(stdout);
        quick_exit(0);
    }
    if (strcmp(mode, "pthread_exit") == 0) {
        pthread_t t;
        pthread_create(&t, NULL, late_writer, NULL);
        pthread_exit(NULL);
    }
    return 2;
}
