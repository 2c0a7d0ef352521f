/* rt_shadow.h - the shadow memory of access counts (rt_shadow.c): the
 * access counting the entry points do, and what the heap clears, faults
 * in and reads at free. */
#ifndef MEMPROF_RT_SHADOW_H
#define MEMPROF_RT_SHADOW_H

#include "runtime/base/rt_internal.h"

/* ---- access counting ----------------------------------------------------
 * Count an access to [p, p+n) as the compiler's range callbacks do: one
 * count per 8 bytes in the active shadow mode.  Ranges of at most 64 bytes
 * in default mode (most of the interceptors' and intrinsics' calls) touch
 * at most two 64-byte cells and are counted inline. */
extern RT_EXPORT uintptr_t __memprof_shadow_memory_dynamic_address;
extern RT_EXPORT char __memprof_histogram;
/* The shadow base once the core is initialised in default mode, else 0:
 * the inline path's one test.  The interceptors and intrinsics run it
 * millions of times in a C++ program; testing the init flag, the base and the
 * mode apiece, and again for the second buffer, made a copy's count half
 * as long again. */
RT_HIDDEN extern uintptr_t rt_range_base;
/* The shadow base once access counts may exist, else 0: what the runtime
 * clears, faults in, reads and counts into.  Until instrumented code is
 * linked in (found at start-up) or calls __memprof_init, nothing writes
 * the shadow, so it stays all zero and every clear, populate and read
 * may be skipped exactly: a program preloaded without instrumentation
 * never makes its shadow resident (lazy_shadow=0 sets it at start-up). */
RT_HIDDEN extern uintptr_t rt_shadow_base;
/* Nonzero once rt_shadow_start ran (in histogram mode rt_range_base stays
 * 0 while the runtime counts). */
RT_HIDDEN extern int rt_counting;
static inline int rt_counting_load(void) {
  return __atomic_load_n(&rt_counting, __ATOMIC_RELAXED);
}
/* Start counting (idempotent): publish rt_shadow_base, and rt_range_base
 * in default mode.  After rt_shadow_init. */
RT_HIDDEN void rt_shadow_start(void);
/* Whether instrumented code is linked into the program or its libraries
 * loaded at start-up: their own __memprof_histogram (one in every
 * instrumented module) overrides the runtime's weak one. */
RT_HIDDEN int rt_shadow_program_instrumented(void);
RT_HIDDEN void rt_record_range_slow(const volatile void *p, size_t n);
/* What the interceptors count outside the inline path: nothing before
 * counting starts or for n == 0, else rt_record_range_slow. */
RT_HIDDEN void rt_count_slow(const volatile void *p, size_t n);

/* [a, a+n), 1 <= n <= 64, in default mode. */
static inline void rt_record_small(uintptr_t base, uintptr_t a, size_t n) {
  uintptr_t cell = a & ~(uintptr_t)63, end = a + n;
  uintptr_t first_end = end < cell + 64 ? end : cell + 64;
  uint64_t k = (n + 7) >> 3, k0 = (first_end - a + 7) >> 3;
  *(uint64_t *)((cell >> 3) + base) += k0;
  if (k > k0)
    *(uint64_t *)(((cell + 64) >> 3) + base) += k - k0;
}

static inline uintptr_t rt_range_base_load(void) {
  return __atomic_load_n(&rt_range_base, __ATOMIC_RELAXED);
}

static inline void rt_record_range(const volatile void *p, size_t n) {
  uintptr_t base = rt_range_base_load();
  if (RT_LIKELY(base && n - 1 < 64)) {
    rt_record_small(base, (uintptr_t)p, n);
    return;
  }
  rt_record_range_slow(p, n);
}

/* ---- shadow (rt_shadow.c) ----------------------------------------------- */
RT_HIDDEN void rt_shadow_init(void);
static inline int rt_hist_mode(void) {
  return *(volatile char *)&__memprof_histogram != 0;
}
/* 64-byte cells covering the block [p, p+size) (none for size 0).  A
 * block owns these cells alone (rt_heap.c), whether or not p is 64-aligned. */
static inline uint64_t rt_block_cells(uintptr_t p, uint64_t size) {
  if (!size)
    return 0;
  return (((p + size + 63) & ~(uintptr_t)63) - (p & ~(uintptr_t)63)) / 64;
}
/* Shadow bytes of those cells: the same range in both modes
 * ([B + (p & ~63)/8, + 8 per cell)). */
RT_HIDDEN void rt_shadow_clear_block(uintptr_t p, uint64_t size);
/* The same, with blocks of one or two cells (most of them) cleared inline:
 * a call cost the allocation path more than the stores. */
static inline void rt_shadow_clear(uintptr_t p, uint64_t size) {
  uintptr_t base = __atomic_load_n(&rt_shadow_base, __ATOMIC_RELAXED);
  uint64_t n = rt_block_cells(p, size);
  if (RT_LIKELY(base) && RT_LIKELY(n - 1 < 2)) {
    uint64_t *c = (uint64_t *)(base + ((p & ~(uintptr_t)63) >> 3));
    __atomic_store_n(&c[0], 0, __ATOMIC_RELAXED);
    if (n == 2)
      __atomic_store_n(&c[1], 0, __ATOMIC_RELAXED);
    return;
  }
  rt_shadow_clear_block(p, size);
}
/* Give the shadow pages of a dying block back to the kernel. */
RT_HIDDEN void rt_shadow_release_block(uintptr_t p, uint64_t size);
/* Faults in the shadow of [p, p+size), already cleared, in one call. */
RT_HIDDEN void rt_shadow_populate(uintptr_t p, uint64_t size);
/* Whether any of `probes` cells spread over [p, p+len) has a count (in
 * either mode): the program has reached that range.  No TLS: the ticker
 * calls it. */
RT_HIDDEN int rt_shadow_touched(uintptr_t p, uint64_t len, int probes);
/* Access count of a block in default mode: the sum of its cells (inline:
 * the free path takes it for every block). */
static inline uint64_t rt_shadow_sum(uintptr_t p, uint64_t size) {
  uintptr_t base = __atomic_load_n(&rt_shadow_base, __ATOMIC_RELAXED);
  if (!base)
    return 0;
  const uint64_t *c = (const uint64_t *)(base + ((p & ~(uintptr_t)63) >> 3));
  uint64_t n = rt_block_cells(p, size);
  if (RT_LIKELY(n == 1))
    return c[0];
  uint64_t sum = 0;
  for (uint64_t i = 0; i < n; i++)
    sum += c[i];
  return sum;
}
/* Access count of a block; in histogram mode also fills hist[ceil(size/8)]. */
RT_HIDDEN uint64_t rt_shadow_count(uintptr_t p, uint64_t size, int hist_mode,
                                   uint64_t *hist);


#endif
