/* Sets its address-space limit (soft; the hard one stays) a little above
 * what it uses, as a job under a memory limit near its use does, then
 * prints and ends: Dr.Hook's reports need memory at the end (the writer's
 * allocation failed and the program aborted with 134, stdout lost). */
#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

int main(void) {
    long pages = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f || fscanf(f, "%ld", &pages) != 1)
        return 2;
    fclose(f);
    struct rlimit r;
    getrlimit(RLIMIT_AS, &r);
    r.rlim_cur = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (64 << 10);
    if (setrlimit(RLIMIT_AS, &r) != 0)
        return 3;
    printf("limited\n");
    return 0;
}
