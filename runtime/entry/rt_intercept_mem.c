/* rt_intercept_mem.c - counting mem* functions: the compiler's intrinsic
 * replacements (__memprof_memcpy, __memprof_memmove, __memprof_memset) and
 * the interceptors for libc's memcpy, memmove, memset, memcmp, bcmp,
 * memchr, memrchr, memccpy, memmem.
 *
 * Instrumented code calls the intrinsics; the interceptors catch explicit
 * calls through pointers, calls from uninstrumented code of the executable
 * and calls from shared libraries bound to the executable's definitions
 * (libstdc++'s string code: millions of calls in a C++ program).  Both
 * count the same way, so each intrinsic is an alias of its interceptor.
 * The common case, buffers of at most 64 bytes, is counted inline and then
 * enters libc's function by a tail call; the rest goes through a separate
 * function, so the common path saves no registers.
 */
#include <string.h>

#include "rt_intercept.h"
#include "runtime/base/rt_libc.h"
#include "runtime/record/rt_shadow.h"

static __attribute__((noinline)) void *copy_slow(void *d, const void *s,
                                                 size_t n, int move) {
  rt_count_slow(s, n);
  rt_count_slow(d, n);
  return move ? rt_memmove(d, s, n) : rt_memcpy(d, s, n);
}

RT_EXPORT void *memcpy(void *d, const void *s, size_t n) {
  if (RT_UNLIKELY(!rt_count2_inline(s, d, n)))
    return copy_slow(d, s, n, 0);
  return rt_memcpy(d, s, n);
}

RT_EXPORT void *memmove(void *d, const void *s, size_t n) {
  if (RT_UNLIKELY(!rt_count2_inline(s, d, n)))
    return copy_slow(d, s, n, 1);
  return rt_memmove(d, s, n);
}

RT_EXPORT void *memset(void *d, int c, size_t n) {
  rt_count(d, n);
  return rt_memset(d, c, n);
}

RT_EXPORT void *__memprof_memcpy(void *d, const void *s, size_t n) RT_ALIAS(memcpy);
RT_EXPORT void *__memprof_memmove(void *d, const void *s, size_t n) RT_ALIAS(memmove);
RT_EXPORT void *__memprof_memset(void *d, int c, size_t n) RT_ALIAS(memset);

static __attribute__((noinline)) int compare_slow(const void *a, const void *b,
                                                  size_t n) {
  rt_count_slow(a, n);
  rt_count_slow(b, n);
  return rt_memcmp(a, b, n);
}

/* strict_memcmp=1: both operands are counted over their whole length,
 * whatever the position of the first difference. */
RT_EXPORT int memcmp(const void *a, const void *b, size_t n) {
  if (RT_UNLIKELY(!rt_count2_inline(a, b, n)))
    return compare_slow(a, b, n);
  return rt_memcmp(a, b, n);
}

RT_EXPORT int bcmp(const void *a, const void *b, size_t n) RT_ALIAS(memcmp);

RT_EXPORT void *memchr(const void *s, int c, size_t n) {
  void *res = RT_LIBC(memchr)(s, c, n);
  rt_count(s, res ? (size_t)((const char *)res - (const char *)s) + 1 : n);
  return res;
}

RT_EXPORT void *memrchr(const void *s, int c, size_t n) {
  const unsigned char *p = s;
  rt_count(s, n);
  while (n--)
    if (p[n] == (unsigned char)c)
      return (void *)(p + n);
  return NULL;
}

/* LLVM 22 does not intercept memccpy (it is uncounted there); upstream
 * later counts the bytes copied, terminator included, on both sides. */
RT_EXPORT void *memccpy(void *d, const void *s, int c, size_t n) {
  unsigned char *dp = d;
  const unsigned char *sp = s;
  size_t i = 0;
  void *res = NULL;
  while (i < n) {
    dp[i] = sp[i];
    if (sp[i++] == (unsigned char)c) {
      res = dp + i;
      break;
    }
  }
  rt_count(s, i);
  rt_count(d, i);
  return res;
}

RT_EXPORT void *memmem(const void *hay, size_t hn, const void *needle,
                       size_t nn) {
  const unsigned char *h = hay, *nd = needle;
  void *res = NULL;
  if (nn == 0) {
    res = (void *)h;
  } else {
    for (size_t i = 0; nn <= hn && i <= hn - nn; i++)
      if (h[i] == nd[0] && !rt_memcmp(h + i, nd, nn)) {
        res = (void *)(h + i);
        break;
      }
  }
  rt_count(hay, hn);
  rt_count(needle, nn);
  return res;
}
