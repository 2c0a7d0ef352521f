/* rt_roots_priv.h - what the roots census's files share (roots=1,
 * docs/roots-format.md): the live heap as a table sorted by address, the
 * roots with the blocks each points at directly, the marking passes
 * (rt_roots_mark.c), the roots found in the modules' data
 * (rt_roots_modules.c) and in the threads (rt_roots_threads.c).  The
 * census itself, the named roots and the file are rt_roots.c's.
 *
 * All memory comes from rt_ialloc (the runtime's own, never the program's
 * heap) and is given back when the census ends. */
#ifndef MEMPROF_RT_ROOTS_PRIV_H
#define MEMPROF_RT_ROOTS_PRIV_H

#include "runtime/base/rt_internal.h"

/* A root's kind, as the file says it (docs/roots-format.md, section 5). */
enum { RR_GLOBAL = 1, RR_DATA = 2, RR_THREAD = 3, RR_NAMED = 4 };
/* A block's label while marking: 0 reached by no root yet, r+1 reached
 * by root r only, RR_SHARED by several. */
#define RR_SHARED 0xFFFFFFFFu
/* rr_blk.flags */
#define RR_TARGET 1u   /* a named root points into it: other roots stop here */
#define RR_INDIRECT 2u /* unreached, and another unreached block points to it */
/* rr_root.flags (the file's root Flags) */
#define RR_REACHED_PARTIAL 1u

typedef struct rr_blk {
  uintptr_t p;
  uint64_t size;
  uint32_t ctx;   /* the raw profile's stack id; 0: none recorded */
  uint32_t label;
  uint32_t seen;  /* the reached pass's epoch */
  uint32_t flags;
} rr_blk;

typedef struct rr_root {
  uint32_t kind, flags;
  uint32_t module; /* 1-based index into the census's modules; 0 none */
  uint64_t offset; /* from the module's base; a thread's id */
  uint64_t size;   /* bytes the root covers */
  uint64_t name;   /* offset into the census's string pool; 0: none */
  uint64_t first, n_targets; /* its direct targets in the census's list */
  uint64_t reached_bytes, reached_blocks, retained_bytes, retained_blocks;
} rr_root;

/* A growable array of the runtime's own memory. */
typedef struct rr_vec {
  void *p;
  size_t len, cap; /* in elements */
  int failed;
} rr_vec;
RT_HIDDEN void *rr_push(rr_vec *v, size_t elem);
RT_HIDDEN void rr_vec_free(rr_vec *v, size_t elem);

/* The block index: the table is sorted by address, and an open-addressing
 * hash of 64 KiB chunks gives the range of table entries that touch each
 * chunk, so a lookup is a probe and a binary search over a few entries
 * (over the whole table, the search missed the cache at every step).
 * Blocks of RR_LARGE bytes or more are not put in the chunks (a huge block
 * would fill the hash) but in a short list of their own. */
#define RR_CHUNK_SHIFT 16
#define RR_LARGE (1u << 20)
typedef struct rr_chunk {
  uint64_t key; /* chunk number + 1; 0: empty slot */
  uint32_t lo, hi; /* the table entries that touch it: [lo, hi) */
} rr_chunk;

typedef struct rr_census {
  rr_vec blocks; /* rr_blk, holding blk */
  rr_blk *blk;   /* sorted by address */
  uint64_t n;
  uintptr_t lo, hi; /* the lowest block start, the highest block end */
  uint64_t heap_bytes;
  rr_vec roots;   /* rr_root */
  rr_vec targets; /* uint32_t block indices */
  rr_vec strs;    /* char: names, NUL-terminated; offset 0 is "" */
  rr_vec modules; /* uint64_t offsets of module names into strs */
  uint64_t scanned; /* bytes of root memory scanned */
  int failed;
  rr_chunk *chunks; /* the block index (rr_find) */
  uint64_t chunk_mask;
  int chunk_shift;
  size_t chunks_bytes;
  uint32_t *large; /* table entries of RR_LARGE bytes or more */
  uint64_t n_large;
  uint32_t *band_of; /* per block: its set of roots (rt_roots_bands.c); NULL: none */
  rr_vec band_nodes; /* the sets' trie */
  uint64_t band_nodes_max;
} rr_census;

static inline int64_t rr_search(const rr_blk *blk, uint64_t a, uint64_t b, uintptr_t v) {
  if (a >= b || blk[a].p > v)
    return -1;
  while (b - a > 1) { /* the last start <= v is in [a, b) */
    uint64_t m = (a + b) / 2;
    if (blk[m].p <= v)
      a = m;
    else
      b = m;
  }
  const rr_blk *k = &blk[a];
  return v - k->p < k->size || v == k->p ? (int64_t)a : -1;
}

/* The block containing address v (a zero-size block: v == its start),
 * or -1. */
static inline int64_t rr_find(const rr_census *c, uintptr_t v) {
  if (v < c->lo || v >= c->hi)
    return -1;
  uint64_t key = (v >> RR_CHUNK_SHIFT) + 1;
  for (uint64_t h = (key * 0x9E3779B97F4A7C15ull) >> c->chunk_shift;; h = (h + 1) & c->chunk_mask) {
    const rr_chunk *k = &c->chunks[h];
    if (k->key == key) {
      int64_t j = rr_search(c->blk, k->lo, k->hi, v);
      if (j >= 0)
        return j;
      break;
    }
    if (!k->key)
      break;
  }
  for (uint64_t i = 0; i < c->n_large; i++) { /* few: a scan */
    const rr_blk *k = &c->blk[c->large[i]];
    if (v - k->p < k->size)
      return c->large[i];
  }
  return -1;
}

/* ---- building the census (rt_roots.c) ---- */
RT_HIDDEN uint64_t rr_str(rr_census *c, const char *s, size_t n);
/* Opens a root; rr_scan adds the blocks its words point to; rr_root_end
 * drops it again if it points to none. */
RT_HIDDEN void rr_root_begin(rr_census *c, uint32_t kind, uint32_t module, uint64_t offset,
                             uint64_t size, uint64_t name);
RT_HIDDEN void rr_scan(rr_census *c, const void *lo, const void *hi);
RT_HIDDEN void rr_target(rr_census *c, int64_t blk);
RT_HIDDEN void rr_root_end(rr_census *c);

/* ---- the live heap and marking (rt_roots_mark.c) ---- */
/* Fills c->blk from the heap's walk (the MIB locks held) and indexes it;
 * rr_blocks_free gives the table and index back. */
RT_HIDDEN int rr_blocks_collect(rr_census *c);
RT_HIDDEN void rr_blocks_free(rr_census *c);
/* Labels every block, computes each root's reached and retained bytes
 * and blocks, and marks the unreached blocks that others point to. */
RT_HIDDEN int rr_mark(rr_census *c);
/* Sorts n elements of elem bytes (a multiple of 8) by their first u64. */
RT_HIDDEN void rr_sort(void *base, uint64_t n, size_t elem);

/* ---- the bands: sets of roots sharing blocks (rt_roots_bands.c) ---- */
/* After labelling: a set (empty) for each shared block. */
RT_HIDDEN void rr_bands_begin(rr_census *c);
/* Root `root`'s reached pass reaches shared block blk: it joins the
 * block's set.  The passes run in increasing root order. */
RT_HIDDEN void rr_bands_add(rr_census *c, uint64_t blk, uint32_t root);
RT_HIDDEN void rr_bands_free(rr_census *c);
/* A set of two roots or more and its shared blocks; a census lists at
 * most RR_BANDS_MAX of them (roots_bands' range in rt_flags.inc). */
#define RR_BANDS_MAX 64
typedef struct rr_band {
  uint32_t node;
  uint64_t bytes, blocks;
} rr_band;
/* The (at most max) largest sets of two roots or more by bytes (then
 * blocks), largest first, into top; returns how many. */
RT_HIDDEN uint32_t rr_bands_top(const rr_census *c, rr_band *top, uint32_t max);
/* A set's roots, increasing, into out (room for every root of the
 * census); returns how many. */
RT_HIDDEN uint32_t rr_band_roots(const rr_census *c, uint32_t node, uint32_t *out);

/* ---- the modules' data (rt_roots_modules.c) ---- */
/* The loaded modules' writable segments and their data symbols, listed
 * before the heap is locked (the loader's lock is taken). */
typedef struct rr_modules rr_modules;
RT_HIDDEN rr_modules *rr_modules_list(void);
/* One root per global variable (or per word outside any) that points
 * into the heap; the held blocks (the ended threads' DTVs) are added to
 * the dynamic linker's _rtld_global, whose stack cache keeps them. */
RT_HIDDEN void rr_modules_scan(rr_census *c, rr_modules *m, const int64_t *held, int n_held);
RT_HIDDEN void rr_modules_free(rr_modules *m);

/* ---- stopping the other threads (rt_roots_stop.c) ---- */
/* What a stopped thread's signal handler saved of the code it stopped. */
#define RR_NREGS 15
typedef struct rr_stopped {
  int tid;
  uintptr_t sp, tp; /* stack and thread pointers */
  uintptr_t regs[RR_NREGS]; /* rax rbx rcx rdx rsi rdi rbp r8..r15 */
} rr_stopped;
typedef struct rr_stop_stats {
  int asked, stopped, blocked, unanswered, gone;
  int unknown; /* of those asked, threads the runtime did not start */
  uint64_t stop_us;  /* from the first request to the last answer */
  uint64_t since_ns; /* when they were stopped */
} rr_stop_stats;
/* Installs the stop signal's handler (roots_stop_threads), at start-up. */
RT_HIDDEN void rr_stop_init(void);
/* Stops every registered thread but the caller that answers within
 * roots_stop_wait_ms; takes no runtime lock. */
RT_HIDDEN void rr_stop_world(rr_stop_stats *st);
/* What the thread of `slot` (id tid) saved, if this census stopped it. */
RT_HIDDEN const rr_stopped *rr_stopped_thread(int slot, int tid);
/* Threads the runtime did not start that a census stops, at most: */
#define RR_UNKNOWN_MAX 256
/* What the stopped threads the runtime does not know saved (at most max
 * of them, into out); returns how many. */
RT_HIDDEN int rr_stopped_unknown(const rr_stopped **out, int max);

/* ---- the process's threads in /proc (rt_roots_tasks.c) ---- */
/* The ids of the process's threads (at most max), or -1. */
RT_HIDDEN int rr_tasks_list(int *tids, int max);
/* 1 while thread tid lives (not a zombie), with *blocks whether it blocks
 * signal sig; 0 once it has ended. */
RT_HIDDEN int rr_task_status(int tid, int sig, int *blocks);
/* The bounds of the mapping that holds address a; 0 if none does. */
RT_HIDDEN int rr_mapping_of(uintptr_t a, uintptr_t *lo, uintptr_t *hi);
/* Lets the stopped threads run on; reports (verbosity=1, or a thread
 * that did not answer). */
RT_HIDDEN void rr_release_world(rr_stop_stats *st);
RT_HIDDEN void rr_stop_fork_child(void);

/* ---- the threads (rt_roots_threads.c) ---- */
/* The calling thread (its registers in regs[0..nregs), its stack from sp
 * up), then the other registered threads: the registers and the stack from
 * the stack pointer up of those the census stopped, the whole stack of the
 * others; and each one's TLS. */
RT_HIDDEN void rr_threads_scan(rr_census *c, const uintptr_t *regs, int nregs, uintptr_t sp);
/* Looked up before the heap is locked (dlsym). */
RT_HIDDEN void rr_threads_prepare(void);
/* The blocks (at most max) that the control blocks of threads that ended
 * point to as their DTV: glibc keeps those control blocks, and the DTVs,
 * in its cache of stacks. */
RT_HIDDEN int rr_exited_dtvs(const rr_census *c, int64_t *out, int max);

#endif
