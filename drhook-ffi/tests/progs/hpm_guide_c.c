/* The guide's section 3.10.1 example, completed into a program. */
#include <stdio.h>
#include <stdlib.h>
#include "libhpm.h"

static volatile double sink;

static void do_work(void) {
  int i;
  for (i = 0; i < 100000; i++) sink += 1e-6;
}

static void do_more_work(void) {
  int i;
  for (i = 0; i < 200000; i++) sink += 1e-6;
}

int main(void) {
  int taskID = 0;
  hpmInit( 0, "my program" );
  if (hpm_error_count) exit(4);
  hpmStart( 1, "outer call" );
  if (hpm_error_count) exit(4);
  do_work();
  hpmStart( 2, "computing meaning of life" );
  if (hpm_error_count) exit(4);
  do_more_work();
  hpmStop( 2 );
  if (hpm_error_count) exit(4);
  hpmStop( 1 );
  if (hpm_error_count) exit(4);
  hpmTerminate( taskID );
  if (hpm_error_count) exit(4);
  /* Errors are counted, never fatal. */
  hpmStop( 3 );
  printf("errors=%d\n", hpm_error_count);
  return 0;
}
