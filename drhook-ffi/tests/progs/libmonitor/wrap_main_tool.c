/* A static tool written for libmonitor's static mode: its
 * monitor_wrap_main takes over main (calls __real_main, then exit), as
 * libmonitor's documentation says. Each callback writes one line on
 * stdout (write(2): nothing buffered across the exit). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern int __real_main(int, char **, char **);

static void say(const char *s) {
    char line[128];
    snprintf(line, sizeof line, "tool: %s\n", s);
    if (write(1, line, strlen(line)) < 0) _exit(99);
}

void *monitor_init_process(int *argc, char **argv, void *data) {
    (void)argc; (void)argv; (void)data;
    say("init_process");
    return NULL;
}

void monitor_at_main(void) { say("at_main"); }

void monitor_fini_process(int how, void *data) {
    (void)data;
    char s[64];
    snprintf(s, sizeof s, "fini_process how=%d", how);
    say(s);
}

int monitor_wrap_main(int argc, char **argv, char **envp) {
    char s[64];
    snprintf(s, sizeof s, "wrap_main argc=%d argv[1]=%s", argc, argc > 1 ? argv[1] : "-");
    say(s);
    int ret = __real_main(argc, argv, envp);
    snprintf(s, sizeof s, "main returned %d", ret);
    say(s);
    exit(ret);
}
