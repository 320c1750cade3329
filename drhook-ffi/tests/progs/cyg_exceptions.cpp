// Exceptions thrown through functions compiled with -finstrument-functions:
// g++ calls the exit hooks while unwinding, so after() is under main, not
// under the functions the exception left.
#include <cstdio>
#include <stdexcept>

__attribute__((noinline)) void thrower(int i) {
  if (i % 2) throw std::runtime_error("odd");
}
__attribute__((noinline)) void middle(int i) { thrower(i); }
__attribute__((noinline)) void after() {}

int main() {
  int caught = 0;
  for (int i = 0; i < 10; i++) {
    try {
      middle(i);
    } catch (const std::exception &) {
      caught++;
    }
    after();
  }
  std::printf("%d\n", caught);
  return 0;
}
