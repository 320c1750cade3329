/* Uses fake_mpi.c's MPI: MPI_Init, work, MPI_Finalize, then more work that
 * the profile (written at MPI_Finalize) does not include, and exit(0),
 * which must not write it a second time. */
#include <stdio.h>
#include <stdlib.h>
int MPI_Init(int *, char ***);
int MPI_Finalize(void);
static volatile double sink;
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  for (long i = 0; i < 5000000; i++) sink += i * 1e-9;
  MPI_Finalize();
  printf("finalized\n");
  exit(0);
}
