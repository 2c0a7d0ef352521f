/* rt_size_class.h - the allocator's size classes (rt_size_class.c): 16
 * classes of 64 .. 1024 bytes in steps of 64, then eight per doubling (each
 * 12.5% above the last) up to 128 KiB.  Every class size is a multiple of
 * 64, so a slot is a run of whole 64-byte shadow cells (rt_heap_priv.h). */
#ifndef MEMPROF_RT_SIZE_CLASS_H
#define MEMPROF_RT_SIZE_CLASS_H

#include <stddef.h>
#include <stdint.h>

#define SMALL_CLASSES 16 /* 64 .. 1024 step 64 */
#define STEPS_LOG2 3      /* then 8 classes per doubling, to 128 KiB */
#define NCLASS (SMALL_CLASSES + 7 * (1 << STEPS_LOG2))
#define MAX_CLASS_SIZE 131072u
#define TC_MAX 32 /* a thread cache's most slots of one class */

#define RT_SC_HIDDEN __attribute__((visibility("hidden")))

RT_SC_HIDDEN extern uint32_t class_size[NCLASS];
/* ceil(2^64 / class size) (exactly 2^64 / size for powers of two):
 * offset / size as one multiply, a division being the most expensive
 * instruction of free.  Exact for offsets below 2^32: the rounding adds
 * less than 2^-32 to a quotient whose fraction is at most 1 - 2^-17. */
RT_SC_HIDDEN extern uint64_t class_recip[NCLASS];
/* How many slots of each class a thread cache holds at most. */
RT_SC_HIDDEN extern uint32_t tc_cap[NCLASS];

/* Fills the tables above; once, before any allocation. */
RT_SC_HIDDEN void rt_size_classes_init(void);

/* Smallest class holding n bytes (n <= MAX_CLASS_SIZE). */
static inline int rt_class_for(uint64_t n) {
  if (n <= 1024)
    return n ? (int)((n + 63) / 64) - 1 : 0;
  uint64_t m = n - 1;
  int hb = 63 - __builtin_clzll(m);
  int q = (int)(m >> (hb - STEPS_LOG2)) - (1 << STEPS_LOG2);
  return SMALL_CLASSES + ((hb - 10) << STEPS_LOG2) + q;
}

/* Smallest class holding n bytes whose size is a multiple of `align` (a
 * power of two), or -1. */
RT_SC_HIDDEN int rt_class_for_aligned(uint64_t n, size_t align);

#endif
