/* Reads a file of 3000 lines through stdio three times: with a 64-byte
 * buffer of its own (setvbuf), with a 1 MiB one, and with the default
 * buffer; each reading mixes fgets, fscanf, fgetc and getline to the end
 * of the file. The C library refills the buffers with its own read
 * calls, which the I/O profile infers from the stream's buffer. The files
 * are written first with write(2), one per reading. Prints the
 * sum of the numbers read (the same with and without the profile). Under
 * -O2 -D_FORTIFY_SOURCE=2 fgets becomes __fgets_chk. */

#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char big_buffer[1 << 20];
static char small_buffer[64];

static long read_all(const char *path, char *buf, size_t size) {
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        perror(path);
        exit(1);
    }
    if (buf != NULL && setvbuf(f, buf, _IOFBF, size) != 0)
        exit(2);
    long sum = 0;
    char line[128];
    volatile int width = sizeof line; /* __fgets_chk when fortified */
    char *l = NULL;
    size_t n = 0;
    for (int k = 0;; k++) {
        int a, b;
        if (k % 4 == 0) {
            if (fgets(line, width, f) == NULL)
                break;
            sum += atoi(line);
        } else if (k % 4 == 1) {
            if (fscanf(f, "%d %d", &a, &b) != 2)
                break;
            sum += a + b;
        } else if (k % 4 == 2) {
            int c = fgetc(f); /* the newline fscanf left */
            if (c == EOF)
                break;
            if (getline(&l, &n, f) < 0)
                break;
            sum += atoi(l);
        } else {
            if (fgets(line, width, f) == NULL)
                break;
            sum += atoi(line);
        }
    }
    free(l);
    fclose(f);
    return sum;
}

static void make(const char *path) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        exit(3);
    char text[64];
    for (int i = 0; i < 3000; i++) {
        int len = snprintf(text, sizeof text, "%d %d of line %d\n", i, 2 * i, i);
        if (write(fd, text, len) != len)
            exit(4);
    }
    close(fd);
}

int main(void) {
    make("small.txt");
    make("big.txt");
    make("default.txt");
    long s = read_all("small.txt", small_buffer, sizeof small_buffer);
    s += read_all("big.txt", big_buffer, sizeof big_buffer);
    s += read_all("default.txt", NULL, 0);
    printf("%ld\n", s);
    return 0;
}
