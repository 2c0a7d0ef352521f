/* rt_large.c - blocks too big for the size classes (or aligned beyond what
 * a class offers): one mmap each, header in the page in front of the block,
 * kept in a locked hash table (by block address) so that they can be found
 * without touching foreign pointers and enumerated at dump time, and
 * munmap'd at free so peak RSS follows the program. */
#include "rt_core.h"
#include "rt_lock.h"

#define LARGE_MAGIC 0x6d7066726c617267ULL
#define LARGE_BUCKETS 1024

typedef struct large_hdr {
  uint64_t magic;
  uintptr_t map, user;
  size_t map_len;
  uint64_t size;
  uint32_t stack, alloc_ts, alloc_cpu;
  uint32_t live; /* RT_LIVE_BIT while allocated */
  struct large_hdr *next, **pprev;
} large_hdr;

static rt_mutex mu = RT_MUTEX_INIT;
static large_hdr *tab[LARGE_BUCKETS];
static uint64_t mapped;
/* Set while this thread holds mu: a signal handler on it then fails (a
 * large malloc returns NULL, a large free leaks) rather than waiting for
 * its own thread (rt_core.h). */
static __thread int mu_held __attribute__((tls_model("initial-exec")));

static int lock_mu(void) { return rt_leaf_lock(&mu, &mu_held); }
static void unlock_mu(void) { rt_leaf_unlock(&mu, &mu_held); }

static inline large_hdr **bucket(uintptr_t user) {
  return &tab[(user >> 12) % LARGE_BUCKETS];
}

static large_hdr *find_locked(uintptr_t user) {
  for (large_hdr *h = *bucket(user); h; h = h->next)
    if (h->user == user)
      return h;
  return NULL;
}

uintptr_t rt_large_alloc(uint64_t size, size_t align, uint32_t stack,
                         uint32_t ts, uint32_t cpu) {
  if (align < RT_PAGE)
    align = RT_PAGE;
  size_t body = rt_round_up(size ? size : 1, RT_PAGE);
  size_t len = body + RT_PAGE + (align > RT_PAGE ? align : 0);
  char *map = rt_mmap_anon(len, 0);
  if (!map)
    return 0;
  uintptr_t user = rt_round_up((uintptr_t)map + RT_PAGE, align);
  rt_shadow_clear_block(user, size); /* fresh pages need no zeroing */
  large_hdr *h = (large_hdr *)(user - RT_PAGE);
  h->magic = LARGE_MAGIC;
  h->map = (uintptr_t)map;
  h->map_len = len;
  h->user = user;
  h->size = size;
  h->stack = stack;
  h->alloc_ts = ts;
  h->alloc_cpu = cpu;
  h->live = RT_LIVE_BIT;
  if (!lock_mu()) {
    rt_munmap(map, len);
    return 0;
  }
  large_hdr **b = bucket(user);
  h->next = *b;
  h->pprev = b;
  if (*b)
    (*b)->pprev = &h->next;
  *b = h;
  unlock_mu();
  __atomic_fetch_add(&mapped, len, __ATOMIC_RELAXED);
  return user;
}

uint32_t *rt_large_find(uintptr_t p, rt_block *b) {
  if (!p || (p & (RT_PAGE - 1)) || !lock_mu())
    return NULL;
  large_hdr *h = find_locked(p);
  if (h && __atomic_load_n(&h->live, __ATOMIC_ACQUIRE)) {
    *b = (rt_block){h->user, h->size, h->stack, h->alloc_ts, h->alloc_cpu};
  } else {
    h = NULL;
  }
  unlock_mu();
  return h ? &h->live : NULL;
}

void rt_large_release(uintptr_t p) {
  large_hdr *h = (large_hdr *)(p - RT_PAGE);
  if (!lock_mu())
    return; /* leaked (see mu_held) */
  *h->pprev = h->next;
  if (h->next)
    h->next->pprev = h->pprev;
  unlock_mu();
  rt_shadow_release_block(h->user, h->size);
  __atomic_fetch_sub(&mapped, h->map_len, __ATOMIC_RELAXED);
  rt_munmap((void *)h->map, h->map_len);
}

uintptr_t rt_large_begin(uintptr_t p) {
  uintptr_t r = 0;
  if (!lock_mu())
    return 0;
  for (int k = 0; k < LARGE_BUCKETS && !r; k++)
    for (large_hdr *h = tab[k]; h; h = h->next)
      if (h->live && p >= h->user && p < h->user + (h->size ? h->size : 1)) {
        r = h->user;
        break;
      }
  unlock_mu();
  return r;
}

void rt_large_for_each_live(void (*cb)(const rt_block *, void *), void *ctx) {
  if (!lock_mu())
    return; /* dying from a signal: large blocks are skipped */
  for (int k = 0; k < LARGE_BUCKETS; k++)
    for (large_hdr *h = tab[k]; h; h = h->next)
      if (__atomic_load_n(&h->live, __ATOMIC_ACQUIRE)) {
        rt_block b = {h->user, h->size, h->stack, h->alloc_ts, h->alloc_cpu};
        cb(&b, ctx);
      }
  unlock_mu();
}

uint64_t rt_large_mapped(void) { return __atomic_load_n(&mapped, __ATOMIC_RELAXED); }

void rt_large_fork_prepare(void) { rt_mutex_lock(&mu); }
void rt_large_fork_parent(void) { rt_mutex_unlock(&mu); }
void rt_large_fork_child(void) { rt_mutex_reset(&mu); }
