/* The cost of a wrapped C++ member call: YAML::Emitter::good() const (a
 * member function through `this`, whose body is a few instructions) called
 * in a loop from an instrumented parent, three ways:
 *   plain: the real member (libyaml-cpp's own definition, from dlsym on the
 *          library by its mangled name, called through a pointer),
 *   pair:  the real member inside a hand-written Dr.Hook enter/exit pair,
 *   good:  e.good() as the program calls it: through the wrapper when it is
 *          preloaded (run time) or linked with --wrap (link time).
 *   bench_wrap_cxx plain|pair|good N -> one loop (callgrind --toggle-collect=loop_<which>) */
#include <dlfcn.h>
#include <yaml-cpp/yaml.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "drhook.h"

static YAML::Emitter *em;
static volatile long sink;
static bool (*real_good)(const YAML::Emitter *);

__attribute__((noinline)) static bool good_pair() {
  bool g;
  DRHOOK_START_BY_STRING("good_pair");
  g = real_good(em);
  DRHOOK_END();
  return g;
}

extern "C" __attribute__((noinline)) void loop_plain(long n) {
  long c = 0;
  DRHOOK_START_BY_STRING("BENCH:PLAIN_PARENT");
  for (long i = 0; i < n; i++) c += real_good(em);
  sink = c;
  DRHOOK_END();
}

extern "C" __attribute__((noinline)) void loop_pair(long n) {
  long c = 0;
  DRHOOK_START_BY_STRING("BENCH:PAIR_PARENT");
  for (long i = 0; i < n; i++) c += good_pair();
  sink = c;
  DRHOOK_END();
}

extern "C" __attribute__((noinline)) void loop_good(long n) {
  long c = 0;
  DRHOOK_START_BY_STRING("BENCH:GOOD_PARENT");
  for (long i = 0; i < n; i++) c += em->good();
  sink = c;
  DRHOOK_END();
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "good";
  long n = argc > 2 ? atol(argv[2]) : 100000;
  em = new YAML::Emitter;
  void *h = dlopen("libyaml-cpp.so.0.7", RTLD_LAZY | RTLD_NOLOAD);
  if (!h) h = dlopen("libyaml-cpp.so", RTLD_LAZY | RTLD_NOLOAD);
  real_good = h ? (bool (*)(const YAML::Emitter *))dlsym(h, "_ZNK4YAML7Emitter4goodEv") : 0;
  if (!real_good) {
    fprintf(stderr, "libyaml-cpp is not loaded: %s\n", dlerror());
    return 1;
  }
  if (!strcmp(mode, "plain")) loop_plain(n);
  else if (!strcmp(mode, "pair")) loop_pair(n);
  else loop_good(n);
  delete em;
  return 0;
}
