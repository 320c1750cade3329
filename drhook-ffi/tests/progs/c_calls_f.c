/* A C main (drhook.h macros) calling Fortran routines (YOMHOOK). */
#include <stdio.h>
#include "drhook.h"

void f_work(double *x, const int *n);  /* BIND(C, NAME='f_work') */

static void c_driver(double *x) {
  int n = 3;
  DRHOOK_START(c_driver);
  f_work(x, &n);
  DRHOOK_END();
}

int main(void) {
  double x = 0;
  int i;
  DRHOOK_START(main);
  for (i = 0; i < 2; i++) c_driver(&x);
  DRHOOK_END();
  printf("x=%g\n", x);
  return 0;
}
