// drhook.h and libhpm.h from C++ (compiled with -Wall -Wextra -Wpedantic).
#include "drhook.h"
#include "libhpm.h"
#include <cstdio>

static int work(int n) {
  int s = 0;  // declared outside the block DRHOOK_START opens
  DRHOOK_START(work);
  for (int i = 0; i < n; i++) s += i;
  DRHOOK_END(n);
  return s;
}

int main() {
  DRHOOK_START_BY_STRING("CPP:MAIN");
  std::printf("%d %d\n", work(10), drhook_active());
  DRHOOK_END();
  return hpm_error_count;
}
