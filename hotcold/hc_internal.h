/* hc_internal.h - what the files of libmemprof-hotcold share.
 *
 * The library is the program's allocator: every block, hinted or not, is
 * served by one private copy of jemalloc, so any free/delete form can
 * release any block (docs/hotcold.md, "Why the library is the whole
 * allocator").  That copy's public functions are renamed mphc_* at build
 * time (private_jemalloc.cmake); the library's own malloc, free and
 * operator new/delete call them directly.
 *
 * Rules: no file calls the public malloc family (the library defines it);
 * nothing is exported but the allocation API and memprof_hotcold_*
 * (HC_EXPORT; everything else is hidden by -fvisibility=hidden). */
#ifndef MEMPROF_HC_INTERNAL_H
#define MEMPROF_HC_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

/* Only for the MALLOCX_* flag encodings and extent_hooks_t: the functions
 * it declares are not the ones the library calls. */
#include <jemalloc/jemalloc.h>

#define HC_EXPORT __attribute__((visibility("default")))
#if defined(__GNUC__) && !defined(__clang__)
#define HC_ALIAS(target) __attribute__((alias(#target), copy(target)))
#else
#define HC_ALIAS(target) __attribute__((alias(#target)))
#endif
#define HC_LIKELY(x) __builtin_expect(!!(x), 1)
#define HC_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* __STDCPP_DEFAULT_NEW_ALIGNMENT__ and malloc's alignment on x86-64. */
#define HC_MIN_ALIGN 16
/* Hints below this are cold (clang's default cold hint is 1, notcold 128,
 * ambiguous 222, hot 254); the same split as tcmalloc's. */
#define HC_COLD_LIMIT 128

/* ---- the private jemalloc (renamed by private_jemalloc.cmake) ---------- */
void *mphc_malloc(size_t n);
void *mphc_calloc(size_t k, size_t n);
void *mphc_realloc(void *p, size_t n);
void mphc_free(void *p);
int mphc_posix_memalign(void **out, size_t align, size_t n);
void *mphc_aligned_alloc(size_t align, size_t n);
void *mphc_memalign(size_t align, size_t n);
void *mphc_valloc(size_t n);
size_t mphc_malloc_usable_size(void *p);
void *mphc_mallocx(size_t n, int flags);
void *mphc_rallocx(void *p, size_t n, int flags);
size_t mphc_sallocx(const void *p, int flags);
void mphc_dallocx(void *p, int flags);
void mphc_sdallocx(void *p, size_t n, int flags);
size_t mphc_nallocx(size_t n, int flags);
int mphc_mallctl(const char *name, void *oldp, size_t *oldlenp, void *newp,
                 size_t newlen);
int mphc_mallctlnametomib(const char *name, size_t *mib, size_t *miblen);
int mphc_mallctlbymib(const size_t *mib, size_t miblen, void *oldp,
                      size_t *oldlenp, void *newp, size_t newlen);

/* ---- options (hc_options.c) --------------------------------------------- */
typedef struct hc_options {
  int cold_arena;      /* cold hints go to the cold arena */
  int cold_decay_ms;   /* the cold arena's dirty_decay_ms */
  int idle_ms;         /* idle period; 0: no idle thread */
  int advise;          /* MADV_COLD the cold arena when idle */
  int stats;           /* statistics at exit */
  int cold_reserve_mb; /* address space reserved for the cold arena */
  int site_lifetimes;  /* with site_file: lifetimes per call site */
  int sites;           /* site_file is set: count per call site */
  char stats_path[1024];
  char site_file[1024];
} hc_options;
extern hc_options hc_opt;
/* Read MEMPROF_HOTCOLD_OPTIONS once; cheap after the first call. */
void hc_options_init(void);

/* ---- the cold arena (hc_cold.c) ----------------------------------------- */
/* The reserved address range every cold block lies in; empty until the
 * cold arena is first needed. */
extern uintptr_t hc_cold_lo;
extern size_t hc_cold_len;
static inline int hc_is_cold(const void *p) {
  return (uintptr_t)p - __atomic_load_n(&hc_cold_lo, __ATOMIC_RELAXED) <
         __atomic_load_n(&hc_cold_len, __ATOMIC_RELAXED);
}
/* A block from the cold arena (align a power of two); NULL when the arena
 * is unavailable or out of memory: the caller falls back to the default
 * arenas. */
void *hc_cold_alloc(size_t n, size_t align);
/* Release a cold block straight to its arena, never through a thread
 * cache (which would hand it to the next hot allocation of its size);
 * n is the size or 0 when unknown. */
void hc_cold_free(void *p, size_t n, size_t align);
void *hc_cold_realloc(void *p, size_t n);
/* The arena's index, -1 if it does not exist (yet). */
int hc_cold_index(void);
/* Bytes of the reserved range handed to the arena so far. */
size_t hc_cold_used(void);
/* Cold allocations and frees so far: the idle thread's activity clock. */
unsigned long hc_cold_activity(void);
/* Release the arena's unused pages now; advise the rest MADV_COLD if
 * the `advise` option is on. */
void hc_cold_idle_now(void);

/* ---- the idle thread (hc_idle.c) ---------------------------------------- */
/* Start the thread once (no-op when idle_ms is 0 or it runs already): it
 * watches `activity` (the arena's clock of cold allocations and frees) and
 * calls `idle` once per idle spell. */
void hc_idle_start(unsigned long (*activity)(void), void (*idle)(void));
/* How many times the thread found the arena idle and acted. */
unsigned long hc_idle_rounds(void);

/* ---- statistics (hc_stats.c) -------------------------------------------- */
void hc_count_hint(unsigned hint, size_t n, int cold);
void hc_count_plain(size_t n);
/* Count an unhinted allocation of n bytes that returned p (not if NULL);
 * returns p. */
static inline void *hc_note_plain(void *p, size_t n) {
  if (HC_UNLIKELY(hc_opt.stats) && p)
    hc_count_plain(n);
  return p;
}

/* ---- per call site (hc_sites.c, hc_site_file.c) ------------------------- */
/* One hinted call site: the return address of its operator new call and
 * the hint it passed; what the cold arena and the other arenas served it;
 * with site_lifetimes, its blocks' lifetimes (freed, or live at exit). */
typedef struct hc_site {
  uintptr_t key; /* ra << 8 | hint; 0: free slot */
  unsigned long cold_allocs, cold_bytes, other_allocs, other_bytes;
  unsigned long freed, live, lt_total_ns, lt_max_ns;
  unsigned long lt_min_inv; /* ~ the shortest lifetime (0: none yet) */
} hc_site;
/* Count a hinted allocation of n bytes (block p, from the cold arena or
 * not) made by the call returning to ra. */
void hc_site_count(const void *ra, unsigned hint, void *p, size_t n, int cold);
/* With site_lifetimes, before the block p is freed or realloc'd: take
 * its record out (NULL when p is no hinted block); then put it back at
 * the block's new address (it keeps its birth), or at NULL: freed. */
struct hc_live *hc_site_take(void *p);
void hc_site_put(struct hc_live *n, void *q);
static inline void hc_site_forget(void *p) { hc_site_put(hc_site_take(p), NULL); }
static inline void hc_note_free(void *p) {
  if (HC_UNLIKELY(hc_opt.site_lifetimes) && p)
    hc_site_forget(p);
}
/* The table for the file at exit: fold the blocks still live in (as
 * freed now), return the slots (*n of them) and the allocations no slot
 * was left for. */
hc_site *hc_sites_final(size_t *n, unsigned long *dropped_allocs,
                        unsigned long *dropped_bytes);

/* ---- small helpers (hc_options.c) --------------------------------------- */
/* write(2) of a whole buffer, retrying on EINTR; -1 on failure. */
int hc_write_all(int fd, const char *buf, size_t len);
/* Decimal text of v at buf (room for 21 bytes); returns its length. */
size_t hc_utoa(char *buf, unsigned long long v);

#endif
