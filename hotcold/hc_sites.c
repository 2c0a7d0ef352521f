/* hc_sites.c - counts per hinted call site (site_file=PATH): for each
 * operator new call that passed a hint, keyed by its return address and
 * the hint, the allocations and bytes the cold arena served it and those
 * the other arenas did; with site_lifetimes=1 also how long its blocks
 * lived (freed, or still live at exit).  hc_site_file.c writes them.
 *
 * The sites are a fixed open-addressing table claimed by compare-and-swap
 * (no lock, no allocation); an allocation at a site no slot is left for
 * is counted as dropped.  Lifetimes need the block's site and birth at
 * its free: live hinted blocks are kept in a chained hash of nodes from
 * the private jemalloc, under one spin lock per stripe of buckets.  Only
 * with site_lifetimes does free() look there, and only while some hinted
 * block is live. */
#include <sched.h>
#include <time.h>

#include "hc_internal.h"

#define SITE_SLOTS 8192 /* a power of two */
static hc_site sites[SITE_SLOTS];
static unsigned long dropped_allocs, dropped_bytes;

static uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return x;
}

/* The slot of key, claimed if new; NULL when the table is full. */
static hc_site *site_slot(uintptr_t key) {
  size_t i = mix(key) & (SITE_SLOTS - 1);
  for (size_t probe = 0; probe < SITE_SLOTS; probe++) {
    hc_site *s = &sites[(i + probe) & (SITE_SLOTS - 1)];
    uintptr_t k = __atomic_load_n(&s->key, __ATOMIC_ACQUIRE);
    if (k == key)
      return s;
    if (k == 0 && __atomic_compare_exchange_n(&s->key, &k, key, 0, __ATOMIC_ACQ_REL,
                                              __ATOMIC_ACQUIRE))
      return s;
    if (k == key)
      return s;
  }
  return NULL;
}

static void add(unsigned long *v, unsigned long x) {
  __atomic_fetch_add(v, x, __ATOMIC_RELAXED);
}

/* ---- live hinted blocks (site_lifetimes) ------------------------------- */

typedef struct hc_live live_node;
struct hc_live {
  live_node *next;
  void *p;
  hc_site *site;
  uint64_t born_ns;
};

#define BUCKETS (1 << 16)
#define STRIPES 256
static live_node *buckets[BUCKETS];
static int stripe_lock[STRIPES];
static unsigned long n_live; /* nodes in the table */

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static size_t bucket_of(const void *p) { return mix((uintptr_t)p) & (BUCKETS - 1); }

static void lock(size_t b) {
  int *l = &stripe_lock[b & (STRIPES - 1)];
  while (__atomic_exchange_n(l, 1, __ATOMIC_ACQUIRE))
    sched_yield();
}

static void unlock(size_t b) {
  __atomic_store_n(&stripe_lock[b & (STRIPES - 1)], 0, __ATOMIC_RELEASE);
}

static void set_max(unsigned long *v, unsigned long x) {
  unsigned long cur = __atomic_load_n(v, __ATOMIC_RELAXED);
  while (x > cur && !__atomic_compare_exchange_n(v, &cur, x, 1, __ATOMIC_RELAXED,
                                                 __ATOMIC_RELAXED))
    ;
}

/* One block's lifetime into its site: freed, or still live (at exit). */
static void note_lifetime(hc_site *s, uint64_t ns, int freed) {
  add(freed ? &s->freed : &s->live, 1);
  add(&s->lt_total_ns, ns);
  set_max(&s->lt_min_inv, ~(unsigned long)ns);
  set_max(&s->lt_max_ns, ns);
}

/* Put n in the table under its block's address. */
static void link_node(live_node *n) {
  size_t b = bucket_of(n->p);
  lock(b);
  n->next = buckets[b];
  buckets[b] = n;
  add(&n_live, 1);
  unlock(b);
}

static void track(void *p, hc_site *s) {
  live_node *n = mphc_malloc(sizeof *n);
  if (!n)
    return; /* unmeasured: the file's freed + live fall short of allocs */
  n->p = p;
  n->site = s;
  n->born_ns = now_ns();
  link_node(n);
}

/* Unlink p's node and return it, or NULL. */
static live_node *untrack(void *p) {
  if (!__atomic_load_n(&n_live, __ATOMIC_RELAXED))
    return NULL;
  size_t b = bucket_of(p);
  lock(b);
  live_node **at = &buckets[b], *n;
  while ((n = *at) && n->p != p)
    at = &n->next;
  if (n) {
    *at = n->next;
    __atomic_fetch_sub(&n_live, 1, __ATOMIC_RELAXED);
  }
  unlock(b);
  return n;
}

live_node *hc_site_take(void *p) { return p ? untrack(p) : NULL; }

void hc_site_put(live_node *n, void *q) {
  if (!n)
    return;
  if (!q) {
    note_lifetime(n->site, now_ns() - n->born_ns, 1);
    mphc_free(n);
    return;
  }
  n->p = q;
  link_node(n);
}

/* ---- counting -------------------------------------------------------------- */

void hc_site_count(const void *ra, unsigned hint, void *p, size_t n, int cold) {
  hc_site *s = site_slot((uintptr_t)ra << 8 | (hint & 0xff));
  if (HC_UNLIKELY(!s)) {
    add(&dropped_allocs, 1);
    add(&dropped_bytes, n);
    return;
  }
  add(cold ? &s->cold_allocs : &s->other_allocs, 1);
  add(cold ? &s->cold_bytes : &s->other_bytes, n);
  if (hc_opt.site_lifetimes)
    track(p, s);
}

/* The blocks still live count with their age now; the table empties, so
 * frees after this find nothing. */
static void fold_live(void) {
  uint64_t t = now_ns();
  for (size_t b = 0; b < BUCKETS; b++) {
    if (!__atomic_load_n(&buckets[b], __ATOMIC_RELAXED))
      continue;
    lock(b);
    live_node *n = buckets[b];
    buckets[b] = NULL;
    unlock(b);
    while (n) {
      live_node *next = n->next;
      note_lifetime(n->site, t - n->born_ns, 0);
      __atomic_fetch_sub(&n_live, 1, __ATOMIC_RELAXED);
      mphc_free(n);
      n = next;
    }
  }
}

hc_site *hc_sites_final(size_t *n, unsigned long *d_allocs, unsigned long *d_bytes) {
  if (hc_opt.site_lifetimes)
    fold_live();
  *n = SITE_SLOTS;
  *d_allocs = __atomic_load_n(&dropped_allocs, __ATOMIC_RELAXED);
  *d_bytes = __atomic_load_n(&dropped_bytes, __ATOMIC_RELAXED);
  return sites;
}
