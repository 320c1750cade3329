/* A shared library preloaded before Dr.Hook's: its `write` sends the
 * process a SIGTERM the first time a profile's temporary file
 * (`.drhook.prof.N.XXXX.tmp`) is written, as a pool's SIGTERM or a user's
 * Ctrl-C can arrive in the middle of the profile written at the process's
 * end. The signal must wait for the write's end (the rename into place),
 * then take effect. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

ssize_t write(int fd, const void *buf, size_t n) {
    static ssize_t (*real)(int, const void *, size_t);
    static int sent;
    if (!real)
        real = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    if (!sent) {
        char link[64], to[512];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t k = readlink(link, to, sizeof to - 1);
        if (k > 0) {
            to[k] = 0;
            const char *base = strrchr(to, '/');
            base = base ? base + 1 : to;
            if (strncmp(base, ".drhook.prof.", 13) == 0 && strstr(base, ".tmp")) {
                sent = 1;
                kill(getpid(), SIGTERM);
                /* Time for a handler on another thread to end the process
                 * first. */
                usleep(200000);
            }
        }
    }
    return real(fd, buf, n);
}
