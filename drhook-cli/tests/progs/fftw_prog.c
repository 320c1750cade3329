/* FFTW3 from C: transform plans a real-to-complex FFT of n points and
 * executes it <reps> times. Usage: fftw_prog <n> <reps>. */
#include <drhook.h>
#include <fftw3.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static double transform(int n, int reps) {
  double peak = 0;
  DRHOOK_START(transform);
  double *in = fftw_alloc_real((size_t)n);
  fftw_complex *out = fftw_alloc_complex((size_t)n / 2 + 1);
  fftw_plan p = fftw_plan_dft_r2c_1d(n, in, out, FFTW_ESTIMATE);
  for (int r = 0; r < reps; r++) {
    for (int i = 0; i < n; i++) in[i] = sin(2 * M_PI * 5 * i / n) + 0.001 * r;
    fftw_execute(p);
  }
  for (int k = 0; k <= n / 2; k++) {
    double m = hypot(out[k][0], out[k][1]);
    if (m > peak) peak = m;
  }
  fftw_destroy_plan(p);
  fftw_free(out);
  fftw_free(in);
  DRHOOK_END(0);
  return peak;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 256;
  int reps = argc > 2 ? atoi(argv[2]) : 10;
  DRHOOK_START(main);
  printf("peak %.6f\n", transform(n, reps));
  DRHOOK_END(0);
  return 0;
}
