/*
 * monitor.h -- libmonitor's C interface, as served by drhook's preload
 * library (libdrhook_preload.so, `drhook run`).
 *
 * Hand-written to match the declarations of the current public
 * HPCToolkit/libmonitor src/monitor.h, so that a tool built against
 * libmonitor builds and runs unchanged.  A tool is a shared library (or
 * the program itself) that defines some of the callbacks below; it is
 * preloaded before drhook's library:
 *
 *     LD_PRELOAD=./libtool.so drhook run ./prog
 *
 * The callbacks are found once with dlsym(RTLD_DEFAULT).  Which of the
 * callbacks and support functions drhook calls and provides is listed in
 * drhook-ffi/README.md, "libmonitor's C interface"; the others are
 * declared here for source compatibility only (a tool that calls a
 * support function drhook does not provide fails to load).
 */
#ifndef DRHOOK_MONITOR_H
#define DRHOOK_MONITOR_H

#include <sys/types.h>
#include <signal.h>

typedef int monitor_sighandler_t(int, siginfo_t *, void *);

/* The `how` of monitor_fini_process and monitor_begin_process_exit. */
enum { MONITOR_EXIT_NORMAL = 1, MONITOR_EXIT_SIGNAL, MONITOR_EXIT_EXEC };

#define MONITOR_IGNORE_NEW_THREAD ((void *) -1)

#ifdef __cplusplus
extern "C" {
#endif

struct monitor_thread_info {
    void *mti_create_return_addr;
    void *mti_start_routine;
};

/* Callbacks: defined by the tool. */
extern void monitor_init_library(void);
extern void monitor_fini_library(void);
extern void *monitor_init_process(int *argc, char **argv, void *data);
extern void monitor_fini_process(int how, void *data);
extern void monitor_start_main_init(void);
extern void monitor_at_main(void);
extern void monitor_begin_process_exit(int how);
extern void *monitor_pre_fork(void);
extern void monitor_post_fork(pid_t child, void *data);
extern void *monitor_thread_pre_create(void);
extern void monitor_thread_post_create(void *data);
extern void monitor_init_thread_support(void);
extern void *monitor_init_thread(int tid, void *data);
extern void monitor_fini_thread(void *data);
extern size_t monitor_reset_stacksize(size_t old_size);
extern void monitor_pre_dlopen(const char *path, int flags);
extern void monitor_dlopen(const char *path, int flags, void *handle);
extern void monitor_dlclose(void *handle);
extern void monitor_post_dlclose(void *handle, int ret);
extern void monitor_mpi_pre_init(void);
extern void monitor_init_mpi(int *argc, char ***argv);
extern void monitor_fini_mpi(void);
extern void monitor_mpi_post_fini(void);

/* Support functions: called by the tool. */
extern void monitor_initialize(void);
extern void monitor_real_abort(void);
extern void monitor_real_exit(int status);
extern pid_t monitor_real_fork(void);
extern int monitor_real_execve(const char *path, char *const argv[],
                               char *const envp[]);
extern int monitor_real_system(const char *command);
extern void *monitor_real_dlopen(const char *path, int flags);
extern int monitor_real_dlclose(void *handle);
extern int monitor_real_sigprocmask(int how, const sigset_t *set,
                                    sigset_t *oldset);
extern int monitor_real_pthread_sigmask(int how, const sigset_t *set,
                                        sigset_t *oldset);
extern int monitor_sigaction(int sig, monitor_sighandler_t *handler,
                             int flags, struct sigaction *act);
extern int monitor_broadcast_signal(int sig);
extern int monitor_is_threaded(void);
extern void *monitor_get_addr_main(void);
extern void *monitor_get_addr_thread_start(void);
extern void *monitor_get_user_data(void);
extern int monitor_get_thread_num(void);
extern void *monitor_stack_bottom(void);
extern int monitor_in_start_func_wide(void *addr);
extern int monitor_in_start_func_narrow(void *addr);
extern int monitor_unwind_process_bottom_frame(void *addr);
extern int monitor_unwind_thread_bottom_frame(void *addr);
extern void monitor_set_size_rank(int size, int rank);
extern int monitor_mpi_comm_size(void);
extern int monitor_mpi_comm_rank(void);
extern int monitor_block_shootdown(void);
extern void monitor_unblock_shootdown(void);
extern void monitor_disable_new_threads(void);
extern void monitor_enable_new_threads(void);
extern int monitor_get_new_thread_info(struct monitor_thread_info *);

/* For statically linked programs: the tool's, called after
 * monitor_at_main (not defined by drhook's libraries). */
extern int monitor_wrap_main(int, char **, char **);

#ifdef __cplusplus
}
#endif

#endif /* DRHOOK_MONITOR_H */
