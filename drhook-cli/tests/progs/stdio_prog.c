/* printf (variadic, wrapped through vprintf), fprintf (through vfprintf),
 * fopen/fputs/fclose and puts, from a Dr.Hook routine. Usage: stdio_prog <n> <file>. */
#include <drhook.h>
#include <stdio.h>
#include <stdlib.h>

static void report(int n, const char *path) {
  DRHOOK_START(report);
  FILE *f = fopen(path, "w");
  for (int i = 0; i < n; i++) {
    printf("line %d of %d\n", i + 1, n);
    fprintf(f, "%d squared is %d\n", i, i * i);
  }
  fputs("end\n", f);
  fclose(f);
  puts("done");
  DRHOOK_END(0);
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 5;
  DRHOOK_START(main);
  report(n, argc > 2 ? argv[2] : "out.txt");
  DRHOOK_END(0);
  return 0;
}
