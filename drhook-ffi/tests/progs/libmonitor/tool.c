/* A libmonitor tool written only against monitor.h: logs every callback
 * (pid, thread number, arguments) to $MONITOR_TOOL_LOG, one line each. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "monitor.h"

static void logf_(const char *fmt, ...)
{
    char buf[512];
    int n = snprintf(buf, sizeof buf, "%d ", (int) getpid());
    va_list ap;
    va_start(ap, fmt);
    n += vsnprintf(buf + n, sizeof buf - n, fmt, ap);
    va_end(ap);
    buf[n++] = '\n';
    const char *path = getenv("MONITOR_TOOL_LOG");
    if (path == NULL)
        return;
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd < 0)
        return;
    if (write(fd, buf, n) < 0) {
    }
    close(fd);
}

static int proc_cookie = 1234;
static int fork_cookie = 99;
static int post_creates;

void monitor_init_library(void) { logf_("init_library"); }
void monitor_fini_library(void) { logf_("fini_library"); }

void *monitor_init_process(int *argc, char **argv, void *data)
{
    logf_("init_process argc=%d argv0=%s data=%s tid=%d", *argc,
          argv && argv[0] ? strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0] : "-",
          data == &fork_cookie ? "fork" : data == NULL ? "null" : "other",
          monitor_get_thread_num());
    return &proc_cookie;
}

void monitor_begin_process_exit(int how)
{
    logf_("begin_process_exit how=%d post_creates=%d", how, post_creates);
}

void monitor_fini_process(int how, void *data)
{
    logf_("fini_process how=%d data=%s user=%s", how,
          data == &proc_cookie ? "ok" : "bad",
          monitor_get_user_data() == &proc_cookie ? "ok" : "bad");
}

void *monitor_pre_fork(void)
{
    logf_("pre_fork");
    return &fork_cookie;
}

void monitor_post_fork(pid_t child, void *data)
{
    logf_("post_fork child=%s data=%s", child > 0 ? "pid" : "none",
          data == &fork_cookie ? "ok" : "bad");
}

void monitor_init_thread_support(void) { logf_("init_thread_support"); }

void monitor_start_main_init(void) { logf_("start_main_init"); }

void monitor_at_main(void)
{
    logf_("at_main main=%s bottom=%s", monitor_get_addr_main() ? "ok" : "null",
          monitor_stack_bottom() ? "ok" : "null");
}

static int thread_cookie = 7;
static int creates;

/* The second thread the first process creates is ignored. */
void *monitor_thread_pre_create(void)
{
    struct monitor_thread_info mti;
    int info = monitor_get_new_thread_info(&mti) == 0 && mti.mti_start_routine != NULL;
    creates++;
    logf_("thread_pre_create info=%s%s", info ? "ok" : "bad",
          creates == 2 ? " ignore" : "");
    return creates == 2 ? MONITOR_IGNORE_NEW_THREAD : &thread_cookie;
}

/* Not logged: it races with the new thread's callbacks; counted.
 * libmonitor passes the thread node's data, which the new thread may
 * already have replaced (a race of libmonitor's): not checked here;
 * drhook passes monitor_thread_pre_create's. */
void monitor_thread_post_create(void *data)
{
    (void) data;
    post_creates++;
}

size_t monitor_reset_stacksize(size_t old_size)
{
    logf_("reset_stacksize %s", old_size > 0 ? "ok" : "zero");
    return old_size + 65536;
}

void *monitor_init_thread(int tid, void *data)
{
    logf_("init_thread tid=%d num=%d threaded=%d data=%s start=%s", tid,
          monitor_get_thread_num(), monitor_is_threaded(),
          data == &thread_cookie ? "ok" : data == NULL ? "null" : "bad",
          monitor_get_addr_thread_start() ? "ok" : "null");
    return (void *) (long) (1000 + tid);
}

void monitor_fini_thread(void *data)
{
    logf_("fini_thread data=%ld num=%d", (long) data, monitor_get_thread_num());
}

void monitor_dlopen(const char *path, int flags, void *handle)
{
    (void) flags;
    logf_("dlopen %s handle=%s", path ? path : "null", handle ? "ok" : "null");
}

void monitor_dlclose(void *handle) { logf_("dlclose handle=%s", handle ? "ok" : "null"); }

void monitor_pre_dlopen(const char *path, int flags)
{
    logf_("pre_dlopen %s flags=%d", path ? path : "null", flags);
}

void monitor_post_dlclose(void *handle, int ret)
{
    logf_("post_dlclose handle=%s ret=%d", handle ? "ok" : "null", ret);
}

#ifdef TOOL_EARLY
/* A tool that gains control before the monitoring library's start: its
 * own constructor starts the process (libmonitor's monitor_initialize). */
__attribute__((constructor)) static void tool_early(void)
{
    logf_("constructor");
    monitor_initialize();
    monitor_initialize();
    logf_("constructor done");
}
#endif
