/* libmonitor's static mode wraps `main` (`-Wl,--wrap=main`) and passes
 * control to the tool's monitor_wrap_main, which calls __real_main and
 * exits. libdrhook_wrap.a wraps __libc_start_main instead; these make a
 * tool written for libmonitor's static mode link and run here:
 * - __real_main, for a link without --wrap=main (drhook-wrap.list): the
 *   program's main;
 * - __wrap_main, for a link with --wrap=main (libmonitor's way): main
 *   itself, the lifecycle having started in __libc_start_main already.
 * Their own archive member: pulled in only by a program that names them
 * (never by the preload library). */
extern int main(int, char **, char **);
extern int __real_main(int, char **, char **);

int __real_main(int argc, char **argv, char **envp) {
    return main(argc, argv, envp);
}

int __wrap_main(int argc, char **argv, char **envp) {
    /* With --wrap=main this is the program's main. */
    return __real_main(argc, argv, envp);
}
