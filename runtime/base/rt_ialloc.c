/* rt_ialloc.c - memory for the runtime's own data (histogram arrays, MIB
 * entries, stack depot nodes, thread start records).  Kept apart from the
 * user heap so that it is never profiled nor reported as a live block.
 * Power-of-two buckets carved from 1 MiB mmap'd chunks with in-band free
 * lists under one lock; requests above 64 KiB are mmap'd directly.  Callers
 * pass the size back.  Data kept until exit (rt_ialloc_perm) is instead
 * bump-allocated at its exact size: rounding MIB entries and stack nodes
 * up to powers of two cost many more pages, each a page fault. */
#include "rt_ialloc.h"
#include "rt_flags.h"
#include "rt_libc.h"
#include "rt_lock.h"
#include "rt_state.h"
#include "rt_sys.h"

#define MIN_SHIFT 4
#define MAX_SHIFT 16
#define CHUNK (1UL << 20)

typedef struct free_node {
  struct free_node *next;
} free_node;

static rt_mutex mu = RT_MUTEX_INIT;
/* Set while this thread holds mu: a signal handler on it gets nothing
 * rather than waiting for its own thread (rt_state.h). */
static __thread int mu_held __attribute__((tls_model("initial-exec")));

static int lock_mu(void) { return rt_leaf_lock(&mu, &mu_held); }
static void unlock_mu(void) { rt_leaf_unlock(&mu, &mu_held); }

static free_node *buckets[MAX_SHIFT + 1];
static char *chunk_cur, *chunk_end;

static int bucket_of(size_t n) {
  int s = MIN_SHIFT;
  while (((size_t)1 << s) < n)
    s++;
  return s;
}

void *rt_ialloc(size_t n) {
  if (!n)
    return NULL;
  if (n > ((size_t)1 << MAX_SHIFT))
    return rt_mmap_anon(rt_round_up(n, RT_PAGE), 0);
  int b = bucket_of(n);
  size_t sz = (size_t)1 << b;
  void *p = NULL;
  if (!lock_mu())
    return NULL;
  if (buckets[b]) {
    p = buckets[b];
    buckets[b] = buckets[b]->next;
    unlock_mu();
    rt_memset(p, 0, sz);
    return p;
  }
  if ((size_t)(chunk_end - chunk_cur) < sz) {
    char *c = rt_mmap_anon(CHUNK, 0);
    if (!c) {
      unlock_mu();
      return NULL;
    }
    chunk_cur = c; /* the tail of the old chunk is simply abandoned */
    chunk_end = c + CHUNK;
  }
  p = chunk_cur;
  chunk_cur += sz;
  unlock_mu();
  return p; /* fresh mmap memory is zero */
}

/* A bump region of its own: one NORESERVE reservation, so permanent data
 * is contiguous (no page shared with freed data).  Lock-free (an
 * atomic add), so it is safe from a signal handler that interrupted a
 * thread inside the runtime. */
#define PERM_RESERVE (1ULL << 36)
#define PERM_SMALL (512u << 10) /* rt_reserve_huge_after */
_Static_assert(PERM_RESERVE / RT_PERM_ALIGN <= 1ULL << 32, "a u32 names any permanent block");
char *rt_perm_base;
static uint64_t perm_used = RT_PERM_ALIGN; /* offset 0 is never given: ref 0 = none */

static char *perm_region(void) {
  char *b = __atomic_load_n(&rt_perm_base, __ATOMIC_ACQUIRE);
  if (RT_LIKELY(b != NULL))
    return b;
  /* huge_tables=0: the whole reservation in small pages */
  char *c = rt_reserve_huge_after(PERM_RESERVE,
                                  rt_flags.huge_tables ? PERM_SMALL : PERM_RESERVE);
  if (!c)
    return NULL;
  if (!__atomic_compare_exchange_n(&rt_perm_base, &b, c, 0, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE)) {
    rt_munmap(c, PERM_RESERVE); /* another thread reserved first */
    return b;
  }
  return c;
}

void rt_ialloc_perm_init(void) { perm_region(); }

void *rt_ialloc_perm(size_t n) {
  if (!n || n > ((size_t)1 << MAX_SHIFT))
    return NULL;
  char *base = perm_region();
  if (!base)
    return NULL;
  n = rt_round_up(n, RT_PERM_ALIGN);
  uint64_t off = __atomic_fetch_add(&perm_used, n, __ATOMIC_RELAXED);
  if (off + n > PERM_RESERVE)
    return NULL;
  return base + off; /* fresh mmap memory is zero */
}

void rt_ifree(void *p, size_t n) {
  if (!p)
    return;
  if (n > ((size_t)1 << MAX_SHIFT)) {
    rt_munmap(p, rt_round_up(n, RT_PAGE));
    return;
  }
  int b = bucket_of(n);
  if (!lock_mu())
    return; /* leaked: only while dying from a signal, or in a handler */
  ((free_node *)p)->next = buckets[b];
  buckets[b] = p;
  unlock_mu();
}

void rt_ialloc_fork_prepare(void) { rt_mutex_lock(&mu); }
void rt_ialloc_fork_parent(void) { rt_mutex_unlock(&mu); }
void rt_ialloc_fork_child(void) { rt_mutex_reset(&mu); }
