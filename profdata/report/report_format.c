/* report_format.c - how the text and the HTML report write a value for
 * people: bytes ("1.50 KiB"), shares ("12.3%"), times ("0.0002 ms",
 * "1.73 s") and densities ("1120").  report_page.html formats the same
 * values from its data with functions of the same names that do the same
 * arithmetic (test/report/test_report_format.py checks that they agree):
 * IEEE doubles computed in the same order, rounded half up by hand (C's
 * printf and JavaScript's toFixed round exact ties differently), and the
 * digits placed by string operations.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report.h"

/* 10^d, exact as doubles, for the digits after the point. */
static const double POW10[] = {1,   1e1, 1e2, 1e3, 1e4,  1e5, 1e6,
                               1e7, 1e8, 1e9, 1e10, 1e11, 1e12};
#define MAX_DECIMALS 12

/* The integer nearest y, ties up (JavaScript's Math.round). */
static double round_half_up(double y) {
  double r = floor(y);
  return y - r >= 0.5 ? r + 1 : r;
}

/* x >= 0 with d digits after the point. */
static const char *fixed(double x, int d, char *buf, size_t n) {
  char digits[40];
  snprintf(digits, sizeof digits, "%.0f", round_half_up(x * POW10[d]));
  size_t len = strlen(digits);
  if (!d || len > sizeof digits - 4) {
    snprintf(buf, n, "%s", digits);
    return buf;
  }
  char padded[48];
  size_t zeros = len <= (size_t)d ? (size_t)d + 1 - len : 0;
  memset(padded, '0', zeros);
  memcpy(padded + zeros, digits, len + 1);
  len += zeros;
  snprintf(buf, n, "%.*s.%s", (int)(len - (size_t)d), padded, padded + len - d);
  return buf;
}

const char *rpt_fmt_sig3(double x, char *buf, size_t n) {
  if (!(x > 0)) {
    snprintf(buf, n, "0");
    return buf;
  }
  if (round_half_up(x) >= 100) return fixed(x, 0, buf, n);
  int d = 0;
  while (d < MAX_DECIMALS && round_half_up(x * POW10[d]) < 100) d++;
  fixed(x, d, buf, n);
  /* no trailing zeros: 30.0 -> 30, 0.000200 -> 0.0002 */
  char *end = buf + strlen(buf);
  while (end > buf && end[-1] == '0') *--end = 0;
  if (end > buf && end[-1] == '.') *--end = 0;
  if (!buf[0]) snprintf(buf, n, "0");
  return buf;
}

const char *rpt_fmt_ms(double ms, char *buf, size_t n) {
  char v[48];
  if (round_half_up(ms) < 1000)
    snprintf(buf, n, "%s ms", rpt_fmt_sig3(ms, v, sizeof v));
  else
    snprintf(buf, n, "%s s", rpt_fmt_sig3(ms / 1000, v, sizeof v));
  return buf;
}

const char *rpt_fmt_pct(uint64_t part, uint64_t whole, char *buf, size_t n) {
  char v[48];
  double x = whole ? 100.0 * (double)part / (double)whole : 0;
  snprintf(buf, n, "%s%%", fixed(x, 1, v, sizeof v));
  return buf;
}

const char *rpt_human_bytes(uint64_t v, char *buf, size_t n) {
  static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double x = (double)v;
  int u = 0;
  while (x >= 1024 && u < 4) x /= 1024, u++;
  char d[48];
  if (u == 0)
    snprintf(buf, n, "%" PRIu64 " B", v);
  else
    snprintf(buf, n, "%s %s", fixed(x, 2, d, sizeof d), units[u]);
  return buf;
}

const char *rpt_fmt_avg_size(const rpt_ctx *c, char *buf, size_t n) {
  return rpt_human_bytes((uint64_t)round_half_up(rpt_avg_size(c)), buf, n);
}
