/* The program under wrap_main_tool.c: prints its arguments, returns 7. */
#include <stdio.h>

int main(int argc, char **argv) {
    printf("main argc=%d argv[1]=%s\n", argc, argc > 1 ? argv[1] : "-");
    fflush(stdout);
    return 7;
}
