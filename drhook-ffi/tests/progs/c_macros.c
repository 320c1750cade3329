/* Every macro and function of drhook.h, from C99. Run under
 * DR_HOOK=1 DR_HOOK_OPT=prof,callpath by tests/c_api.rs. */
#include <stdio.h>
#include <string.h>
#include "drhook.h"

static double leaf(double x) {
  DRHOOK_START(leaf);
  x += 1.0;
  DRHOOK_END(16);               /* size information: 16 per call */
  return x;
}

static double by_string(double x) {
  DRHOOK_START_BY_STRING("C:BY_STRING");
  x = leaf(x);
  DRHOOK_END();
  return x;
}

static double recursive(int n) {
  double r;
  DRHOOK_START_RECUR(recursive, n < 5);  /* only the outermost call */
  r = n <= 0 ? 0.0 : 1.0 + recursive(n - 1);
  DRHOOK_END_RECUR(0, n < 5);
  return r;
}

static int early(int x) {
  DRHOOK_START_BY_STRING_RECUR("C:EARLY", 0);
  if (x > 0) {
    DRHOOK_RETURN(x);           /* leaves with size x */
    return x;
  }
  DRHOOK_END(0);
  return 0;
}

static void direct(void) {
  /* Dr_Hook itself: lengths <= 0 mean strlen, a file name is shown. */
  double h1 = 0, h2 = 0;
  Dr_Hook("C:DIRECT", 0, &h1, "dir/direct.c", 0, 0, 0);
  Dr_Hook("C:DIRECT_LEN     ", 0, &h2, NULL, 0, 13, 0);  /* "C:DIRECT_LEN" */
  Dr_Hook("C:DIRECT_LEN     ", 1, &h2, NULL, 7, 13, 0);
  Dr_Hook("C:DIRECT", 1, &h1, "dir/direct.c", 0, -1, -1);
  /* Null and empty names do not crash. */
  Dr_Hook(NULL, 0, &h1, NULL, 0, 0, 0);
  Dr_Hook(NULL, 1, &h1, NULL, 0, 0, 0);
  Dr_Hook("", 0, &h1, "", 0, 0, 0);
  Dr_Hook("", 1, &h1, "", 0, 0, 0);
  Dr_Hook("C:NULL_HANDLE", 0, NULL, NULL, 0, 0, 0);
}

static void zero_handles(void) {
  /* A handle 0 (nothing entered) is ignored by the exits that take one
   * (drhook_c_leave does not: the macros never pass it 0): the stack is
   * unchanged, so C:AFTER_ZERO is still a child of zero_handles. */
  DRHOOK_START(zero_handles);
  {
    double h0 = 0;
    drhook_c_end(&drhook_site_, 0, 0);
    drhook_c_end(&drhook_site_, 0, 5);
    Dr_Hook("zero_handles", 1, &h0, NULL, 0, 0, 0);
  }
  {
    DRHOOK_START_BY_STRING("C:AFTER_ZERO");
    DRHOOK_END();
  }
  DRHOOK_END();
}

static void show_tree(void) {
  DRHOOK_START(show_tree);
  drhook_calltree();
  DRHOOK_END();
}

int main(int argc, char **argv) {
  int i;
  double x = 0;
  drhook_init(argc, argv);
  {
    DRHOOK_START(main);
    for (i = 0; i < 10; i++) x = by_string(x);
    for (i = 0; i < 3; i++) x += recursive(5);
    for (i = 0; i < 4; i++) x += early(i);  /* 3 RETURNs with 1+2+3 */
    direct();
    zero_handles();
    show_tree();
    DRHOOK_END();
  }
  printf("x=%g active=%d lhook=%d\n", x, drhook_active(), drhook_lhook);
  return 0;
}
