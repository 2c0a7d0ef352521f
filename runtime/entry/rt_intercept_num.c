/* rt_intercept_num.c - counting interceptors for the string-to-integer
 * functions LLVM's memprof intercepts: strtol, strtoll, atoi, atol, atoll.
 *
 * The conversion is glibc's (its exported __strtol_internal /
 * __strtoll_internal, which set errno exactly as strtol does).  Counted as
 * in LLVM: the characters the conversion consumed plus one; when nothing
 * was converted, the leading blanks and sign it had to skip plus one; an
 * invalid base counts nothing and, as in glibc, leaves *endptr alone.
 * strtol's store to *endptr is counted too.
 */
/* No <stdlib.h>: with optimisation it defines atoi/atol/atoll as extern
 * inline functions, which would hide our definitions' visibility. */
#include "rt_intercept.h"

extern long __strtol_internal(const char *s, char **end, int base, int group);
extern long long __strtoll_internal(const char *s, char **end, int base,
                                    int group);

static int is_space(char c) {
  return c == ' ' || (c >= '\t' && c <= '\r');
}

/* Bytes of `s` counted for a conversion that stopped at `end`. */
static size_t consumed(const char *s, const char *end) {
  if (end == s) {
    while (is_space(*end))
      end++;
    if (*end == '+' || *end == '-')
      end++;
  }
  return (size_t)(end - s) + 1;
}

static void count_conversion(const char *s, char **endptr, char *end,
                             int base) {
  /* glibc fails an invalid base with EINVAL before reading s or setting
   * the end pointer: leave the caller's *endptr alone too. */
  if (base != 0 && (base < 2 || base > 36))
    return;
  if (endptr) {
    *endptr = end;
    rt_count(endptr, sizeof(*endptr));
  }
  rt_count(s, consumed(s, end));
}

RT_EXPORT long strtol(const char *s, char **endptr, int base) {
  char *end = (char *)s;
  long r = __strtol_internal(s, &end, base, 0);
  count_conversion(s, endptr, end, base);
  return r;
}

RT_EXPORT long long strtoll(const char *s, char **endptr, int base) {
  char *end = (char *)s;
  long long r = __strtoll_internal(s, &end, base, 0);
  count_conversion(s, endptr, end, base);
  return r;
}

/* atoi truncates strtol's long, as LLVM's interceptor and glibc do. */
RT_EXPORT int atoi(const char *s) {
  char *end = (char *)s;
  int r = (int)__strtol_internal(s, &end, 10, 0);
  rt_count(s, consumed(s, end));
  return r;
}

RT_EXPORT long atol(const char *s) {
  char *end = (char *)s;
  long r = __strtol_internal(s, &end, 10, 0);
  rt_count(s, consumed(s, end));
  return r;
}

RT_EXPORT long long atoll(const char *s) {
  char *end = (char *)s;
  long long r = __strtoll_internal(s, &end, 10, 0);
  rt_count(s, consumed(s, end));
  return r;
}
