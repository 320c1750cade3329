/* Writes a line to stdout and one to stderr and exits with status 5: a
 * program whose output and status `drhook run` must leave alone even when
 * it cannot profile it (static, set-user-ID, started by `env -i`). */
#include <stdio.h>

int main(void) {
    printf("hello on stdout\n");
    fprintf(stderr, "hello on stderr\n");
    return 5;
}
