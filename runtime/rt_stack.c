/* rt_stack.c - allocation stacks: the frame-pointer unwinder and the stack
 * depot (PC list -> u32 id, ids assigned sequentially from 1).
 *
 * The unwinder starts at the public entry point's frame (mp_caller.fp): its
 * return address is the first PC, so no runtime frame is ever recorded.  It
 * then follows saved frame pointers while they increase, are 8-aligned and
 * stay below the thread's stack top; with an unknown top only the first PC
 * is taken.  The depot is a chained hash table read without locks (nodes
 * are immutable once published) and written under striped locks. */
#include "rt_core.h"
#include "rt_lock.h"

#define NBUCKETS (1u << 18)
#define NSTRIPES 64
#define MAX_IDS (1u << 26)

typedef struct depot_node {
  struct depot_node *next;
  uint64_t hash;
  uint32_t id, n;
  uintptr_t pcs[];
} depot_node;

static depot_node **buckets;
static depot_node **by_id;
static uint32_t next_id = 1;
static rt_mutex stripes[NSTRIPES];
static rt_mutex init_mu = RT_MUTEX_INIT;
static int depot_ready;

static int depot_init(void) {
  rt_mutex_lock(&init_mu);
  if (!depot_ready) {
    buckets = rt_mmap_anon(NBUCKETS * sizeof(*buckets), 1);
    by_id = rt_mmap_anon((size_t)MAX_IDS * sizeof(*by_id), 1);
    if (buckets && by_id)
      __atomic_store_n(&depot_ready, 1, __ATOMIC_RELEASE);
  }
  rt_mutex_unlock(&init_mu);
  return depot_ready;
}

/* Walk the caller's frames into pcs; returns how many were taken. */
static uint32_t unwind(uintptr_t fp, uintptr_t *pcs, uint32_t max) {
  if (!max || !fp)
    return 0;
  uintptr_t ret = ((uintptr_t *)fp)[1];
  if (ret < 4096)
    return 0;
  pcs[0] = ret;
  uint32_t n = 1;
  uintptr_t bottom = 0, top = rt_thread_stack_bounds(&bottom);
  if (!top || fp < bottom || fp >= top)
    return n; /* not on the thread's own stack: only the caller is safe */
  uintptr_t cur = fp, next = ((uintptr_t *)fp)[0];
  while (n < max) {
    if (next <= cur || (next & 7) || next + 16 > top)
      break;
    /* A frame whose saved fp is the stack top belongs to the runtime's
     * thread trampoline: its return address is ours, not the program's. */
    if (((uintptr_t *)next)[0] == top)
      break;
    ret = ((uintptr_t *)next)[1];
    if (ret < 4096)
      break;
    pcs[n++] = ret;
    cur = next;
    next = ((uintptr_t *)cur)[0];
  }
  return n;
}

static uint64_t hash_pcs(const uintptr_t *pcs, uint32_t n) {
  uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
  for (uint32_t i = 0; i < n; i++) {
    h ^= pcs[i];
    h *= 0xff51afd7ed558ccdULL;
    h ^= h >> 32;
  }
  return h;
}

static depot_node *find(depot_node *node, uint64_t h, const uintptr_t *pcs,
                        uint32_t n) {
  for (; node; node = __atomic_load_n(&node->next, __ATOMIC_ACQUIRE)) {
    if (node->hash != h || node->n != n)
      continue;
    uint32_t i = 0;
    while (i < n && node->pcs[i] == pcs[i])
      i++;
    if (i == n)
      return node;
  }
  return NULL;
}

static uint32_t depot_put(const uintptr_t *pcs, uint32_t n) {
  if (!__atomic_load_n(&depot_ready, __ATOMIC_ACQUIRE) && !depot_init())
    return 0;
  uint64_t h = hash_pcs(pcs, n);
  depot_node **b = &buckets[h & (NBUCKETS - 1)];
  depot_node *hit = find(__atomic_load_n(b, __ATOMIC_ACQUIRE), h, pcs, n);
  if (hit)
    return hit->id;
  rt_mutex *lk = &stripes[h % NSTRIPES];
  rt_mutex_lock(lk);
  uint32_t id = 0;
  hit = find(__atomic_load_n(b, __ATOMIC_ACQUIRE), h, pcs, n);
  if (hit) {
    id = hit->id;
  } else if (__atomic_load_n(&next_id, __ATOMIC_RELAXED) < MAX_IDS) {
    depot_node *node = rt_ialloc(sizeof(*node) + n * sizeof(uintptr_t));
    if (node) {
      node->hash = h;
      node->n = n;
      rt_memcpy(node->pcs, pcs, n * sizeof(uintptr_t));
      node->id = id = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED);
      node->next = *b;
      __atomic_store_n(&by_id[id], node, __ATOMIC_RELEASE);
      __atomic_store_n(b, node, __ATOMIC_RELEASE);
    }
  }
  rt_mutex_unlock(lk);
  return id;
}

uint32_t rt_stack_capture(mp_caller c) {
  uintptr_t pcs[RT_MAX_STACK];
  int max = rt_flags.malloc_context_size;
  if (max > RT_MAX_STACK)
    max = RT_MAX_STACK;
  if (max <= 0)
    return 0;
  uint32_t n = unwind(c.fp, pcs, (uint32_t)max);
  return n ? depot_put(pcs, n) : 0;
}

const uintptr_t *rt_stack_get(uint32_t id, uint32_t *n) {
  *n = 0;
  if (!id || !__atomic_load_n(&depot_ready, __ATOMIC_ACQUIRE) || id >= MAX_IDS)
    return NULL;
  depot_node *node = __atomic_load_n(&by_id[id], __ATOMIC_ACQUIRE);
  if (!node)
    return NULL;
  *n = node->n;
  return node->pcs;
}

uint32_t rt_stack_max_id(void) {
  return __atomic_load_n(&next_id, __ATOMIC_ACQUIRE) - 1;
}

void rt_stack_fork_prepare(void) {
  rt_mutex_lock(&init_mu);
  for (int i = 0; i < NSTRIPES; i++)
    rt_mutex_lock(&stripes[i]);
}

void rt_stack_fork_parent(void) {
  for (int i = NSTRIPES - 1; i >= 0; i--)
    rt_mutex_unlock(&stripes[i]);
  rt_mutex_unlock(&init_mu);
}

void rt_stack_fork_child(void) {
  for (int i = 0; i < NSTRIPES; i++)
    rt_mutex_reset(&stripes[i]);
  rt_mutex_reset(&init_mu);
}
