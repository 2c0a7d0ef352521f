/* rt_intercept.h - what the libc interceptors (rt_intercept_*.c) share.
 *
 * An interceptor does the libc function's work itself (or through libc's
 * internal alias) and counts the user buffers it reads or writes exactly as
 * LLVM's sanitizer_common interceptors do for memprof: one range record per
 * COMMON_INTERCEPTOR_READ_RANGE / WRITE_RANGE, with the same lengths.  The
 * sanitizer flags that shape those lengths are fixed at their defaults:
 * intercept_* = 1, strict_memcmp = 1, strict_string_checks = 0.
 */
#ifndef MEMPROF_RT_INTERCEPT_H
#define MEMPROF_RT_INTERCEPT_H

#include "runtime/record/rt_shadow.h"

/* Count an access to [p, p+n); nothing before counting starts or for
 * n == 0 (LLVM's range loop does nothing for n == 0 either).  Until
 * counting starts (a program preloaded without instrumentation) nothing is
 * called: only rt_range_base and rt_counting are read. */
static inline void rt_count(const volatile void *p, size_t n) {
  uintptr_t base = rt_range_base_load();
  if (RT_LIKELY(base && n - 1 < 64))
    rt_record_small(base, (uintptr_t)p, n);
  else if (base || rt_counting_load())
    rt_count_slow(p, n);
}

/* rt_count of two buffers of n bytes (a copy's or a comparison's) when
 * the inline path applies, or when nothing counts yet; 0, counting
 * nothing, when the caller must count them itself. */
static inline int rt_count2_inline(const volatile void *a,
                                   const volatile void *b, size_t n) {
  uintptr_t base = rt_range_base_load();
  if (RT_UNLIKELY(!base || n - 1 >= 64))
    return !base && !rt_counting_load();
  rt_record_small(base, (uintptr_t)a, n);
  rt_record_small(base, (uintptr_t)b, n);
  return 1;
}

static inline size_t rt_min(size_t a, size_t b) { return a < b ? a : b; }

#endif
