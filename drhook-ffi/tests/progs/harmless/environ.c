/* Prints the value of each variable named on the command line as it is in
 * its environment, in hexadecimal (byte for byte), or that it is unset. */
#include <stdio.h>
#include <string.h>

extern char **environ;

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        size_t n = strlen(argv[i]);
        char **e = environ;
        while (*e && !(strncmp(*e, argv[i], n) == 0 && (*e)[n] == '='))
            e++;
        if (!*e) {
            printf("%s unset\n", argv[i]);
            continue;
        }
        printf("%s=", argv[i]);
        for (const unsigned char *p = (const unsigned char *)*e + n + 1; *p; p++)
            printf("%02x", *p);
        printf("\n");
    }
    return 0;
}
