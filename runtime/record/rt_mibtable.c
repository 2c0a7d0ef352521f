/* rt_mibtable.c - the MIB table: one aggregated MemInfoBlock (+ histogram)
 * per stack, built from a block at free or at dump and merged with
 * mpf_mib_init / mpf_mib_merge (include/internal/mib_merge.h).
 *
 * The entries are stored with the stack depot's nodes, and a block keeps
 * its stack's ref, which gives the entry's address without a load
 * (rt_stack_entry): a separate array indexed by stack id cost one more
 * cache miss at every free, while a block freed soon after its allocation
 * finds its entry still in cache (the depot prefetched it).  Entries are
 * locked by stripes of refs: frees of different contexts rarely contend.
 * A dump takes every stripe, which also freezes the live flags of all
 * blocks (they are only flipped here).
 *
 * With sampling (rt_sample.h) each recorded block also adds its weighted
 * statistics to the entry's estimates, which replace the summed fields
 * when the profile is written (see "estimates"). */
#include "include/internal/mib_merge.h"
#include "rt_mibtable.h"
#include "rt_sample.h"
#include "rt_shadow.h"
#include "rt_stack.h"
#include "runtime/base/rt_clock.h"
#include "runtime/base/rt_ialloc.h"
#include "runtime/base/rt_libc.h"
#include "runtime/base/rt_lock.h"
#include "runtime/base/rt_state.h"

#define NSTRIPES 64

/* Refs step by node sizes: hashed, so that they spread over all stripes. */
static inline uint32_t stripe_of(uint32_t ref) {
  return (ref * 0x9E3779B1u) >> 26;
}
_Static_assert(NSTRIPES == 1 << (32 - 26), "stripe_of gives NSTRIPES stripes");

int rt_recording;

static rt_mutex stripes[NSTRIPES];

/* ---- estimates ----------------------------------------------------------
 * A sampled context's totals: each recorded block of s bytes adds its
 * count, size, access count, lifetime and densities times its weight
 * 1 / (1 - exp(-s/R)), kept as doubles beside the entry (a permanent
 * block named by e->est, made at the entry's first sampled block and
 * reused after each dump) so that fractions of weights are not lost block
 * by block; the dump rounds them once into the MIB (est_finish).  Minima,
 * maxima, timestamps, cpus and the pairwise counters (overlaps, same cpu)
 * stay those of the recorded blocks. */
typedef struct est {
  double count, access, size, life, dens, ldens;
} est;

/* The estimates of e, zeroed: at the first block of a present entry.
 * Without memory for them the entry keeps its observed sums. */
static void est_start(rt_mib_entry *e) {
  if (RT_LIKELY(!rt_sample_interval))
    return;
  if (!e->est) {
    void *x = rt_ialloc_perm(sizeof(est));
    if (!x)
      return;
    e->est = rt_perm_ref(x);
  }
  *(est *)rt_perm_at(e->est) = (est){0};
}

static void est_add(rt_mib_entry *e, uint64_t count, uint32_t size,
                    uint32_t life) {
  if (RT_LIKELY(!rt_sample_interval) || !e->est)
    return;
  est *x = rt_perm_at(e->est);
  double w = rt_sample_weight(size);
  uint64_t dens = mpf_access_density(count, size);
  x->count += w;
  x->access += w * (double)count;
  x->size += w * (double)size;
  x->life += w * (double)life;
  x->dens += w * (double)dens;
  x->ldens += w * (double)mpf_lifetime_density(dens, life);
}

static inline uint64_t rounded(double v) { return (uint64_t)(v + 0.5); }

/* The estimates into e's MIB (the dump, stripes held; the table is
 * emptied after it).  A histogram, summed over the recorded blocks, is
 * scaled by the estimated count over the recorded one. */
static void est_finish(rt_mib_entry *e) {
  if (!e->present || !e->est)
    return;
  const est *x = rt_perm_at(e->est);
  mpf_mib *m = &e->mib;
  double scale = m->AllocCount ? x->count / m->AllocCount : 1;
  for (uint32_t i = 0; e->hist && i < m->AccessHistogramSize; i++)
    e->hist[i] = rounded((double)e->hist[i] * scale);
  uint64_t n = rounded(x->count);
  m->AllocCount = n > UINT32_MAX ? UINT32_MAX : n ? (uint32_t)n : 1;
  m->TotalAccessCount = rounded(x->access);
  m->TotalSize = rounded(x->size);
  m->TotalLifetime = rounded(x->life);
  m->TotalAccessDensity = rounded(x->dens);
  m->TotalLifetimeAccessDensity = rounded(x->ldens);
}

/* Histograms of small blocks are built on the stack and only copied into
 * table memory when the entry has to keep them: the common free path in
 * histogram mode then takes no allocator lock. */
#define SCRATCH_ENTRIES 256

typedef struct built {
  mpf_mib mib;
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
  mpf_mib_init(&out->mib, count, (uint32_t)b->size, b->alloc_ts, dealloc_ts,
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

/* Merge n into the entry of stack `ref` (its stripe is held). */
static inline __attribute__((always_inline)) void merge_locked(uint32_t ref,
                                                              built *n) {
  rt_mib_entry *e = rt_stack_entry(ref);
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
    est_start(e);
    est_add(e, n->mib.TotalAccessCount, n->mib.TotalSize, n->mib.TotalLifetime);
    return;
  }
  uint32_t elen = e->mib.AccessHistogramSize;
  mpf_mib_merge(&e->mib, &n->mib);
  est_add(e, n->mib.TotalAccessCount, n->mib.TotalSize, n->mib.TotalLifetime);
  if (n->hist_len > elen && own(n)) { /* keep the longer, add the shorter */
    mpf_hist_add(n->hist, n->hist_len, e->hist, elen);
    if (e->hist)
      rt_ifree(e->hist, (size_t)elen * 8);
    e->hist = n->hist;
    elen = n->hist_len;
  } else {
    mpf_hist_add(e->hist, elen, n->hist, n->hist_len);
    drop(n);
  }
  e->mib.AccessHistogramSize = elen;
  e->mib.AccessHistogram = (uint64_t)(uintptr_t)e->hist;
}

/* A free from a signal handler that interrupted this thread while it held
 * a stripe or another runtime lock must not wait for a stripe (rt_state.h,
 * rt_locks_held): its MIB is built at once (the block is reused right
 * after) and parked on one lock-free list, which the next free or lock
 * release that holds nothing merges (on any thread), as does a dump.  The
 * list has no size limit: a thread that holds a stripe while many
 * handlers run on it loses nothing.  Records are permanent memory named by
 * refs (never unmapped, so a stale read is harmless), recycled through a
 * second list; each head carries an ABA tag in its upper half. */
typedef struct parked_mib {
  uint32_t next; /* ref of the next record, 0 = end */
  uint32_t ref;  /* the block's stack */
  built n;
} parked_mib;

static uint64_t spare_head; /* recycled records, same form */

static inline uint64_t tagged(uint64_t old, uint32_t ref) {
  return ref | ((old >> 32) + 1) << 32;
}

static void push(uint64_t *head, parked_mib *p) {
  uint32_t self = rt_perm_ref(p);
  uint64_t old = __atomic_load_n(head, __ATOMIC_RELAXED);
  do
    __atomic_store_n(&p->next, (uint32_t)old, __ATOMIC_RELAXED);
  while (!__atomic_compare_exchange_n(head, &old, tagged(old, self), 1,
                                      __ATOMIC_RELEASE, __ATOMIC_RELAXED));
}

static parked_mib *pop(uint64_t *head) {
  uint64_t old = __atomic_load_n(head, __ATOMIC_ACQUIRE);
  while ((uint32_t)old) {
    parked_mib *p = rt_perm_at((uint32_t)old);
    uint32_t next = __atomic_load_n(&p->next, __ATOMIC_RELAXED);
    if (__atomic_compare_exchange_n(head, &old, tagged(old, next), 1,
                                    __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
      return p;
  }
  return NULL;
}

/* Detaches the whole list; its records are then the caller's alone. */
static parked_mib *take_all(uint64_t *head) {
  uint64_t old = __atomic_load_n(head, __ATOMIC_ACQUIRE);
  while ((uint32_t)old && !__atomic_compare_exchange_n(head, &old, tagged(old, 0), 1,
                                                       __ATOMIC_ACQUIRE,
                                                       __ATOMIC_ACQUIRE))
    ;
  return (uint32_t)old ? rt_perm_at((uint32_t)old) : NULL;
}

static inline parked_mib *next_of(const parked_mib *p) {
  return p->next ? rt_perm_at(p->next) : NULL;
}

static inline __attribute__((always_inline)) void merge_or_drop(uint32_t ref,
                                                               built *n) {
  if (__atomic_load_n(&rt_recording, __ATOMIC_ACQUIRE))
    merge_locked(ref, n);
  else
    drop(n);
}

static int park(uint32_t ref, built *n, uint32_t *live) {
  int was_live = rt_claim_live(live);
  parked_mib *p = NULL;
  if (was_live && own(n) && !(p = pop(&spare_head)))
    p = rt_ialloc_perm(sizeof(*p));
  if (!p) { /* not live, or out of memory */
    drop(n);
    return was_live;
  }
  p->ref = ref;
  p->n = *n;
  push(&rt_mib_parked, p);
  return was_live;
}

static __thread uint32_t held __attribute__((tls_model("initial-exec")));

/* stripe + 1 this thread holds (or is one atomic step from), 0 = none.
 * Ordered against the code around it as a handler of this thread sees it. */
static inline void set_held(uint32_t v) {
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  __atomic_store_n(&held, v, __ATOMIC_RELAXED);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
}

/* Waits for stripe s with `held` cleared, so that a handler which
 * interrupts the wait may take stripes itself instead of parking. */
static __attribute__((noinline)) void stripe_wait(uint32_t s, uint32_t outer) {
  do {
    set_held(outer);
    rt_mutex_wait_free(&stripes[s]);
    set_held(s + 1);
  } while (!rt_mutex_trylock_waited(&stripes[s]));
}

/* Lock stripe s for this thread (see park: a handler never waits for a
 * stripe its thread holds). */
static inline uint32_t stripe_enter(uint32_t s) {
  uint32_t outer = __atomic_load_n(&held, __ATOMIC_RELAXED);
  set_held(s + 1);
  if (RT_UNLIKELY(!rt_mutex_trylock(&stripes[s])))
    stripe_wait(s, outer);
  return outer;
}

static inline void stripe_exit(uint32_t s, uint32_t outer) {
  rt_mutex_unlock(&stripes[s]);
  set_held(outer); /* a handler restores the stripe of the code it interrupted */
}

/* How drain_parked settles each parked MIB. */
enum {
  TAKE_STRIPE,  /* merge it under its stripe: this thread holds nothing */
  STRIPES_HELD, /* merge it: this thread holds every stripe (a dump) */
  DISCARD       /* drop it: a fork child, where it is the parent's */
};

/* Settle what is parked now; what handlers park meanwhile waits for the
 * next call.  The records go back to the spare list. */
static void drain_parked(int how) {
  for (parked_mib *p = take_all(&rt_mib_parked), *next; p; p = next) {
    next = next_of(p);
    if (how == DISCARD) {
      drop(&p->n);
    } else if (how == STRIPES_HELD) {
      merge_or_drop(p->ref, &p->n);
    } else {
      uint32_t s = stripe_of(p->ref);
      uint32_t outer = stripe_enter(s);
      merge_or_drop(p->ref, &p->n);
      stripe_exit(s, outer);
    }
    push(&spare_head, p);
  }
}

static void merge_parked(void) { drain_parked(TAKE_STRIPE); }

static inline void stripe_leave(uint32_t s, uint32_t outer) {
  stripe_exit(s, outer);
  if (RT_UNLIKELY(!outer && (uint32_t)__atomic_load_n(&rt_mib_parked, __ATOMIC_RELAXED)))
    merge_parked();
}

/* The last runtime lock of this thread was released. */
void rt_mib_merge_parked(void) {
  if (!__atomic_load_n(&held, __ATOMIC_RELAXED))
    merge_parked();
}

/* A free that must not wait for a stripe: its thread holds a lock (it is
 * a signal handler that interrupted the runtime), see rt_locks_held. */
static inline int must_park(void) {
  return __atomic_load_n(&held, __ATOMIC_RELAXED) || rt_locks_held;
}

int rt_mib_thread_locked(void) { return must_park(); }

/* The live flag of a block whose stripe this thread holds: no other free
 * of the block can run meanwhile (it needs the stripe), so no atomic. */
static inline int claim_live_locked(uint32_t *state) {
  uint32_t st = __atomic_load_n(state, __ATOMIC_RELAXED);
  if (!(st & RT_LIVE_BIT))
    return 0;
  __atomic_store_n(state, st & ~RT_LIVE_BIT, __ATOMIC_RELAXED);
  return 1;
}

/* Under the block's stripe: its MIB into the entry, if it was still live. */
static int claim_and_merge(uint32_t ref, built *n, uint32_t *live) {
  int was_live = claim_live_locked(live);
  if (was_live)
    merge_or_drop(ref, n);
  else
    drop(n);
  return was_live;
}

/* A free that must not wait (must_park): merged at once if its stripe is
 * free (and not the one this thread's interrupted code holds or is about
 * to: that code may be half way through an entry), else parked. */
static int merge_or_park(uint32_t ref, uint32_t s, built *n, uint32_t *live) {
  uint32_t outer = __atomic_load_n(&held, __ATOMIC_RELAXED);
  if (outer == s + 1 || !rt_mutex_trylock(&stripes[s]))
    return park(ref, n, live);
  set_held(s + 1);
  int was_live = claim_and_merge(ref, n, live);
  stripe_exit(s, outer);
  return was_live;
}

/* Histogram mode and frees from a handler that interrupted a lock holder:
 * the MIB is built in full first. */
static __attribute__((noinline)) int on_free_built(const rt_block *b,
                                                   uint32_t *live) {
  built n;
  uint64_t scratch[SCRATCH_ENTRIES];
  build(b, rt_now_ms(), rt_cpu(), scratch, &n);
  uint32_t s = stripe_of(b->stack);
  if (RT_UNLIKELY(must_park()))
    return merge_or_park(b->stack, s, &n, live);
  uint32_t outer = stripe_enter(s);
  int was_live = claim_and_merge(b->stack, &n, live);
  stripe_leave(s, outer);
  return was_live;
}

/* One block into its entry, the common case: no histogram, and the MIB of
 * the block never leaves registers. */
static inline __attribute__((always_inline)) void
add_block(rt_mib_entry *e, uint64_t count, const rt_block *b, uint32_t ts,
          uint32_t cpu) {
  __asm__ volatile("orl $0, %0" : "+m"(e->present)); /* see merge_locked */
  if (RT_LIKELY(e->present)) {
    mpf_mib_add_block(&e->mib, count, (uint32_t)b->size, b->alloc_ts, ts, b->alloc_cpu,
                     cpu);
  } else {
    mpf_mib_init(&e->mib, count, (uint32_t)b->size, b->alloc_ts, ts, b->alloc_cpu, cpu);
    e->hist = NULL;
    e->present = 1;
    est_start(e);
  }
  est_add(e, count, (uint32_t)b->size, ts - b->alloc_ts);
}

int rt_mib_on_free(const rt_block *b, uint32_t *live, uint64_t stamp) {
  if (RT_UNLIKELY(rt_hist_mode() || must_park()))
    return on_free_built(b, live);
  uint32_t s = stripe_of(b->stack);
  rt_mib_entry *e = rt_stack_entry(b->stack);
  rt_prefetch_entry(e); /* cold if the block lived long: fetch it while the block is summed */
  uint64_t count = rt_shadow_sum(b->p, b->size);
  uint32_t ts = rt_stamp_ms(stamp), cpu = rt_cpu();
  uint32_t outer = stripe_enter(s);
  int was_live = claim_live_locked(live);
  if (was_live && __atomic_load_n(&rt_recording, __ATOMIC_ACQUIRE))
    add_block(e, count, b, ts, cpu);
  stripe_leave(s, outer);
  return was_live;
}

/* Outside the stripe lock: one atomic add on the entry, which the dump
 * reads with every stripe held. */
void rt_mib_count_temporary(uint32_t stack) {
  __atomic_fetch_add(&rt_stack_entry(stack)->temporaries, 1, __ATOMIC_RELAXED);
}

/* The dump's live blocks come in heap order, so their entries are random
 * and mostly cold: each is fetched LIVE_AHEAD blocks before it is merged. */
#define LIVE_AHEAD 8

typedef struct live_ctx {
  uint32_t ts, cpu;
  uint32_t n; /* blocks queued in ring, oldest at n % LIVE_AHEAD */
  rt_block ring[LIVE_AHEAD];
} live_ctx;

static void add_live_now(const rt_block *b, const live_ctx *lc) {
  built n;
  uint64_t scratch[SCRATCH_ENTRIES];
  build(b, lc->ts, lc->cpu, scratch, &n);
  merge_locked(b->stack, &n);
}

static void add_live(const rt_block *b, void *ctx) {
  live_ctx *lc = ctx;
  if (b->stack == RT_UNSAMPLED)
    return;
  rt_prefetch_entry(rt_stack_entry(b->stack));
  rt_block *slot = &lc->ring[lc->n++ % LIVE_AHEAD];
  if (lc->n > LIVE_AHEAD)
    add_live_now(slot, lc);
  *slot = *b;
}

/* Counted as a held lock, so that a handler on the dumping thread parks
 * its frees instead of waiting for the stripes this thread holds. */
void rt_mib_lock_all(void) {
  rt_locks_enter();
  for (int i = 0; i < NSTRIPES; i++)
    rt_mutex_lock(&stripes[i]);
}

int rt_mib_trylock_all(void) {
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
 * (fork_prepare), now reset, and nothing else.  What handlers parked is
 * the parent's to merge. */
void rt_mib_reset_locks(void) {
  rt_locks_held = 0;
  for (int i = 0; i < NSTRIPES; i++)
    rt_mutex_reset(&stripes[i]);
  drain_parked(DISCARD);
}

/* Entries (and their nodes) are fetched this many ids ahead: each is
 * reached through the id's ref, a chain the hardware does not follow. */
#define EACH_AHEAD 8

void rt_mib_for_each(void (*cb)(uint32_t, const rt_mib_entry *, void *),
                     void *ctx) {
  uint32_t max = rt_stack_max_id();
  for (uint32_t id = 0; id <= max; id++) {
    const char *next;
    if (id + EACH_AHEAD <= max && (next = (const char *)rt_stack_entry_of_id(id + EACH_AHEAD)))
      for (int line = 0; line < 4; line++) /* the entry and the node's head */
        __builtin_prefetch(next + 64 * line);
    const rt_mib_entry *e = rt_stack_entry_of_id(id);
    if (e && e->present)
      cb(id, e, ctx);
  }
}

void rt_mib_clear(void) {
  uint32_t max = rt_stack_max_id();
  for (uint32_t id = 0; id <= max; id++) {
    rt_mib_entry *e = rt_stack_entry_of_id(id);
    if (!e)
      continue;
    __atomic_store_n(&e->temporaries, 0, __ATOMIC_RELAXED);
    if (!e->present)
      continue;
    if (e->hist)
      rt_ifree(e->hist, (size_t)e->mib.AccessHistogramSize * 8);
    e->hist = NULL;
    e->present = 0;
  }
}

/* The dump's live-block pass: "now" is taken once for all blocks.  The
 * parked MIBs of blocks already freed go in first. */
void rt_mib_add_all_live(rt_block_walk *for_each_live) {
  drain_parked(STRIPES_HELD);
  live_ctx lc = {rt_now_ms(), rt_cpu(), 0, {{0}}};
  for_each_live(add_live, &lc);
  for (uint32_t i = lc.n > LIVE_AHEAD ? lc.n - LIVE_AHEAD : 0; i < lc.n; i++)
    add_live_now(&lc.ring[i % LIVE_AHEAD], &lc);
  if (rt_sample_interval)
    for (uint32_t id = 0, max = rt_stack_max_id(); id <= max; id++) {
      rt_mib_entry *e = rt_stack_entry_of_id(id);
      if (e)
        est_finish(e);
    }
}
