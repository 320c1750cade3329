/* A preloaded tool that calls monitor_wrap_main (libmonitor's library
 * defines a default, which returns 0) rather than defining it: it must
 * load and get 0. Its line goes to stdout. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

extern int monitor_wrap_main(int, char **, char **);

void monitor_at_main(void) {
    char line[64];
    snprintf(line, sizeof line, "tool: monitor_wrap_main returned %d\n",
             monitor_wrap_main(0, NULL, NULL));
    if (write(1, line, strlen(line)) < 0) _exit(99);
}
