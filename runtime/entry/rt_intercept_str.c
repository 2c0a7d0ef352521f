/* rt_intercept_str.c - counting interceptors for libc's str* functions.
 *
 * The work is done by glibc's own functions where the counted lengths
 * follow from their results (rt_libc), by plain loops otherwise (the
 * comparisons, which need the index of the first difference; ASCII case
 * folding as in the C locale); the counted lengths are those of LLVM's sanitizer_common and
 * memprof interceptors with default flags (see rt_intercept.h).  stpcpy is
 * not intercepted by LLVM 22: we count it like strcpy.
 */
#include <string.h>
#include <strings.h>

#include "rt_intercept.h"
#include "runtime/base/rt_libc.h"

static int fold(unsigned char c) {
  return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

/* The first index at which s1 and s2 differ or both end, within `max`. */
static size_t common_prefix(const char *s1, const char *s2, size_t max,
                            int ci) {
  size_t i = 0;
  for (; i < max; i++) {
    unsigned char a = (unsigned char)s1[i], b = (unsigned char)s2[i];
    if ((ci ? fold(a) != fold(b) : a != b) || a == '\0')
      break;
  }
  return i;
}

static int diff_at(const char *s1, const char *s2, size_t i, size_t max,
                   int ci) {
  if (i >= max)
    return 0;
  unsigned char a = (unsigned char)s1[i], b = (unsigned char)s2[i];
  if (ci)
    return fold(a) - fold(b);
  return (a > b) - (a < b);
}

RT_EXPORT size_t strlen(const char *s) {
  size_t n = rt_strlen(s);
  rt_count(s, n + 1);
  return n;
}

RT_EXPORT size_t strnlen(const char *s, size_t max) {
  size_t n = rt_strnlen(s, max);
  rt_count(s, rt_min(n + 1, max));
  return n;
}

/* strcmp & co: both strings up to the first difference (or the common
 * terminator), one past it, never beyond n. */
static int compare(const char *s1, const char *s2, size_t n, int ci) {
  size_t i = common_prefix(s1, s2, n, ci);
  rt_count(s1, rt_min(i + 1, n));
  rt_count(s2, rt_min(i + 1, n));
  return diff_at(s1, s2, i, n, ci);
}

RT_EXPORT int strcmp(const char *s1, const char *s2) {
  return compare(s1, s2, SIZE_MAX, 0);
}

RT_EXPORT int strncmp(const char *s1, const char *s2, size_t n) {
  return compare(s1, s2, n, 0);
}

RT_EXPORT int strcasecmp(const char *s1, const char *s2) {
  return compare(s1, s2, SIZE_MAX, 1);
}

RT_EXPORT int strncasecmp(const char *s1, const char *s2, size_t n) {
  return compare(s1, s2, n, 1);
}

/* Index of the first `c` in s, or of its terminator. */
static size_t find_char(const char *s, int c) {
  return (size_t)(RT_LIBC(strchrnul)(s, c) - s);
}

RT_EXPORT char *strchr(const char *s, int c) {
  size_t i = find_char(s, c);
  rt_count(s, i + 1); /* up to the match, else the whole string */
  return s[i] == (char)c ? (char *)s + i : NULL;
}

RT_EXPORT char *index(const char *s, int c) RT_ALIAS(strchr);

RT_EXPORT char *strchrnul(const char *s, int c) {
  size_t i = find_char(s, c);
  rt_count(s, i + 1);
  return (char *)s + i;
}

RT_EXPORT char *strrchr(const char *s, int c) {
  size_t n = rt_strlen(s);
  rt_count(s, n + 1);
  for (size_t i = n + 1; i-- > 0;)
    if (s[i] == (char)c)
      return (char *)s + i;
  return NULL;
}

static char *find_sub(const char *h, const char *nd, size_t nn, int ci) {
  for (; *h; h++) {
    size_t k = 0;
    while (k < nn && h[k] &&
           (ci ? fold((unsigned char)h[k]) == fold((unsigned char)nd[k])
               : h[k] == nd[k]))
      k++;
    if (k == nn)
      return (char *)h;
  }
  return nn == 0 ? (char *)h : NULL;
}

/* LLVM: the haystack up to the end of the match (or all of it with its
 * terminator), the needle with its terminator. */
static char *substring(const char *h, const char *nd, int ci) {
  size_t nn = rt_strlen(nd);
  char *res = find_sub(h, nd, nn, ci);
  rt_count(h, res ? (size_t)(res - h) + nn : rt_strlen(h) + 1);
  rt_count(nd, nn + 1);
  return res;
}

RT_EXPORT char *strstr(const char *h, const char *nd) {
  return substring(h, nd, 0);
}

RT_EXPORT char *strcasestr(const char *h, const char *nd) {
  return substring(h, nd, 1);
}

/* Length of the prefix of s made of bytes in (accept) / not in (!accept)
 * the set. */
static size_t span(const char *s, const char *set, int accept) {
  return accept ? RT_LIBC(strspn)(s, set) : RT_LIBC(strcspn)(s, set);
}

/* strspn/strcspn: the whole set, and s up to the span's end plus one. */
static size_t span_counted(const char *s, const char *set, int accept) {
  size_t r = span(s, set, accept);
  rt_count(set, rt_strlen(set) + 1);
  rt_count(s, r + 1);
  return r;
}

RT_EXPORT size_t strspn(const char *s, const char *set) {
  return span_counted(s, set, 1);
}

RT_EXPORT size_t strcspn(const char *s, const char *set) {
  return span_counted(s, set, 0);
}

RT_EXPORT char *strpbrk(const char *s, const char *set) {
  size_t r = span(s, set, 0);
  char *res = s[r] ? (char *)s + r : NULL;
  rt_count(set, rt_strlen(set) + 1);
  rt_count(s, res ? r + 1 : rt_strlen(s) + 1);
  return res;
}

/* strcpy/stpcpy: the source with its terminator, read and written. */
static size_t copy_string(char *to, const char *from) {
  size_t n = rt_strlen(from) + 1;
  rt_count(from, n);
  rt_count(to, n);
  rt_memmove(to, from, n);
  return n;
}

RT_EXPORT char *strcpy(char *to, const char *from) {
  copy_string(to, from);
  return to;
}

RT_EXPORT char *stpcpy(char *to, const char *from) {
  return to + copy_string(to, from) - 1;
}

/* strncpy writes exactly n bytes (zero padding included). */
RT_EXPORT char *strncpy(char *to, const char *from, size_t n) {
  size_t len = rt_strnlen(from, n);
  rt_count(from, rt_min(n, len + 1));
  rt_count(to, n);
  rt_memmove(to, from, len);
  rt_memset(to + len, 0, n - len);
  return to;
}

RT_EXPORT char *strcat(char *to, const char *from) {
  size_t fl = rt_strlen(from), tl = rt_strlen(to);
  rt_count(from, fl + 1);
  rt_count(to, tl);
  rt_count(to + tl, fl + 1);
  rt_memmove(to + tl, from, fl + 1);
  return to;
}

/* LLVM counts fl + 1 written bytes even when only n are appended. */
RT_EXPORT char *strncat(char *to, const char *from, size_t n) {
  size_t fl = rt_strnlen(from, n), tl = rt_strlen(to);
  rt_count(from, rt_min(n, fl + 1));
  rt_count(to, tl);
  rt_count(to + tl, fl + 1);
  rt_memmove(to + tl, from, fl);
  to[tl + fl] = '\0';
  return to;
}
