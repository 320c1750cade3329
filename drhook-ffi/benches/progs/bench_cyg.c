/* bench_c.c with the leaf timed through -finstrument-functions only
 * (__cyg_profile_func_enter/exit): compiled with that flag. */
#define BENCH_CYG 1
#include "bench_c.c"
