// C++ compiled with -finstrument-functions: names demangled. Known
// counts: geom::Point::norm2 N, geom::scale<double> N, geom::scale<int> 2N,
// (anonymous namespace)::helper 1.
#include <cstdio>

namespace geom {
struct Point {
  double x, y;
  __attribute__((noinline)) double norm2() const { return x * x + y * y; }
};
template <typename T> __attribute__((noinline)) T scale(T v, T f) { return v * f; }
}  // namespace geom

namespace {
__attribute__((noinline)) int helper(int n) {
  int s = 0;
  for (int i = 0; i < n; i++) s += geom::scale<int>(i, 2) + geom::scale<int>(i, 3);
  return s;
}
}  // namespace

static volatile double sink;

int main() {
  const int n = 500;
  for (int i = 0; i < n; i++) {
    geom::Point p{double(i), 1.0};
    sink = geom::scale<double>(p.norm2(), 0.5);
  }
  std::printf("%d %g\n", helper(n), (double)sink);
  return 0;
}
