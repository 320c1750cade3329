/* A shared library preloaded before Dr.Hook's: its `rename` sends the
 * process a SIGTERM just before a profile (`drhook.prof.N`, no side file)
 * is renamed into place, as a pool's SIGTERM or a user's Ctrl-C can
 * arrive in the middle of the profile written at the process's end. The
 * signal must wait for the write's end, then take effect. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int rename(const char *from, const char *to) {
    static int (*real)(const char *, const char *);
    if (!real)
        real = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
    const char *base = strrchr(to, '/');
    base = base ? base + 1 : to;
    if (strncmp(base, "drhook.prof.", 12) == 0 && !strchr(base, '-')) {
        kill(getpid(), SIGTERM);
        /* Time for a handler on another thread to end the process first. */
        usleep(200000);
    }
    return real(from, to);
}
