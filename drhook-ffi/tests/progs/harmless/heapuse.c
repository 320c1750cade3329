/* How much of the C library's heap is in use after threads that open
 * files: Dr.Hook's own data (the threads' trees, the I/O layer's tables)
 * must not be in it. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static void *work(void *arg) {
    long t = (long)arg;
    char name[64];
    for (int i = 0; i < 10; i++) {
        snprintf(name, sizeof name, "f%ld.%d", t, i);
        int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            write(fd, name, 4);
            close(fd);
        }
        unlink(name);
    }
    return NULL;
}

int main(void) {
    pthread_t t[8];
    /* One thread first: the C library's own first-thread allocations. */
    pthread_create(&t[0], NULL, work, (void *)100L);
    pthread_join(t[0], NULL);
    struct mallinfo2 a = mallinfo2();
    /* One after the other: the C library's own per-thread bookkeeping
     * (an arena for a thread that allocates) is then reused, not grown
     * by contention. */
    for (long i = 0; i < 8; i++) {
        pthread_create(&t[i], NULL, work, (void *)i);
        pthread_join(t[i], NULL);
    }
    struct mallinfo2 b = mallinfo2();
    printf("heap in use changed by %ld bytes\n", (long)(b.uordblks - a.uordblks));
    return 0;
}
