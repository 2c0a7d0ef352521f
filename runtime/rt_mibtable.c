/* rt_mibtable.c - the MIB table: one aggregated MemInfoBlock (+ histogram)
 * per stack id, built from a block at free or at dump and merged with
 * mp_mib_init / mp_mib_merge (include/mib_merge.h).
 *
 * Stack ids are dense (sequential from 1), so the table is a NORESERVE
 * array of entries indexed by id (an array of pointers to separately
 * allocated entries cost a second cache miss per free and more pages),
 * locked by stripes of ids: frees of
 * different contexts rarely contend.  A dump takes every stripe, which also
 * freezes the live flags of all blocks (they are only flipped here). */
#include "mib_merge.h"
#include "rt_core.h"
#include "rt_lock.h"

#define MAX_IDS (1u << 26)
#define NSTRIPES 64

int rt_recording;

static rt_mib_entry *table;
static rt_mutex stripes[NSTRIPES];
static rt_mutex init_mu = RT_MUTEX_INIT;

static int table_ready(void) {
  if (MP_LIKELY(__atomic_load_n(&table, __ATOMIC_ACQUIRE) != NULL))
    return 1;
  rt_mutex_lock(&init_mu);
  if (!table) {
    rt_mib_entry *t = rt_mmap_anon((size_t)MAX_IDS * sizeof(*t), 1);
    if (t)
      rt_huge_tail(t, (size_t)MAX_IDS * sizeof(*t));
    __atomic_store_n(&table, t, __ATOMIC_RELEASE);
  }
  rt_mutex_unlock(&init_mu);
  return table != NULL;
}

/* Called by init (single-threaded, before any handler can run): a lazy
 * first use could be interrupted by a signal whose handler frees, and
 * would then wait for init_mu held by its own thread. */
void rt_mib_init(void) { table_ready(); }

/* Histograms of small blocks are built on the stack and only copied into
 * table memory when the entry has to keep them: the common free path in
 * histogram mode then takes no allocator lock. */
#define SCRATCH_ENTRIES 256

typedef struct built {
  mp_mib mib;
  uint64_t *hist;
  uint32_t hist_len;
  int owned; /* hist is rt_ialloc'd (else it is the caller's scratch) */
} built;

static inline __attribute__((always_inline)) void
build(const rt_block *b, uint32_t dealloc_ts, uint32_t dealloc_cpu,
                  uint64_t *scratch, built *out) {
  int hm = rt_hist_mode();
  out->hist = NULL;
  out->hist_len = 0;
  out->owned = 0;
  if (hm && b->size) {
    out->hist_len = (uint32_t)((b->size + 7) / 8);
    if (out->hist_len <= SCRATCH_ENTRIES) {
      out->hist = scratch;
    } else {
      out->hist = rt_ialloc((size_t)out->hist_len * 8);
      out->owned = 1;
      if (!out->hist)
        out->hist_len = 0;
    }
  }
  uint64_t count = rt_shadow_count(b->p, b->size, hm, out->hist);
  mp_mib_init(&out->mib, count, (uint32_t)b->size, b->alloc_ts, dealloc_ts,
               b->alloc_cpu, dealloc_cpu);
  out->mib.AccessHistogramSize = out->hist_len;
  out->mib.AccessHistogram = (uint64_t)(uintptr_t)out->hist;
}

static void drop(built *n) {
  if (n->hist && n->owned)
    rt_ifree(n->hist, (size_t)n->hist_len * 8);
}

/* Make n's histogram table memory; 0 if that fails (n is then dropped). */
static int own(built *n) {
  if (!n->hist || n->owned)
    return 1;
  uint64_t *h = rt_ialloc((size_t)n->hist_len * 8);
  if (!h)
    return 0;
  rt_memcpy(h, n->hist, (size_t)n->hist_len * 8);
  n->hist = h;
  n->owned = 1;
  n->mib.AccessHistogram = (uint64_t)(uintptr_t)h;
  return 1;
}

/* Merge n into the entry of `id` (its stripe is held). */
static inline __attribute__((always_inline)) void merge_locked(uint32_t id,
                                                              built *n) {
  if (id >= MAX_IDS) {
    drop(n);
    return;
  }
  rt_mib_entry *e = &table[id];
  /* Touch the entry with a write first: a read of a fresh page maps the
   * zero page and the store that follows faults a second time. */
  __asm__ volatile("orl $0, %0" : "+m"(e->present));
  if (!e->present) {
    if (!own(n)) {
      n->hist = NULL;
      n->hist_len = 0;
      n->mib.AccessHistogramSize = 0;
      n->mib.AccessHistogram = 0;
    }
    e->mib = n->mib;
    e->hist = n->hist;
    e->present = 1;
    return;
  }
  uint32_t elen = e->mib.AccessHistogramSize;
  mp_mib_merge(&e->mib, &n->mib);
  if (n->hist_len > elen && own(n)) { /* keep the longer, add the shorter */
    mp_hist_add(n->hist, n->hist_len, e->hist, elen);
    if (e->hist)
      rt_ifree(e->hist, (size_t)elen * 8);
    e->hist = n->hist;
    elen = n->hist_len;
  } else {
    mp_hist_add(e->hist, elen, n->hist, n->hist_len);
    drop(n);
  }
  e->mib.AccessHistogramSize = elen;
  e->mib.AccessHistogram = (uint64_t)(uintptr_t)e->hist;
}

/* A free from a signal handler that interrupted this thread while it held
 * (or was taking) a stripe or another runtime lock must not wait for a
 * stripe (rt_core.h, rt_locks_held): its MIB is built at once (the block
 * is reused right after) and parked here, and the next free of this thread
 * that holds nothing else merges it (the interrupted free, when that held
 * a stripe).  Handlers run to completion before the code they interrupt
 * resumes, so they only ever append, and the owner empties the list with
 * one compare-and-swap per round. */
#define PARKED_MAX 16
typedef struct parked_mib {
  uint32_t id;
  built n;
} parked_mib;
typedef struct mib_tls {
  uint32_t held; /* stripe + 1 this thread holds or is taking, 0 = none */
  uint32_t n;
  parked_mib e[PARKED_MAX];
} mib_tls;
static __thread mib_tls mt __attribute__((tls_model("initial-exec")));

static inline void set_held(uint32_t v) {
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  __atomic_store_n(&mt.held, v, __ATOMIC_RELAXED);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static inline __attribute__((always_inline)) void merge_or_drop(uint32_t id,
                                                               built *n) {
  if (__atomic_load_n(&rt_recording, __ATOMIC_ACQUIRE))
    merge_locked(id, n);
  else
    drop(n);
}

static int park(uint32_t id, built *n, uint32_t *live) {
  int was_live = rt_claim_live(live);
  uint32_t i = __atomic_load_n(&mt.n, __ATOMIC_RELAXED);
  if (!was_live || i >= PARKED_MAX || !own(n)) {
    drop(n);
    return was_live;
  }
  mt.e[i].id = id;
  mt.e[i].n = *n;
  __atomic_store_n(&mt.n, i + 1, __ATOMIC_RELEASE);
  rt_mib_parked = 1;
  return was_live;
}

/* Merge what handlers parked while this thread held a lock, each under
 * its own stripe.  Handlers that run meanwhile park behind (they find a
 * stripe held) and are merged by the next round. */
static void merge_parked(void) {
  uint32_t k, done = 0;
  for (;;) {
    k = __atomic_load_n(&mt.n, __ATOMIC_ACQUIRE);
    for (; done < k; done++) {
      uint32_t s = mt.e[done].id % NSTRIPES;
      set_held(s + 1);
      rt_mutex_lock(&stripes[s]);
      built n = mt.e[done].n;
      merge_or_drop(mt.e[done].id, &n);
      rt_mutex_unlock(&stripes[s]);
      set_held(0);
    }
    if (__atomic_compare_exchange_n(&mt.n, &k, 0, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
      break; /* else k now counts what was appended meanwhile */
  }
  rt_mib_parked = 0;
}

__thread int rt_mib_parked __attribute__((tls_model("initial-exec")));

/* The last runtime lock of this thread was released: merge what handlers
 * parked meanwhile, unless a stripe is still held (its release does). */
void rt_mib_merge_parked(void) {
  if (!__atomic_load_n(&mt.held, __ATOMIC_RELAXED))
    merge_parked();
}

/* A free that must not wait for a stripe: its thread holds a lock (it is
 * a signal handler that interrupted the runtime), see rt_locks_held. */
static inline int must_park(void) {
  return __atomic_load_n(&mt.held, __ATOMIC_RELAXED) || rt_locks_held;
}

/* The live flag of a block whose stripe this thread holds: no other free
 * of the block can run meanwhile (it needs the stripe), so no atomic. */
static inline int claim_live_locked(uint32_t *state) {
  uint32_t st = __atomic_load_n(state, __ATOMIC_RELAXED);
  if (!(st & RT_LIVE_BIT))
    return 0;
  __atomic_store_n(state, st & ~RT_LIVE_BIT, __ATOMIC_RELAXED);
  return 1;
}

/* Lock stripe s for this thread (see park: a handler never waits for it). */
static inline uint32_t stripe_enter(uint32_t s) {
  uint32_t outer = __atomic_load_n(&mt.held, __ATOMIC_RELAXED);
  set_held(s + 1);
  rt_mutex_lock(&stripes[s]);
  return outer;
}

static inline void stripe_leave(uint32_t s, uint32_t outer) {
  rt_mutex_unlock(&stripes[s]);
  set_held(outer); /* a handler restores the stripe of the code it interrupted */
  if (MP_UNLIKELY(!outer && __atomic_load_n(&mt.n, __ATOMIC_ACQUIRE)))
    merge_parked(); /* only the outermost free: the parked stripe is free now */
}

/* Under the block's stripe: its MIB into the entry, if it was still live. */
static int claim_and_merge(uint32_t id, built *n, uint32_t *live) {
  int was_live = claim_live_locked(live);
  if (was_live)
    merge_or_drop(id, n);
  else
    drop(n);
  return was_live;
}

/* A free that must not wait (must_park): merged at once if its stripe is
 * free (and not the one this thread's interrupted code holds or is taking:
 * that code may be half way through an entry), else parked. */
static int merge_or_park(uint32_t id, uint32_t s, built *n, uint32_t *live) {
  uint32_t outer = __atomic_load_n(&mt.held, __ATOMIC_RELAXED);
  if (outer == s + 1 || !rt_mutex_trylock(&stripes[s]))
    return park(id, n, live);
  set_held(s + 1);
  int was_live = claim_and_merge(id, n, live);
  rt_mutex_unlock(&stripes[s]);
  set_held(outer);
  return was_live;
}

/* Histogram mode, ids past the table and frees from a handler that
 * interrupted a lock holder: the MIB is built in full first. */
static __attribute__((noinline)) int on_free_built(const rt_block *b,
                                                   uint32_t *live) {
  built n;
  uint64_t scratch[SCRATCH_ENTRIES];
  build(b, rt_now_ms(), rt_cpu(), scratch, &n);
  uint32_t s = b->stack_id % NSTRIPES;
  if (MP_UNLIKELY(must_park()))
    return merge_or_park(b->stack_id, s, &n, live);
  uint32_t outer = stripe_enter(s);
  int was_live = claim_and_merge(b->stack_id, &n, live);
  stripe_leave(s, outer);
  return was_live;
}

/* One block into its entry, the common case: no histogram, and the MIB of
 * the block never leaves registers. */
static inline __attribute__((always_inline)) void
add_block(rt_mib_entry *e, uint64_t count, const rt_block *b, uint32_t ts,
          uint32_t cpu) {
  mp_mib n;
  mp_mib_init(&n, count, (uint32_t)b->size, b->alloc_ts, ts, b->alloc_cpu, cpu);
  __asm__ volatile("orl $0, %0" : "+m"(e->present)); /* see merge_locked */
  if (e->present) {
    mp_mib_merge(&e->mib, &n);
    return;
  }
  e->mib = n;
  e->hist = NULL;
  e->present = 1;
}

int rt_mib_on_free(const rt_block *b, uint32_t *live) {
  if (!table_ready())
    return rt_claim_live(live);
  uint32_t id = b->stack_id, s = id % NSTRIPES;
  if (MP_UNLIKELY(rt_hist_mode() || id >= MAX_IDS ||
                  must_park()))
    return on_free_built(b, live);
  /* The entry is likely cold: fetch it while the block is summed. */
  const char *ep = (const char *)&table[id];
  __builtin_prefetch(ep, 1);
  __builtin_prefetch(ep + 64, 1);
  __builtin_prefetch(ep + sizeof(rt_mib_entry) - 1, 1);
  uint64_t count = rt_shadow_sum(b->p, b->size);
  uint32_t ts = rt_now_ms(), cpu = rt_cpu();
  uint32_t outer = stripe_enter(s);
  int was_live = claim_live_locked(live);
  if (was_live && __atomic_load_n(&rt_recording, __ATOMIC_ACQUIRE))
    add_block(&table[id], count, b, ts, cpu);
  stripe_leave(s, outer);
  return was_live;
}

typedef struct live_ctx {
  uint32_t ts, cpu;
} live_ctx;

void rt_mib_add_live(const rt_block *b, void *ctx) {
  live_ctx *lc = ctx;
  built n;
  uint64_t scratch[SCRATCH_ENTRIES];
  build(b, lc->ts, lc->cpu, scratch, &n);
  merge_locked(b->stack_id, &n);
}

/* Counted as a held lock, so that a handler on the dumping thread parks
 * its frees instead of waiting for the stripes this thread holds. */
void rt_mib_lock_all(void) {
  table_ready();
  rt_locks_enter();
  for (int i = 0; i < NSTRIPES; i++)
    rt_mutex_lock(&stripes[i]);
}

int rt_mib_trylock_all(void) {
  table_ready();
  rt_locks_enter();
  for (int i = 0; i < NSTRIPES; i++)
    if (!rt_mutex_trylock(&stripes[i])) {
      while (i--)
        rt_mutex_unlock(&stripes[i]);
      rt_locks_leave();
      return 0;
    }
  return 1;
}

void rt_mib_unlock_all(void) {
  for (int i = NSTRIPES - 1; i >= 0; i--)
    rt_mutex_unlock(&stripes[i]);
  rt_locks_leave();
}

/* The child's only thread is the one that forked: it held the stripes
 * (fork_prepare), now reset, and nothing else. */
void rt_mib_reset_locks(void) {
  rt_locks_held = 0;
  for (int i = 0; i < NSTRIPES; i++)
    rt_mutex_reset(&stripes[i]);
  rt_mutex_reset(&init_mu);
}

void rt_mib_for_each(void (*cb)(uint32_t, const rt_mib_entry *, void *),
                     void *ctx) {
  if (!table)
    return;
  uint32_t max = rt_stack_max_id();
  for (uint32_t id = 0; id <= max && id < MAX_IDS; id++)
    if (table[id].present)
      cb(id, &table[id], ctx);
}

void rt_mib_clear(void) {
  if (!table)
    return;
  uint32_t max = rt_stack_max_id();
  for (uint32_t id = 0; id <= max && id < MAX_IDS; id++) {
    rt_mib_entry *e = &table[id];
    if (!e->present)
      continue;
    if (e->hist)
      rt_ifree(e->hist, (size_t)e->mib.AccessHistogramSize * 8);
    e->hist = NULL;
    e->present = 0;
  }
}

/* The dump's live-block pass: "now" is taken once for all blocks. */
MP_HIDDEN void rt_mib_add_all_live(void) {
  live_ctx lc = {rt_now_ms(), rt_cpu()};
  rt_heap_for_each_live(rt_mib_add_live, &lc);
}
