/* libmonitor's callbacks in a static program (linked with
 * libdrhook_wrap.a and the --wrap list), where dlsym finds nothing: each
 * is a weak reference, the tool's definition when the program links one,
 * NULL otherwise (the preloaded library looks them up with dlsym instead).
 * monitor_wrap_main has libmonitor's default here (weak: a tool's own
 * wins), which returns 0. */
#include <stddef.h>
#include <string.h>

#define WEAK(name) extern void name(void) __attribute__((weak));
WEAK(monitor_init_library)
WEAK(monitor_fini_library)
WEAK(monitor_init_process)
WEAK(monitor_fini_process)
WEAK(monitor_begin_process_exit)
WEAK(monitor_pre_fork)
WEAK(monitor_post_fork)
WEAK(monitor_init_thread_support)
WEAK(monitor_init_thread)
WEAK(monitor_fini_thread)
WEAK(monitor_dlopen)
WEAK(monitor_dlclose)
WEAK(monitor_init_mpi)
WEAK(monitor_fini_mpi)
WEAK(monitor_start_main_init)
WEAK(monitor_at_main)
WEAK(monitor_thread_pre_create)
WEAK(monitor_thread_post_create)
WEAK(monitor_reset_stacksize)
WEAK(monitor_pre_dlopen)
WEAK(monitor_post_dlclose)
WEAK(monitor_mpi_pre_init)
WEAK(monitor_mpi_post_fini)

int __attribute__((weak)) monitor_wrap_main(int argc, char **argv, char **envp)
{
    (void) argc;
    (void) argv;
    (void) envp;
    return 0;
}

#define ENTRY(name) {#name, (void *) name},
static const struct {
    const char *name;
    void *addr;
} callbacks[] = {
    ENTRY(monitor_init_library)
    ENTRY(monitor_fini_library)
    ENTRY(monitor_init_process)
    ENTRY(monitor_fini_process)
    ENTRY(monitor_begin_process_exit)
    ENTRY(monitor_pre_fork)
    ENTRY(monitor_post_fork)
    ENTRY(monitor_init_thread_support)
    ENTRY(monitor_init_thread)
    ENTRY(monitor_fini_thread)
    ENTRY(monitor_dlopen)
    ENTRY(monitor_dlclose)
    ENTRY(monitor_init_mpi)
    ENTRY(monitor_fini_mpi)
    ENTRY(monitor_start_main_init)
    ENTRY(monitor_at_main)
    ENTRY(monitor_thread_pre_create)
    ENTRY(monitor_thread_post_create)
    ENTRY(monitor_reset_stacksize)
    ENTRY(monitor_pre_dlopen)
    ENTRY(monitor_post_dlclose)
    ENTRY(monitor_mpi_pre_init)
    ENTRY(monitor_mpi_post_fini)
    ENTRY(monitor_wrap_main)
};

/* The callback `name` the program links, or NULL. */
void *drhook_attach_monitor_weak(const char *name)
{
    for (size_t i = 0; i < sizeof callbacks / sizeof callbacks[0]; i++)
        if (strcmp(callbacks[i].name, name) == 0)
            return callbacks[i].addr;
    return NULL;
}
