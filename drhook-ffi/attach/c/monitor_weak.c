/* libmonitor's callbacks in a static program (linked with
 * libdrhook_wrap.a and the --wrap list), where dlsym finds nothing: each
 * is a weak reference, the tool's definition when the program links one,
 * NULL otherwise (the preloaded library looks them up with dlsym instead).
 * No monitor_wrap_main means libmonitor's default, which returns 0 (the
 * preload library defines that default). */
#include <stddef.h>

/* Hidden: in the preload library (which looks the callbacks up with dlsym)
 * these resolve to NULL when it is linked, at no cost when it is loaded
 * (a default-visibility weak reference costs every process a symbol
 * lookup each: ~17 000 instructions in all, measured); in a static
 * program the program is one component, and they resolve to the tool's. */
#define WEAK(name) extern void name(void) __attribute__((weak, visibility("hidden")));
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

/* Default visibility: the preload library defines libmonitor's default
 * monitor_wrap_main and exports it (a hidden reference would hide the
 * definition too); one more symbol lookup when it is loaded. */
extern void monitor_wrap_main(void) __attribute__((weak));

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

/* Whether two NUL-terminated names are the same (no strcmp: each
 * imported symbol costs every process a lookup when the preload library
 * is loaded). */
static int same(const char *a, const char *b)
{
    while (*a && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

/* The callback `name` the program links, or NULL. */
void *drhook_attach_monitor_weak(const char *name)
{
    for (size_t i = 0; i < sizeof callbacks / sizeof callbacks[0]; i++)
        if (same(callbacks[i].name, name))
            return callbacks[i].addr;
    return NULL;
}
