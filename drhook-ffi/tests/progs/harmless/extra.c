/* A library to preload besides Dr.Hook's: says that it was loaded into the
 * `environ` test program (not into `drhook` itself, which also runs with
 * it preloaded). */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <unistd.h>

__attribute__((constructor)) static void loaded(void) {
    if (strcmp(program_invocation_short_name, "environ") == 0) {
        ssize_t n = write(1, "extra library loaded\n", 21);
        (void)n;
    }
}
