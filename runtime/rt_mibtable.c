/* rt_mibtable.c - the MIB table: one aggregated MemInfoBlock (+ histogram)
 * per stack id, built from a block at free or at dump and merged with
 * mp_mib_init / mp_mib_merge (include/mib_merge.h).
 *
 * Stack ids are dense (sequential from 1), so the table is a NORESERVE
 * array of entry pointers indexed by id, locked by stripes of ids: frees of
 * different contexts rarely contend.  A dump takes every stripe, which also
 * freezes the live flags of all blocks (they are only flipped here). */
#include "mib_merge.h"
#include "rt_core.h"
#include "rt_lock.h"

#define MAX_IDS (1u << 26)
#define NSTRIPES 64

int rt_recording;

static rt_mib_entry **table;
static rt_mutex stripes[NSTRIPES];
static rt_mutex init_mu = RT_MUTEX_INIT;

static int table_ready(void) {
  if (MP_LIKELY(__atomic_load_n(&table, __ATOMIC_ACQUIRE) != NULL))
    return 1;
  rt_mutex_lock(&init_mu);
  if (!table) {
    rt_mib_entry **t = rt_mmap_anon((size_t)MAX_IDS * sizeof(*t), 1);
    __atomic_store_n(&table, t, __ATOMIC_RELEASE);
  }
  rt_mutex_unlock(&init_mu);
  return table != NULL;
}

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

static void build(const rt_block *b, uint32_t dealloc_ts, uint32_t dealloc_cpu,
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
static void merge_locked(uint32_t id, built *n) {
  if (id >= MAX_IDS) {
    drop(n);
    return;
  }
  rt_mib_entry *e = table[id];
  if (!e) {
    e = rt_ialloc(sizeof(*e));
    if (!e) {
      drop(n);
      return;
    }
    table[id] = e;
  }
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

int rt_mib_on_free(const rt_block *b, uint32_t *live) {
  if (!table_ready())
    return rt_claim_live(live);
  built n;
  uint64_t scratch[SCRATCH_ENTRIES];
  build(b, rt_now_ms(), rt_cpu(), scratch, &n);
  rt_mutex *lk = &stripes[b->stack_id % NSTRIPES];
  rt_mutex_lock(lk);
  int was_live = rt_claim_live(live);
  if (was_live && __atomic_load_n(&rt_recording, __ATOMIC_ACQUIRE))
    merge_locked(b->stack_id, &n);
  else
    drop(&n);
  rt_mutex_unlock(lk);
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

void rt_mib_lock_all(void) {
  table_ready();
  for (int i = 0; i < NSTRIPES; i++)
    rt_mutex_lock(&stripes[i]);
}

int rt_mib_trylock_all(void) {
  table_ready();
  for (int i = 0; i < NSTRIPES; i++)
    if (!rt_mutex_trylock(&stripes[i])) {
      while (i--)
        rt_mutex_unlock(&stripes[i]);
      return 0;
    }
  return 1;
}

void rt_mib_unlock_all(void) {
  for (int i = NSTRIPES - 1; i >= 0; i--)
    rt_mutex_unlock(&stripes[i]);
}

void rt_mib_reset_locks(void) {
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
    if (table[id] && table[id]->present)
      cb(id, table[id], ctx);
}

void rt_mib_clear(void) {
  if (!table)
    return;
  uint32_t max = rt_stack_max_id();
  for (uint32_t id = 0; id <= max && id < MAX_IDS; id++) {
    rt_mib_entry *e = table[id];
    if (!e || !e->present)
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
