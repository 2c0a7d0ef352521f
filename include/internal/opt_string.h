/* opt_string.h - option strings of the form "name=value:name=value", as
 * the runtime reads MEMPROF_OPTIONS (runtime/base/rt_flags.c) and the hot/cold
 * allocator MEMPROF_HOTCOLD_OPTIONS (hotcold/hc_options.c): the pairs, and
 * the integer and boolean values both accept.
 *
 * Freestanding: no libc call and no allocation, since both read their
 * options from inside the program's first malloc.  What a name means, and
 * what to say about a bad one, stays with each caller.
 */
#ifndef MEMPROF_OPT_STRING_H
#define MEMPROF_OPT_STRING_H

#include <stddef.h>

/* One "name=value" of an option string; without '=' the value is empty. */
typedef struct mpf_opt_pair {
  const char *name, *val;
  size_t name_len, val_len;
} mpf_opt_pair;

/* Pairs are separated by ':', ',' or whitespace. */
static inline int mpf_opt_is_sep(char c) {
  return c == ':' || c == ',' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The next pair of *s, *s moved past it; 0 when none is left.  A pair may
 * have an empty name ("=1"); the caller decides what that means. */
static inline int mpf_opt_next(const char **s, mpf_opt_pair *p) {
  const char *c = *s;
  while (*c && mpf_opt_is_sep(*c)) c++;
  if (!*c) {
    *s = c;
    return 0;
  }
  p->name = c;
  while (*c && !mpf_opt_is_sep(*c) && *c != '=') c++;
  p->name_len = (size_t)(c - p->name);
  p->val = "";
  p->val_len = 0;
  if (*c == '=') {
    p->val = ++c;
    while (*c && !mpf_opt_is_sep(*c)) c++;
    p->val_len = (size_t)(c - p->val);
  }
  *s = c;
  return 1;
}

/* Whether v[0..n) is the string w. */
static inline int mpf_opt_is(const char *v, size_t n, const char *w) {
  size_t i = 0;
  while (i < n && w[i] && v[i] == w[i]) i++;
  return i == n && !w[i];
}

/* A decimal integer with an optional '-' whose magnitude is at most `max`
 * (refused past it, never overflowing): 1 and *out set, else 0. */
static inline int mpf_opt_int(const char *v, size_t n, long long max,
                             long long *out) {
  size_t i = 0;
  int neg = i < n && v[i] == '-';
  i += (size_t)neg;
  if (i == n) return 0;
  long long x = 0;
  for (; i < n; i++) {
    if (v[i] < '0' || v[i] > '9') return 0;
    x = x * 10 + (v[i] - '0');
    if (x > max) return 0;
  }
  *out = neg ? -x : x;
  return 1;
}

/* 1, true or yes; 0, false or no: 1 and *out set, else 0. */
static inline int mpf_opt_bool(const char *v, size_t n, int *out) {
  if (mpf_opt_is(v, n, "1") || mpf_opt_is(v, n, "true") || mpf_opt_is(v, n, "yes"))
    return *out = 1, 1;
  if (mpf_opt_is(v, n, "0") || mpf_opt_is(v, n, "false") || mpf_opt_is(v, n, "no"))
    return *out = 0, 1;
  return 0;
}

#endif
