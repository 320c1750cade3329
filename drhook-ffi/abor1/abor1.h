/* ABOR1 for C, as the reference's abor1.h: abor1(file, line, text) prints
   the reference's ABOR1 / MPL_ABORT lines, the calling tree, and aborts.
   Link libdrhook_abor1.a (an opt-in archive) with libdrhook. */
#ifndef DRHOOK_ABOR1_H
#define DRHOOK_ABOR1_H

#ifdef __cplusplus
extern "C" {
#endif

void abor1(const char *filename, const int linenum, const char *s);

#define ABOR1(txt) abor1(__FILE__, __LINE__, (txt))

#ifdef __cplusplus
}
#endif

#endif
