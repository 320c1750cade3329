/* Opens /dev/null until the descriptor limit is reached and ends with all
 * of them open: Dr.Hook's reports, written after, must still find a
 * descriptor (every profile was lost, with a message). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>

int main(void) {
    int n = 0;
    while (open("/dev/null", O_RDONLY) >= 0)
        n++;
    printf("full: %s\n", errno == EMFILE ? "EMFILE" : "other");
    return n > 0 ? 0 : 1;
}
