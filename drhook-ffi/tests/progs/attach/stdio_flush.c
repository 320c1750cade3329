/* 1000 lines with fprintf to a fully buffered file, a line-buffered one,
 * one with a 1 MiB buffer of its own (setvbuf), one with a 512-byte buffer,
 * and with printf to stdout (the test redirects it to a file); a few puts,
 * putchar and dprintf too. full.txt and big.txt are left open: exit
 * flushes them. Under -O2 -D_FORTIFY_SOURCE=2 the printf calls become
 * __fprintf_chk/__printf_chk/__dprintf_chk. */

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char big_buffer[1 << 20];
static char small_buffer[512];

static FILE *open_or_die(const char *path) {
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        perror(path);
        exit(1);
    }
    return f;
}

int main(void) {
    FILE *full = open_or_die("full.txt");
    FILE *line = open_or_die("line.txt");
    FILE *big = open_or_die("big.txt");
    FILE *small = open_or_die("small.txt");
    if (setvbuf(line, NULL, _IOLBF, 0) != 0 ||
        setvbuf(big, big_buffer, _IOFBF, sizeof big_buffer) != 0 ||
        setvbuf(small, small_buffer, _IOFBF, sizeof small_buffer) != 0)
        return 2;
    for (int i = 0; i < 1000; i++) {
        fprintf(full, "line %d of a fully buffered file\n", i);
        fprintf(line, "line %d of a line-buffered file\n", i);
        fprintf(big, "line %d of a file with a 1 MiB buffer\n", i);
        fprintf(small, "line %d of a file with a 512-byte buffer\n", i);
        printf("line %d to stdout\n", i);
    }
    puts("puts to stdout");
    putchar('!');
    putchar('\n');
    int fd = open("dprintf.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    for (int i = 0; i < 10; i++)
        dprintf(fd, "dprintf line %d\n", i);
    close(fd);
    fclose(line);
    fclose(small);
    return 0;
}
