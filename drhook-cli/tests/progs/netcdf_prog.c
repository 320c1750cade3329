/* A model's output and input through NetCDF-4 (HDF5 underneath),
 * instrumented with Dr.Hook: write_field writes <steps> time steps of a
 * field with nc_put_vara_double, read_field reads them back with
 * nc_get_vara_double. Usage: netcdf_prog <file.nc> <steps>. */
#include <drhook.h>
#include <netcdf.h>
#include <stdio.h>
#include <stdlib.h>

#define NX 64
#define NY 32

static void check(int rc, const char *what) {
  if (rc != NC_NOERR) {
    fprintf(stderr, "%s: %s\n", what, nc_strerror(rc));
    exit(1);
  }
}

static void write_field(const char *path, int steps) {
  DRHOOK_START(write_field);
  int nc, dims[3], var;
  static double field[NY][NX];
  check(nc_create(path, NC_CLOBBER | NC_NETCDF4, &nc), "nc_create");
  check(nc_def_dim(nc, "time", NC_UNLIMITED, &dims[0]), "nc_def_dim");
  check(nc_def_dim(nc, "lat", NY, &dims[1]), "nc_def_dim");
  check(nc_def_dim(nc, "lon", NX, &dims[2]), "nc_def_dim");
  check(nc_def_var(nc, "t2m", NC_DOUBLE, 3, dims, &var), "nc_def_var");
  check(nc_enddef(nc), "nc_enddef");
  for (int t = 0; t < steps; t++) {
    for (int j = 0; j < NY; j++)
      for (int i = 0; i < NX; i++) field[j][i] = 273.15 + t + 0.01 * i - 0.02 * j;
    size_t start[3] = {(size_t)t, 0, 0}, count[3] = {1, NY, NX};
    check(nc_put_vara_double(nc, var, start, count, &field[0][0]), "nc_put_vara_double");
  }
  check(nc_close(nc), "nc_close");
  DRHOOK_END(0);
}

static double read_field(const char *path, int steps) {
  double sum = 0;
  DRHOOK_START(read_field);
  int nc, var;
  static double field[NY][NX];
  check(nc_open(path, NC_NOWRITE, &nc), "nc_open");
  check(nc_inq_varid(nc, "t2m", &var), "nc_inq_varid");
  for (int t = 0; t < steps; t++) {
    size_t start[3] = {(size_t)t, 0, 0}, count[3] = {1, NY, NX};
    check(nc_get_vara_double(nc, var, start, count, &field[0][0]), "nc_get_vara_double");
    for (int j = 0; j < NY; j++)
      for (int i = 0; i < NX; i++) sum += field[j][i];
  }
  check(nc_close(nc), "nc_close");
  DRHOOK_END(0);
  return sum;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "model.nc";
  int steps = argc > 2 ? atoi(argv[2]) : 24;
  DRHOOK_START(model);
  write_field(path, steps);
  printf("mean of %d steps: %.6f\n", steps, read_field(path, steps) / ((double)steps * NX * NY));
  DRHOOK_END(0);
  return 0;
}
