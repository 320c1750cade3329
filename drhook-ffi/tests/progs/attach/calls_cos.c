/* Calls cos() five times (through libm: a wrapper can take its place). */
#include <math.h>
#include <stdio.h>
int main(void) {
  volatile double x = 0.5, s = 0;
  for (int i = 0; i < 5; i++) s += cos(x + i);
  printf("%.6f\n", s);
  return 0;
}
