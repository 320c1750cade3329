/* Routine names with control bytes and invalid UTF-8, nested, through
 * c_drhook_start_ (explicit lengths, so a NUL can be inside a name) and
 * Dr_Hook (with a file name that has a newline). With an argument
 * "mismatch", the innermost routine is left with a wrong handle, so that
 * the mismatch diagnostics name it. */
#include <stdio.h>
#include <string.h>
#include "drhook.h"

#define N 8
static const char names[N][24] = {
    "CTRL:NEW\nLINE", "CTRL:NUL\0BYTE", "CTRL:TAB\tX", "CTRL:BELL\a",
    "CTRL:CR\rX",     "CTRL:BAD\xff\xfeUTF8", "CTRL:ESC\x1b[31m", "CTRL:DEL\x7f",
};
/* Lengths, counting the embedded NUL of the second name. */
static const size_t lens[N] = {13, 13, 10, 10, 9, 14, 13, 9};

int main(int argc, char **argv) {
  double keys[N];
  double fkey;
  int tid = 1, size = 0, i;
  int mismatch = argc > 1 && strcmp(argv[1], "mismatch") == 0;
  for (i = 0; i < N; i++)
    c_drhook_start_(names[i], &tid, &keys[i], NULL, &size, lens[i], 0);
  Dr_Hook("CTRL:FILE", 0, &fkey, "dir/fi\nle.c", 0, 0, 0);
  drhook_calltree();
  Dr_Hook("CTRL:FILE", 1, &fkey, "dir/fi\nle.c", 0, 0, 0);
  if (mismatch) {
    double wrong = keys[0];
    c_drhook_end_(names[N - 1], &tid, &wrong, NULL, &size, lens[N - 1], 0);
  }
  for (i = N - 1; i >= 0; i--)
    c_drhook_end_(names[i], &tid, &keys[i], NULL, &size, lens[i], 0);
  printf("done\n");
  return 0;
}
