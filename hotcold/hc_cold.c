/* hc_cold.c - the cold arena: one jemalloc arena, created at the first
 * allocation hinted cold, whose pages all come from one reserved address
 * range (extent hooks below).  The range makes "is this block cold?" one
 * subtraction and compare, which free() and delete need to send a cold
 * block straight back to its arena instead of into the thread cache, where
 * the next hot allocation of the same size would pick it up and the cold
 * pages would turn hot.
 *
 * Cold blocks never pass through a thread cache (MALLOCX_TCACHE_NONE both
 * ways): cold allocations are rare by construction, and jemalloc's own
 * counters of the arena then count exactly the cold allocations and frees.
 * Dirty pages decay after cold_decay_ms (muzzy pages are skipped: a purge
 * is MADV_DONTNEED at once), and the idle thread (hc_idle.c) releases the
 * rest and advises the range MADV_COLD once the arena is idle. */
#include <errno.h>
#include <stdbool.h>
#include <sys/mman.h>

#include "hc_internal.h"

#ifndef MADV_COLD
#define MADV_COLD 20
#endif

uintptr_t hc_cold_lo;
size_t hc_cold_len;
static uintptr_t cold_next;    /* first address not yet handed to jemalloc */
static int cold_state;         /* 0: untried, 1: being set up, 2: ready, 3: unavailable */
static unsigned cold_ind;      /* the arena's index once ready */
static unsigned long activity; /* cold allocations + frees */

#define PAGE 4096UL

/* ---- extent hooks: pages from the reserved range only ------------------- */

/* Hand out fresh address space from the range.  It is never handed out
 * twice (dalloc is refused, so jemalloc keeps and reuses what it got), so
 * it is zero; it is mapped read-write, so committed. */
static void *hook_alloc(extent_hooks_t *h, void *new_addr, size_t size,
                        size_t align, bool *zero, bool *commit, unsigned ind) {
  (void)h;
  (void)ind;
  uintptr_t end = hc_cold_lo + hc_cold_len;
  uintptr_t cur = __atomic_load_n(&cold_next, __ATOMIC_RELAXED);
  for (;;) {
    uintptr_t start = (cur + align - 1) & ~(uintptr_t)(align - 1);
    if (new_addr && (uintptr_t)new_addr != start)
      return NULL;
    if (start < cur || start > end || size > end - start)
      return NULL;
    if (__atomic_compare_exchange_n(&cold_next, &cur, start + size, 0,
                                    __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
      *zero = true;
      *commit = true;
      return (void *)start;
    }
  }
}

static void hook_destroy(extent_hooks_t *h, void *addr, size_t size,
                         bool committed, unsigned ind) {
  (void)h;
  (void)committed;
  (void)ind;
  madvise(addr, size, MADV_DONTNEED);
}

/* Pages of the range are always accessible: committing is a no-op. */
static bool hook_commit(extent_hooks_t *h, void *addr, size_t size,
                        size_t off, size_t len, unsigned ind) {
  (void)h, (void)addr, (void)size, (void)off, (void)len, (void)ind;
  return false;
}

/* Private anonymous pages read back as zero after MADV_DONTNEED, which is
 * what jemalloc requires of a forced purge. */
static bool hook_purge_forced(extent_hooks_t *h, void *addr, size_t size,
                              size_t off, size_t len, unsigned ind) {
  (void)h, (void)size, (void)ind;
  return madvise((char *)addr + off, len, MADV_DONTNEED) != 0;
}

/* One mapping: any extent may be split and neighbours merged. */
static bool hook_split(extent_hooks_t *h, void *addr, size_t size,
                       size_t size_a, size_t size_b, bool committed,
                       unsigned ind) {
  (void)h, (void)addr, (void)size, (void)size_a, (void)size_b;
  (void)committed, (void)ind;
  return false;
}

static bool hook_merge(extent_hooks_t *h, void *addr_a, size_t size_a,
                       void *addr_b, size_t size_b, bool committed,
                       unsigned ind) {
  (void)h, (void)addr_a, (void)size_a, (void)addr_b, (void)size_b;
  (void)committed, (void)ind;
  return false;
}

/* dalloc NULL: jemalloc retains released extents itself.  decommit and
 * purge_lazy NULL: pages are only ever purged with MADV_DONTNEED. */
static extent_hooks_t cold_hooks = {
    .alloc = hook_alloc,
    .dalloc = NULL,
    .destroy = hook_destroy,
    .commit = hook_commit,
    .decommit = NULL,
    .purge_lazy = NULL,
    .purge_forced = hook_purge_forced,
    .split = hook_split,
    .merge = hook_merge,
};

/* ---- set-up --------------------------------------------------------------- */

/* MAP_NORESERVE: untouched pages cost nothing; if the system refuses the
 * size (strict overcommit), halve it down to 64 MiB. */
static int reserve_range(void) {
  size_t len = (size_t)hc_opt.cold_reserve_mb << 20;
  for (; len >= (64UL << 20); len >>= 1) {
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
      continue;
    /* Cold data is sparse and rarely touched: no huge pages, so touching
     * one cold object faults in 4 KiB, not 2 MiB. */
    madvise(p, len, MADV_NOHUGEPAGE);
    cold_next = (uintptr_t)p;
    __atomic_store_n(&hc_cold_lo, (uintptr_t)p, __ATOMIC_RELAXED);
    __atomic_store_n(&hc_cold_len, len, __ATOMIC_RELEASE);
    return 0;
  }
  return -1;
}

static int set_arena_ssize(unsigned ind, const char *name, ssize_t v) {
  size_t mib[4], miblen = 4;
  if (mphc_mallctlnametomib(name, mib, &miblen))
    return -1;
  mib[1] = ind;
  return mphc_mallctlbymib(mib, miblen, NULL, NULL, &v, sizeof v);
}

/* Once per process, by the first thread to need it; others fall back to
 * the default arenas meanwhile instead of waiting (a signal handler may
 * allocate in the middle of the set-up). */
static int cold_setup(void) {
  int expect = 0;
  if (!__atomic_compare_exchange_n(&cold_state, &expect, 1, 0,
                                   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    return expect == 2;
  int state = 3;
  if (reserve_range() == 0) {
    extent_hooks_t *hp = &cold_hooks;
    unsigned ind;
    size_t sz = sizeof ind;
    if (mphc_mallctl("arenas.create", &ind, &sz, &hp, sizeof hp) == 0) {
      set_arena_ssize(ind, "arena.0.dirty_decay_ms", hc_opt.cold_decay_ms);
      set_arena_ssize(ind, "arena.0.muzzy_decay_ms", 0);
      cold_ind = ind;
      state = 2;
    }
  }
  __atomic_store_n(&cold_state, state, __ATOMIC_RELEASE);
  return state == 2;
}

static int lg_align_flag(size_t align) {
  return align > HC_MIN_ALIGN ? MALLOCX_LG_ALIGN(__builtin_ctzl(align)) : 0;
}

/* ---- cold blocks ----------------------------------------------------------- */

void *hc_cold_alloc(size_t n, size_t align) {
  int st = __atomic_load_n(&cold_state, __ATOMIC_ACQUIRE);
  if (HC_UNLIKELY(st != 2) && (st != 0 || !cold_setup()))
    return NULL;
  int flags = MALLOCX_ARENA(cold_ind) | MALLOCX_TCACHE_NONE | lg_align_flag(align);
  void *p = mphc_mallocx(n ? n : 1, flags);
  if (p) {
    __atomic_fetch_add(&activity, 1, __ATOMIC_RELAXED);
    hc_idle_start(hc_cold_activity, hc_cold_idle_now);
  }
  return p;
}

void hc_cold_free(void *p, size_t n, size_t align) {
  int flags = MALLOCX_TCACHE_NONE | lg_align_flag(align);
  if (n)
    mphc_sdallocx(p, n, flags);
  else
    mphc_dallocx(p, flags);
  __atomic_fetch_add(&activity, 1, __ATOMIC_RELAXED);
}

/* realloc keeps a cold block cold; realloc(p, 0) frees, as glibc's does;
 * on failure p stays as it was and errno is ENOMEM, as realloc's. */
void *hc_cold_realloc(void *p, size_t n) {
  if (n == 0) {
    hc_cold_free(p, 0, 0);
    return NULL;
  }
  __atomic_fetch_add(&activity, 1, __ATOMIC_RELAXED);
  void *q = mphc_rallocx(p, n, MALLOCX_ARENA(cold_ind) | MALLOCX_TCACHE_NONE);
  if (!q)
    errno = ENOMEM;
  return q;
}

int hc_cold_index(void) {
  return __atomic_load_n(&cold_state, __ATOMIC_ACQUIRE) == 2 ? (int)cold_ind : -1;
}

size_t hc_cold_used(void) {
  return __atomic_load_n(&cold_next, __ATOMIC_RELAXED) - hc_cold_lo;
}

unsigned long hc_cold_activity(void) {
  return __atomic_load_n(&activity, __ATOMIC_RELAXED);
}

void hc_cold_idle_now(void) {
  int ind = hc_cold_index();
  if (ind < 0)
    return;
  size_t mib[3], miblen = 3;
  if (mphc_mallctlnametomib("arena.0.purge", mib, &miblen) == 0) {
    mib[1] = (size_t)ind;
    mphc_mallctlbymib(mib, miblen, NULL, NULL, NULL, 0);
  }
  size_t used = (hc_cold_used() + PAGE - 1) & ~(PAGE - 1);
  if (hc_opt.advise && used)
    madvise((void *)hc_cold_lo, used, MADV_COLD);
}

HC_EXPORT int memprof_hotcold_is_cold(const void *p) { return hc_is_cold(p); }
HC_EXPORT int memprof_hotcold_cold_arena(void) { return hc_cold_index(); }
HC_EXPORT void memprof_hotcold_idle(void) { hc_cold_idle_now(); }
HC_EXPORT int memprof_hotcold_mallctl(const char *name, void *oldp,
                                      size_t *oldlenp, void *newp,
                                      size_t newlen) {
  return mphc_mallctl(name, oldp, oldlenp, newp, newlen);
}
