/* Says which of the descriptors 0-2 it was started with are open, then
 * opens a file and prints the descriptor it got: a program started with a
 * descriptor closed (`2>&-`) gets that number for its first file. */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int open_at_start[3];
    for (int fd = 0; fd < 3; fd++)
        open_at_start[fd] = fcntl(fd, F_GETFD) != -1;
    int fd = open(argc > 1 ? argv[1] : "file.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    /* Closed at once: what is written to stderr later (Dr.Hook's lines at
     * exit) must not land in it. */
    close(fd);
    printf("fd 0 %s, fd 1 %s, fd 2 %s; first file %d\n", open_at_start[0] ? "open" : "closed",
           open_at_start[1] ? "open" : "closed", open_at_start[2] ? "open" : "closed", fd);
    return 0;
}
