/* test_report_format.c - the values the text report writes for people
 * (profdata/report/report_format.c), exactly; the HTML page's functions of
 * the same names must give the same strings for the same inputs
 * (test/report/test_report_format.py runs them in node on this table's
 * values): three significant digits without exponent or trailing zeros,
 * whole from 100 on; times in s from 1000 ms; ties rounded up (printf
 * alone would write 1.12 KiB and 12.2%). */
#include <string.h>

#include "test/unit/check.h"
#include "profdata/report/report.h"

#define SAME(got, want) CHECK(strcmp(got, want) == 0, "%s, want %s", got, want)

int main(void) {
  char b[64];
  static const struct { double x; const char *want; } sig3[] = {
      {0, "0"},      {0.0002, "0.0002"}, {1120, "1120"},    {1.5, "1.5"},
      {30, "30"},    {0.00333333, "0.00333"}, {99.96, "100"}, {9.996, "10"},
      {0.6155, "0.616"}};
  for (size_t i = 0; i < sizeof sig3 / sizeof sig3[0]; i++)
    SAME(rpt_fmt_sig3(sig3[i].x, b, sizeof b), sig3[i].want);
  static const struct { double ms; const char *want; } ms[] = {
      {0.0002, "0.0002 ms"}, {0, "0 ms"}, {30, "30 ms"}, {999.5, "1 s"},
      {2712, "2.71 s"},      {1740, "1.74 s"}};
  for (size_t i = 0; i < sizeof ms / sizeof ms[0]; i++)
    SAME(rpt_fmt_ms(ms[i].ms, b, sizeof b), ms[i].want);
  static const struct { uint64_t v; const char *want; } bytes[] = {
      {48, "48 B"}, {1152, "1.13 KiB"}, {144000, "140.63 KiB"}, {1536, "1.50 KiB"},
      {3ull << 30, "3.00 GiB"}};
  for (size_t i = 0; i < sizeof bytes / sizeof bytes[0]; i++)
    SAME(rpt_human_bytes(bytes[i].v, b, sizeof b), bytes[i].want);
  static const struct { uint64_t a, w; const char *want; } pct[] = {
      {49, 400, "12.3%"}, {1, 3, "33.3%"}, {5, 0, "0.0%"}, {97, 244449, "0.0%"}, {1, 8, "12.5%"}};
  for (size_t i = 0; i < sizeof pct / sizeof pct[0]; i++)
    SAME(rpt_fmt_pct(pct[i].a, pct[i].w, b, sizeof b), pct[i].want);
  /* a context's average size, rounded to the byte: 97 bytes in 2 blocks */
  mpf_mib m;
  memset(&m, 0, sizeof m);
  m.AllocCount = 2;
  m.TotalSize = 97;
  rpt_ctx c = {0};
  c.mib = &m;
  SAME(rpt_fmt_avg_size(&c, b, sizeof b), "49 B");
  return check_result();
}
