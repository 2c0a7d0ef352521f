/* rt_libc.c - the runtime's own memcpy/memmove/memset/memcmp/strlen/strnlen.
 *
 * The runtime defines the public memcpy, strlen, ... as counting
 * interceptors, so it cannot call them for its own work: these helpers are
 * self-contained (no libc, no interceptor, no allocation) and safe before
 * init.  Large copies and fills use `rep movsb` / `rep stosb`, which are
 * fast on every x86-64 with ERMS; small ones use word loops.  The runtime is
 * built with -fno-builtin, so the compiler does not turn these loops back
 * into calls to memcpy/memset.
 */
#include "rt_internal.h"

/* Unaligned, alias-free 8-byte word. */
typedef uint64_t __attribute__((aligned(1), may_alias)) rt_word;

#define RT_REP_THRESHOLD 64

void *rt_memcpy(void *d, const void *s, size_t n) {
  unsigned char *dp = d;
  const unsigned char *sp = s;
  if (n >= RT_REP_THRESHOLD) {
    __asm__ volatile("rep movsb" : "+D"(dp), "+S"(sp), "+c"(n) : : "memory");
    return d;
  }
  for (; n >= 8; n -= 8, dp += 8, sp += 8)
    *(rt_word *)dp = *(const rt_word *)sp;
  for (; n; n--)
    *dp++ = *sp++;
  return d;
}

/* Copy downwards, for an overlapping destination above the source. */
static void copy_backward(unsigned char *d, const unsigned char *s, size_t n) {
  while (n >= 8) {
    n -= 8;
    *(rt_word *)(d + n) = *(const rt_word *)(s + n);
  }
  while (n) {
    n--;
    d[n] = s[n];
  }
}

void *rt_memmove(void *d, const void *s, size_t n) {
  uintptr_t du = (uintptr_t)d, su = (uintptr_t)s;
  if (du == su || n == 0)
    return d;
  /* Copy forwards unless the destination starts inside the source.  A
   * forward word loop is safe for any overlap with d < s (each word is
   * read before the write that could clobber it); `rep movsb` is used
   * only without overlap. */
  if (du < su || du - su >= n) {
    if (du < su && su - du < n) {
      unsigned char *dp = d;
      const unsigned char *sp = s;
      for (; n >= 8; n -= 8, dp += 8, sp += 8)
        *(rt_word *)dp = *(const rt_word *)sp;
      for (; n; n--)
        *dp++ = *sp++;
      return d;
    }
    return rt_memcpy(d, s, n);
  }
  copy_backward(d, s, n);
  return d;
}

void *rt_memset(void *d, int c, size_t n) {
  unsigned char *dp = d;
  if (n >= RT_REP_THRESHOLD) {
    __asm__ volatile("rep stosb" : "+D"(dp), "+c"(n) : "a"(c) : "memory");
    return d;
  }
  uint64_t w = 0x0101010101010101ull * (unsigned char)c;
  for (; n >= 8; n -= 8, dp += 8)
    *(rt_word *)dp = w;
  for (; n; n--)
    *dp++ = (unsigned char)c;
  return d;
}

int rt_memcmp(const void *a, const void *b, size_t n) {
  const unsigned char *x = a, *y = b;
  for (; n >= 8; n -= 8, x += 8, y += 8)
    if (*(const rt_word *)x != *(const rt_word *)y)
      break;
  for (; n; n--, x++, y++)
    if (*x != *y)
      return *x < *y ? -1 : 1;
  return 0;
}

size_t rt_strlen(const char *s) {
  const char *p = s;
  /* Byte steps up to an 8-byte boundary, then whole aligned words: an
   * aligned word never crosses a page, so reading past the NUL is safe. */
  for (; (uintptr_t)p & 7; p++)
    if (!*p)
      return (size_t)(p - s);
  const uint64_t lo = 0x0101010101010101ull, hi = 0x8080808080808080ull;
  for (;;) {
    uint64_t w = *(const rt_word *)p;
    if ((w - lo) & ~w & hi)
      break;
    p += 8;
  }
  while (*p)
    p++;
  return (size_t)(p - s);
}

size_t rt_strnlen(const char *s, size_t max) {
  size_t i = 0;
  while (i < max && s[i])
    i++;
  return i;
}
