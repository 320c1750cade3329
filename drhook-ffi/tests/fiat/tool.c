/* A C tool of the same project: drhook.h and abor1.h from fiat. */
#include <stdio.h>
#include <string.h>
#include "drhook.h"
#include "abor1.h"

int main(int argc, char **argv) {
  DRHOOK_START(tool_main);
  printf("tool active=%d\n", drhook_active());
  if (argc > 1 && !strcmp(argv[1], "abort")) ABOR1("tool: bad input");
  DRHOOK_END();
  return 0;
}
