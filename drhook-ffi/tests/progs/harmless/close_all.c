/* Closes every descriptor above the standard streams, as daemons and
 * shells do, then uses files of its own (issue 22, item 9): writes to a
 * file (traced under `drhook run --io-trace`), closes descriptors 3 and up
 * (`close_range`, or a close loop up to 1024 with argv[1] "loop"), opens
 * three new files (they get the lowest numbers: 3, 4, 5), writes known
 * content to each, reads it back and prints it. A descriptor Dr.Hook kept
 * open and the program's files must never meet. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int loop = argc > 1 && strcmp(argv[1], "loop") == 0;
    int fd = open("before.dat", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        perror("before.dat");
        return 1;
    }
    for (int i = 0; i < 10; i++)
        if (write(fd, "0123456789", 10) != 10)
            return 2;
    if (loop) {
        for (int k = 3; k < 1024; k++)
            close(k);
    } else if (close_range(3, ~0U, 0) != 0) {
        perror("close_range");
        return 3;
    }
    int fds[3];
    for (int k = 0; k < 3; k++) {
        char name[32];
        snprintf(name, sizeof name, "new%d.dat", k);
        fds[k] = open(name, O_RDWR | O_CREAT | O_TRUNC, 0644);
        if (fds[k] < 0) {
            perror(name);
            return 4;
        }
    }
    for (int k = 0; k < 3; k++) {
        char text[64];
        int len = snprintf(text, sizeof text, "the program's own line in new%d.dat\n", k);
        for (int i = 0; i < 3; i++)
            if (write(fds[k], text, len) != len)
                return 5;
    }
    for (int k = 0; k < 3; k++) {
        char back[512] = {0};
        ssize_t n = pread(fds[k], back, sizeof back - 1, 0);
        printf("new%d.dat on descriptor %d, %zd bytes read back:\n%s", k, fds[k], n, back);
        close(fds[k]);
    }
    return 0;
}
