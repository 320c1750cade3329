/* A library whose constructor, before main, does what $EARLY says, in
 * order (libmonitor's tests/early.c, made deterministic): T starts a
 * thread and joins it, F forks (both processes go on to main), O opens
 * and closes libm. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static void *work(void *arg) { return arg; }

/* Called by main, so that the program needs the library. */
void early_linked(void) {}

__attribute__((constructor)) static void early(void)
{
    const char *s = getenv("EARLY");
    if (s == NULL)
        return;
    for (; *s; s++) {
        if (*s == 'T') {
            pthread_t t;
            if (pthread_create(&t, NULL, work, NULL) == 0)
                pthread_join(t, NULL);
        } else if (*s == 'F') {
            fork();
        } else if (*s == 'O') {
            void *h = dlopen("libm.so.6", RTLD_NOW);
            if (h != NULL)
                dlclose(h);
        }
    }
}
