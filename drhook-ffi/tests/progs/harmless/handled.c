/* Handlers a program relies on and survives: a graceful SIGTERM handler
 * and a SIGSEGV handler that repairs the fault (a garbage collector's or a
 * checkpointer's protected pages). Installed in a constructor (before
 * Dr.Hook, argv[1] "early") or in main (after it, "late"). Prints what it
 * saw and exits 0. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static volatile sig_atomic_t terms;
static char *page;
static long pagesize;

static void on_term(int sig) {
    (void)sig;
    terms++;
}

static void on_segv(int sig, siginfo_t *si, void *uc) {
    (void)sig;
    (void)uc;
    char *a = (char *)si->si_addr;
    if (page && a >= page && a < page + pagesize)
        mprotect(page, pagesize, PROT_READ | PROT_WRITE);
    else
        _exit(99);
}

static void install(void) {
    struct sigaction t;
    memset(&t, 0, sizeof t);
    t.sa_handler = on_term;
    sigaction(SIGTERM, &t, NULL);
    struct sigaction s;
    memset(&s, 0, sizeof s);
    s.sa_sigaction = on_segv;
    s.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &s, NULL);
}

static int late;
__attribute__((constructor)) static void early(void) {
    if (!late)
        install();
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "late") == 0) {
        late = 1;
        signal(SIGTERM, SIG_DFL);
        signal(SIGSEGV, SIG_DFL);
        install();
    }
    raise(SIGTERM);
    raise(SIGTERM);
    printf("SIGTERM handled %d times\n", (int)terms);
    pagesize = sysconf(_SC_PAGESIZE);
    page = mmap(NULL, pagesize, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    page[10] = 42; /* faults once; the handler opens the page */
    printf("page[10] = %d after the fault\n", page[10]);
    return 0;
}
