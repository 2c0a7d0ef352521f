/* rt_size_class.h - the allocator's size classes (rt_size_class.c): 32
 * classes up to 1 KiB (8 of them twins), then eight per doubling (each
 * 12.5% above the last) up to 128 KiB.
 *
 * Two sets share the table.  The whole-cell classes (every size a
 * multiple of 64: 64 .. 1024 in steps of 64, and all above) make each
 * slot a run of whole 64-byte shadow cells (rt_heap_priv.h), so a block's
 * access counts are its own.  The fine classes add 16, 32, 48, 80, 96,
 * 112, 160 and 224 bytes, whose slots share cells: they serve only while
 * no code counts accesses (a program built without -fmemory-profile, the
 * shared runtime preloaded; fine_classes), where small blocks would
 * otherwise take up to four times their size.
 *
 * Each class of up to TWIN_MAX bytes has a twin of the same size right
 * after it.  While the fine classes serve (fill_classes), a block that
 * leaves fewer than SLOT_TAIL_META bytes of its slot free, whose stack
 * and time then sit in its class's out-of-line array (rt_heap_priv.h),
 * takes the twin: blocks of both kinds mixed in one class would spread
 * the few array entries in use over every page of the array. */
#ifndef MEMPROF_RT_SIZE_CLASS_H
#define MEMPROF_RT_SIZE_CLASS_H

#include <stddef.h>
#include <stdint.h>

#define SMALL_CLASSES 32 /* 16 .. 1024: 16 whole-cell classes, 8 fine, 8 twins */
#define SMALL_STEPS 129  /* sizes 0 .. 1024 in steps of 8 */
#define TWIN_MAX 128     /* the largest class with a twin */
#define SLOT_TAIL_META 8 /* a block's metadata in its slot's last bytes */
#define STEPS_LOG2 3     /* then 8 classes per doubling, to 128 KiB */
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
/* The smallest class of ceil(n / 8) * 8 bytes, n <= 1024: row 1 among
 * the fine and whole-cell classes (and the twins, with fill_classes),
 * row 0 among the whole-cell ones (no twin). */
RT_SC_HIDDEN extern uint8_t small_class[2][SMALL_STEPS];
/* 1 while the fine classes serve. */
RT_SC_HIDDEN extern int rt_fine_classes;

/* Fills the tables above; once, before any allocation.  `fine`: whether
 * the fine classes serve from the start; `twins`: whether blocks that
 * fill their slot take the twins while they do. */
RT_SC_HIDDEN void rt_size_classes_init(int fine, int twins);
/* Ends the fine classes' service (idempotent): from here every block
 * takes a whole-cell class.  Blocks already in fine slots stay there. */
RT_SC_HIDDEN void rt_size_classes_whole_cells(void);

static inline int rt_fine_classes_load(void) {
  return __atomic_load_n(&rt_fine_classes, __ATOMIC_RELAXED);
}

/* Whether class c's size is a run of whole 64-byte shadow cells. */
static inline int rt_class_whole_cells(int c) { return (class_size[c] & 63) == 0; }

/* Whether class c is the twin of the class before it. */
static inline int rt_class_twin(int c) { return c > 0 && class_size[c] == class_size[c - 1]; }

/* Smallest class holding n bytes (n <= MAX_CLASS_SIZE), among those that
 * serve now. */
static inline int rt_class_for(uint64_t n) {
  if (n <= 1024)
    return small_class[rt_fine_classes_load()][(n + 7) >> 3];
  uint64_t m = n - 1;
  int hb = 63 - __builtin_clzll(m);
  int q = (int)(m >> (hb - STEPS_LOG2)) - (1 << STEPS_LOG2);
  return SMALL_CLASSES + ((hb - 10) << STEPS_LOG2) + q;
}

/* Whether class c serves now a block aligned to `align` (a power of two):
 * its slots start on multiples of the largest power of two dividing its
 * size (rt_heap_layout.c), 16 at least. */
static inline int rt_class_serves(int c, size_t align) {
  if (!rt_class_whole_cells(c) && !rt_fine_classes_load())
    return 0;
  return align <= 16 || (class_size[c] & (align - 1)) == 0;
}

/* Smallest class serving now n bytes aligned to `align` (a power of two),
 * or -1. */
RT_SC_HIDDEN int rt_class_for_aligned(uint64_t n, size_t align);

#endif
