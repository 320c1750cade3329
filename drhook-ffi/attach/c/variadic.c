/* The exec* functions with variable arguments, which Rust cannot define:
 * they gather their arguments into an array, as the C library's own do,
 * and hand them to the layer's exec (drhook_attach_exec, in Rust). The
 * exported execl/execlp/execle (or __wrap_execl...) are Rust trampolines
 * that jump here with the arguments untouched (drhook_attach::interpose!). */

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>

extern int drhook_attach_exec(int kind, const char *file, char *const argv[],
                              char *const envp[]);

#define NAME(n) drhook_attach_c_##n

/* glibc's kinds: 0 path+env, 1 path, 2 search+env, 3 search. */
#define MAX_ARGS 65536

/* Number of arguments from `arg` up to the terminating NULL (not
 * counted), -1 when too many. Leaves `ap` just after the NULL. */
#define COUNT(n, arg, ap)                                                      \
    do {                                                                       \
        (n) = 0;                                                               \
        if ((arg) != NULL) {                                                   \
            (n) = 1;                                                           \
            while (va_arg(ap, const char *) != NULL) {                         \
                if (++(n) >= MAX_ARGS) {                                       \
                    (n) = -1;                                                  \
                    break;                                                     \
                }                                                              \
            }                                                                  \
        }                                                                      \
    } while (0)

#define GATHER(arg, last, argv, n)                                             \
    do {                                                                       \
        va_list ap2;                                                           \
        va_start(ap2, last);                                                   \
        (argv)[0] = (char *)(arg);                                             \
        for (int i_ = 1; i_ <= (n); i_++)                                      \
            (argv)[i_] = va_arg(ap2, char *);                                  \
        va_end(ap2);                                                           \
    } while (0)

int NAME(execl)(const char *path, const char *arg, ...) {
    va_list ap;
    va_start(ap, arg);
    int n;
    COUNT(n, arg, ap);
    va_end(ap);
    if (n < 0) {
        errno = E2BIG;
        return -1;
    }
    char *argv[n + 1];
    if (n == 0)
        argv[0] = NULL;
    else
        GATHER(arg, arg, argv, n);
    return drhook_attach_exec(1, path, argv, NULL);
}

int NAME(execlp)(const char *file, const char *arg, ...) {
    va_list ap;
    va_start(ap, arg);
    int n;
    COUNT(n, arg, ap);
    va_end(ap);
    if (n < 0) {
        errno = E2BIG;
        return -1;
    }
    char *argv[n + 1];
    if (n == 0)
        argv[0] = NULL;
    else
        GATHER(arg, arg, argv, n);
    return drhook_attach_exec(3, file, argv, NULL);
}

int NAME(execle)(const char *path, const char *arg, ...) {
    va_list ap;
    va_start(ap, arg);
    int n;
    COUNT(n, arg, ap);
    char *const *envp = NULL;
    if (n >= 0) {
        /* COUNT consumed the arguments up to the NULL; envp follows. */
        envp = va_arg(ap, char *const *);
    }
    va_end(ap);
    if (n < 0) {
        errno = E2BIG;
        return -1;
    }
    char *argv[n + 1];
    if (n == 0)
        argv[0] = NULL;
    else
        GATHER(arg, arg, argv, n);
    return drhook_attach_exec(0, path, argv, envp);
}
