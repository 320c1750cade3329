/* An AddressSanitizer program (built with -fsanitize=address): `clean`
 * allocates in every way the malloc family allows, on two threads, writes
 * a file and exits 0 with no leak; `underflow` writes one byte before a
 * block (ASan reports a heap-buffer-overflow and exits 1: a header in
 * front of the block would hide it); `leak` leaves a block unreachable
 * (LeakSanitizer reports it at exit). Under `drhook run` the program must
 * start (ASan's runtime checks that it comes first among the libraries)
 * and end as plainly: the same output, report and status, no leak of
 * Dr.Hook's own counted (issue 22, item 15c). */
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *work(void *arg) {
    size_t n = (size_t)arg;
    char *p = malloc(n);
    memset(p, 1, n);
    p = realloc(p, 2 * n);
    memset(p, 2, 2 * n);
    long sum = 0;
    for (size_t i = 0; i < 2 * n; i++)
        sum += p[i];
    free(p);
    return (void *)sum;
}

/* Through a volatile pointer, so that the compiler keeps the blocks. */
static char *volatile keep;

int main(int argc, char **argv) {
    const char *what = argc > 1 ? argv[1] : "clean";
    char *s = strdup("hello from an ASan program");
    void *a = NULL;
    if (posix_memalign(&a, 64, 256) != 0)
        return 2;
    void *b = aligned_alloc(64, 128);
    void *c = memalign(4096, 10);
    int *d = calloc(100, sizeof(int));
    pthread_t t;
    void *r;
    pthread_create(&t, NULL, work, (void *)1000);
    pthread_join(t, &r);
    printf("%s: %s, thread sum %ld, blocks %d\n", what, s, (long)r, a && b && c && d);
    FILE *f = fopen("asan.out", "w");
    fprintf(f, "%s\n", s);
    fclose(f);
    free(s);
    free(a);
    free(b);
    free(c);
    free(d);
    fflush(stdout);
    if (strcmp(what, "underflow") == 0) {
        keep = malloc(32);
        char *p = keep;
        p[-1] = 'x';
        printf("not reached: %c\n", p[-1]);
        free(p);
    } else if (strcmp(what, "leak") == 0) {
        keep = malloc(123);
        keep[0] = 1;
        keep = NULL;
    }
    return 0;
}
