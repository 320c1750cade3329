/* The edge cases of the malloc family, one line each: what the call
 * returned (NULL or a block, its alignment, whether the whole block can be
 * written), its status and errno (set to a sentinel before each call, so a
 * call that changes errno on success shows). The running C library's rules
 * decide; the output must be the same under `drhook run --opt memprof`
 * (issue 22, item 15a: aligned_alloc(48, 96) was NULL/EINVAL there, a
 * block plainly). */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SENTINEL 12345
#define HUGE_SIZE ((size_t)PTRDIFF_MAX)
#define TOP_ALIGN ((size_t)1 << (sizeof(size_t) * 8 - 1))

static const char *errname(int e) {
    switch (e) {
    case 0: return "0";
    case SENTINEL: return "unchanged";
    case ENOMEM: return "ENOMEM";
    case EINVAL: return "EINVAL";
    default: return "other";
    }
}

/* Whether `p` is aligned to `align` rounded up to a power of two (as
 * glibc's memalign rounds it). */
static int aligned_to(void *p, size_t align) {
    size_t k = 1;
    while (k < align && k < ((size_t)1 << 30))
        k *= 2;
    return (uintptr_t)p % k == 0;
}

/* Writes the block whole (a block smaller than asked breaks the heap),
 * prints it and frees it. */
static void show(const char *call, void *p, size_t size, size_t align, int err) {
    if (p == NULL) {
        printf("%-40s NULL errno=%s\n", call, errname(err));
        return;
    }
    if (size <= (1 << 20))
        memset(p, 0xa5, size);
    printf("%-40s block aligned:%d usable>=size:%d errno=%s\n", call, aligned_to(p, align),
           malloc_usable_size(p) >= size, errname(err));
    free(p);
}

static const size_t aligns[] = {0, 1, 2, 4, 8, 16, 24, 32, 48, 64, 96, 4096, 65536, 1 << 20,
                                TOP_ALIGN, TOP_ALIGN + 64, SIZE_MAX};
static const size_t sizes[] = {0, 1, 96, 4096, HUGE_SIZE - 4096, HUGE_SIZE, SIZE_MAX - 64,
                               SIZE_MAX};
#define N(a) (sizeof(a) / sizeof((a)[0]))

int main(void) {
    char call[64];
    for (size_t i = 0; i < N(aligns); i++) {
        for (size_t j = 0; j < N(sizes); j++) {
            size_t a = aligns[i], n = sizes[j];
            void *p;

            void *out = (void *)&call; /* a marker: left alone on failure? */
            errno = SENTINEL;
            int rc = posix_memalign(&out, a, n);
            int e = errno;
            snprintf(call, sizeof call, "posix_memalign(%#zx, %#zx)", a, n);
            if (rc == 0)
                show(call, out, n, a, e);
            else
                printf("%-40s rc=%s out %s errno=%s\n", call, errname(rc),
                       out == (void *)&call ? "untouched" : "changed", errname(e));

            errno = SENTINEL;
            p = aligned_alloc(a, n);
            e = errno;
            snprintf(call, sizeof call, "aligned_alloc(%#zx, %#zx)", a, n);
            show(call, p, n, a, e);

            errno = SENTINEL;
            p = memalign(a, n);
            e = errno;
            snprintf(call, sizeof call, "memalign(%#zx, %#zx)", a, n);
            show(call, p, n, a, e);
        }
    }
    for (size_t j = 0; j < N(sizes); j++) {
        size_t n = sizes[j];
        void *p;
        errno = SENTINEL;
        p = valloc(n);
        int e = errno;
        snprintf(call, sizeof call, "valloc(%#zx)", n);
        show(call, p, n, 4096, e);

        errno = SENTINEL;
        p = pvalloc(n);
        e = errno;
        snprintf(call, sizeof call, "pvalloc(%#zx)", n);
        show(call, p, n, 4096, e);

        errno = SENTINEL;
        p = malloc(n);
        e = errno;
        snprintf(call, sizeof call, "malloc(%#zx)", n);
        show(call, p, n, 16, e);

        errno = SENTINEL;
        p = calloc(n, 2);
        e = errno;
        snprintf(call, sizeof call, "calloc(%#zx, 2)", n);
        show(call, p, n < SIZE_MAX / 2 ? 2 * n : 0, 16, e);

        /* realloc of a plain block and of an aligned one: the contents
         * kept, the old block left alone on failure. */
        const char *kinds[] = {"malloc", "memalign(64)", "NULL"};
        for (int k = 0; k < 3; k++) {
            void *old = k == 0 ? malloc(40) : k == 1 ? memalign(64, 40) : NULL;
            if (old)
                memcpy(old, "0123456789abcdefghijklmnopqrstuvwxyzABC", 40);
            errno = SENTINEL;
            p = realloc(old, n);
            e = errno;
            snprintf(call, sizeof call, "realloc(%s, %#zx)", kinds[k], n);
            if (p != NULL && old != NULL)
                printf("%-40s contents kept:%d\n", call,
                       memcmp(p, "0123456789abcdefghijklmnopqrstuvwxyzABC", n < 40 ? n : 40) == 0);
            if (p == NULL && old != NULL && n != 0)
                printf("%-40s old kept:%d\n", call, memcmp(old, "0123456789", 10) == 0);
            if (p == NULL && old != NULL && n != 0)
                free(old);
            show(call, p, n, 16, e);

            old = k == 0 ? malloc(40) : k == 1 ? memalign(64, 40) : NULL;
            errno = SENTINEL;
            p = reallocarray(old, n, 2);
            e = errno;
            snprintf(call, sizeof call, "reallocarray(%s, %#zx, 2)", kinds[k], n);
            if (p == NULL && old != NULL && n != 0)
                free(old);
            show(call, p, n < SIZE_MAX / 2 ? 2 * n : 0, 16, e);
        }
    }
    /* Blocks of every kind freed in the opposite order. */
    void *ps[6];
    ps[0] = malloc(10);
    ps[1] = aligned_alloc(48, 96);
    ps[2] = memalign(4096, 100);
    ps[3] = valloc(10);
    ps[4] = pvalloc(10);
    posix_memalign(&ps[5], 256, 1000);
    for (int i = 5; i >= 0; i--)
        free(ps[i]);
    printf("done\n");
    return 0;
}
