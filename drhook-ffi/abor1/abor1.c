/* ABOR1 / ABOR1FL stand-ins for codes that call the reference's abort
   routines (fiat's util/abor1.F90): the reference's lines
     ABOR1     [PROC=p,THRD=t] from [file +line] : text
     MPL_ABORT [PROC=p,THRD=t] : text
   then the calling tree and SIGABRT, through libdrhook's drhook_abort.

   Not part of libdrhook: generic names such as abor1_ would interpose on a
   code's own ABOR1. Built into its own archive, libdrhook_abor1.a, which a
   program links only on purpose; being an archive, it is not pulled in
   when the program defines ABOR1 itself. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "abor1.h"

extern void drhook_abort(const char *file, int line, const char *text);

/* A NUL-terminated copy of a Fortran string (trailing blanks dropped). */
static char *fstring(const char *s, size_t len) {
  char *c;
  if (!s) len = 0;
  while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\0')) len--;
  c = malloc(len + 1);
  if (!c) return (char *)"";
  if (len) memcpy(c, s, len);
  c[len] = '\0';
  return c;
}

/* CALL ABOR1FL(CDFILE, KLINENUM, CDTEXT) */
void abor1fl_(const char *file, const int *line, const char *text,
              size_t file_len, size_t text_len) {
  drhook_abort(fstring(file, file_len), line ? *line : 0, fstring(text, text_len));
  abort();
}

/* CALL ABOR1(CDTEXT) */
void abor1_(const char *text, size_t text_len) {
  drhook_abort("", 0, fstring(text, text_len));
  abort();
}

/* abor1(file, line, text) from C; ABOR1(txt) is the macro of abor1.h. */
void abor1(const char *file, const int line, const char *text) {
  drhook_abort(file ? file : "", line, text ? text : "");
  abort();
}
