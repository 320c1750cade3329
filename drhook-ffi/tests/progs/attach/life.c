/* An unmodified C program (no Dr.Hook calls) for tests/attach.rs: each
 * scenario (argv[1]) ends or continues its process in one of the ways the
 * lifecycle layer must see. Busy loops make the times visible. */
#define _GNU_SOURCE
#include <assert.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile double sink;

static void spin(long n) {
  for (long i = 0; i < n; i++) sink += (double)i * 1e-9;
}

void *worker(void *arg) {
  spin((long)arg);
  return NULL;
}

void *forever(void *arg) {
  (void)arg;
  for (;;) {
    spin(1000000);
    usleep(1000);
  }
  return NULL;
}

void *exits_early(void *arg) {
  spin((long)arg);
  pthread_exit(NULL);
}

void *cancelled(void *arg) {
  spin((long)arg);
  for (;;) pause(); /* a cancellation point */
  return NULL;
}

/* A thread cancelled while it waits, then the main thread works on: the
 * thread's end is seen at its cancellation (not at the profile's write). */
static void cancel(void) {
  pthread_t t;
  pthread_create(&t, NULL, cancelled, (void *)2000000L);
  spin(4000000);
  pthread_cancel(t);
  void *r = NULL;
  pthread_join(t, &r);
  printf("cancelled %d\n", r == PTHREAD_CANCELED);
  spin(60000000);
}

static void threads(void) {
  pthread_t t[3], d;
  pthread_create(&t[0], NULL, worker, (void *)20000000L);
  pthread_create(&t[1], NULL, worker, (void *)20000000L);
  pthread_create(&t[2], NULL, exits_early, (void *)10000000L);
  for (int i = 0; i < 3; i++) pthread_join(t[i], NULL);
  /* Never joined, still running at exit. */
  pthread_create(&d, NULL, forever, NULL);
  pthread_detach(d);
  spin(20000000);
}

static void nested_exit(int how) {
  spin(5000000);
  switch (how) {
  case 0: exit(3);
  case 1: _exit(5);
  case 2: abort();
  case 3: raise(SIGTERM); break;
  case 4: assert(how == 0); break;
  }
}

int main(int argc, char **argv) {
  const char *s = argc > 1 ? argv[1] : "";
  if (!strcmp(s, "threads")) {
    threads();
  } else if (!strcmp(s, "cancel")) {
    cancel();
  } else if (!strcmp(s, "exit3")) {
    nested_exit(0);
  } else if (!strcmp(s, "_exit5")) {
    nested_exit(1);
  } else if (!strcmp(s, "abort")) {
    nested_exit(2);
  } else if (!strcmp(s, "sigterm")) {
    nested_exit(3);
  } else if (!strcmp(s, "assert")) {
    nested_exit(4);
  } else if (!strcmp(s, "fork")) {
    spin(5000000);
    pid_t p = fork();
    if (p == 0) {
      spin(5000000);
      printf("child %d\n", (int)getpid());
      return 0;
    }
    int st = 0;
    waitpid(p, &st, 0);
    printf("parent: child status %d\n", WEXITSTATUS(st));
  } else if (!strcmp(s, "fork_exit")) {
    /* A child that runs only plain code and ends by _exit. */
    pid_t p = fork();
    if (p == 0) {
      spin(1000000);
      _exit(3);
    }
    int st = 0;
    waitpid(p, &st, 0);
    printf("parent: child %d status %d\n", (int)p, WEXITSTATUS(st));
  } else if (!strcmp(s, "execfail")) {
    /* Three exec failures: not found, not executable (both seen before
     * anything is done), and a file the kernel refuses (ENOEXEC: found and
     * executable, so the process ended for it and must go on). */
    spin(5000000);
    char *args[] = {"x", NULL};
    int r1 = execv("/nonexistent/program", args);
    int e1 = errno;
    int r2 = execl(argv[2], "x", (char *)NULL);
    int e2 = errno;
    int r3 = execv(argv[3], args);
    int e3 = errno;
    printf("execs failed: %d %d %d errno %d %d %d\n", r1, r2, r3, e1, e2, e3);
    fflush(stdout);
    spin(5000000);
    if (argc > 4) {
      /* And one that works: the program becomes another one. */
      execlp(argv[4], argv[4], (char *)NULL);
      perror("execlp");
      return 9;
    }
  } else if (!strcmp(s, "spawn")) {
    /* Children started by system(), posix_spawnp() and vfork()+exec. */
    extern char **environ;
    int st = system("true");
    pid_t p;
    char *args[] = {"true", NULL};
    int r = posix_spawnp(&p, "true", NULL, NULL, args, environ);
    if (r == 0) waitpid(p, NULL, 0);
    pid_t v = vfork();
    if (v == 0) {
      execlp("true", "true", (char *)NULL);
      _exit(127);
    }
    waitpid(v, NULL, 0);
    printf("spawned: system %d posix_spawnp %d\n", st, r);
  } else if (!strcmp(s, "dlopen")) {
    void *h = dlopen("libm.so.6", RTLD_NOW);
    double (*c)(double) = h ? (double (*)(double))dlsym(h, "cos") : NULL;
    printf("cos(0)=%g\n", c ? c(0.0) : -1.0);
    if (h) dlclose(h);
  } else {
    fprintf(stderr, "unknown scenario %s\n", s);
    return 2;
  }
  return 0;
}
