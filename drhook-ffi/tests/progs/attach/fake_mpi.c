/* A stand-in for an MPI library whose launcher sets no rank variable
 * (tests/attach.rs): MPI_Init succeeds, and the rank and size that
 * PMPI_Comm_rank/size report for MPI_COMM_WORLD (the MPICH family's handle,
 * 0x44000000) come from FAKE_MPI_RANK and FAKE_MPI_SIZE, which the layer
 * does not know. Built as libfakempi.so. */
#include <stdlib.h>

static int get(const char *v, int d) {
  const char *s = getenv(v);
  return s ? atoi(s) : d;
}

int MPI_Init(int *argc, char ***argv) { (void)argc; (void)argv; return 0; }
int MPI_Finalize(void) { return 0; }
int PMPI_Comm_rank(int comm, int *rank) {
  if (comm != 0x44000000) return 1;
  *rank = get("FAKE_MPI_RANK", 0);
  return 0;
}
int PMPI_Comm_size(int comm, int *size) {
  if (comm != 0x44000000) return 1;
  *size = get("FAKE_MPI_SIZE", 1);
  return 0;
}
