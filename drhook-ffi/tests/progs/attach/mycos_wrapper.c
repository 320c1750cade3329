/* A run-time library wrapper of the shape `drhook wrap` generates, by hand:
 * cos() as a Dr.Hook routine, the real one found with dlsym(RTLD_NEXT).
 * Linked with libdrhook.so; under `drhook run --wrap mycos` its calls must
 * reach the preload library's engine (one profile, WRAP:cos under main). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include "drhook.h"

double cos(double x) {
  static double (*real)(double);
  double r;
  if (!real) real = (double (*)(double))dlsym(RTLD_NEXT, "cos");
  DRHOOK_START_BY_STRING("WRAP:cos");
  r = real(x);
  DRHOOK_END();
  return r;
}
