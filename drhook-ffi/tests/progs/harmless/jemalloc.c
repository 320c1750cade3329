/* A program linked with jemalloc that uses jemalloc's own API on the
 * blocks `malloc` gives (sallocx, rallocx, xallocx, dallocx, sdallocx)
 * and frees jemalloc's blocks with `free`: each call's result is printed.
 * Under `drhook run --opt memprof` these functions must see the blocks
 * jemalloc gave (issue 22, item 15b: with a header in front of them the
 * sizes were wrong and the blocks freed at the wrong address). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jemalloc/jemalloc.h>

int main(void) {
    for (size_t n = 1; n <= (1 << 20); n *= 4) {
        char *p = malloc(n);
        memset(p, 'x', n);
        printf("malloc(%zu): sallocx %zu usable %zu nallocx %zu\n", n, sallocx(p, 0),
               malloc_usable_size(p), nallocx(n, 0));
        p = rallocx(p, 3 * n, 0);
        printf("rallocx(%zu): sallocx %zu kept %d\n", 3 * n, sallocx(p, 0), p[n - 1] == 'x');
        size_t x = xallocx(p, 3 * n, 0, 0);
        printf("xallocx: %zu\n", x);
        if (n % 2)
            dallocx(p, 0);
        else
            sdallocx(p, 3 * n, 0);
    }
    void *q = mallocx(200, MALLOCX_ALIGN(64));
    printf("mallocx aligned: %d sallocx %zu\n", ((unsigned long)q & 63) == 0, sallocx(q, 0));
    free(q);
    char *r = calloc(10, 10);
    r = realloc(r, 5000);
    printf("calloc+realloc: sallocx %zu\n", sallocx(r, 0));
    dallocx(r, 0);
    void *a = aligned_alloc(256, 512);
    printf("aligned_alloc: sallocx %zu aligned %d\n", sallocx(a, 0), ((unsigned long)a & 255) == 0);
    dallocx(a, 0);
    printf("done\n");
    return 0;
}
