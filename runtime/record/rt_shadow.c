/* rt_shadow.c - the shadow memory: reservation and publication of its base
 * B, clearing a block's cells at allocation, reading them at free and dump,
 * and range recording (rt_record_range).
 *
 * One contiguous NORESERVE mapping of 2^44 bytes covers every user address
 * below 2^47, so B + (a >> 3) is always writable and reads 0 until touched.
 * Default mode: u64 per 64 bytes at ((a & ~63) >> 3) + B.  Histogram mode:
 * saturating u8 per 8 bytes at (a >> 3) + B.  For the 64-byte cells
 * covering a block both modes use the same shadow bytes, which is what lets
 * the allocator clear and release them without knowing the mode.
 *
 * The mapping exists from start-up (instrumented code reads its base in
 * every function), but the runtime touches it only through rt_shadow_base,
 * published once counts may exist (rt_shadow_start). */
#include <sys/mman.h>

#include "rt_shadow.h"
#include "runtime/base/rt_libc.h"
#include "runtime/base/rt_sys.h"

#define SHADOW_SIZE (1ULL << 44)
#define CLEAR_MADVISE_THRESHOLD 0x10000
#define SMALL_CLEAR_BYTES 64 /* blocks up to 512 bytes */

RT_EXPORT uintptr_t __memprof_shadow_memory_dynamic_address;
/* Weak: clang emits a strong copy in every instrumented TU. */
RT_EXPORT __attribute__((weak)) char __memprof_histogram = 0;
uintptr_t rt_range_base;
uintptr_t rt_shadow_base;
int rt_counting;
/* The runtime's own __memprof_histogram, whatever the loader bound. */
extern char rt_own_histogram __attribute__((alias("__memprof_histogram"),
                                            visibility("hidden")));

void rt_shadow_init(void) {
  if (__memprof_shadow_memory_dynamic_address)
    return;
  void *m = rt_mmap_anon(SHADOW_SIZE, 1);
  if (!m) {
    rt_report("ERROR: cannot reserve %llu bytes of shadow memory",
              (unsigned long long)SHADOW_SIZE);
    rt_syscall(231 /* exit_group */, 1, 0, 0);
  }
  /* Hugepages would turn every touched counter into 2 MiB of RSS. */
  rt_madvise(m, SHADOW_SIZE, MADV_NOHUGEPAGE);
  rt_madvise(m, SHADOW_SIZE, MADV_DONTDUMP);
  __atomic_store_n(&__memprof_shadow_memory_dynamic_address, (uintptr_t)m,
                   __ATOMIC_RELEASE);
}

int rt_shadow_program_instrumented(void) {
  const char *bound = &__memprof_histogram, *own = &rt_own_histogram;
  __asm__("" : "+r"(bound), "+r"(own)); /* compare the addresses as bound */
  return bound != own;
}

void rt_shadow_start(void) {
  uintptr_t base = __atomic_load_n(&__memprof_shadow_memory_dynamic_address,
                                   __ATOMIC_ACQUIRE);
  __atomic_store_n(&rt_shadow_base, base, __ATOMIC_RELEASE);
  if (!rt_hist_mode())
    __atomic_store_n(&rt_range_base, base, __ATOMIC_RELEASE);
  __atomic_store_n(&rt_counting, 1, __ATOMIC_RELEASE);
}

static inline uintptr_t live_base(void) {
  return __atomic_load_n(&rt_shadow_base, __ATOMIC_ACQUIRE);
}

/* The shadow bytes of the cells covering [p, p+size): the same bytes in
 * both modes (8 counters of a cell, or its u64).  Only once counting. */
static inline unsigned char *shadow_of_block(uintptr_t p) {
  return (unsigned char *)(rt_shadow_base + ((p & ~(uintptr_t)63) >> 3));
}

static inline uint64_t block_shadow_bytes(uintptr_t p, uint64_t size) {
  return rt_block_cells(p, size) * 8;
}

void rt_shadow_clear_block(uintptr_t p, uint64_t size) {
  if (!live_base())
    return;
  unsigned char *s = shadow_of_block(p);
  uint64_t len = block_shadow_bytes(p, size);
  if (len <= SMALL_CLEAR_BYTES) {
    /* Most blocks: a few stores beat a call into libc's memset.  Atomic
     * stores, so the compiler does not turn the loop back into that call. */
    uint64_t *q = (uint64_t *)s;
    for (uint64_t i = 0; i < len / 8; i++)
      __atomic_store_n(&q[i], 0, __ATOMIC_RELAXED);
    return;
  }
  if (len < CLEAR_MADVISE_THRESHOLD) {
    rt_memset(s, 0, len);
    return;
  }
  uintptr_t lo = rt_round_up((uintptr_t)s, RT_PAGE);
  uintptr_t hi = rt_round_down((uintptr_t)s + len, RT_PAGE);
  rt_memset(s, 0, lo - (uintptr_t)s);
  rt_madvise((void *)lo, hi - lo, MADV_DONTNEED);
  rt_memset((void *)hi, 0, (uintptr_t)s + len - hi);
}

void rt_shadow_release_block(uintptr_t p, uint64_t size) {
  if (!live_base())
    return;
  uintptr_t s = (uintptr_t)shadow_of_block(p);
  uintptr_t lo = rt_round_up(s, RT_PAGE);
  uintptr_t hi = rt_round_down(s + block_shadow_bytes(p, size), RT_PAGE);
  if (hi > lo)
    rt_madvise((void *)lo, hi - lo, MADV_DONTNEED);
}

void rt_shadow_populate(uintptr_t p, uint64_t size) {
  if (!live_base())
    return;
  uintptr_t s = (uintptr_t)shadow_of_block(p);
  rt_populate(s, s + block_shadow_bytes(p, size));
}

int rt_shadow_touched(uintptr_t p, uint64_t len, int probes) {
  if (!live_base())
    return 0;
  for (int k = 0; k < probes; k++)
    if (__atomic_load_n((const uint64_t *)shadow_of_block(p + len / probes * k),
                        __ATOMIC_RELAXED))
      return 1;
  return 0;
}

uint64_t rt_shadow_count(uintptr_t p, uint64_t size, int hist_mode,
                         uint64_t *hist) {
  if (!live_base())
    return 0;
  if (!hist_mode)
    return rt_shadow_sum(p, size);
  uint64_t sum = 0;
  const unsigned char *g =
      (const unsigned char *)(rt_shadow_base + (p >> 3));
  for (uint64_t i = 0, n = (size + 7) / 8; i < n; i++) {
    sum += g[i];
    if (hist)
      hist[i] = g[i];
  }
  return sum;
}

typedef uint64_t cell_pair __attribute__((vector_size(16), aligned(8), may_alias));

/* One count per 8 bytes, like the compiler's range callback: the accesses
 * are at a, a+8, ... below end.  In default mode they are added per 64-byte
 * cell: the first (partial) cell, then full cells of 8, then the rest. */
static void record_range_default(uintptr_t a, uintptr_t end, uintptr_t base) {
  uint64_t *cell = (uint64_t *)(((a & ~(uintptr_t)63) >> 3) + base);
  uintptr_t next = (a | 63) + 1; /* start of the following cell */
  if (end <= next || next == 0) {
    *cell += (end - a + 7) / 8;
    return;
  }
  uint64_t k0 = (next - a + 7) / 8;
  *cell++ += k0;
  /* The rest start at `first` (k0 * 8 bytes past a), eight to a cell,
   * added two cells at a time: page-sized copies spent much of this
   * function in a loop of one cell per step. */
  uintptr_t first = a + k0 * 8;
  if (first < a || first >= end)
    return;
  uint64_t left = (end - first + 7) / 8, full = left / 8, i = 0;
  for (; i + 2 <= full; i += 2)
    *(cell_pair *)(cell + i) += (cell_pair){8, 8};
  if (i < full)
    cell[i++] += 8;
  if (left % 8)
    cell[i] += left % 8;
}

/* Histogram mode counts each touched 8-byte granule in its own saturating
 * u8 (LLVM 22 adds to the 64-byte cell's u64 instead, corrupting the
 * neighbouring histogram bytes: a deliberate fix). */
static void record_range_hist(uintptr_t a, uintptr_t end, uintptr_t base) {
  for (; a < end; a += 8) {
    unsigned char *c = (unsigned char *)((a >> 3) + base);
    if (*c != 255)
      (*c)++;
  }
}

void rt_record_range_slow(const volatile void *p, size_t n) {
  uintptr_t base = live_base();
  if (!base || !n)
    return;
  uintptr_t a = (uintptr_t)p, end = a + n;
  if (end < a)
    end = UINTPTR_MAX;
  if (rt_hist_mode())
    record_range_hist(a, end, base);
  else
    record_range_default(a, end, base);
}

void rt_count_slow(const volatile void *p, size_t n) {
  if (n)
    rt_record_range_slow(p, n);
}
