/* The reference's auxiliary C ABI from C: watch points, drhook_PREFIX /
   drhook_TIMESTR, util_walltime_, trapfpe_slave_threads_, drhook_abort
   (with and without a hook). The first argument picks the part. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "drhook.h"

/* Prototypes from drhook.h. */

static double values[4] = {1.0, 2.0, 3.0, 4.0};

static void touch(int i) {
  DRHOOK_START(touch);
  values[i] = -values[i];
  DRHOOK_END();
}

static void my_abort(const char *file, int line, const char *text) {
  fprintf(stderr, "MY ABORT HOOK %s %d %s\n", file, line > 0 ? 1 : 0, text);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  DRHOOK_START_BY_STRING("C_COMPAT");
  if (!strcmp(mode, "watch")) {
    int on = 1, abort_ = 0, key = 32, n = 4, trbk = 1, nbytes = sizeof values;
    c_drhook_watch_(&on, "values", values, &nbytes, &abort_, &key, &n, &trbk, 6);
    touch(1);
    int allow = 1;
    c_drhook_check_watch_("in main", &allow, 7);
    printf("WATCH DONE\n");
  } else if (!strcmp(mode, "prefix")) {
    double t0 = util_walltime_();
    int silent = 1;
    trapfpe_slave_threads_(&silent);
    printf("PREFIX %s\nTIMESTR %s\n", drhook_PREFIX(1), drhook_TIMESTR(1));
    printf("WALL %d CPU %d\n", util_walltime_() >= t0, util_cputime_() >= 0.0);
  } else if (!strcmp(mode, "print")) {
    /* No Fortran companion in a C program: unit 77 falls back to stderr. */
    int unit = 77, tid = 0, tree = 2, mem = 4, level = 0;
    c_drhook_print_(&unit, &tid, &tree, &level);
    c_drhook_print_(&unit, &tid, &mem, &level);
    printf("LEVEL %d\n", level);
  } else if (!strcmp(mode, "abort")) {
    drhook_abort("c_compat.c", 42, "my own fatal error");
  } else if (!strcmp(mode, "hook")) {
    drhook_set_abort(my_abort);
    drhook_abort("c_compat.c", 42, "hooked");
  }
  DRHOOK_END();
  return 0;
}
