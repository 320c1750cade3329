/* A C tool of the same project, instrumented with drhook.h. */
#include <stdio.h>
#include "drhook.h"

int main(void) {
  DRHOOK_START(tool_main);
  printf("tool active=%d\n", drhook_active());
  DRHOOK_END();
  return 0;
}
