/* A program that traps division by zero (as one built with
 * -ffpe-trap=zero does) and divides by zero on a second thread: the
 * thread inherits the traps and the program dies of SIGFPE. */
#define _GNU_SOURCE
#include <fenv.h>
#include <pthread.h>
#include <stdio.h>

static volatile double zero = 0.0;

static void *work(void *arg) {
    (void)arg;
    double x = 1.0 / zero;
    printf("1/0 = %g\n", x);
    return NULL;
}

int main(void) {
    feenableexcept(FE_DIVBYZERO);
    pthread_t t;
    pthread_create(&t, NULL, work, NULL);
    pthread_join(t, NULL);
    printf("done\n");
    return 0;
}
