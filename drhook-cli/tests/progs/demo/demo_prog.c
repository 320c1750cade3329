/* Calls every wrapped function of the demo library once or more, from
 * Dr.Hook-instrumented routines, and prints what it got. */
#include "demo.h"
#include <drhook.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static int add_ten(void *ctx, int v) { return demo_add(v, *(int *)ctx); }

static void work(void) {
  DRHOOK_START(work);
  struct vec3 v = {1, 2, 3};
  struct vec3 w = demo_scale(v, 2.0);
  int ten = 10;
  char buf[16];
  const double a[3] = {3, 4, 12};
  printf("add %d scale %g %g %g apply %d\n", demo_add(2, 3), w.x, w.y, w.z,
         demo_apply(add_ten, &ten, 4));
  for (int i = 0; i < 3; i++) demo_copy(buf, "hello", 6);
  printf("copy %s norm %g\n", buf, demo_norm(a));
  demo_log("log %d %s\n", 42, "abc");
  printf("sum %d legacy %d macro %d old %d handler %s\n", demo_sum(3, 1, 2, 3), demo_legacy(),
         demo_macro(7), demo_old(), demo_handler(1) ? "set" : "null");
  DRHOOK_END(0);
}

int main(void) {
  DRHOOK_START(main);
  /* The first wrapped call starts Dr.Hook: errno must still be the library's. */
  errno = 0;
  int r = demo_fail(ERANGE);
  printf("fail %d errno %d (%s)\n", r, errno, strerror(errno));
  work();
  demo_exit(3);
  DRHOOK_END(0);
}
