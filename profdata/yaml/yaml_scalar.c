/* yaml_scalar.c - LLVM YAML I/O's scalar rules (yaml_scalar.h).
 * Each rule was checked against `llvm-profdata-22 merge` on hand-written
 * inputs (test/yaml/test_yaml_llvm.py keeps the cases).
 */
#include "yaml_scalar.h"

#include <string.h>

#include "common/guid.h"
#include "profdata/model/model.h"

static int eq(const char *s, size_t n, const char *lit) {
  return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

static int starts_nocase(const char *s, size_t n, char a, char b) {
  return n >= 2 && s[0] == '0' && (s[1] == a || s[1] == b);
}

/* Strips the prefix and returns the radix, like LLVM's getAutoSenseRadix. */
static unsigned sense_radix(const char **s, size_t *n) {
  unsigned radix = 10;
  if (starts_nocase(*s, *n, 'x', 'X'))
    radix = 16;
  else if (starts_nocase(*s, *n, 'b', 'B'))
    radix = 2;
  else if (*n >= 2 && (*s)[0] == '0' && (*s)[1] == 'o')
    radix = 8;
  else if (*n >= 2 && (*s)[0] == '0' && (*s)[1] >= '0' && (*s)[1] <= '9') {
    *s += 1;
    *n -= 1;
    return 8;
  }
  if (radix != 10) {
    *s += 2;
    *n -= 2;
  }
  return radix;
}

static unsigned digit_value(char c) {
  if (c >= '0' && c <= '9') return (unsigned)(c - '0');
  if (c >= 'a' && c <= 'z') return (unsigned)(c - 'a' + 10);
  if (c >= 'A' && c <= 'Z') return (unsigned)(c - 'A' + 10);
  return 99;
}

int mp_yaml_uint(const char *s, size_t n, uint64_t *out) {
  unsigned radix = sense_radix(&s, &n);
  if (n == 0) return -1;
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned d = digit_value(s[i]);
    if (d >= radix) return -1;
    if (v > (UINT64_MAX - d) / radix) return -1;
    v = v * radix + d;
  }
  *out = v;
  return 0;
}

int mp_yaml_bool(const char *s, size_t n, int *out) {
  static const char *const yes[] = {"y",  "Y",   "yes",  "Yes",  "YES", "on",
                                    "On", "ON",  "true", "True", "TRUE"};
  static const char *const no[] = {"n",   "N",   "no",    "No",    "NO",   "off",
                                   "Off", "OFF", "false", "False", "FALSE"};
  for (size_t i = 0; i < sizeof yes / sizeof *yes; i++) {
    if (eq(s, n, yes[i])) return *out = 1, 0;
    if (eq(s, n, no[i])) return *out = 0, 0;
  }
  return -1;
}

const char *mp_yaml_guid(const char *s, size_t n, uint64_t *out) {
  size_t digits = 0;
  while (digits < n && s[digits] >= '0' && s[digits] <= '9') digits++;
  if (digits == n) return "use a hexadecimal GUID (0x...) or a function name";
  if (starts_nocase(s, n, 'x', 'X'))
    return mp_yaml_uint(s, n, out) == 0 ? NULL : "invalid hex64 number";
  *out = mp_guid_of_name(s, n);
  return NULL;
}

int mp_yaml_is_null_word(const char *s, size_t n) {
  return eq(s, n, "null") || eq(s, n, "Null") || eq(s, n, "NULL") ||
         eq(s, n, "~");
}
