/* yaml_quote.c - how LLVM's YAML output writes a string scalar
 * (yaml_scalar.h): plain when it reads back as the same string, single
 * quotes when it would read back as something else (a number, a boolean,
 * null, an indicator, surrounding spaces), double quotes with escapes for
 * control bytes, DEL and non-ASCII text (yaml::needsQuotes, yaml::escape).
 */
#include "yaml_scalar.h"

#include <stdio.h>
#include <string.h>

static int is_word(const char *s, size_t n, const char *const *words) {
  for (; *words; words++)
    if (strlen(*words) == n && memcmp(s, *words, n) == 0) return 1;
  return 0;
}

static size_t skip_digits(const char *s, size_t n, size_t i) {
  while (i < n && s[i] >= '0' && s[i] <= '9') i++;
  return i;
}

static int all_of(const char *s, size_t n, const char *set) {
  for (size_t i = 0; i < n; i++)
    if (!strchr(set, s[i])) return 0;
  return 1;
}

/* YAML 1.2 core schema numbers, as LLVM's yaml::isNumeric. */
static int is_numeric(const char *s, size_t n) {
  static const char *const nan[] = {".nan", ".NaN", ".NAN", NULL};
  static const char *const inf[] = {".inf", ".Inf", ".INF", NULL};
  if (n == 0 || (n == 1 && (s[0] == '+' || s[0] == '-'))) return 0;
  if (is_word(s, n, nan)) return 1;
  size_t t = s[0] == '-' || s[0] == '+';
  if (is_word(s + t, n - t, inf)) return 1;
  if (n >= 2 && s[0] == '0' && s[1] == 'o')
    return n > 2 && all_of(s + 2, n - 2, "01234567");
  if (n >= 2 && s[0] == '0' && s[1] == 'x')
    return n > 2 && all_of(s + 2, n - 2, "0123456789abcdefABCDEF");
  s += t;
  n -= t;
  if (s[0] == '.' && (n == 1 || s[1] < '0' || s[1] > '9')) return 0;
  if (s[0] == 'e' || s[0] == 'E') return 0;
  size_t i = skip_digits(s, n, 0);
  if (i == n) return 1;
  if (s[i] == '.') {
    i = skip_digits(s, n, i + 1);
    if (i == n) return 1;
  }
  if (s[i] != 'e' && s[i] != 'E') return 0;
  i++;
  if (i < n && (s[i] == '+' || s[i] == '-')) i++;
  return i < n && skip_digits(s, n, i) == n;
}

int mp_yaml_quoting(const char *s, size_t n) {
  static const char *const special[] = {"null", "Null", "NULL", "~",
                                        "true", "True", "TRUE", "false",
                                        "False", "FALSE", NULL};
  if (n == 0) return 1;
  int q = 0;
  if (s[0] == ' ' || s[0] == '\t' || s[n - 1] == ' ' || s[n - 1] == '\t' ||
      is_word(s, n, special) || is_numeric(s, n) ||
      (s[0] && strchr("-?:\\,[]{}#&*!|>'\"%@`", s[0])))
    q = 1;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if ((c >= '0' && c <= '9') || ((c | 32) >= 'a' && (c | 32) <= 'z') ||
        (c && strchr("_-^., \t", c)))
      continue;
    if (c == 0x7f || c < 0x20 || c >= 0x80) {
      if (c != '\n' && c != '\r') return 2;
    }
    q = 1;
  }
  return q;
}

/* The length of the UTF-8 sequence at s (n bytes left) and its code
 * point, 0 if it is not valid. */
static size_t utf8(const unsigned char *s, size_t n, unsigned *cp) {
  size_t len = s[0] >= 0xf0 && s[0] < 0xf5   ? 4
               : s[0] >= 0xe0 && s[0] < 0xf0 ? 3
               : s[0] >= 0xc2 && s[0] < 0xe0 ? 2
                                             : 0;
  if (!len || len > n) return 0;
  *cp = s[0] & (0x7f >> len);
  for (size_t i = 1; i < len; i++) {
    if ((s[i] & 0xc0) != 0x80) return 0;
    *cp = *cp << 6 | (s[i] & 0x3f);
  }
  if ((len == 3 && (*cp < 0x800 || (*cp >= 0xd800 && *cp < 0xe000))) ||
      (len == 4 && (*cp < 0x10000 || *cp > 0x10ffff)))
    return 0;
  return len;
}

void mp_yaml_put_string(const char *s, size_t n, mp_buf *out) {
  int q = mp_yaml_quoting(s, n);
  if (q == 0) {
    mp_buf_put(out, s, n);
    return;
  }
  if (q == 1) {
    mp_buf_put(out, "'", 1);
    for (size_t i = 0; i < n; i++)
      mp_buf_put(out, s[i] == '\'' ? "''" : s + i, s[i] == '\'' ? 2 : 1);
    mp_buf_put(out, "'", 1);
    return;
  }
  static const char short_esc[][3] = {['\0'] = "\\0", ['\a'] = "\\a",
                                      ['\b'] = "\\b", ['\t'] = "\\t",
                                      ['\n'] = "\\n", ['\v'] = "\\v",
                                      ['\f'] = "\\f", ['\r'] = "\\r",
                                      [0x1b] = "\\e"};
  mp_buf_put(out, "\"", 1);
  const unsigned char *u = (const unsigned char *)s;
  for (size_t i = 0; i < n; i++) {
    unsigned cp = 0;
    size_t len;
    char hex[8];
    if (u[i] == '\\' || u[i] == '"') {
      mp_buf_put(out, "\\", 1);
      mp_buf_put(out, s + i, 1);
    } else if (u[i] < 0x20 && short_esc[u[i]][0]) {
      mp_buf_put(out, short_esc[u[i]], 2);
    } else if (u[i] < 0x20) {
      snprintf(hex, sizeof hex, "\\x%02X", u[i]);
      mp_buf_put(out, hex, 4);
    } else if (u[i] < 0x80) {
      mp_buf_put(out, s + i, 1);
    } else if (!(len = utf8(u + i, n - i, &cp))) {
      mp_buf_put(out, "\xef\xbf\xbd", 3); /* U+FFFD, and LLVM stops */
      break;
    } else {
      const char *e = cp == 0x85     ? "\\N"
                      : cp == 0xa0   ? "\\_"
                      : cp == 0x2028 ? "\\L"
                      : cp == 0x2029 ? "\\P"
                                     : NULL;
      if (e)
        mp_buf_put(out, e, 2);
      else
        mp_buf_put(out, s + i, len);
      i += len - 1;
    }
  }
  mp_buf_put(out, "\"", 1);
}
