/* rt_large.c - blocks too big for the size classes (or aligned beyond what
 * a class offers): one mmap each, header in the page in front of the block,
 * kept in a locked hash table (by block address) so that they can be found
 * without touching foreign pointers and enumerated at dump time, and
 * munmap'd at free so peak RSS follows the program.  realloc to another
 * large size resizes the mapping (rt_large_resize, "resizing" below).
 *
 * Populating (populate_large, follow_large): in a guest a page fault costs
 * more than ten times a page faulted in by one MADV_POPULATE_WRITE, and
 * programs fill large blocks soon after allocating them (a copy into a
 * grown buffer, a file read).  Populating whole blocks would make a block
 * the program fills only in part cost its whole size in RSS, so a block
 * gets its first LARGE_HEAD bytes and their shadow at allocation, and the
 * background thread, when it runs, follows the program through the rest
 * (see "following"). */
#include "rt_heap.h"
#include "runtime/base/rt_background.h"
#include "runtime/base/rt_flags.h"
#include "runtime/base/rt_lock.h"
#include "runtime/base/rt_state.h"
#include "runtime/base/rt_sys.h"
#include "runtime/record/rt_mibtable.h"
#include "runtime/record/rt_sample.h"
#include "runtime/record/rt_shadow.h"

#define LARGE_MAGIC 0x6d7066726c617267ULL
#define LARGE_BUCKETS 1024
#define LARGE_HEAD (256u << 10)

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
/* For the statistics: mappings made and undone, bytes unmapped. */
static uint64_t maps, unmaps, unmapped;
static uint64_t remaps; /* blocks resized (rt_large_resize) */
/* Set while this thread holds mu: a signal handler on it then fails (a
 * large malloc returns NULL, a large free leaks) rather than waiting for
 * its own thread (rt_state.h). */
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

/* Links h into its bucket; mu held. */
static void link_locked(large_hdr *h) {
  large_hdr **b = bucket(h->user);
  h->next = *b;
  h->pprev = b;
  if (*b)
    (*b)->pprev = &h->next;
  *b = h;
}

static void unlink_locked(large_hdr *h) {
  *h->pprev = h->next;
  if (h->next)
    h->next->pprev = h->pprev;
}

/* ---- following the program through a block -----------------------------
 * Each tick (while the ticker runs) looks at the second half of the
 * window last populated of each followed block: once the program has
 * touched any of FOLLOW_PROBES cells spread over it (their shadow counts
 * are non-zero: instrumented code, and the mem and str interceptors, count
 * every access), the next window is populated, twice the size of the
 * last, up to FOLLOW_MAX_WINDOW.  A block's populated pages thus stay
 * within about twice what the program reached.  Slots are claimed and
 * dropped without locks (the ticker takes none): should a block be freed
 * while the ticker populates its window, and the range be mapped again
 * meanwhile, the new mapping gets pages it did not ask for (never other
 * contents: populating writes nothing), at most one window. */
#define FOLLOW_SLOTS 8
#define FOLLOW_PROBES 8
#define FOLLOW_MAX_WINDOW (8u << 20)
#define FOLLOW_CLAIMED 1u /* a slot being filled in */

typedef struct follow {
  uintptr_t user; /* the block's address; 0: a free slot */
  uint64_t size, done, window; /* bytes: the block's, populated, last added */
} follow;
static follow follows[FOLLOW_SLOTS];

static void follow_start(uintptr_t user, uint64_t size, uint64_t done) {
  if (!rt_bg_running())
    return; /* nobody would follow: the program faults the rest in */
  for (int i = 0; i < FOLLOW_SLOTS; i++) {
    follow *f = &follows[i];
    uintptr_t free_slot = 0;
    if (__atomic_compare_exchange_n(&f->user, &free_slot, FOLLOW_CLAIMED, 0,
                                    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
      f->size = size;
      f->done = f->window = done;
      __atomic_store_n(&f->user, user, __ATOMIC_RELEASE);
      return;
    }
  }
}

static void follow_stop(uintptr_t user) {
  for (int i = 0; i < FOLLOW_SLOTS; i++) {
    uintptr_t u = user;
    __atomic_compare_exchange_n(&follows[i].user, &u, 0, 0, __ATOMIC_RELEASE,
                                __ATOMIC_RELAXED);
  }
}

void rt_large_follow(void) {
  for (int i = 0; i < FOLLOW_SLOTS; i++) {
    follow *f = &follows[i];
    uintptr_t u = __atomic_load_n(&f->user, __ATOMIC_ACQUIRE);
    if (u <= FOLLOW_CLAIMED)
      continue;
    uint64_t size = f->size, done = f->done, window = f->window;
    if (!rt_shadow_touched(u + done - window / 2, window / 2, FOLLOW_PROBES))
      continue;
    window = 2 * window < FOLLOW_MAX_WINDOW ? 2 * window : FOLLOW_MAX_WINDOW;
    uint64_t to = size - done < window ? size : done + window;
    rt_populate(u + done, u + to);
    rt_shadow_populate(u + done, to - done);
    if (__atomic_load_n(&f->user, __ATOMIC_ACQUIRE) != u)
      continue; /* freed meanwhile */
    f->done = to;
    f->window = window;
    if (to == size)
      __atomic_compare_exchange_n(&f->user, &u, 0, 0, __ATOMIC_RELEASE,
                                  __ATOMIC_RELAXED);
  }
}

/* Bytes [from, size) of the block at user are new: their first LARGE_HEAD
 * and its shadow are populated, the rest followed. */
static void populate_head(uintptr_t user, uint64_t from, uint64_t size) {
  uint64_t head = size - from < LARGE_HEAD ? size : from + LARGE_HEAD;
  if (!rt_flags.populate_large)
    head = from;
  rt_populate(user + from, user + head);
  rt_shadow_populate(user + from, head - from);
  if (size > head && rt_flags.follow_large)
    follow_start(user, size, head);
}

/* The header of the block at user, in the mapping [map, map+len),
 * written but for its live word and links. */
static large_hdr *describe(char *map, size_t len, uintptr_t user, uint64_t size,
                           uint32_t stack, uint32_t ts, uint32_t cpu) {
  large_hdr *h = (large_hdr *)(user - RT_PAGE);
  h->magic = LARGE_MAGIC;
  h->map = (uintptr_t)map;
  h->map_len = len;
  h->user = user;
  h->size = size;
  h->stack = stack;
  h->alloc_ts = ts;
  h->alloc_cpu = cpu;
  return h;
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
  if (stack != RT_UNSAMPLED) /* else its shadow is never read */
    rt_shadow_clear_block(user, size); /* fresh pages need no zeroing */
  rt_populate(user - RT_PAGE, user); /* the header */
  populate_head(user, 0, size);
  large_hdr *h = describe(map, len, user, size, stack, ts, cpu);
  h->live = RT_LIVE_BIT;
  if (!lock_mu()) {
    rt_munmap(map, len);
    return 0;
  }
  link_locked(h);
  unlock_mu();
  __atomic_fetch_add(&mapped, len, __ATOMIC_RELAXED);
  __atomic_fetch_add(&maps, 1, __ATOMIC_RELAXED);
  return user;
}

/* ---- resizing (remap_large) ----------------------------------------------
 * realloc of a large block to a large size: the block's death is
 * recorded by the caller, then its mapping is resized by mremap, which
 * grows or shrinks it in place when the address space allows and else
 * moves its page tables: no byte is copied, and no fresh page is faulted
 * for what the block held.  The header moves with the mapping; it is
 * unlinked while the mapping changes (under mu, so no lookup walks
 * through it), then describes the new block.  The grown tail gets the
 * head population and following of a new block. */
static void revive(large_hdr *h) {
  h->stack = RT_UNSAMPLED; /* its death is recorded already */
  __atomic_store_n(&h->live, RT_LIVE_BIT, __ATOMIC_RELEASE);
}

uintptr_t rt_large_resize(uintptr_t p, uint64_t size, uint32_t stack, uint32_t ts,
                          uint32_t cpu) {
  large_hdr *h = (large_hdr *)(p - RT_PAGE);
  uintptr_t lead = p - h->map; /* the header page and any alignment */
  size_t len = lead + rt_round_up(size ? size : 1, RT_PAGE);
  uint64_t old_size = h->size;
  size_t old_len = h->map_len;
  follow_stop(p);
  /* Before the range can move: once mremap has moved the mapping, another
   * thread may map the old addresses and count into their shadow.  The old
   * block's counts went into its free's record already, and a block that
   * stays (a failed resize) is unrecorded from then on (revive). */
  rt_shadow_release_block(p, old_size);
  if (!lock_mu()) {
    revive(h);
    return 0;
  }
  unlink_locked(h);
  char *map = rt_mremap((void *)h->map, old_len, len);
  if (!map) {
    link_locked(h);
    unlock_mu();
    revive(h);
    return 0;
  }
  uintptr_t user = (uintptr_t)map + lead;
  h = describe(map, len, user, size, stack, ts, cpu);
  link_locked(h);
  __atomic_store_n(&h->live, RT_LIVE_BIT, __ATOMIC_RELEASE);
  unlock_mu();
  if (stack != RT_UNSAMPLED)
    rt_shadow_clear_block(user, size);
  __atomic_fetch_add(&mapped, len - old_len, __ATOMIC_RELAXED);
  __atomic_fetch_add(&remaps, 1, __ATOMIC_RELAXED);
  if (size > old_size)
    populate_head(user, old_size, size);
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
  unlink_locked(h);
  unlock_mu();
  follow_stop(h->user);
  rt_shadow_release_block(h->user, h->size);
  __atomic_fetch_sub(&mapped, h->map_len, __ATOMIC_RELAXED);
  __atomic_fetch_add(&unmaps, 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&unmapped, h->map_len, __ATOMIC_RELAXED);
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

void rt_large_map_counts(uint64_t *n_maps, uint64_t *n_unmaps, uint64_t *bytes_unmapped,
                         uint64_t *n_remaps) {
  *n_maps = __atomic_load_n(&maps, __ATOMIC_RELAXED);
  *n_remaps = __atomic_load_n(&remaps, __ATOMIC_RELAXED);
  *n_unmaps = __atomic_load_n(&unmaps, __ATOMIC_RELAXED);
  *bytes_unmapped = __atomic_load_n(&unmapped, __ATOMIC_RELAXED);
}

void rt_large_fork_prepare(void) { rt_mutex_lock(&mu); }
void rt_large_fork_parent(void) { rt_mutex_unlock(&mu); }
void rt_large_fork_child(void) { rt_mutex_reset(&mu); }
