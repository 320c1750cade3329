/* A zlib user instrumented with Dr.Hook: checksums, a compress/uncompress
 * round trip and a gzip file written with gzprintf (variadic, wrapped
 * through gzvprintf). Usage: zlib_prog <crc calls> <gz lines> <gz file>. */
#include <drhook.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static unsigned long checksum_blocks(const unsigned char *buf, int n) {
  unsigned long c;
  DRHOOK_START(checksum_blocks);
  c = crc32(0L, Z_NULL, 0);
  for (int i = 0; i < n; i++) c = crc32(c, buf + (i % 64), 64);
  DRHOOK_END(0);
  return c;
}

static int roundtrip(const unsigned char *buf, uLong len) {
  int ok;
  DRHOOK_START(roundtrip);
  static unsigned char comp[4096], back[4096];
  uLongf clen = sizeof comp, blen = sizeof back;
  int rc = compress2(comp, &clen, buf, len, 6);
  int rc2 = uncompress(back, &blen, comp, clen);
  ok = rc == Z_OK && rc2 == Z_OK && blen == len && memcmp(back, buf, len) == 0;
  DRHOOK_END(0);
  return ok;
}

static int gzfile(const char *path, int lines) {
  int n = 0;
  DRHOOK_START(gzfile);
  gzFile f = gzopen(path, "wb");
  for (int i = 0; i < lines; i++) gzprintf(f, "line %d of %d\n", i + 1, lines);
  gzclose(f);
  gzFile g = gzopen(path, "rb");
  char buf[128];
  while (gzgets(g, buf, sizeof buf)) n++;
  gzclose(g);
  /* A failing call: errno must come back as the library set it. */
  errno = 0;
  gzFile h = gzopen("/nonexistent-dir/x.gz", "rb");
  printf("failing gzopen: %s, errno %d (%s)\n", h ? "opened" : "NULL", errno, strerror(errno));
  DRHOOK_END(0);
  return n;
}

int main(int argc, char **argv) {
  int ncrc = argc > 1 ? atoi(argv[1]) : 1000;
  int lines = argc > 2 ? atoi(argv[2]) : 10;
  const char *path = argc > 3 ? argv[3] : "out.gz";
  DRHOOK_START(main);
  static unsigned char data[2048];
  for (size_t i = 0; i < sizeof data; i++) data[i] = (unsigned char)(i * 7 + i / 13);
  printf("zlib %s\n", zlibVersion());
  printf("crc32 of %d blocks: %08lx\n", ncrc, checksum_blocks(data, ncrc));
  printf("round trip: %s\n", roundtrip(data, sizeof data) ? "ok" : "FAILED");
  printf("gz lines read back: %d\n", gzfile(path, lines));
  DRHOOK_END(0);
  return 0;
}
